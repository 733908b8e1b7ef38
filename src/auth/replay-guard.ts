// Nonces of accepted messages, remembered for as long as their timestamps would still be accepted:
// a captured message sent again is refused. Bounded: only messages with a valid signature are
// remembered, so only a holder of the secret can fill it, and a full guard refuses rather than
// forgets (forgetting would reopen replays).

export type RememberResult = 'new' | 'replayed' | 'full';

export class ReplayGuard {
  /**
   * Nonce → expiry, on a monotonic clock: insertion order is then expiry order, so pruning is
   * cheap, and a wall clock stepped back cannot make a pruned nonce new again.
   */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly rememberMs: number,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.seen.size;
  }

  /** Records `nonce` at `now` unless it was already seen within rememberMs. */
  remember(nonce: string, now: number): RememberResult {
    this.prune(now);
    if (this.seen.has(nonce)) return 'replayed';
    if (this.seen.size >= this.maxEntries) return 'full';
    this.seen.set(nonce, now + this.rememberMs);
    return 'new';
  }

  private prune(now: number): void {
    for (const [nonce, expires] of this.seen) {
      // Remembered through its last acceptable moment, that moment included.
      if (expires >= now) break;
      this.seen.delete(nonce);
    }
  }
}
