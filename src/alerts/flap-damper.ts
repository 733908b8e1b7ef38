// Flap damping of a peer's dead/recovered events, for every receiver (KNH's webhook first): a peer
// that comes back is resolved only once it has stayed up for RECOVERY_HOLD, and dying again within
// it continues the same incident; a peer whose verdict changes FLAP_CHANGES times within
// FLAP_WINDOW gets one peer_flapping, then nothing until it has been stable for FLAP_STABLE, then
// one event with its final state. The first peer_dead goes at once. Pure: time is given.
import { eventKey, incidentOf } from '../wire/incident.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

export interface FlapSettings {
  /** RECOVERY_HOLD: how long a recovered peer must stay up before its peer_recovered goes. */
  recoveryHoldMs: number;
  /** FLAP_WINDOW: the window verdict changes are counted in. */
  windowMs: number;
  /** FLAP_CHANGES: this many changes within the window make a peer flapping (0: never). */
  changes: number;
  /** FLAP_STABLE: a flapping peer's final state goes once it has not changed for this long. */
  stableMs: number;
}

/** One peer whose peer_dead the receivers were sent, and whose incident is open for them. */
interface OpenIncident {
  /** The peer_dead sent: every later event of the spell belongs to its incident. */
  opening: PeerStatusPayload;
  /** Its latest peer_dead decided (hidden or not): what its final death says. */
  latest: PeerStatusPayload;
  /** Its recovery, waiting out the hold; null while it is dead. */
  held: PeerStatusPayload | null;
  /** When the held recovery (or a flapping peer's final death) is due. */
  dueMs: number | null;
  /** A peer_flapping went out and its final state has not. */
  flapping: boolean;
}

/** What to do with an event the damper was given. */
export interface Damped {
  /** Events to send now, in order. */
  send: PeerStatusPayload[];
  /** A held recovery the peer's new death cancels (the reporter forgets it). */
  cancelled: PeerStatusPayload | null;
  /** A recovery to hold, rewritten to resolve the incident the receivers know of. */
  held: PeerStatusPayload | null;
  /** The change was hidden from the receivers (no event for it now). */
  hidden: boolean;
}

const pass = (payload: PeerStatusPayload): Damped => ({
  send: [payload],
  cancelled: null,
  held: null,
  hidden: false,
});

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

export class FlapDamper {
  /** Peers with an incident open for the receivers, by address. */
  private readonly open = new Map<string, OpenIncident>();
  /**
   * When each peer's verdict changed (epoch ms), within the window: kept past the end of an
   * incident, so a peer that stays up longer than the hold between its deaths still flaps.
   */
  private readonly history = new Map<string, number[]>();

  constructor(private readonly s: FlapSettings) {}

  /** Whether damping does anything (RECOVERY_HOLD 0 and FLAP_CHANGES 0: every event goes). */
  get enabled(): boolean {
    return this.s.recoveryHoldMs > 0 || this.s.changes > 0;
  }

  /** A peer_dead decided now. */
  died(payload: PeerStatusPayload, now: number): Damped {
    if (!this.enabled) return pass(payload);
    const address = payload.peer.address;
    const changes = this.changed(address, now);
    const spell = this.open.get(address);
    if (!spell) {
      const opened: OpenIncident = {
        opening: payload,
        latest: payload,
        held: null,
        dueMs: null,
        flapping: false,
      };
      this.open.set(address, opened);
      const flap = this.flapStarts(opened, changes, payload, now);
      if (flap) opened.dueMs = now + this.s.stableMs;
      return { ...pass(payload), send: flap ? [payload, flap] : [payload] };
    }
    // Down again before its recovery went out: the receivers' incident goes on.
    const cancelled = spell.held;
    spell.held = null;
    spell.latest = payload;
    const flap = this.flapStarts(spell, changes, payload, now);
    spell.dueMs = spell.flapping ? now + this.s.stableMs : null;
    return { send: flap ? [flap] : [], cancelled, held: null, hidden: true };
  }

  /** A peer_recovered decided now. */
  recovered(payload: PeerStatusPayload, now: number): Damped {
    if (!this.enabled) return pass(payload);
    const address = payload.peer.address;
    const spell = this.open.get(address);
    const changes = this.changed(address, now);
    // Its peer_dead was not sent from here (a predecessor's): resolved at once, as before.
    if (!spell) return pass(payload);
    const flap = this.flapStarts(spell, changes, payload, now);
    const hold = spell.flapping ? this.s.stableMs : this.s.recoveryHoldMs;
    const held = this.resolving(spell, payload);
    if (hold <= 0) {
      this.open.delete(address);
      return { send: [...(flap ? [flap] : []), held], cancelled: null, held: null, hidden: false };
    }
    spell.held = held;
    spell.dueMs = now + hold;
    return { send: flap ? [flap] : [], cancelled: null, held, hidden: true };
  }

