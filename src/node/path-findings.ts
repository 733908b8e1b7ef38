// The coordinator's side of pair probing: every node's reports in its path book, localized each
// round (src/paths/localize.ts), and what is found for long enough opens an incident: a warning to
// every receiver (alerts/finding-events.ts), closed once it is over. A term starts from an empty
// book and no findings: what an earlier coordinator found is found again from the reports.
import { findingPayload, reportsFinding } from '../alerts/finding-events.js';
import type { Reporter } from '../alerts/reporter.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  FINDING_CLOSE_AFTER_MS,
  findingOpenAfterMs,
  SHARED_END_OPEN_AFTER_MS,
} from '../paths/defaults.js';
import { FindingTracker, findingId, type OpenFinding } from '../paths/finding-tracker.js';
import { localizeIndex } from '../paths/localize.js';
import { PathBook } from '../paths/path-book.js';
import type { PathTransport } from '../core/transport.js';
import { PATHS_PROTOCOL } from '../wire/protocol.js';
import { nodesOf, type Finding } from '../paths/path-state.js';
import { reportPolicy } from '../paths/report-policy.js';
import { incidentOf } from '../wire/incident.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { PathReport, PathReportReply } from '../wire/peer-messages.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

/** The election as the coordinator's findings see it. */
export interface ElectionView {
  readonly role: 'follower' | 'candidate' | 'coordinator';
  readonly epoch: number;
  readonly coordinator: NodeRef | null;
}

export interface PathFindingsOptions {
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  transport: Pick<PathTransport, 'pullPaths'>;
  /** The peer protocol a node's last answer named: only protocol 3 and on is asked for its paths. */
  protocolOf: (address: string) => number;
  election: () => ElectionView;
  reporter: Pick<Reporter, 'onFinding'>;
  /**
   * A node as the coordinator's own verdicts know it, by address: its id, and whether it is alive
   * (answering its probes). A finding naming a node not alive is the verdicts' to tell (peer_dead),
   * not a warning: a crash fails every path into the node a few probes before most of them do.
   */
  verdictOf: (address: string) => { id: string; alive: boolean } | undefined;
}

/** Nodes asked for their paths at once, at most. */
const MAX_ASKING = 4;

export class PathFindings {
  readonly book = new PathBook();
  private readonly tracker = new FindingTracker({
    openAfterMs: (f) =>
      this.sharingEnds.has(findingId(f)) ? SHARED_END_OPEN_AFTER_MS : findingOpenAfterMs(f.kind),
    closeAfterMs: FINDING_CLOSE_AFTER_MS,
  });
  /** This round's degraded or MTU path findings that share an end with another of their kind. */
  private sharingEnds = new Set<string>();
  /** When each open finding's problem started: its incident's identity. */
  private readonly starts = new Map<string, number>();
  /** The incidents of the open findings (their events' keys without the event), to their ids. */
  private readonly incidents = new Map<string, string>();
  /** The term this node last localized in (its book and findings are that term's). */
  private leadingEpoch: number | null = null;
  private lastFindings: Finding[] = [];
  /** What the last localization read, and when: the same book and nodes find the same. */
  private localized: { version: number; nodes: readonly string[]; atMs: number } | null = null;
  private termStartMs = 0;
  /** Nodes asked for their paths this term (POST /paths/pull), by address: when. */
  private readonly asked = new Map<string, number>();
  private pulling = 0;

  constructor(private readonly o: PathFindingsOptions) {}

  /** The findings of the last localization (this node leads), for the status page. */
  get findings(): readonly Finding[] {
    return this.lastFindings;
  }

  /** The findings open now (their incidents sent). */
  open(): OpenFinding[] {
    return this.tracker.open();
  }

