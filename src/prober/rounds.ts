// The coordinator's probe rounds: every interval, probe each peer not already being probed; a
// failed probe starts a confirmation (retries, indirect probes through relays, the unhealthy
// duration) before anything is declared.
import type { Clock } from '../core/clock.js';
import { overloadLagMs, overloadPatienceMs, type DetectionPolicy } from './policy.js';
import type { Logger } from '../core/logger.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import { setMaxListeners } from 'node:events';
import type { PeerTransport, SanityCheck } from '../core/transport.js';
import {
  answerOf,
  confirmUnreachable,
  failureOf,
  type ConfirmationContext,
} from './confirmation.js';
import {
  answered,
  attemptFailed,
  fromView,
  newRecord,
  sameVerdict,
  silentNow,
  suspicionCounts,
  suspicionOf,
  unreachableNow,
  type Judgement,
  type PeerRecord,
  type SelfSuspicion,
  type Transition,
} from './verdict.js';
import type { PeerView } from '../wire/peer-view.js';

export type { SelfSuspicion } from './verdict.js';
import type { SanityState } from '../wire/webhooks.js';

export interface RoundReport {
  round: number;
  probed: number;
  /**
   * Verdicts changed since the previous report: by this round's probes, and by confirmations
   * that ended meanwhile (suspicions that cleared do not count).
   */
  changed: number;
  /** Peers added to or removed from the peer list since the previous round. */
  membership: number;
  durationMs: number;
  sanity: SanityState;
}

export interface ProbeRoundsOptions {
  self: NodeRef;
  transport: Pick<PeerTransport, 'ping' | 'probeVia'>;
  sanity: SanityCheck | null;
  clock: Clock;
  logger: Logger;
  policy: DetectionPolicy;
  intervalMs: number;
  /** When the peer last answered any request of this node (announcements too); null: never. */
  lastHeard?(address: string): number | null;
  /** The node a peer runs on, as discovery names it: its name until it answers with its own. */
  nodeNameOf?(address: string): string | undefined;
  /**
   * How late this process's event loop has run lately (event-loop-lag.ts). A peer that timed out
   * while it ran later than overloadLagMs() is not declared dead or behind a broken path.
   */
  loopLag?: { maxLagWithinMs(ms: number): number };
  /** Picks relays; injectable for tests. */
  random?: () => number;
  /** Called as soon as a peer's verdict changes; must not block (it runs in the round). */
  onJudgement(judgement: Judgement): void;
  /**
   * Called when a round's probes have answered or failed (a confirmation goes on after its
   * round); rounds overlap when a probe is slow.
   */
  onRound(report: RoundReport): void;
  /**
   * Called as each round starts, with how late it is: its start minus the previous round's start
   * plus `intervalMs` (0 for the first round, and for one on time). A busy event loop or a starved
   * CPU shows here first; late means past `lateThresholdMs(intervalMs)`. Must not block.
   */
  onRoundStart?(lateByMs: number): void;
  /**
   * Called when a confirmation that ended between rounds changed a verdict (a death, a peer
   * seen alive late), so the cluster status need not wait for the next round. Must not block.
   */
  onVerdictsChanged?(): void;
  /** Called when whether this node suspects itself changes (selfSuspicion). Must not block. */
  onSelfSuspicion?(suspicion: SelfSuspicion): void;
}

/**
 * Rounds over more peers than this are paced: the probes go out evenly over the first half of the
 * interval (each peer at the same place in every round, so each is still probed once an interval)
 * rather than all at once, and at most MAX_PROBES_IN_FLIGHT at a time.
 */
export const PACE_ABOVE_PEERS = 64;
/** Direct probes of one round in flight at once, at most (a black-holed peer holds one a timeout). */
export const MAX_PROBES_IN_FLIGHT = 1_024;
/** How often a paced round launches the probes that are due. */
const PACE_TICK_MS = 10;

/** A dead peer's failed probes get a new confirmation (relays) once per this many rounds. */
const DEAD_RECHECK_ROUNDS = 10;
/**
 * At most this many dead peers get that confirmation in one round, the longest waiting first: when
 * a zone of 1,666 is lost, each is rechecked every 34 rounds or so rather than 167 a second, each
 * with its relays, keeping the coordinator free to deliver their alerts.
 */
