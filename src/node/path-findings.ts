// The coordinator's side of pair probing: every node's reports in its path book, localized each
// round (src/paths/localize.ts), and what is found for long enough opens an incident: a warning to
// every receiver (alerts/finding-events.ts), closed once it is over. A new coordinator starts from
// an empty book, and takes over the incidents its predecessor left open (inherit): each is closed
// under its own key unless found again. The same node leading on at a newer epoch keeps all.
import { findingPayload, reportsFinding } from '../alerts/finding-events.js';
import { alertOf } from '../alerts/lifecycle.js';
import type { Reporter } from '../alerts/reporter.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PathTransport } from '../core/transport.js';
import {
  FINDING_CLOSE_AFTER_MS,
  findingOpenAfterMs,
  ONE_WAY_OPEN_AFTER_ROUNDS,
  PAIR_FAIL_AFTER,
  SHARED_END_OPEN_AFTER_MS,
} from '../paths/defaults.js';
import { inheritedFindings } from '../alerts/finding-inheritance.js';
import { FindingTracker, findingId, type OpenFinding } from '../paths/finding-tracker.js';
import { localizeIndex } from '../paths/localize.js';
import { roundsToCover } from '../paths/pair-schedule.js';
import { PathBook } from '../paths/path-book.js';
import { nodesOf, type Finding } from '../paths/path-state.js';
import { reportPacing } from '../paths/report-policy.js';
import type { Alert } from '../wire/alert.js';
import { incidentOf, incidentStart, incidentSubjectOf } from '../wire/incident.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { PathReport, PathReportReply } from '../wire/peer-messages.js';
import type { Health } from '../wire/peer-view.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import { SilentReporters } from './silent-reporters.js';

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
   * A node as the coordinator's own verdicts know it, by address: its id, and its health. A
   * finding naming a node not alive is the verdicts' to tell (peer_dead), not a warning: a crash
   * fails every path into the node a few probes before most of them do.
   */
  verdictOf: (address: string) => NodeVerdict | undefined;
  /** PAIR_PROBES and ELECTION_COOLDOWN_PERIOD: how long paths take to be probed again. */
  perRound: number;
  roundIntervalMs: number;
  /**
   * How long a path's degraded verdict can outlast the probes it lost (PATH_WINDOW, for them to
   * leave its figures, and DEGRADED_FOR, for it to turn healthy, as the mesh's size scales them):
   * findings of a node's degradation or MTU wait this long after it was last down or cut from the
   * coordinator, lest the probes lost then make it look lossy once it is back.
   */
  qualityMemoryMs: () => number;
}

export interface NodeVerdict {
  id: string;
  health: Health;
  /** The coordinator's own path to it is broken (others reach it). */
  pathBroken?: boolean;
}

/** Findings of working paths: an outage fails paths, it does not make them slow or lossy. */
const QUALITY_KINDS: ReadonlySet<Finding['kind']> = new Set([
  'node-degraded',
  'path-degraded',
  'node-mtu',
  'path-mtu',
]);

export class PathFindings {
  readonly book = new PathBook();
  private readonly tracker = new FindingTracker({
    openAfterMs: (f) => {
      const id = findingId(f);
      if (this.sharingEnds.has(id)) return SHARED_END_OPEN_AFTER_MS;
      if (this.oneWay.has(id)) return ONE_WAY_OPEN_AFTER_ROUNDS * this.o.roundIntervalMs;
      return findingOpenAfterMs(f.kind);
    },
    closeAfterMs: FINDING_CLOSE_AFTER_MS,
  });
  /** This round's degraded or MTU path findings that share an end with another of their kind. */
  private sharingEnds = new Set<string>();
  /** This round's broken paths whose reverse is not broken too. */
  private oneWay = new Set<string>();
  /** When each open finding's problem started (its incident's identity), by finding id. */
  private readonly starts = new Map<string, number>();
  /** Each open finding's alert, as its opening told it (or as inherited), by finding id. */
  private readonly alerts = new Map<string, Alert>();
  /** The term this node leads, while it does (its book and findings are that term's). */
  private leadingEpoch: number | null = null;
  private termStartMs = 0;
  /** This term's inheritance is in (inherit): until then nothing opens, lest it open twice. */
  private inherited = false;
  private lastFindings: Finding[] = [];
  /** What the last localization read, and when: the same book and nodes find the same. */
  private localized: {
    version: number;
    nodes: readonly string[];
    discounted: ReadonlySet<string>;
    atMs: number;
  } | null = null;
  /**
   * When each node was last seen down (dead, unknown), dead, suspect, or cut from the coordinator
   * (its path broken) by the verdicts: its paths may still be coming back from any.
   */
  private readonly notAlive = new Map<
    string,
    { down: number; dead: number; suspect: number; cut: number }
  >();
  /** The nodes of the last round. */
  private listed: ReadonlySet<string> = new Set();
  /** The nodes `listed` holds, as the array judged: the same array, the same set. */
  private listedFor: readonly string[] | null = null;
  private lastNodes: readonly string[] | null = null;
  /** A judgement before the next round (judgeSoon), and whether this round had one. */
  private early: TimerHandle | null = null;
  private judgedEarly = false;
  private readonly silent: SilentReporters;

