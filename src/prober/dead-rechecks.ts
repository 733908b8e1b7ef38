// A dead peer stays dead until it answers: its failed probes start no new confirmation every
// round, only now and then (in case others reach it: then it is alive, and the path from here is
// broken), and a bounded number of them a round, the longest waiting first.
import type { PeerRecord } from './verdict.js';

/** A dead peer's failed probes get a new confirmation (relays) once per this many rounds. */
const DEAD_RECHECK_ROUNDS = 10;
/**
 * At most this many dead peers get that confirmation in one round, the longest waiting first: when
 * a zone of a large mesh is lost, each is rechecked every few dozen rounds rather than hundreds
 * a second, each with its relays, keeping the coordinator free to deliver their alerts.
 */
export const DEAD_RECHECKS_PER_ROUND = 50;

export class DeadRechecks {
  /** Dead peers: when their last confirmation ran. */
  private readonly last = new Map<string, number>();
  /** Dead peers whose failed probe this round starts a confirmation (pick). */
  private picked = new Set<string>();

  constructor(private readonly intervalMs: number) {}

  /**
   * A round begins: the dead peers it rechecks are those due (DEAD_RECHECK_ROUNDS since their
   * last one), the longest waiting first, at most DEAD_RECHECKS_PER_ROUND.
   */
  pick(records: Iterable<[string, PeerRecord]>, now: number): void {
    const dueBefore = now - DEAD_RECHECK_ROUNDS * this.intervalMs;
    const due: { address: string; at: number }[] = [];
    for (const [address, r] of records) {
      if (r.health !== 'dead') continue;
      const at = this.last.get(address) ?? 0;
      if (at <= dueBefore) due.push({ address, at });
    }
    due.sort((a, b) => a.at - b.at);
    this.picked = new Set(due.slice(0, DEAD_RECHECKS_PER_ROUND).map((d) => d.address));
  }

  /** Whether this round rechecks the dead peer (picked as the round began); once a round. */
  due(address: string, now: number): boolean {
    if (!this.picked.delete(address)) return false;
    this.last.set(address, now);
    return true;
  }

  /** Just confirmed dead: its next confirmation is due DEAD_RECHECK_ROUNDS from now. */
  confirmed(address: string, now: number): void {
    this.last.set(address, now);
  }

  forget(address: string): void {
    this.last.delete(address);
  }

  clear(): void {
    this.last.clear();
  }
}
