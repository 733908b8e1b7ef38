// A term's peer-status events across a change of coordinator, so each reaches its receiver once.
//
// A coordinator that stops leading sends nothing more of its term: what it had not sent is
// withdrawn from its queues, and what was in flight ends with that attempt. For a minute it tells
// whoever announces itself next (in its replies, to a node of protocol 2) which of its events went
// out, which are still in flight and which it did not send. The new coordinator skips the first,
// waits for the second (the outcome comes in a later reply, or it sends them once the wait is
// over: at least once) and sends the third. A coordinator that crashed says nothing: its successor
// sends what the followers last heard was undelivered (at least once, same dedup key).
import type { PeerStatusPayload } from './payloads.js';

/** What an ended term hands over (the `handover` of an announcement reply). */
export interface TermHandover {
  /** The epoch of the term that ended. */
  epoch: number;
  /** Dedup keys of its events that went out (delivered, or given up) lately. */
  settled: string[];
  /** Dedup keys of its events whose POST was in flight: their outcome comes in a later reply. */
  in_flight: string[];
  /** Its events not sent: the new coordinator sends them. */
  undelivered: PeerStatusPayload[];
}

/** How long after its term ended a node still hands it over. */
export const HANDOVER_FOR_MS = 60_000;
/** Keys told in one hand-over at most, of each kind (the newest). */
export const MAX_HANDED_OVER = 500;

/** The ex-coordinator's side: which of its events went out, and when. */
export class DeliveryLog {
  /** Keys handed to the queues and not settled yet. */
  private readonly posted = new Set<string>();
  /** Keys settled (delivered, given up, rejected, dropped), oldest first, with when. */
  private readonly settledAt = new Map<string, number>();
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
    if (this.settledAt.size > MAX_HANDED_OVER) {
      const oldest = this.settledAt.keys().next().value;
      if (oldest !== undefined) this.settledAt.delete(oldest);
    }
  }

  /** The term ended (another node leads): it is handed over from now on, for a while. */
  endTerm(epoch: number, now: number): void {
    this.ended = { epoch, atMs: now };
  }

  /** A new term of this node's own began: nothing of the old one to hand over any more. */
  startTerm(): void {
    this.ended = null;
  }

  /** What to hand over now, given the events still pending; null when no term ended lately. */
  handover(pending: readonly PeerStatusPayload[], now: number): TermHandover | null {
    const ended = this.ended;
    if (!ended || now - ended.atMs > HANDOVER_FOR_MS) return null;
    const since = ended.atMs - HANDOVER_FOR_MS;
    const settled = [...this.settledAt].filter(([, at]) => at >= since).map(([key]) => key);
    return {
      epoch: ended.epoch,
      settled: settled.slice(-MAX_HANDED_OVER),
      in_flight: [...this.posted].slice(-MAX_HANDED_OVER),
      undelivered: pending.filter((p) => !this.posted.has(p.dedup_key)).slice(-MAX_HANDED_OVER),
    };
  }
}

/** The new coordinator's side: what predecessors said of their events. */
export class HandoverLedger {
  private readonly settled = new Set<string>();
  /** Keys in flight at a predecessor, and until when their outcome is waited for. */
  private readonly awaited = new Map<string, number>();

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
    this.bound();
    return h.undelivered.filter((p) => !this.settled.has(p.dedup_key));
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
    for (const map of [this.settled, this.awaited] as const) {
      while (map.size > 4 * MAX_HANDED_OVER) {
        const oldest = map.keys().next().value;
        if (oldest === undefined) break;
        map.delete(oldest);
      }
    }
  }
}
