// The coordinator's probe rounds: every interval, probe each peer not already being probed.
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerTransport, SanityCheck } from '../core/transport.js';
import { probeWithRetries, type RetryPolicy } from './attempts.js';
import {
  fromView,
  judge,
  newRecord,
  type Judgement,
  type PeerRecord,
  type PeerView,
  type ProbeResult,
} from './verdict.js';

export type SanityState = 'ok' | 'failed' | 'not-configured';

export interface RoundReport {
  round: number;
  probed: number;
  /** Peers whose health changed in this round. */
  changed: number;
  /** Peers added to or removed from the peer list since the previous round. */
  membership: number;
  durationMs: number;
  sanity: SanityState;
}

export interface ProbeRoundsOptions {
  transport: Pick<PeerTransport, 'ping'>;
  sanity: SanityCheck | null;
  clock: Clock;
  logger: Logger;
  policy: RetryPolicy;
  intervalMs: number;
  /** Called as soon as a probe changes a peer's verdict; must not block (it runs in the round). */
  onJudgement(judgement: Judgement): void;
  /** Called when all of a round's probes have settled; rounds overlap when a probe is slow. */
  onRound(report: RoundReport): void;
}

/**
 * A peer still being probed (a slow or black-holed one, with retries) is skipped by later rounds
 * rather than holding them up, so one bad peer never delays the verdicts on the others.
 */
export class ProbeRounds {
  private readonly records = new Map<string, PeerRecord>();
  private readonly inFlight = new Set<string>();
  private peers: readonly string[] = [];
  private controller: AbortController | null = null;
  private sanityState: SanityState;
  private membershipChanges = 0;

  constructor(private readonly opts: ProbeRoundsOptions) {
    this.sanityState = opts.sanity ? 'ok' : 'not-configured';
  }

  get running(): boolean {
    return this.controller !== null;
  }

  get sanity(): SanityState {
    return this.sanityState;
  }

  /** The verdicts, in the order of the peer list. */
  snapshot(): PeerRecord[] {
    return this.peers.flatMap((a) => this.records.get(a) ?? []);
  }

  setPeers(peers: readonly string[]): void {
    this.peers = [...peers];
    if (!this.running) return;
    const now = this.opts.clock.now();
    for (const address of this.records.keys()) {
      if (peers.includes(address)) continue;
      this.records.delete(address);
      this.membershipChanges++;
    }
    for (const address of peers) {
      if (this.records.has(address)) continue;
      this.records.set(address, newRecord(address, now));
      this.membershipChanges++;
    }
  }

  /** Starts leading: seeds verdicts from the predecessor's view, then probes at once. */
  start(inherited: readonly PeerView[]): void {
    if (this.running) return;
    const now = this.opts.clock.now();
    const known = new Map(inherited.map((v) => [v.address, v]));
    this.records.clear();
    for (const address of this.peers) {
      const view = known.get(address);
      this.records.set(address, view ? fromView(view) : newRecord(address, now));
    }
    this.membershipChanges = 0;
    this.controller = new AbortController();
    void this.loop(this.controller.signal);
  }

  stop(): void {
    this.controller?.abort(new Error('stopped leading'));
    this.controller = null;
    this.inFlight.clear();
    this.records.clear();
  }

  private async loop(signal: AbortSignal): Promise<void> {
    for (let round = 1; !signal.aborted; round++) {
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
    let sanity: Promise<boolean> | null = null;
    // One sanity check per round, and only when some peer would otherwise be declared dead.
    const selfHealthy = () => (sanity ??= this.checkSanity());
    const results = await Promise.all(
      targets.map((address) => this.probe(address, signal, selfHealthy)),
    );
    if (signal.aborted) return;
    this.opts.onRound({
      round,
      probed: targets.length,
      changed: results.filter(Boolean).length,
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

  /** Returns whether the peer's health changed. */
  private async probe(
    address: string,
    signal: AbortSignal,
    selfHealthy: () => Promise<boolean>,
  ): Promise<boolean> {
    this.inFlight.add(address);
    try {
      const { outcome, attempts } = await probeWithRetries(
        (s) => this.opts.transport.ping(address, s),
        this.opts.policy,
        this.opts.clock,
        signal,
      );
      const record = this.records.get(address);
      if (signal.aborted || !record) return false;
      const result: ProbeResult = outcome.ok
        ? {
            ok: true,
            latencyMs: outcome.latencyMs,
            id: outcome.value.id,
            nodeName: outcome.value.node_name,
          }
        : {
            ok: false,
            latencyMs: outcome.latencyMs,
            failure: `${outcome.reason} (${outcome.detail}) after ${attempts} attempt${attempts > 1 ? 's' : ''}`,
          };
      const withholdDeath = !outcome.ok && record.health !== 'dead' && !(await selfHealthy());
      // The peer may have been removed or leadership lost while the sanity check ran.
      const current = this.records.get(address);
      if (signal.aborted || !current) return false;
      const judgement = judge(current, result, this.opts.clock.now(), { withholdDeath });
      this.records.set(address, judgement.record);
      if (judgement.transition) this.opts.onJudgement(judgement);
      return judgement.record.health !== current.health;
    } finally {
      if (!signal.aborted) this.inFlight.delete(address);
    }
  }
}