export const DEAD_RECHECKS_PER_ROUND = 50;

/** Transitions that change what the cluster status shows. */
const VISIBLE: ReadonlySet<Transition> = new Set<Transition>([
  'died',
  'recovered',
  'first-alive',
  'never-alive',
  'path-broken',
  'path-restored',
]);

/**
 * A peer still being probed or confirmed (a slow or black-holed one) is skipped by later rounds
 * rather than holding them up, so one bad peer never delays the verdicts on the others.
 */
export class ProbeRounds {
  /** The verdicts; changed only through put/drop/clearRecords, which keep `suspicion` counted. */
  private readonly records = new Map<string, PeerRecord>();
  /** selfSuspect's counts over `records`, kept as they change (not recounted over 5,000). */
  private readonly suspicion = { considered: 0, unreachable: 0, silent: 0 };
  private readonly inFlight = new Set<string>();
  /** Peers of a paced round not launched yet (they count as in flight meanwhile). */
  private readonly queued = new Set<string>();
  private peers: readonly string[] = [];
  private controller: AbortController | null = null;
  private sanityState: SanityState;
  private membershipChanges = 0;
  private verdictChanges = 0;
  /** Bumped when the verdicts as a view shows them change (latencies aside), or the peer list. */
  private shownVersion = 0;
  private wasSelfSuspect = false;
  /** Dead peers: when their last confirmation ran. */
  private readonly rechecked = new Map<string, number>();
  /** Dead peers whose failed probe this round starts a confirmation (pickRechecks). */
  private rechecks = new Set<string>();
  private lastRound: number | null = null;

  private readonly confirmation: ConfirmationContext;

  constructor(private readonly opts: ProbeRoundsOptions) {
    this.sanityState = opts.sanity ? 'ok' : 'not-configured';
    this.confirmation = {
      ...opts,
      random: opts.random ?? Math.random,
      lastHeard: (address) => opts.lastHeard?.(address) ?? null,
      peers: () => this.peers,
      record: (address) => this.records.get(address),
      selfSuspect: () => this.selfSuspicion.suspect,
      overloaded: (sinceMs) => {
        const { clock, policy, loopLag } = opts;
        const forMs = clock.now() - sinceMs;
        if (!loopLag || forMs > overloadPatienceMs(policy)) return false;
        return loopLag.maxLagWithinMs(forMs) > overloadLagMs(policy.probeTimeoutMs);
      },
      apply: (address, judge) => this.apply(address, judge),
    };
  }

  private fresh(address: string, now: number): PeerRecord {
    return newRecord(address, now, this.opts.nodeNameOf?.(address));
  }

  get running(): boolean {
    return this.controller !== null;
  }

  /** When the loop last launched a round (liveness: every `intervalMs` while running). */
  get lastRoundAt(): number | null {
    return this.lastRound;
  }

  get sanity(): SanityState {
    return this.sanityState;
  }

  /** Whether this coordinator cannot reach most of its peers (and so alerts on none of them). */
  get selfSuspicion(): SelfSuspicion {
    return suspicionOf(this.suspicion);
  }

  private put(address: string, record: PeerRecord): void {
    const before = this.records.get(address);
    if (before) this.count(before, -1);
    if (!before || !sameVerdict(before, record)) this.shownVersion++;
    this.records.set(address, record);
    this.count(record, 1);
  }

  private drop(address: string): void {
    const before = this.records.get(address);
    if (!before) return;
    this.count(before, -1);
    this.records.delete(address);
    this.shownVersion++;
  }

  private clearRecords(): void {
    this.records.clear();
    this.shownVersion++;
    this.suspicion.considered = 0;
    this.suspicion.unreachable = 0;
    this.suspicion.silent = 0;
  }

  private count(record: PeerRecord, sign: 1 | -1): void {
    if (!suspicionCounts(record)) return;
    this.suspicion.considered += sign;
    if (unreachableNow(record)) this.suspicion.unreachable += sign;
    if (silentNow(record)) this.suspicion.silent += sign;
  }

