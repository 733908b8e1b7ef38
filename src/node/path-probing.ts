// Pair probing as a node runs it (issue 22): every node probes a rotating sample of the others each
// round, small probes and full-size ones (src/paths/pair-prober.ts), and reports what changed to
// its coordinator (report-sender.ts, what and how often by report-policy.ts). The coordinator's
// side, its book of every node's paths and the findings it localizes, is path-findings.ts.
import type { Reporter } from '../alerts/reporter.js';
import type { Config } from '../config/load.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PathTransport, PeerTransport } from '../core/transport.js';
import {
  DEFAULT_PATH_DEGRADATION,
  FULL_SIZE_EVERY_ROUNDS,
  PAIR_FAIL_AFTER,
  type PathDegradationSettings,
} from '../paths/defaults.js';
import type { OpenFinding } from '../paths/finding-tracker.js';
import { PairProber } from '../paths/pair-prober.js';
import { roundsToCover } from '../paths/pair-schedule.js';
import type { PathBook } from '../paths/path-book.js';
import type { Finding } from '../paths/path-state.js';
import {
  exceptionsTold,
  REPORT_REFRESH_MS,
  reportPolicy,
  tells,
  type ReportPolicy,
} from '../paths/report-policy.js';
import { ReportSender } from '../paths/report-sender.js';
import { compareRank, type NodeRef } from '../wire/node-ref.js';
import type { PathEcho, PathPull, PathReport, PathReportReply } from '../wire/peer-messages.js';
import { PATHS_PROTOCOL } from '../wire/protocol.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import type { Alert } from '../wire/alert.js';
import { PathFindings, type ElectionView, type NodeVerdict } from './path-findings.js';

export interface PathProbingOptions {
  config: Config;
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  transport: Pick<PeerTransport, 'ping'> & PathTransport;
  /** The peer protocol a node's last answer named: reports and echoes go to protocol 3 and on. */
  protocolOf: (address: string) => number;
  election: () => ElectionView;
  /** The peers taking part (not this node). */
  present: () => readonly string[];
  reporter: Pick<Reporter, 'onFinding'>;
  /** A node as the coordinator's verdicts know it, by address (path-findings.ts). */
  verdictOf: (address: string) => NodeVerdict | undefined;
}

/** The degradation settings of pair probing, from the node's (the rest as measured: defaults.ts). */
export function degradationOf(config: Config): PathDegradationSettings {
  return {
    ...DEFAULT_PATH_DEGRADATION,
    degradedLossRatio: config.degradedLossRatio,
    degradedLatencyMs: config.degradedLatencyMs,
    degradedForMs: config.degradedForMs,
    pathWindowMs: config.pathWindowMs,
  };
}

export class PathProbing {
  readonly prober: PairProber;
  private readonly sender: ReportSender;
  private readonly coordinating: PathFindings;
  private policy: ReportPolicy | null = null;
  /** Out of a large mesh's sample, the paths not ok that are told (report-policy.ts). */
  private exceptions: ReadonlySet<string> = new Set();
  /** `<address> <epoch>` of the coordinator that last asked for this node's paths (it takes them). */
  private pulledBy: string | null = null;
  /**
   * Every node in rank order, and the report policy made of them, kept while membership's list
   * is the same array (it is replaced on a change): a round at 5,000 nodes would otherwise build
   * and sort a list and a set of them each second on every node (docs/benchmarks.md).
   */
  private ranked: {
    present: readonly string[];
    nodes: readonly string[];
    policy: ReportPolicy;
  } | null = null;
  private timer: TimerHandle | null = null;
  private readonly stopping = new AbortController();
  private running = false;

  constructor(private readonly o: PathProbingOptions) {
    const { config, self, clock } = o;
    this.prober = new PairProber({
      self: self.address,
      transport: o.transport,
      clock,
      perRound: config.pairProbes,
      roundIntervalMs: config.roundIntervalMs,
      degradation: degradationOf(config),
      failAfter: PAIR_FAIL_AFTER,
      mtuProbeSize: config.mtuProbeSize,
      fullSizeEveryRounds: FULL_SIZE_EVERY_ROUNDS,
      echoes: (to) => o.protocolOf(to) >= PATHS_PROTOCOL,
      onChange: (path) => this.sender.changedPath(path),
    });
    this.sender = new ReportSender({
      self,
      current: () => this.prober.reports(),
      refreshMs: REPORT_REFRESH_MS,
      keeps: (path) =>
        this.policy ? tells(this.policy, path.to, path.state, this.exceptions) : true,
    });
    this.coordinating = new PathFindings({
      ...o,
      perRound: config.pairProbes,
      roundIntervalMs: config.roundIntervalMs,
      // As this node's own prober scales them: the mesh's nodes do alike for its size.
      qualityMemoryMs: () => {
        const { pathWindowMs, degradedForMs } = this.prober.settings;
        return pathWindowMs + degradedForMs;
      },
    });
  }

  /** Whether pair probing runs (PAIR_PROBES above 0). */
  get enabled(): boolean {
    return this.o.config.pairProbes > 0;
  }

  /** The coordinator's book of every node's paths (empty unless this node leads). */
  get book(): PathBook {
    return this.coordinating.book;
  }

  /** The findings of the last localization (this node leads), for the status page. */
  get findings(): readonly Finding[] {
    return this.coordinating.findings;
  }

  /** The findings whose incidents are open (this node leads). */
  openFindings(): OpenFinding[] {
    return this.coordinating.open();
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
    this.coordinating.stop();
  }

  /** This node's term starts: the findings a predecessor left open (path-findings.ts). */
  inherit(
    alerts: readonly Alert[],
    undelivered: readonly PeerStatusPayload[],
    nodes: number,
  ): void {
    this.coordinating.inherit(alerts, undelivered, nodes);
  }

