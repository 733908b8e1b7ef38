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
  silentNow,
  type Judgement,
  type PeerRecord,
  type SelfSuspicion,
  type Transition,
} from './verdict.js';
import type { PeerView } from '../wire/peer-view.js';
import { DeadRechecks } from './dead-rechecks.js';
import { PACE_ABOVE_PEERS, paced } from './pacing.js';
import { RecordBook } from './record-book.js';

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
  loopLag?: { maxLagWithinMs(ms: number): number; precise?(on: boolean): void };
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
  onVerdictsChanged?(changes: number): void;
  /** Called when whether this node suspects itself changes (selfSuspicion). Must not block. */
  onSelfSuspicion?(suspicion: SelfSuspicion): void;
}

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
  /** The verdicts. */
  private readonly book = new RecordBook();
  private readonly inFlight = new Set<string>();
  /** Peers of a paced round not launched yet (they count as in flight meanwhile). */
  private readonly queued = new Set<string>();
  private peers: readonly string[] = [];
  private controller: AbortController | null = null;
  private sanityState: SanityState;
  private membershipChanges = 0;
  private verdictChanges = 0;
  private wasSelfSuspect = false;
  private readonly rechecks: DeadRechecks;
  private lastRound: number | null = null;

  private readonly confirmation: ConfirmationContext;

  constructor(private readonly opts: ProbeRoundsOptions) {
    this.sanityState = opts.sanity ? 'ok' : 'not-configured';
    this.rechecks = new DeadRechecks(opts.intervalMs);
    this.confirmation = {
      ...opts,
      random: opts.random ?? Math.random,
      lastHeard: (address) => opts.lastHeard?.(address) ?? null,
      peers: () => this.peers,
      record: (address) => this.book.get(address),
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
    return this.book.selfSuspicion;
  }

  /**
   * Another request to this live peer just failed (a heartbeat, say): probe it now rather than at
   * the next round, so a crash is noticed within a heartbeat. No-op while it is being probed.
   */
  probeSoon(address: string): void {
    const signal = this.controller?.signal;
    if (!signal || this.book.get(address)?.health !== 'alive') return;
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
    return this.book.version;
  }

  /** One peer's verdict, if it has one. */
  record(address: string): PeerRecord | undefined {
    return this.book.get(address);
  }

  /** The verdicts, in the order of the peer list. */
  snapshot(): PeerRecord[] {
    return this.peers.flatMap((a) => this.book.get(a) ?? []);
  }

  setPeers(peers: readonly string[]): void {
    this.peers = [...peers];
    this.book.touch();
    if (!this.running) return;
    const now = this.opts.clock.now();
    const listed = new Set(peers);
    for (const address of [...this.book.addresses()]) {
      if (listed.has(address)) continue;
      this.book.drop(address);
      this.rechecks.forget(address);
      this.membershipChanges++;
    }
    for (const address of peers) {
      if (this.book.has(address)) continue;
      this.book.put(address, this.fresh(address, now));
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
    const r = this.book.get(address);
    if (!r || r.health !== 'unknown' || r.lastProbeMs !== null) return;
    this.book.put(address, { ...r, id, nodeName: nodeNameOf(id), health: 'alive', sinceMs });
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
    this.book.clear();
    for (const address of this.peers) {
      const view = known.get(address);
      this.book.put(address, view ? fromView(view) : this.fresh(address, now));
    }
    this.membershipChanges = 0;
    this.verdictChanges = 0;
    this.wasSelfSuspect = false;
    // While leading, timeouts are judged: the lag that excuses them is measured finely.
    this.opts.loopLag?.precise?.(true);
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
    this.opts.loopLag?.precise?.(false);
    this.controller?.abort(new Error('stopped leading'));
    this.controller = null;
    this.inFlight.clear();
    this.queued.clear();
    this.book.clear();
    this.rechecks.clear();
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
    this.rechecks.pick(this.book.entries(), started);
    let sanity: Promise<boolean> | null = null;
    // One sanity check per round, and only when some peer would otherwise be declared dead.
    const selfHealthy = () => (sanity ??= this.checkSanity());
    const launch = (address: string) => this.probe(address, signal, selfHealthy);
    if (targets.length > PACE_ABOVE_PEERS) {
      // Counted in flight from the start, so a round that runs long is not probed twice by the next.
      for (const address of targets) this.inFlight.add(address);
      const { clock, intervalMs } = this.opts;
      await paced(targets, { clock, intervalMs, started, signal, queued: this.queued, launch });
    } else {
      await Promise.all(targets.map(launch));
    }
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

  private async checkSanity(): Promise<boolean> {
    if (!this.opts.sanity) return true;
    const outcome = await this.opts.sanity.check();
    this.sanityState = outcome.ok ? 'ok' : 'failed';
    return outcome.ok;
  }

  /**
   * Takes on the verdicts of a term this node supersedes (after a partition healed): peers that
   * term reported dead are dead here too, so their recovery resolves those incidents.
   */
  adopt(views: readonly PeerView[]): void {
    for (const view of views) {
      const current = this.book.get(view.address);
      if (!current || view.health !== 'dead' || !view.alerted) continue;
      if (current.health === 'dead' && current.alerted) continue;
      this.book.put(view.address, {
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
    const current = this.book.get(address);
    if (!current) return;
    const judgement = judge(current);
    this.book.put(address, judgement.record);
    // Just confirmed dead: the next confirmation is due DEAD_RECHECK_ROUNDS from now.
    if (judgement.record.health === 'dead' && current.health !== 'dead') {
      this.rechecks.confirmed(address, this.opts.clock.now());
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
      const before = this.book.get(address)?.health;
      this.apply(address, (r) => attemptFailed(r, failureOf(first, 1), started, clock.now()));
      // A dead peer stays dead until it answers: no new confirmation every round, only now and
      // then, in case others reach it (then it is alive, and the path from here broken).
      if (before === 'dead' && !this.rechecks.due(address, clock.now())) return done();
      void confirmUnreachable(this.confirmation, address, first, signal, selfHealthy)
        .then(() => {
          const changes = this.verdictChanges;
          if (signal.aborted || changes === 0) return;
          this.verdictChanges = 0;
          this.opts.onVerdictsChanged?.(changes);
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