  /**
   * Another request to this live peer just failed (a heartbeat, say): probe it now rather than at
   * the next round, so a crash is noticed within a heartbeat. No-op while it is being probed.
   */
  probeSoon(address: string): void {
    const signal = this.controller?.signal;
    if (!signal || this.records.get(address)?.health !== 'alive') return;
    // Waiting for its place in a paced round: probed now instead (the round then skips it).
    if (this.inFlight.has(address) && !this.queued.delete(address)) return;
    let sanity: Promise<boolean> | null = null;
    void this.probe(address, signal, () => (sanity ??= this.checkSanity())).catch((err: unknown) =>
      this.opts.logger.error({ err, peerAddress: address }, 'BUG: an early probe failed'),
    );
  }

  /**
   * Changes whenever snapshot() would show a peer otherwise, its latency and last probe aside (a
   * round of answers leaves it alone): what is shared need not be rebuilt until it does.
   */
  get verdictsVersion(): number {
    return this.shownVersion;
  }

  /** The verdicts, in the order of the peer list. */
  snapshot(): PeerRecord[] {
    return this.peers.flatMap((a) => this.records.get(a) ?? []);
  }

  setPeers(peers: readonly string[]): void {
    this.peers = [...peers];
    this.shownVersion++;
    if (!this.running) return;
    const now = this.opts.clock.now();
    const listed = new Set(peers);
    for (const address of this.records.keys()) {
      if (listed.has(address)) continue;
      this.drop(address);
      this.rechecked.delete(address);
      this.membershipChanges++;
    }
    for (const address of peers) {
      if (this.records.has(address)) continue;
      this.put(address, this.fresh(address, now));
      this.membershipChanges++;
    }
    // Silent peers that left the list may end this node's suspicion of itself (a zone removed).
    this.noteSelfSuspicion();
  }

  /**
   * A peer back from a departure that expired: judged as the live node it was when it left, so a
   * node that never came back is reported dead rather than waited for as a newcomer.
   */
  presumeAlive(address: string, id: string, sinceMs: number): void {
    const r = this.records.get(address);
    if (!r || r.health !== 'unknown' || r.lastProbeMs !== null) return;
    this.put(address, { ...r, id, nodeName: nodeNameOf(id), health: 'alive', sinceMs });
    this.noteSelfSuspicion();
  }

  /**
   * Starts leading: seeds verdicts from the predecessor's view, then probes, once `firstRoundAfter`
   * has settled (at once by default).
   */
  start(inherited: readonly PeerView[], firstRoundAfter?: Promise<void>): void {
    if (this.running) return;
    const now = this.opts.clock.now();
    const known = new Map(inherited.map((v) => [v.address, v]));
    this.clearRecords();
    for (const address of this.peers) {
      const view = known.get(address);
      this.put(address, view ? fromView(view) : this.fresh(address, now));
    }
    this.membershipChanges = 0;
    this.verdictChanges = 0;
    this.wasSelfSuspect = false;
    this.controller = new AbortController();
    // Every probe, retry and sleep of the term listens on this one signal: many at once is normal.
    setMaxListeners(0, this.controller.signal);
    const signal = this.controller.signal;
    // Liveness counts from here: waiting for firstRoundAfter is not a stalled loop.
    this.lastRound = now;
    if (!firstRoundAfter) {
      void this.loop(signal);
      return;
    }
    void firstRoundAfter
      .catch(() => undefined)
      .then(() => {
        if (!signal.aborted) void this.loop(signal);
      });
  }

  stop(): void {
    this.controller?.abort(new Error('stopped leading'));
    this.controller = null;
    this.inFlight.clear();
    this.queued.clear();
    this.clearRecords();
    this.rechecked.clear();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    /** When this round should start: the previous one's start plus the interval. */
    let due: number | null = null;
    for (let round = 1; !signal.aborted; round++) {
      const now = this.opts.clock.now();
      this.lastRound = now;
      try {
        this.opts.onRoundStart?.(due === null ? 0 : Math.max(0, now - due));
      } catch (err) {
        this.opts.logger.error({ err, round }, 'BUG: onRoundStart failed');
      }
      due = now + this.opts.intervalMs;
      this.runRound(round, signal).catch((err: unknown) =>
        this.opts.logger.error({ err, round }, 'BUG: a probe round failed'),
      );
      try {
        await this.opts.clock.sleep(this.opts.intervalMs, signal);
      } catch {
        return;
      }
    }
  }

