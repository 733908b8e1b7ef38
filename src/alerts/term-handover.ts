// A term's peer-status events across a change of coordinator, so each reaches its receiver once.
//
// A coordinator that stops leading sends nothing more of its term: what it had not sent is
// withdrawn from its queues, and what was in flight ends with that attempt. For a minute it tells
// whoever announces itself next (in its replies, to a node of protocol 2) which of its events went
// out, which are still in flight and which it did not send. The new coordinator skips the first,
// waits for the second (the outcome comes in a later reply, or it sends them once the wait is
// over: at least once) and sends the third. Should it lead again before anyone took them, it sends
// the third itself. A coordinator that crashed says nothing: its successor sends what the
// followers last heard was undelivered (at least once, same dedup key).
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

/** The ex-coordinator's side: which of its events went out, and which it withdrew unsent. */
export class DeliveryLog {
  /** Keys handed to the queues and not settled yet. */
  private readonly posted = new Set<string>();
  /** Keys settled (delivered, given up, rejected, dropped), oldest first, with when. */
  private readonly settledAt = new Map<string, number>();
  /** Events withdrawn unsent when the term ended; `taken` once handed over to the next leader. */
  private readonly withdrawn = new Map<string, { payload: PeerStatusPayload; taken: boolean }>();
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

  /** An event of the ended term not sent: the next coordinator's to send. */
  withdraw(payload: PeerStatusPayload): void {
    this.withdrawn.set(payload.dedup_key, { payload, taken: false });
  }

  /**
   * What to hand over now, to a node announcing itself (its reply is built): the withdrawn events
   * are that node's from now on. Null when no term ended lately.
   */
  handOver(now: number): TermHandover | null {
    if (!this.handingOver(now)) return null;
    const since = (this.ended?.atMs ?? now) - HANDOVER_FOR_MS;
    const settled = [...this.settledAt].filter(([, at]) => at >= since).map(([key]) => key);
    const withdrawn = [...this.withdrawn.values()].slice(-MAX_HANDED_OVER);
    for (const w of withdrawn) w.taken = true;
    return {
      epoch: this.ended?.epoch ?? 0,
      settled: settled.slice(-MAX_HANDED_OVER),
      in_flight: [...this.posted].slice(-MAX_HANDED_OVER),
      undelivered: withdrawn.map((w) => w.payload),
    };
  }

  /**
   * Withdrawn events nobody took yet, while the term is still being handed over: undelivered
   * still (a node taking over hears of them). After that, whoever led since had them from the
   * followers' copies: they are forgotten here.
   */
  untaken(now: number): PeerStatusPayload[] {
    if (!this.handingOver(now)) {
      this.withdrawn.clear();
      return [];
    }
    return [...this.withdrawn.values()].filter((w) => !w.taken).map((w) => w.payload);
  }

  /**
   * A new term of this node's own begins: the withdrawn events nobody took are its to send again;
   * nothing of the old term is handed over any more.
   */
  startTerm(now: number): PeerStatusPayload[] {
    const reclaimed = this.untaken(now);
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