  constructor(private readonly o: PathFindingsOptions) {
    this.silent = new SilentReporters({
      ...o,
      book: this.book,
      leads: (epoch) => {
        const e = o.election();
        return e.role === 'coordinator' && e.epoch === epoch;
      },
      now: () => o.clock.now(),
    });
  }

  /** The findings of the last localization (this node leads), for the status page. */
  get findings(): readonly Finding[] {
    return this.lastFindings;
  }

  /** The findings open now (their incidents sent). */
  open(): OpenFinding[] {
    return this.tracker.open();
  }

  /** The open findings as alerts: what a successor takes over (inherit). */
  openAlerts(): Alert[] {
    return [...this.alerts.values()];
  }

  /** POST /paths/report: taken while this node leads that very term. */
  take(report: PathReport): PathReportReply {
    const e = this.o.election();
    if (e.role !== 'coordinator' || report.epoch !== e.epoch)
      return { accepted: false, resync: false };
    this.leadTerm(e.epoch);
    const reply = this.book.take(report, this.o.clock.now());
    if (!report.full && report.paths.some((p) => p.state === 'failed')) this.judgeSoon();
    return reply;
  }

  /**
   * A path just reported failed is judged at once rather than at the next round: a broken path is
   * told up to a round sooner. Once between two rounds at most, so that a stream of such reports
   * (a lost zone in a large mesh) costs a round's judgement more, not one each.
   */
  private judgeSoon(): void {
    if (this.early !== null || this.judgedEarly || this.lastNodes === null) return;
    this.judgedEarly = true;
    this.early = this.o.clock.setTimeout(() => {
      this.early = null;
      if (this.lastNodes !== null) this.judge(this.lastNodes);
    }, 0);
  }

  /** This node stops: nothing is judged after. */
  stop(): void {
    if (this.early !== null) this.o.clock.clearTimeout(this.early);
    this.early = null;
    this.lastNodes = null;
  }

  /** Whether the incident an event tells is open here (a held alert goes out only then). */
  isOpen(payload: PeerStatusPayload): boolean {
    const incident = incidentOf(payload);
    const id = incidentSubjectOf(incident);
    return this.tracker.isOpen(id) && this.starts.get(id) === incidentStart(incident);
  }

  /**
   * This node starts leading after another (its term confirmed): the incidents the predecessor
   * left open, as it shared them, are open here, and are found for a report spread and a round
   * more, until the reports of this term say whether they still hold.
   */
  inherit(
    alerts: readonly Alert[],
    undelivered: readonly PeerStatusPayload[],
    nodes: number,
  ): void {
    const e = this.o.election();
    this.leadTerm(e.epoch);
    this.inherited = true;
    const now = this.o.clock.now();
    const { spreadMs } = reportPacing(nodes);
    const taken: string[] = [];
    for (const { finding, startMs, alert } of inheritedFindings(alerts, undelivered)) {
      const open = this.tracker.adopt(finding, now, now + spreadMs + this.o.roundIntervalMs);
      if (!open) continue;
      this.starts.set(open.id, startMs);
      this.alerts.set(open.id, alert);
      taken.push(open.id);
    }
    if (taken.length > 0) {
      this.o.logger.info(
        { event: 'findings-inherited', findings: taken },
        `${taken.length} finding(s) the last coordinator left open: open here until found again or over`,
      );
    }
  }

