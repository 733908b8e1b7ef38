// What this node's peers say of its signed messages: how far each one's clock is from this node's
// (read from the Date header every HTTP answer carries), and which of them refuse its messages as
// not authenticated, and why. Pure: times are passed in.
//
// The offsets let a node whose clock is minutes off take part: a message is stamped in the
// receiver's time (PeerAuth.signRequest), so the receiver's window (PEER_AUTH_MAX_SKEW) bounds how
// long a captured message could be replayed, not how well the two clocks agree. The refusals let a
// node tell that its peers cannot authenticate it (another secret; a clock too far off before an
// answer said so), say so, and not lead.
import type { AuthRefusal, UnprovenPing } from '../core/transport.js';

/**
 * Offsets below this are not kept: a Date header has a resolution of a second, and a message's
 * round trip adds its half, so smaller ones are noise; the auth window is tens of seconds.
 */
export const NOTABLE_OFFSET_MS = 2_000;
/** A refusal or an acceptance this old no longer says how peers take this node's messages. */
export const STANDING_MS = 60_000;
/** Peers remembered at most (discovery lists fewer; the bound is against addresses never listed). */
const MAX_PEERS = 20_000;

export interface Refusal {
  reason: AuthRefusal;
  /** The first refusal of this spell (it stays refused), and the latest. */
  sinceMs: number;
  atMs: number;
}

export interface StandingView {
  /** Peers whose last answer to a signed message, within STANDING_MS, refused it. */
  refusedBy: { address: string; reason: AuthRefusal; sinceMs: number; atMs: number }[];
  /**
   * Peers whose last answer to a signed message, within STANDING_MS, took it but was not signed:
   * they have no PEER_SECRET. Not a refusal (such a peer takes this node's messages), but nothing
   * they answer can be believed.
   */
  unsignedBy: { address: string; sinceMs: number; atMs: number }[];
  /**
   * Peers whose last answer to a challenged probe, within STANDING_MS, proved nothing though they
   * ought to sign (ping-signature.ts): nothing that answers for them can be believed alive.
   */
  unprovenBy: { address: string; reason: UnprovenPing; sinceMs: number; atMs: number }[];
  /** When a peer last took one of this node's signed messages, if within STANDING_MS. */
  lastAcceptedMs: number | null;
  /** Peers whose clocks are NOTABLE_OFFSET_MS or more from this node's, ms (positive: ahead). */
  offsets: { address: string; offsetMs: number }[];
}

/** The time an HTTP Date header names, at the middle of its second; null if it names none. */
export function dateHeaderMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  if (value === lastDate.value) return lastDate.ms;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return null;
  // A coordinator reads 5,000 answers a second, nearly all stamped with the same second.
  lastDate = { value, ms: ms + 500 };
  return lastDate.ms;
}

let lastDate: { value: string | undefined; ms: number } = { value: undefined, ms: 0 };

export class PeerStanding {
  private readonly offsets = new Map<string, number>();
  private readonly refusals = new Map<string, Refusal>();
  private readonly unsigned = new Map<string, { sinceMs: number; atMs: number }>();
  private readonly unproven = new Map<
    string,
    { reason: UnprovenPing; sinceMs: number; atMs: number }
  >();
  /** One time, not one a peer: a coordinator's 5,000 followers take its announcements. */
  private lastAcceptedMs: number | null = null;

  /**
   * An answer from `peer` said its clock read `peerTimeMs`; it came `latencyMs` after the request
   * left, and now is `nowMs`. Returns the offset now kept for the peer (0: none notable).
   */
  observeClock(peer: string, peerTimeMs: number, nowMs: number, latencyMs: number): number {
    const offset = Math.round(peerTimeMs - (nowMs - latencyMs / 2));
    if (Math.abs(offset) < NOTABLE_OFFSET_MS) {
      if (this.offsets.size > 0) this.offsets.delete(peer);
      return 0;
    }
    bounded(this.offsets);
    this.offsets.set(peer, offset);
    return offset;
  }

  /** How far `peer`'s clock is from this node's, ms: 0 unless notable. */
  offsetOf(peer: string): number {
    return this.offsets.size === 0 ? 0 : (this.offsets.get(peer) ?? 0);
  }

  refusedBy(peer: string, reason: AuthRefusal, nowMs: number): void {
    if (this.unsigned.size > 0) this.unsigned.delete(peer);
    noteReason(this.refusals, peer, reason, nowMs);
  }