  private async runRound(round: number, signal: AbortSignal): Promise<void> {
    const started = this.opts.clock.now();
    const targets = this.peers.filter((a) => !this.inFlight.has(a));
    const membership = this.membershipChanges;
    this.membershipChanges = 0;
    this.rechecks = this.pickRechecks();
    let sanity: Promise<boolean> | null = null;
    // One sanity check per round, and only when some peer would otherwise be declared dead.
    const selfHealthy = () => (sanity ??= this.checkSanity());
    const launch = (address: string) => this.probe(address, signal, selfHealthy);
    if (targets.length > PACE_ABOVE_PEERS) await this.paced(targets, started, signal, launch);
    else await Promise.all(targets.map(launch));
    if (signal.aborted) return;
    const changed = this.verdictChanges;
    this.verdictChanges = 0;
    this.opts.onRound({
      round,
      probed: targets.length,
      changed,
      membership,
      durationMs: this.opts.clock.now() - started,
      sanity: this.sanityState,
    });
  }

  /**
   * Launches the round's probes evenly over half the interval, target i at i/n of it, never more
   * than MAX_PROBES_IN_FLIGHT at once; resolves when every probe has answered or failed. Targets
   * count as in flight from the start, so a round that runs long is not probed twice by the next.
   */
  private async paced(
    targets: readonly string[],
    started: number,
    signal: AbortSignal,
    launch: (address: string) => Promise<void>,
  ): Promise<void> {
    const { clock } = this.opts;
    const spreadMs = this.opts.intervalMs / 2;
    for (const address of targets) {
      this.inFlight.add(address);
      this.queued.add(address);
    }
    // Probes counted rather than kept in a list: a round's 5,000 promises would all outlive the
    // young generation, to be collected from the old.
    let open = 0;
    let allDone: (() => void) | null = null;
    let failure: { err: unknown } | null = null;
    const ended = () => {
      if (--open === 0) allDone?.();
    };
    const failed = (err: unknown) => {
      failure ??= { err };
      ended();
    };
    let next = 0;
    while (next < targets.length && !signal.aborted) {
      // Those due before the next tick go now (at the defaults, 5,000 peers: 100 a tick).
      const until = clock.now() - started + PACE_TICK_MS;
      const due = Math.min(targets.length, Math.ceil((until / spreadMs) * targets.length));
      while (next < due && open < MAX_PROBES_IN_FLIGHT) {
        const address = targets[next++]!;
        if (!this.queued.delete(address)) continue; // probed early (probeSoon), or stopped
        open++;
        launch(address).then(ended, failed);
      }
      if (next < targets.length) {
        try {
          await clock.sleep(PACE_TICK_MS, signal);
        } catch {
          break;
        }
      }
    }
    if (open > 0) await new Promise<void>((resolve) => (allDone = resolve));
    if (failure) throw (failure as { err: unknown }).err;
  }

  private async checkSanity(): Promise<boolean> {
    if (!this.opts.sanity) return true;
    const outcome = await this.opts.sanity.check();
    this.sanityState = outcome.ok ? 'ok' : 'failed';
    return outcome.ok;
  }

  /** Whether this round rechecks the dead peer (it is among those picked as the round began). */
  private recheckDue(address: string): boolean {
    if (!this.rechecks.delete(address)) return false;
    this.rechecked.set(address, this.opts.clock.now());
    return true;
  }

  /**
   * The dead peers this round rechecks: those due (DEAD_RECHECK_ROUNDS since their last one), the
   * longest waiting first, at most DEAD_RECHECKS_PER_ROUND, so every dead peer gets its turn.
   */
  private pickRechecks(): Set<string> {
    const now = this.opts.clock.now();
    const dueBefore = now - DEAD_RECHECK_ROUNDS * this.opts.intervalMs;
    const due: { address: string; at: number }[] = [];
    for (const [address, r] of this.records) {
      if (r.health !== 'dead') continue;
      const at = this.rechecked.get(address) ?? 0;
      if (at <= dueBefore) due.push({ address, at });
    }
    due.sort((a, b) => a.at - b.at);
    return new Set(due.slice(0, DEAD_RECHECKS_PER_ROUND).map((d) => d.address));
  }