  /** The open findings as alerts, as they opened (shared with the followers: a successor's). */
  openAlerts(): Alert[] {
    return this.coordinating.openAlerts();
  }

  /** POST /paths/echo: the same payload back. */
  echo(echo: PathEcho): PathEcho {
    return { from: this.o.self, payload: echo.payload };
  }

  /** POST /paths/report: taken while this node leads that very term (and probes paths itself). */
  report(report: PathReport): PathReportReply {
    if (!this.enabled) return { accepted: false, resync: false };
    return this.coordinating.take(report);
  }

  /**
   * POST /paths/pull: every path this node tells, for the coordinator it follows, which asks
   * because its reports stopped coming (this node cannot open connections to it, say); null to
   * anyone else.
   */
  pulled(pull: PathPull): PathReport | null {
    const e = this.o.election();
    if (e.coordinator?.address !== pull.from.address || e.epoch !== pull.epoch) return null;
    this.pulledBy = `${pull.from.address} ${pull.epoch}`;
    const target = { address: pull.from.address, epoch: pull.epoch };
    return this.sender.pulled(target, this.o.clock.now());
  }

  /** Whether the finding an event tells is still open here (a held alert goes out only then). */
  isOpen(payload: PeerStatusPayload): boolean {
    return this.coordinating.isOpen(payload);
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    this.timer = this.o.clock.setTimeout(() => void this.round(), delayMs);
  }

  private async round(): Promise<void> {
    const { clock, config } = this.o;
    const startedMs = clock.now();
    // Start-up in steps: a node answers, then elects, and probes its paths only once it knows who
    // leads (so again after each election). Its probes would meanwhile compete for the CPU with the
    // election's messages, on every node at once in a mesh starting together, and their reports
    // have nowhere to go.
    if (!this.electionSettled()) {
      // What its paths said still ages out meanwhile (a node stuck electing shows none stale).
      if (this.ranked) this.expire(this.ranked.nodes);
      this.schedule(Math.min(SETTLED_CHECK_MS, config.roundIntervalMs));
      return;
    }
    try {
      const present = this.o.present();
      if (this.ranked?.present !== present) {
        const nodes = [this.o.self.address, ...present].sort(compareRank);
        const policy = reportPolicy(this.o.self.address, nodes, config.pairProbes);
        this.ranked = { present, nodes, policy };
      }
      const { nodes, policy } = this.ranked;
      this.prober.setNodes(nodes);
      this.setPolicy(policy);
      await this.prober.probeRound(this.stopping.signal);
      if (!this.running) return;
      this.expire(nodes);
      // Not waited for: a coordinator that does not answer must not slow this node's probes.
      void this.sendReport().catch((err: unknown) =>
        this.o.logger.error({ err }, 'BUG: a path report failed'),
      );
      this.coordinating.round(nodes);
    } catch (err) {
      this.o.logger.error({ err }, 'BUG: a pair-probing round failed');
    }
    this.schedule(Math.max(0, startedMs + config.roundIntervalMs - clock.now()));
  }

  /** A path not probed for three covers of the ring, or three windows, says too little now. */
  private expire(nodes: readonly string[]): void {
    const { config } = this.o;
    const cover = roundsToCover(nodes.length, config.pairProbes) * config.roundIntervalMs;
    this.prober.expire(3 * Math.max(cover, this.prober.settings.pathWindowMs));
  }

  /** A coordinator is known and confirmed: this node follows it or leads. */
  private electionSettled(): boolean {
    const e = this.o.election();
    return e.coordinator !== null && e.role !== 'candidate';
  }

  /** The mesh's size or this node's sample changed: what is told, and how often, with it. */
  private setPolicy(next: ReportPolicy): void {
    const before = this.policy;
    const exceptionsBefore = this.exceptions;
    const paths = this.prober.reports();
    this.policy = next;
    this.exceptions = exceptionsTold(paths, next, this.o.config.pairProbes);
    this.sender.pace(next);
    // Paths now told that were not, or the other way round, are judged again.
    if (before === null || before.everyPath !== next.everyPath) {
      for (const path of paths) this.sender.changedPath(path);
      return;
    }
    const moved = new Set([
      ...difference(before.sample, next.sample),
      ...difference(exceptionsBefore, this.exceptions),
    ]);
    if (moved.size === 0) return;
    for (const path of paths) if (moved.has(path.to)) this.sender.changedPath(path);
  }

  /** Tells the coordinator what changed (this node's own book, when it leads). */
  private async sendReport(): Promise<void> {
    const e = this.o.election();
    const c = e.coordinator;
    const self = this.o.self.address;
    // A coordinator of an older protocol has no path book: nothing goes to it. One that asked for
    // this node's paths takes them, though this node may never have heard it answer.
    const takes =
      c !== null &&
      e.role !== 'candidate' &&
      (c.address === self ||
        this.o.protocolOf(c.address) >= PATHS_PROTOCOL ||
        this.pulledBy === `${c.address} ${e.epoch}`);
    const now = this.o.clock.now();
    this.sender.reportTo(takes ? { address: c.address, epoch: e.epoch } : null, now);
    const next = this.sender.next(now);
    if (!next) return;
    if (next.to === self) {
      this.sender.settled(next.report, this.coordinating.take(next.report));
      return;
    }
    const outcome = await this.o.transport.reportPaths(next.to, next.report);
    this.sender.settled(next.report, outcome.ok ? outcome.value : null);
  }
}

/** While no coordinator is known, how often pair probing looks again whether one is (ms). */
const SETTLED_CHECK_MS = 250;

/** What is in one set and not the other. */
function difference(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  return [...[...a].filter((x) => !b.has(x)), ...[...b].filter((x) => !a.has(x))];
}