  /** `peer` answered a signed message, unsigned: it has no PEER_SECRET. */
  answeredUnsigned(peer: string, nowMs: number): void {
    if (this.refusals.size > 0) this.refusals.delete(peer);
    const before = this.unsigned.get(peer);
    if (before) {
      before.atMs = nowMs;
      return;
    }
    bounded(this.unsigned);
    this.unsigned.set(peer, { sinceMs: nowMs, atMs: nowMs });
  }

  /** `peer` answered a challenged probe, and the answer proved nothing (`reason`). */
  pingUnproven(peer: string, reason: UnprovenPing, nowMs: number): void {
    noteReason(this.unproven, peer, reason, nowMs);
  }

  /** `peer` answered a challenged probe signed: it holds the secret. */
  pingProven(peer: string): void {
    if (this.unproven.size > 0) this.unproven.delete(peer);
  }

  acceptedBy(peer: string, nowMs: number): void {
    if (this.refusals.size > 0) this.refusals.delete(peer);
    if (this.unsigned.size > 0) this.unsigned.delete(peer);
    this.lastAcceptedMs = nowMs;
  }

  /** Peers no longer listed: forgotten. */
  keepOnly(listed: ReadonlySet<string>): void {
    for (const map of [this.offsets, this.refusals, this.unsigned, this.unproven]) {
      for (const peer of map.keys()) if (!listed.has(peer)) map.delete(peer);
    }
  }

  view(nowMs: number): StandingView {
    if (this.lastAcceptedMs !== null && nowMs - this.lastAcceptedMs > STANDING_MS) {
      this.lastAcceptedMs = null;
    }
    const refusedBy = [];
    for (const [address, r] of this.refusals) {
      if (nowMs - r.atMs > STANDING_MS) this.refusals.delete(address);
      else refusedBy.push({ address, reason: r.reason, sinceMs: r.sinceMs, atMs: r.atMs });
    }
    const unsignedBy = [];
    for (const [address, u] of this.unsigned) {
      if (nowMs - u.atMs > STANDING_MS) this.unsigned.delete(address);
      else unsignedBy.push({ address, sinceMs: u.sinceMs, atMs: u.atMs });
    }
    const unprovenBy = [];
    for (const [address, u] of this.unproven) {
      if (nowMs - u.atMs > STANDING_MS) this.unproven.delete(address);
      else unprovenBy.push({ address, reason: u.reason, sinceMs: u.sinceMs, atMs: u.atMs });
    }
    const offsets = [...this.offsets].map(([address, offsetMs]) => ({ address, offsetMs }));
    return { refusedBy, unsignedBy, unprovenBy, lastAcceptedMs: this.lastAcceptedMs, offsets };
  }

  /**
   * Why this node cannot prove itself to its peers, or null: peers refused its signed messages
   * lately, and none has taken one since the first of those refusals.
   */
  unauthenticated(nowMs: number): string | null {
    const v = this.view(nowMs);
    if (v.refusedBy.length === 0) return null;
    // A peer refusing it all along (an older node with its clock off) while others take its
    // messages does not make it unauthenticated: only refusals since the last acceptance do.
    const firstRefusal = Math.min(...v.refusedBy.map((r) => r.sinceMs));
    if (v.lastAcceptedMs !== null && v.lastAcceptedMs >= firstRefusal) return null;
    const counts = new Map<AuthRefusal, number>();
    for (const r of v.refusedBy) counts.set(r.reason, (counts.get(r.reason) ?? 0) + 1);
    const reasons = [...counts]
      .sort((a, b) => b[1] - a[1])
      .map(([reason, n]) => `${reason} ×${n}`)
      .join(', ');
    return `every peer that answered refused this node's signed messages (${reasons}): ${hint(v)}`;
  }
}

function hint(v: StandingView): string {
  const reasons = new Set(v.refusedBy.map((r) => r.reason));
  if (reasons.has('bad-signature')) return 'this node holds another PEER_SECRET than its peers';
  if (reasons.has('missing')) return 'its peers have PEER_SECRET set and this node has not';
  if (reasons.has('expired')) return "this node's clock is too far from its peers'";
  return "see the peers' logs (event auth-*)";
}

/** `peer` gave `reason` at `nowMs`: since when it has been giving one is kept. */
function noteReason<R>(
  map: Map<string, { reason: R; sinceMs: number; atMs: number }>,
  peer: string,
  reason: R,
  nowMs: number,
): void {
  const before = map.get(peer);
  if (before) {
    before.reason = reason;
    before.atMs = nowMs;
    return;
  }
  bounded(map);
  map.set(peer, { reason, sinceMs: nowMs, atMs: nowMs });
}

function bounded(map: Map<string, unknown>): void {
  if (map.size >= MAX_PEERS) map.clear();
}