  /** A round ended: localizes what the book holds of `nodes` (every node, ranked), if it leads. */
  round(nodes: readonly string[]): void {
    this.lastNodes = nodes;
    this.judgedEarly = false;
    if (this.early !== null) this.o.clock.clearTimeout(this.early);
    this.early = null;
    this.judge(nodes);
  }

  private judge(nodes: readonly string[]): void {
    const e = this.o.election();
    if (e.role !== 'coordinator') {
      // Another node localizes now: what this one found is its successor's to tell (inherit).
      if (this.leadingEpoch !== null) {
        this.leadingEpoch = null;
        this.forget();
      }
      return;
    }
    this.leadTerm(e.epoch);
    const now = this.o.clock.now();
    const policy = reportPacing(nodes.length);
    if (this.listedFor !== nodes) {
      this.listed = new Set(nodes);
      this.listedFor = nodes;
    }
    const listed = this.listed;
    this.book.prune(listed, now, policy.staleMs);
    const self = this.o.self.address;
    const healthOf = (address: string): Health =>
      address === self ? 'alive' : (this.o.verdictOf(address)?.health ?? 'unknown');
    const alive = (address: string) => healthOf(address) === 'alive';
    this.noteNotAlive(nodes, listed, now);
    this.silent.ask(nodes, listed, alive, {
      now,
      epoch: e.epoch,
      afterMs: 2 * policy.refreshMs,
      termStartMs: this.termStartMs,
    });
    // A node back lately has its paths recovering one probe at a time: findings naming it wait
    // until every path into it was probed again (a cover, the failures' count and a report).
    const settleMs =
      (roundsToCover(nodes.length, this.o.perRound) + PAIR_FAIL_AFTER + 1) *
        this.o.roundIntervalMs +
      policy.gapMs;
    // A spell of suspicion without a death is what a lossy node's probes show now and then (all
    // of one probe's retries lost): its paths did not fail, so its degraded or MTU findings need
    // not wait for them, only its failures do (a restart quicker than a verdict). A death or a
    // cut is different: the probes lost then weigh on its paths' verdicts for a while, and a
    // node that went down and up (a flapping link) is not degraded for that.
    const qualitySettleMs = settleMs + this.o.qualityMemoryMs();
    const settledFor = (f: Finding) => (n: string) => {
      const last = this.notAlive.get(n);
      if (!alive(n)) return false;
      if (last === undefined) return true;
      if (QUALITY_KINDS.has(f.kind)) {
        // A cut weighs only on the paths between that node and this one: while it lasts (a
        // NetworkPolicy refusing the coordinator), the node's other paths are judged as ever.
        // Not yet judged (a node new to this coordinator) lost no probes: only a death or a cut
        // weighs on the verdicts, and the paths of a node just listed settle as any others.
        const since = nodesOf(f).includes(self) ? Math.max(last.dead, last.cut) : last.dead;
        return now - since >= qualitySettleMs && now - last.down >= settleMs;
      }
      return now - last.down >= settleMs && now - last.suspect >= settleMs;
    };
    const settled = (f: Finding) => nodesOf(f).every(settledFor(f));
    // Paths to or from a node not alive, or down too lately, say nothing of the other end: the
    // survivors of a mass failure are not egress-broken for their paths to the dead.
    const discounted = new Set<string>();
    for (const n of nodes) {
      const last = this.notAlive.get(n);
      if (!alive(n) || (last !== undefined && now - last.down < settleMs)) discounted.add(n);
    }
    this.localize(nodes, now, discounted);
    // Its own probes judge the paths from the coordinator (path_broken from its verdicts), and
    // its verdicts the nodes nobody reaches (peer_dead).
    const reported = this.lastFindings.filter(
      (f) => reportsFinding(f) && !(f.kind === 'path-broken' && f.from === self) && settled(f),
    );
    // An open finding naming a node down now or back lately is the verdicts' until it settles:
    // held open as it was, rather than closed as if it were over.
    const found = new Set(reported.map(findingId));
    for (const open of this.tracker.open()) {
      const names = nodesOf(open.latest);
      if (!found.has(open.id) && names.every((n) => listed.has(n)) && !settled(open.latest)) {
        reported.push(open.latest);
      }
    }
    // A new term's first reports are spread out, and what its predecessor left open comes once
    // the term is confirmed: nothing opens before both are in.
    const opening =
      this.inherited && now - this.termStartMs >= policy.spreadMs + this.o.roundIntervalMs;
    this.sharingEnds = sharingEnds(reported);
    this.oneWay = oneWay(reported);
    const { opened, closed } = this.tracker.update(reported, now, { opening });
    for (const f of closed) this.emit(f, true);
    for (const f of opened) {
      this.starts.set(f.id, this.book.startOf(f.opened) ?? now);
      this.emit(f, false);
    }
  }

