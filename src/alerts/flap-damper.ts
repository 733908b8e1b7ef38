// Flap damping of the incidents that go up and down, a peer's (dead, recovered) and a path's
// (broken, restored), for every receiver (KNH's webhook first): a subject that comes back is
// resolved only once it has stayed up for RECOVERY_HOLD, and failing again within it continues the
// same incident; a subject whose state changes FLAP_CHANGES times within FLAP_WINDOW gets one
// peer_flapping, then nothing until it has been stable for FLAP_STABLE, then one event with its
// final state. The first event of a failure goes at once. Pure: time is given.
import { eventKey, incidentOf, incidentSubjectOf } from '../wire/incident.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

export interface FlapSettings {
  /** RECOVERY_HOLD: how long a recovered peer (or path) must stay up before its recovery goes. */
  recoveryHoldMs: number;
  /** FLAP_WINDOW: the window state changes are counted in. */
  windowMs: number;
  /** FLAP_CHANGES: this many changes within the window make a subject flapping (0: never). */
  changes: number;
  /** FLAP_STABLE: a flapping subject's final state goes once it has not changed for this long. */
  stableMs: number;
}

/** One subject whose failure the receivers were sent, and whose incident is open for them. */
interface OpenIncident {
  /** The failure sent: every later event of the spell belongs to its incident. */
  opening: PeerStatusPayload;
  /** Its latest failure decided (hidden or not): what its final failure says. */
  latest: PeerStatusPayload;
  /** Its recovery, waiting out the hold; null while it is down. */
  held: PeerStatusPayload | null;
  /** When the held recovery (or a flapping subject's final failure) is due. */
  dueMs: number | null;
  /** A peer_flapping went out and its final state has not. */
  flapping: boolean;
}

/** What to do with an event the damper was given. */
export interface Damped {
  /** Events to send now, in order. */
  send: PeerStatusPayload[];
  /** A held recovery the subject's new failure cancels (the reporter forgets it). */
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

/**
 * What an event is about, whatever its incident: a peer's address, or `<from>-><to>` for a path.
 * A subject's incidents come and go; its changes are counted across them.
 */
export const subjectOf = (payload: PeerStatusPayload): string =>
  incidentSubjectOf(incidentOf(payload));

/** The addresses of the nodes a subject is about: one for a peer, both ends of a path. */
const nodesOf = (subject: string): string[] => subject.split('->');

/** How the events of a subject read: a peer's, or a path's. */
interface Wording {
  flapped(changes: number, span: string): string;
  stayedUp(stable: string): string;
  stayedDown(stable: string): string;
  /** The dedup key suffix of a flapping subject's final failure. */
  stableSuffix: string;
}

function wordingOf(payload: PeerStatusPayload): Wording {
  const path = payload.path;
  if (path && (payload.event === 'path_broken' || payload.event === 'path_restored')) {
    const it = `the path from ${path.from} to ${path.to}`;
    return {
      flapped: (n, span) => `${it} broke and was restored ${n} times in ${span}`,
      stayedUp: (stable) => `${it} has worked for ${stable} after flapping`,
      stayedDown: (stable) => `${it} has been broken for ${stable} after flapping`,
      stableSuffix: 'path-broken-stable',
    };
  }
  const id = payload.peer.id;
  return {
    flapped: (n, span) => `${id} went down and up ${n} times in ${span}`,
    stayedUp: (stable) => `${id} has been up for ${stable} after flapping`,
    stayedDown: (stable) => `${id} has been down for ${stable} after flapping`,
    stableSuffix: 'dead-stable',
  };
}

export class FlapDamper {
  /** Subjects with an incident open for the receivers. */
  private readonly open = new Map<string, OpenIncident>();
  /**
   * When each subject's state changed (epoch ms), within the window: kept past the end of an
   * incident, so a peer that stays up longer than the hold between its deaths still flaps.
   */
  private readonly history = new Map<string, number[]>();

  constructor(private readonly s: FlapSettings) {}

  /** Whether damping does anything (RECOVERY_HOLD 0 and FLAP_CHANGES 0: every event goes). */
  get enabled(): boolean {
    return this.s.recoveryHoldMs > 0 || this.s.changes > 0;
  }