  /**
   * Takes on the verdicts of a term this node supersedes (after a partition healed): peers that
   * term reported dead are dead here too, so their recovery resolves those incidents.
   */
  adopt(views: readonly PeerView[]): void {
    for (const view of views) {
      const current = this.records.get(view.address);
      if (!current || view.health !== 'dead' || !view.alerted) continue;
      if (current.health === 'dead' && current.alerted) continue;
      this.put(view.address, {
        ...current,
        health: 'dead',
        alerted: true,
        sinceMs: view.since,
        brokenPath: null,
      });
      this.verdictChanges++;
      this.opts.logger.info(
        { event: 'adopted-dead', peer: view.id, peerAddress: view.address },
        `${view.id} was reported dead by the coordinator this node supersedes: its recovery will resolve that`,
      );
    }
    this.noteSelfSuspicion();
  }

  /** Applies a pure transition to the peer's current record. */
  private apply(address: string, judge: (r: PeerRecord) => Judgement): void {
    const current = this.records.get(address);
    if (!current) return;
    const judgement = judge(current);
    this.put(address, judgement.record);
    // Just confirmed dead: the next confirmation is due DEAD_RECHECK_ROUNDS from now.
    if (judgement.record.health === 'dead' && current.health !== 'dead') {
      this.rechecked.set(address, this.opts.clock.now());
    }
    if (judgement.transition) this.opts.onJudgement(judgement);
    // Whether this node suspects itself may have changed only if this peer's reachability did.
    const { record } = judgement;
    if (
      record.health !== current.health ||
      !record.brokenPath !== !current.brokenPath ||
      silentNow(record) !== silentNow(current)
    ) {
      this.noteSelfSuspicion();
    }
    if (VISIBLE.has(judgement.transition)) this.verdictChanges++;
  }

  private noteSelfSuspicion(): void {
    const now = this.selfSuspicion;
    if (now.suspect === this.wasSelfSuspect) return;
    this.wasSelfSuspect = now.suspect;
    this.verdictChanges++; // the cluster status says so
    this.opts.onSelfSuspicion?.(now);
    const fields = { event: now.suspect ? 'self-suspect' : 'self-trusted', ...now };
    if (now.suspect) {
      this.opts.logger.warn(
        fields,
        `${now.silent} of ${now.considered} peers do not answer at all: suspecting this node's own network, not theirs; a silent peer is declared dead only once it reaches most of them again (a peer that refuses still is)`,
      );
    } else {
      this.opts.logger.info(
        fields,
        `reaches most peers again (${now.silent} of ${now.considered} silent)`,
      );
    }
  }

  /**
   * One probe of one peer. Resolves once that probe has answered or failed; a failure starts the
   * confirmation, which goes on in the background (the peer stays in flight until it ends).
   */
  private async probe(
    address: string,
    signal: AbortSignal,
    selfHealthy: () => Promise<boolean>,
  ): Promise<void> {
    const { clock, transport } = this.opts;
    this.inFlight.add(address);
    const done = () => {
      if (!signal.aborted) this.inFlight.delete(address);
    };
    try {
      const started = clock.now();
      const first = await transport.ping(address, signal);
      if (signal.aborted) return done();
      if (first.ok) {
        this.apply(address, (r) => answered(r, answerOf(first), clock.now()));
        return done();
      }
      const before = this.records.get(address)?.health;
      this.apply(address, (r) => attemptFailed(r, failureOf(first, 1), started, clock.now()));
      // A dead peer stays dead until it answers: no new confirmation every round, only now and
      // then, in case others reach it (then it is alive, and the path from here broken).
      if (before === 'dead' && !this.recheckDue(address)) return done();
      void confirmUnreachable(this.confirmation, address, first, signal, selfHealthy)
        .then(() => {
          if (signal.aborted || this.verdictChanges === 0) return;
          this.verdictChanges = 0;
          this.opts.onVerdictsChanged?.();
        })
        .catch((err: unknown) =>
          this.opts.logger.error({ err, peerAddress: address }, 'BUG: a confirmation failed'),
        )
        .finally(done);
    } catch (err) {
      done();
      throw err;
    }
  }
}