  private localize(nodes: readonly string[], now: number, discounted: ReadonlySet<string>): void {
    const last = this.localized;
    const changed =
      last === null ||
      last.version !== this.book.version ||
      !sameNodes(last.nodes, nodes) ||
      !sameSet(last.discounted, discounted);
    // In a large mesh reports come seldom from each node but often in all: once every N ms at
    // most (N the nodes), however many came meanwhile.
    if (!changed || (last !== null && now - last.atMs < nodes.length)) return;
    this.lastFindings = localizeIndex(this.book.index(nodes), discounted);
    this.localized = { version: this.book.version, nodes, discounted, atMs: now };
  }

  private noteNotAlive(nodes: readonly string[], listed: ReadonlySet<string>, now: number) {
    for (const n of this.notAlive.keys()) if (!listed.has(n)) this.notAlive.delete(n);
    const self = this.o.self.address;
    for (const n of nodes) {
      if (n === self) continue;
      const verdict = this.o.verdictOf(n);
      const health = verdict?.health ?? 'unknown';
      const cut = health === 'alive' && verdict?.pathBroken === true;
      if (health === 'alive' && !cut) continue;
      const last = this.notAlive.get(n) ?? {
        down: -Infinity,
        dead: -Infinity,
        suspect: -Infinity,
        cut: -Infinity,
      };
      this.notAlive.set(
        n,
        cut
          ? { ...last, cut: now }
          : health === 'suspect'
            ? { ...last, suspect: now }
            : health === 'dead'
              ? { ...last, down: now, dead: now }
              : { ...last, down: now },
      );
    }
  }

  /** This node leads `epoch`: a new term starts from an empty book; a renewed one goes on. */
  private leadTerm(epoch: number): void {
    if (this.leadingEpoch === epoch) return;
    const renewed = this.leadingEpoch !== null;
    this.leadingEpoch = epoch;
    if (renewed) return;
    this.termStartMs = this.o.clock.now();
    this.inherited = false;
    this.book.clear();
    this.forget();
  }

  private forget(): void {
    this.localized = null;
    this.lastFindings = [];
    this.tracker.clear();
    this.starts.clear();
    this.alerts.clear();
    this.silent.clear();
  }

  private emit(finding: OpenFinding, closing: boolean): void {
    const e = this.o.election();
    const c = e.coordinator ?? this.o.self;
    const startMs = this.starts.get(finding.id) ?? this.o.clock.now();
    if (closing) this.starts.delete(finding.id);
    // The coordinator has no verdict of itself: a finding about it names it as it names itself.
    const refOf = (address: string) => {
      const id =
        address === this.o.self.address
          ? this.o.self.id
          : (this.o.verdictOf(address)?.id ?? address);
      return { id, node_name: nodeNameOf(id) };
    };
    try {
      const payload = findingPayload({
        finding,
        closing,
        gone: closing ? nodesOf(finding.latest).filter((n) => !this.listed.has(n)) : [],
        startMs,
        coordinator: c,
        epoch: e.epoch,
        now: this.o.clock.now(),
        refOf,
        figures: this.book.figuresOf(closing ? finding.latest : finding.opened, { closing }),
      });
      if (closing) this.alerts.delete(finding.id);
      else this.alerts.set(finding.id, alertOf(payload));
      this.o.reporter.onFinding(payload);
    } catch (err) {
      this.o.logger.error({ err, finding: finding.id }, 'BUG: a finding could not be told');
    }
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

/** The ids of the broken paths among `findings` whose reverse is not among them. */
function oneWay(findings: readonly Finding[]): Set<string> {
  const broken = new Set<string>();
  for (const f of findings) if (f.kind === 'path-broken') broken.add(`${f.from} ${f.to}`);
  return new Set(
    findings.flatMap((f) =>
      f.kind === 'path-broken' && !broken.has(`${f.to} ${f.from}`) ? [findingId(f)] : [],
    ),
  );
}

/** The same nodes in the same order (the round's list is rebuilt each round from the same strings). */
function sameNodes(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}