  /** A failure decided now: a peer_dead, or a path_broken. */
  failed(payload: PeerStatusPayload, now: number): Damped {
    if (!this.enabled) return pass(payload);
    const subject = subjectOf(payload);
    const changes = this.changed(subject, now);
    const spell = this.open.get(subject);
    if (!spell) {
      const opened: OpenIncident = {
        opening: payload,
        latest: payload,
        held: null,
        dueMs: null,
        flapping: false,
      };
      this.open.set(subject, opened);
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

  /** A recovery decided now: a peer_recovered, or a path_restored. */
  recovered(payload: PeerStatusPayload, now: number): Damped {
    if (!this.enabled) return pass(payload);
    const subject = subjectOf(payload);
    const spell = this.open.get(subject);
    const changes = this.changed(subject, now);
    // Its failure was not sent from here (a predecessor's): resolved at once, as before.
    if (!spell) return pass(payload);
    const flap = this.flapStarts(spell, changes, payload, now);
    const hold = spell.flapping ? this.s.stableMs : this.s.recoveryHoldMs;
    const held = this.resolving(spell, payload);
    if (hold <= 0) {
      this.open.delete(subject);
      return { send: [...(flap ? [flap] : []), held], cancelled: null, held: null, hidden: false };
    }
    spell.held = held;
    spell.dueMs = now + hold;
    return { send: flap ? [flap] : [], cancelled: null, held, hidden: true };
  }

  /**
   * An incident that ends now for another reason than a recovery (a path closed because its peer
   * died): the resolution goes at once, as the incident the receivers know of (a recovery held for
   * it has the same key, and is replaced). Its changes still count: a link that turns a peer dead
   * and then only its path broken, over and over, flaps too.
   */
  ended(payload: PeerStatusPayload): Damped {
    const subject = subjectOf(payload);
    const spell = this.open.get(subject);
    if (!spell) return pass(payload);
    this.open.delete(subject);
    return pass(this.resolving(spell, payload));
  }

  /**
   * Events whose hold is over: recoveries that stayed up, and the final failure of a subject that
   * flapped and then stayed down.
   */
  due(now: number): PeerStatusPayload[] {
    const out: PeerStatusPayload[] = [];
    for (const [subject, spell] of this.open) {
      if (spell.dueMs === null || now < spell.dueMs) continue;
      if (spell.held) {
        out.push(this.finalRecovery(spell, now));
        this.open.delete(subject);
        // A flap that ended is over; an ordinary recovery's changes still count towards one.
        if (spell.flapping) this.history.delete(subject);
        continue;
      }
      // Flapped, and down ever since: its final state is a failure (the incident stays open).
      out.push(this.finalFailure(spell, now));
      spell.flapping = false;
      spell.dueMs = null;
      this.history.delete(subject);
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

  /** Forgets the changes of subjects that changed last before the window (a subject's are few). */
  sweep(now: number): void {
    for (const [subject, changes] of this.history) {
      if (changes.at(-1)! < now - this.s.windowMs) this.history.delete(subject);
    }
  }

  /** The addresses of the nodes it keeps anything of (for forgetting those that left). */
  nodes(): string[] {
    return [...new Set([...this.open.keys(), ...this.history.keys()].flatMap(nodesOf))];
  }

  get size(): number {
    return this.open.size + this.history.size;
  }

  /**
   * A node left the mesh: nothing about it, or about a path to or from it, is held any more. The
   * recoveries held for them go (they were up when it left).
   */
  forget(address: string): PeerStatusPayload[] {
    const held: PeerStatusPayload[] = [];
    for (const subject of new Set([...this.open.keys(), ...this.history.keys()])) {
      if (!nodesOf(subject).includes(address)) continue;
      const spell = this.open.get(subject);
      if (spell?.held) held.push(spell.held);
      this.open.delete(subject);
      this.history.delete(subject);
    }
    return held;
  }

  /** The term ended: held recoveries are the reporter's pending events, handed over with them. */
  reset(): void {
    this.open.clear();
    this.history.clear();
  }

  /** Counts a change of a subject's state: its changes within the window, this one included. */
  private changed(subject: string, now: number): number[] {
    let changes = this.history.get(subject);
    if (!changes) this.history.set(subject, (changes = []));
    changes.push(now);
    const from = now - this.s.windowMs;
    while (changes.length > 0 && changes[0]! < from) changes.shift();
    return changes;
  }

  /** The peer_flapping this change starts, if it makes the subject flapping. */
  private flapStarts(
    spell: OpenIncident,
    changes: readonly number[],
    payload: PeerStatusPayload,
    now: number,
  ): PeerStatusPayload | null {
    if (spell.flapping || this.s.changes <= 0 || changes.length < this.s.changes) return null;
    spell.flapping = true;
    const first = changes[0]!;
    const words = wordingOf(spell.opening);
    return {
      // What it is now (the peer's state, a path's witnesses), under the incident's name.
      ...payload,
      event: 'peer_flapping',
      timestamp: new Date(now).toISOString(),
      dedup_key: eventKey(incidentOf(spell.opening), 'peer_flapping'),
      reason:
        `${words.flapped(changes.length, seconds(now - first))}: ` +
        `no more events about it until it has been stable for ${seconds(this.s.stableMs)}`,
    };
  }

  /** A recovery as the receivers' incident (the failure they were sent) is resolved by it. */
  private resolving(spell: OpenIncident, payload: PeerStatusPayload): PeerStatusPayload {
    const key = eventKey(incidentOf(spell.opening), payload.event);
    return key === payload.dedup_key ? payload : { ...payload, dedup_key: key };
  }

  private finalRecovery(spell: OpenIncident, now: number): PeerStatusPayload {
    const held = spell.held!;
    if (!spell.flapping) return held;
    return {
      ...held,
      timestamp: new Date(now).toISOString(),
      reason: wordingOf(spell.opening).stayedUp(seconds(this.s.stableMs)),
    };
  }

  private finalFailure(spell: OpenIncident, now: number): PeerStatusPayload {
    const { opening, latest } = spell;
    const words = wordingOf(opening);
    const failure = latest.reason ? `: ${latest.reason}` : '';
    return {
      ...latest,
      timestamp: new Date(now).toISOString(),
      // Its own key: the incident's first failure went out already and is not repeated.
      dedup_key: `${incidentOf(opening)}:${words.stableSuffix}`,
      reason: `${words.stayedDown(seconds(this.s.stableMs))}${failure}`,
    };
  }
}