  /** POST /paths/report: taken while this node leads that very term. */
  take(report: PathReport): PathReportReply {
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

  /** A round ended: localizes what the book holds of `nodes` (every node, ranked), if it leads. */
  round(nodes: readonly string[]): void {
    const e = this.o.election();
    if (e.role !== 'coordinator') {
      // Another node localizes now: what this one found is its successor's to tell.
      if (this.leadingEpoch !== null) {
        this.leadingEpoch = null;
        this.forget();
      }
      return;
    }
    this.leadTerm(e.epoch);
    const now = this.o.clock.now();
    const { staleMs, refreshMs } = reportPolicy(this.o.self.address, nodes, 0);
    this.book.prune(new Set(nodes), now, staleMs);
    const last = this.localized;
    const changed =
      last === null || last.version !== this.book.version || !sameNodes(last.nodes, nodes);
    // In a large mesh reports come seldom from each node but often in all: once every N ms at
    // most (5 s at 5,000 nodes, each round up to 1,000), however many came meanwhile.
    if (changed && (last === null || now - last.atMs >= nodes.length)) {
      this.lastFindings = localizeIndex(this.book.index(nodes));
      this.localized = { version: this.book.version, nodes, atMs: now };
    }
    const self = this.o.self.address;
    const alive = (address: string) =>
      address === self || this.o.verdictOf(address)?.alive === true;
    this.askSilent(nodes, alive, { now, epoch: e.epoch, afterMs: 2 * refreshMs });
    // Its own probes judge the paths from the coordinator (path_broken from its verdicts), and
    // its verdicts the nodes nobody reaches (peer_dead).
    const reported = this.lastFindings.filter(
      (f) =>
        reportsFinding(f) &&
        !(f.kind === 'path-broken' && f.from === self) &&
        nodesOf(f).every(alive),
    );
    this.sharingEnds = sharingEnds(reported);
    const { opened, closed } = this.tracker.update(reported, now);
    for (const f of closed) this.emit(f, true);
    for (const f of opened) {
      this.starts.set(f.id, this.book.startOf(f.opened) ?? now);
      this.emit(f, false);
    }
  }

  /**
   * Asks the live nodes whose reports have not come for `afterMs` (or not at all this term) for
   * their paths: a node that cannot open connections to the coordinator (its egress cut) still
   * answers one, and what it tells is what egress-broken is found on. At most MAX_ASKING at once,
   * each node at most once a half `afterMs`.
   */
  private askSilent(
    nodes: readonly string[],
    alive: (address: string) => boolean,
    { now, epoch, afterMs }: { now: number; epoch: number; afterMs: number },
  ): void {
    const self = this.o.self;
    for (const address of nodes) {
      if (this.pulling >= MAX_ASKING) return;
      if (address === self.address || !alive(address)) continue;
      if (now - (this.book.heardMs(address) ?? this.termStartMs) < afterMs) continue;
      if (now - (this.asked.get(address) ?? -Infinity) < afterMs / 2) continue;
      if (this.o.protocolOf(address) < PATHS_PROTOCOL) continue;
      this.asked.set(address, now);
      this.pulling++;
      const log = this.o.logger.child({ peerAddress: address, event: 'paths-asked' });
      void this.o.transport.pullPaths(address, { from: self, epoch }).then((outcome) => {
        this.pulling--;
        const e = this.o.election();
        if (!outcome.ok) {
          log.info(
            { reason: outcome.reason, detail: outcome.detail },
            `no path report from ${address} lately, and asking it failed`,
          );
          return;
        }
        if (e.role !== 'coordinator' || e.epoch !== epoch) return;
        const report = outcome.value;
        if (report.from.address !== address || report.epoch !== epoch) return;
        log.info(
          { paths: report.paths.length },
          `no path report from ${address} lately: asked it for its paths`,
        );
        this.book.take(report, this.o.clock.now());
      });
    }
  }

  /** This node leads `epoch`: a new term starts from an empty book. */
  private leadTerm(epoch: number): void {
    if (this.leadingEpoch === epoch) return;
    this.leadingEpoch = epoch;
    this.termStartMs = this.o.clock.now();
    this.asked.clear();
    this.book.clear();
    this.forget();
  }

  private forget(): void {
    this.localized = null;
    this.lastFindings = [];
    this.tracker.clear();
    this.starts.clear();
    this.incidents.clear();
  }

  private emit(finding: OpenFinding, closing: boolean): void {
    const e = this.o.election();
    const c = e.coordinator ?? this.o.self;
    const startMs = this.starts.get(finding.id) ?? this.o.clock.now();
    if (closing) this.starts.delete(finding.id);
    const refOf = (address: string) => {
      const id = this.o.verdictOf(address)?.id ?? address;
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

/** The ids of the degraded and MTU path findings one of whose ends another such finding shares. */
function sharingEnds(findings: readonly Finding[]): Set<string> {
  const ends = new Map<string, number>();
  const paths = findings.filter((f) => f.kind === 'path-degraded' || f.kind === 'path-mtu');
  const key = (kind: string, node: string) => `${kind} ${node}`;
  for (const f of paths) {
    for (const n of nodesOf(f)) ends.set(key(f.kind, n), (ends.get(key(f.kind, n)) ?? 0) + 1);
  }
  return new Set(
    paths.filter((f) => nodesOf(f).some((n) => (ends.get(key(f.kind, n)) ?? 0) > 1)).map(findingId),
  );
}

/** The same nodes in the same order (the round's list is rebuilt each round from the same strings). */
function sameNodes(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
