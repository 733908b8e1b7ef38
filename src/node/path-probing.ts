// Pair probing as a node runs it (issue 22): every node probes a rotating sample of the others each
// round, small probes and full-size ones (src/paths/pair-prober.ts), and reports what changed to
// its coordinator (report-sender.ts). The coordinator keeps every node's reports in its path book,
// localizes each round (localize.ts), and what is found for long enough opens an incident: a
// warning to every receiver (alerts/finding-events.ts), closed once it is over.
import { findingPayload, reportsFinding } from '../alerts/finding-events.js';
import type { Reporter } from '../alerts/reporter.js';
import type { Config } from '../config/load.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PathTransport, PeerTransport } from '../core/transport.js';
import { FindingTracker, type OpenFinding } from '../paths/finding-tracker.js';
import { localize } from '../paths/localize.js';
import { PairProber } from '../paths/pair-prober.js';
import { roundsToCover } from '../paths/pair-schedule.js';
import { PathBook } from '../paths/path-book.js';
import type { Finding } from '../paths/path-state.js';
import { ReportSender } from '../paths/report-sender.js';
import type { PathDegradationSettings } from '../paths/defaults.js';
import { compareRank, nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { PathEcho, PathReport, PathReportReply } from '../wire/peer-messages.js';
import { incidentOf } from '../wire/incident.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import { FINDING_CLOSE_AFTER_MS, findingOpenAfterMs, PAIR_FAIL_AFTER } from '../paths/defaults.js';

/** A report with nothing new goes at least this often: the coordinator knows its paths are current. */
export const REPORT_REFRESH_MS = 5_000;
/** A node silent this long (no report) has its paths forgotten by the coordinator. */
export const REPORT_STALE_MS = 3 * REPORT_REFRESH_MS;

/** The election as pair probing sees it. */
export interface ElectionView {
  readonly role: 'follower' | 'candidate' | 'coordinator';
  readonly epoch: number;
  readonly coordinator: NodeRef | null;
}

export interface PathProbingOptions {
  config: Config;
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  transport: Pick<PeerTransport, 'ping'> & PathTransport;
  election: () => ElectionView;
  /** The peers taking part (not this node). */
  present: () => readonly string[];
  reporter: Pick<Reporter, 'onFinding'>;
  /** A node's id and node name, by address, as the coordinator's verdicts know them. */
  refOf: (address: string) => { id: string } | undefined;
}

/** The degradation settings of pair probing, from the node's. */
export function degradationOf(config: Config): PathDegradationSettings {
  return {
    degradedLossRatio: config.degradedLossRatio,
    degradedLatencyMs: config.degradedLatencyMs,
    degradedForMs: config.degradedForMs,
    pathWindowMs: config.pathWindowMs,
    minSamples: 5,
    recoveryFraction: 0.5,
  };
}

export class PathProbing {
  readonly prober: PairProber;
  readonly book = new PathBook(REPORT_STALE_MS);
  private readonly sender: ReportSender;
  private readonly tracker = new FindingTracker({
    openAfterMs: (f) => findingOpenAfterMs(f.kind),
    closeAfterMs: FINDING_CLOSE_AFTER_MS,
  });
  /** When each open finding's problem started: its incident's identity. */
  private readonly starts = new Map<string, number>();
  /** The incidents of the open findings (their events' keys without the event), to their ids. */
  private readonly incidents = new Map<string, string>();
  /** The term this node last localized in (its book and findings are that term's). */
  private leadingEpoch: number | null = null;
  private timer: TimerHandle | null = null;
  private readonly stopping = new AbortController();
  private running = false;
  private lastFindings: Finding[] = [];

  constructor(private readonly o: PathProbingOptions) {
    const { config, self, clock } = o;
    this.prober = new PairProber({
      self: self.address,
      transport: o.transport,
      clock,
      perRound: config.pairProbes,
      degradation: degradationOf(config),
      failAfter: PAIR_FAIL_AFTER,
      mtuProbeSize: config.mtuProbeSize,
      onChange: (path) => this.sender.changedPath(path),
    });
    this.sender = new ReportSender({
      self,
      current: () => this.prober.reports(),
      refreshMs: REPORT_REFRESH_MS,
    });
  }

  /** Whether pair probing runs (PAIR_PROBES above 0). */
  get enabled(): boolean {
    return this.o.config.pairProbes > 0;
  }

  /** The findings of the last localization (this node leads), for the status page. */
  get findings(): readonly Finding[] {
    return this.lastFindings;
  }

  start(): void {
    if (!this.enabled || this.running) return;
    this.running = true;
    this.schedule(0);
  }

  stop(): void {
    this.running = false;
    this.stopping.abort();
    if (this.timer) this.o.clock.clearTimeout(this.timer);
  }

  /** POST /paths/echo: the same payload back. */
  echo(echo: PathEcho): PathEcho {
    return { from: this.o.self, payload: echo.payload };
  }

  /** POST /paths/report: taken while this node leads that very term. */
  report(report: PathReport): PathReportReply {
    const e = this.o.election();
    if (e.role !== 'coordinator' || report.epoch !== e.epoch)
      return { accepted: false, resync: false };
    this.leadTerm(e.epoch);
    return this.book.take(report, this.o.clock.now());
  }

  /** Whether the finding an event tells is still open here (a held alert goes out only then). */
  isOpen(payload: PeerStatusPayload): boolean {
    const id = this.incidents.get(incidentOf(payload));
    return id !== undefined && this.tracker.isOpen(id);
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = this.o.clock.setTimeout(() => void this.round(), delayMs);
  }

  private async round(): Promise<void> {
    const { clock, config } = this.o;
    const startedMs = clock.now();
    try {
      const nodes = [this.o.self.address, ...this.o.present()].sort(compareRank);
      this.prober.setNodes(nodes);
      await this.prober.probeRound(this.stopping.signal);
      if (!this.running) return;
      // A path not probed for three covers of the ring, or three windows, says too little now.
      const cover = roundsToCover(nodes.length, config.pairProbes) * config.roundIntervalMs;
      this.prober.expire(3 * Math.max(cover, config.pathWindowMs));
      await this.sendReport();
      this.localize(nodes);
    } catch (err) {
      this.o.logger.error({ err }, 'BUG: a pair-probing round failed');
    }
    this.schedule(Math.max(0, startedMs + config.roundIntervalMs - clock.now()));
  }

  /** Tells the coordinator what changed (this node's own book, when it leads). */
  private async sendReport(): Promise<void> {
    const e = this.o.election();
    const c = e.coordinator;
    this.sender.reportTo(
      c && e.role !== 'candidate' ? { address: c.address, epoch: e.epoch } : null,
    );
    const next = this.sender.next(this.o.clock.now());
    if (!next) return;
    if (next.to === this.o.self.address) {
      this.sender.settled(next.report, this.report(next.report));
      return;
    }
    const outcome = await this.o.transport.reportPaths(next.to, next.report);
    this.sender.settled(next.report, outcome.ok ? outcome.value : null);
  }

  /** This node leads `epoch`: a new term starts from an empty book. */
  private leadTerm(epoch: number): void {
    if (this.leadingEpoch === epoch) return;
    this.leadingEpoch = epoch;
    this.book.clear();
    this.forgetFindings();
  }

  private forgetFindings(): void {
    this.tracker.clear();
    this.starts.clear();
    this.incidents.clear();
  }

  private localize(nodes: string[]): void {
    const e = this.o.election();
    if (e.role !== 'coordinator') {
      // Another node localizes now: what this one found is its successor's to tell.
      if (this.leadingEpoch !== null) {
        this.leadingEpoch = null;
        this.forgetFindings();
        this.lastFindings = [];
      }
      return;
    }
    this.leadTerm(e.epoch);
    const now = this.o.clock.now();
    this.book.prune(new Set(nodes), now);
    const self = this.o.self.address;
    this.lastFindings = localize(this.book.input(nodes));
    // Its own probes judge the paths from the coordinator (path_broken from its verdicts), and
    // its verdicts the nodes nobody reaches (peer_dead).
    const reported = this.lastFindings.filter(
      (f) => reportsFinding(f) && !(f.kind === 'path-broken' && f.from === self),
    );
    const { opened, closed } = this.tracker.update(reported, now);
    for (const f of closed) this.emit(f, true);
    for (const f of opened) {
      this.starts.set(f.id, this.book.startOf(f.opened) ?? now);
      this.emit(f, false);
    }
  }

  private emit(finding: OpenFinding, closing: boolean): void {
    const e = this.o.election();
    const c = e.coordinator ?? this.o.self;
    const startMs = this.starts.get(finding.id) ?? this.o.clock.now();
    if (closing) this.starts.delete(finding.id);
    const refOf = (address: string) => {
      const id = this.o.refOf(address)?.id ?? address;
      return { id, node_name: nodeNameOf(id) };
    };
    const payload = findingPayload({
      finding,
      closing,
      startMs,
      coordinator: c,
      epoch: e.epoch,
      now: this.o.clock.now(),
      refOf,
      figures: this.book.figuresOf(closing ? finding.latest : finding.opened),
    });
    const incident = incidentOf(payload);
    if (closing) this.incidents.delete(incident);
    else this.incidents.set(incident, finding.id);
    this.o.reporter.onFinding(payload);
  }
}
