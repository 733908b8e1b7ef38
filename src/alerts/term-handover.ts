// A term's peer-status events across a change of coordinator, so each reaches its receiver once.
//
// A coordinator that stops leading sends nothing more of its term: what it had not sent is
// withdrawn from its queues, and what was in flight ends with that attempt. For a minute it tells
// whoever announces itself next (in its replies, to a node of protocol 2) which of its events went
// out, which are still in flight and which it did not send. The new coordinator skips the first,
// waits for the second (the outcome comes in a later reply, or it sends them once the wait is
// over: at least once) and sends the third. Should it lead again within the minute, it sends the
// third itself, but for those its successor's hand-over says went out. A coordinator that crashed
// says nothing: its successor sends what the followers last heard was undelivered (at least once,
// same dedup key).
import type { PeerStatusPayload } from '../wire/webhooks.js';
import type { TermHandover } from '../wire/term-handover.js';
import { trimOldest } from '../core/trim-oldest.js';

/** How long after its term ended a node still hands it over. */
export const HANDOVER_FOR_MS = 60_000;
/** Keys told in one hand-over at most, of each kind (the newest). */
export const MAX_HANDED_OVER = 500;

/** The ex-coordinator's side: which of its events went out, and which it withdrew unsent. */
export class DeliveryLog {
  /** Keys handed to the queues and not settled yet. */
  private readonly posted = new Set<string>();
  /** Keys settled (delivered, given up, rejected, dropped), oldest first, with when. */
  private readonly settledAt = new Map<string, number>();
  /**
   * Events withdrawn unsent when the term ended. Handed over to every node announcing itself while
   * the term is being handed over (the one that took them may lose its lead before sending them;
   * a node taking them twice sends them once: HandoverLedger).
   */
  private readonly withdrawn = new Map<string, PeerStatusPayload>();
  private ended: { epoch: number; atMs: number } | null = null;

  posting(key: string): void {
    this.posted.add(key);
  }

  /** Whether its POST is queued or in flight. */
  isPosted(key: string): boolean {
    return this.posted.has(key);
  }

  /** The POST ended: `sent` unless it was withdrawn (it goes to the next coordinator instead). */
  settled(key: string, sent: boolean, now: number): void {
    this.posted.delete(key);
    if (!sent) return;
    this.settledAt.delete(key);
    this.settledAt.set(key, now);
    trimOldest(this.settledAt, MAX_HANDED_OVER);
  }

  /** The term ended (another node leads): it is handed over from now on, for a while. */
  endTerm(epoch: number, now: number): void {
    this.ended = { epoch, atMs: now };
  }

  /** An event of the ended term not sent: the next coordinator's to send. */
  withdraw(payload: PeerStatusPayload): void {
    this.withdrawn.set(payload.dedup_key, payload);
  }

  /**
   * What to hand over now, to a node announcing itself (its reply is built): the withdrawn events
   * are that node's from now on. Null when no term ended lately.
   */
  handOver(now: number): TermHandover | null {
    if (!this.handingOver(now)) return null;
    const since = (this.ended?.atMs ?? now) - HANDOVER_FOR_MS;
    const settled = [...this.settledAt].filter(([, at]) => at >= since).map(([key]) => key);
    return {
      epoch: this.ended?.epoch ?? 0,
      settled: settled.slice(-MAX_HANDED_OVER),
      in_flight: [...this.posted].slice(-MAX_HANDED_OVER),
      undelivered: [...this.withdrawn.values()].slice(-MAX_HANDED_OVER),
    };
  }

  /**
   * Withdrawn events, while the term is still being handed over: undelivered still (shared with
   * followers, whose copies reach whoever takes over). After that, whoever led since had them
   * from a hand-over or from the followers' copies: they are forgotten here.
   */
  withdrawnNow(now: number): PeerStatusPayload[] {
    if (!this.handingOver(now)) {
      this.withdrawn.clear();
      return [];
    }
    return [...this.withdrawn.values()];
  }

  /**
   * A new term of this node's own begins: the withdrawn events are its to send again (those a
   * successor sent meanwhile are skipped once that node's hand-over says so); nothing of the old
   * term is handed over any more.
   */
  startTerm(now: number): PeerStatusPayload[] {
    const reclaimed = this.withdrawnNow(now);
    this.withdrawn.clear();
    this.ended = null;
    return reclaimed;
  }

  private handingOver(now: number): boolean {
    return this.ended !== null && now - this.ended.atMs <= HANDOVER_FOR_MS;
  }
}

/** The new coordinator's side: what predecessors said of their events. */
export class HandoverLedger {
  private readonly settled = new Set<string>();
  /** Keys in flight at a predecessor, and until when their outcome is waited for. */
  private readonly awaited = new Map<string, number>();
  /** Keys a predecessor handed over unsent this term: a repeated hand-over sends them no more. */
  private readonly taken = new Set<string>();

  constructor(private readonly waitMs: number) {}

  /** Takes a hand-over in; returns the events it says to send now (not sent, not in flight). */
  take(h: TermHandover, now: number): PeerStatusPayload[] {
    for (const key of h.settled) {
      this.settled.add(key);
      this.awaited.delete(key);
    }
    for (const key of h.in_flight) {
      if (!this.settled.has(key) && !this.awaited.has(key))
        this.awaited.set(key, now + this.waitMs);
    }
    // Told undelivered now: its POST ended without delivery and was not retried.
    for (const p of h.undelivered) this.awaited.delete(p.dedup_key);
    const fresh = h.undelivered.filter(
      (p) => !this.settled.has(p.dedup_key) && !this.taken.has(p.dedup_key),
    );
    for (const p of fresh) this.taken.add(p.dedup_key);
    this.bound();
    return fresh;
  }

  /** This node's term (or wait to lead) ended: what it took and did not send is another's now. */
  endTerm(): void {
    this.taken.clear();
  }

  /** Events taken before this term began (while waiting to lead), this term's to send. */
  took(events: readonly PeerStatusPayload[]): void {
    for (const p of events) this.taken.add(p.dedup_key);
    this.bound();
  }

  /** `settled`: a predecessor sent it; `awaited`: its POST is in flight there; else null. */
  statusOf(key: string, now: number): 'settled' | 'awaited' | null {
    if (this.settled.has(key)) return 'settled';
    const until = this.awaited.get(key);
    return until !== undefined && until > now ? 'awaited' : null;
  }

  /** When the next wait ends, if any is running. */
  nextDue(now: number): number | null {
    let next: number | null = null;
    for (const until of this.awaited.values()) {
      if (until > now && (next === null || until < next)) next = until;
    }
    return next;
  }

  private bound(): void {
    for (const keys of [this.settled, this.awaited, this.taken]) {
      trimOldest(keys, 4 * MAX_HANDED_OVER);
    }
  }
}