  /**
   * Events whose hold is over: recoveries that stayed up, and the final death of a peer that
   * flapped and then stayed down.
   */
  due(now: number): PeerStatusPayload[] {
    const out: PeerStatusPayload[] = [];
    for (const [address, spell] of this.open) {
      if (spell.dueMs === null || now < spell.dueMs) continue;
      if (spell.held) {
        out.push(this.finalRecovery(spell, now));
        this.open.delete(address);
        // A flap that ended is over; an ordinary recovery's changes still count towards one.
        if (spell.flapping) this.history.delete(address);
        continue;
      }
      // Flapped, and down ever since: its final state is dead (the incident stays open).
      out.push(this.finalDeath(spell, now));
      spell.flapping = false;
      spell.dueMs = null;
      this.history.delete(address);
    }
    this.sweep(now);
    return out;
  }

  /** When the next held event is due; null: none is held. */
  nextDue(): number | null {
    let next: number | null = null;
    for (const { dueMs } of this.open.values()) {
      if (dueMs !== null && (next === null || dueMs < next)) next = dueMs;
    }
    return next;
  }

  /** The recoveries being held. */
  held(): PeerStatusPayload[] {
    return [...this.open.values()].flatMap((s) => (s.held ? [s.held] : []));
  }

  /** Whether a peer's recovery is being held (its last change was hidden). */
  holding(address: string): boolean {
    return this.open.get(address)?.held != null;
  }

  /** Forgets the changes of peers that changed last before the window (a peer's are few). */
  sweep(now: number): void {
    for (const [address, changes] of this.history) {
      if (changes.at(-1)! < now - this.s.windowMs) this.history.delete(address);
    }
  }

  /** The peers it keeps anything of (for forgetting those that left). */
  peers(): string[] {
    return [...new Set([...this.open.keys(), ...this.history.keys()])];
  }

  get size(): number {
    return this.open.size + this.history.size;
  }

  /** The peer left the mesh: nothing of it is held any more; its held recovery, if any, goes. */
  forget(address: string): PeerStatusPayload | null {
    const held = this.open.get(address)?.held ?? null;
    this.open.delete(address);
    this.history.delete(address);
    return held;
  }

  /** The term ended: held recoveries are the reporter's pending events, handed over with them. */
  reset(): void {
    this.open.clear();
    this.history.clear();
  }

  /** Counts a change of the peer's verdict: its changes within the window, this one included. */
  private changed(address: string, now: number): number[] {
    let changes = this.history.get(address);
    if (!changes) this.history.set(address, (changes = []));
    changes.push(now);
    const from = now - this.s.windowMs;
    while (changes.length > 0 && changes[0]! < from) changes.shift();
    return changes;
  }

  /** The peer_flapping this change starts, if it makes the peer flapping. */
  private flapStarts(
    spell: OpenIncident,
    changes: readonly number[],
    payload: PeerStatusPayload,
    now: number,
  ): PeerStatusPayload | null {
    if (spell.flapping || this.s.changes <= 0 || changes.length < this.s.changes) return null;
    spell.flapping = true;
    const first = changes[0]!;
    return {
      ...payload,
      event: 'peer_flapping',
      timestamp: new Date(now).toISOString(),
      dedup_key: eventKey(incidentOf(spell.opening), 'peer_flapping'),
      reason:
        `${payload.peer.id} went down and up ${changes.length} times in ${seconds(now - first)}: ` +
        `no more events about it until it has been stable for ${seconds(this.s.stableMs)}`,
    };
  }

  /** A recovery as the receivers' incident (the peer_dead they were sent) is resolved by it. */
  private resolving(spell: OpenIncident, payload: PeerStatusPayload): PeerStatusPayload {
    const key = eventKey(incidentOf(spell.opening), 'peer_recovered');
    return key === payload.dedup_key ? payload : { ...payload, dedup_key: key };
  }

  private finalRecovery(spell: OpenIncident, now: number): PeerStatusPayload {
    const held = spell.held!;
    if (!spell.flapping) return held;
    return {
      ...held,
      timestamp: new Date(now).toISOString(),
      reason: `${held.peer.id} has been up for ${seconds(this.s.stableMs)} after flapping`,
    };
  }

  private finalDeath(spell: OpenIncident, now: number): PeerStatusPayload {
    const { opening, latest } = spell;
    const failure = latest.reason ? `: ${latest.reason}` : '';
    return {
      ...latest,
      timestamp: new Date(now).toISOString(),
      // Its own key: the incident's first peer_dead went out already and is not repeated.
      dedup_key: `${incidentOf(opening)}:dead-stable`,
      reason: `${latest.peer.id} has been down for ${seconds(this.s.stableMs)} after flapping${failure}`,
    };
  }
}
