// A peer's health verdict as pure transitions over evidence; alerts are derived from them.
//
// A failed probe makes a peer suspect, never dead. Dead needs a confirmation (see rounds.ts): the
// peer stayed unreachable for the unhealthy duration, neither the retries nor any relay (indirect
// probe) reached it, and the coordinator can vouch for itself. If a relay reaches it, the peer is
// alive and the path from the coordinator to it is broken: an event of its own.
import { parseAddress } from '../wire/node-ref.js';
import type { Evidence } from '../core/evidence.js';
import type { Health, PeerView } from '../wire/peer-view.js';

export interface BrokenPath {
  /** Start of the failure streak that showed the path broken: the incident's identity. */
  sinceMs: number;
  /** Ids of the relays that reached the peer. */
  witnesses: string[];
  /** A path_broken event went out, so a path_restored will resolve it. */
  alerted: boolean;
}

export interface PeerRecord {
  address: string;
  /**
   * `NODE_NAME@POD_IP`: as the peer told it, or before that as discovery names its node (the
   * EndpointSlice's nodeName), else with the IP for a name (placeholderId).
   */
  id: string;
  nodeName: string;
  health: Health;
  /** When the peer last became alive, dead or unknown (epoch ms); suspicion keeps it. */
  sinceMs: number;
  /** Whether a dead-peer alert went out for the current `dead` spell (so recovery resolves it). */
  alerted: boolean;
  /** Start of the first failed attempt since the peer last answered; null while it answers. */
  unreachableSinceMs: number | null;
  /**
   * How its latest failure since it last answered came: silence (evidence against this node's
   * network as much as the peer's) or a refusal (its host answered); null while it answers.
   */
  unreachableBy: Evidence | null;
  /** The coordinator cannot reach the peer but relays can. */
  brokenPath: BrokenPath | null;
  lastProbeMs: number | null;
  /** Round trip of the last answered probe, ms (a failed attempt's duration is no latency). */
  lastLatencyMs: number | null;
  /** When it last answered this node, epoch ms; null when not since this node judges it. */
  lastSeenMs: number | null;
  lastFailure: string | null;
}

export interface Answer {
  latencyMs: number;
  id: string;
  nodeName: string;
}

/**
 * - `died`: alive (or suspect) → dead; a dead-peer alert.
 * - `recovered`: dead → alive after a `died` alert; a recovery alert resolving it.
 * - `first-alive` / `never-alive`: the first verdict on a peer never seen alive; no alert, since a
 *   peer that is still starting would otherwise page.
 * - `suspected`: a probe of a live peer failed; confirmation starts. `cleared`: it answered again.
 * - `withheld`: confirmed unreachable, but this node cannot vouch for its own network (sanity check
 *   failed, or it cannot reach most of its peers): not declared dead.
 * - `path-broken` / `path-restored`: relays reach the peer but this node cannot, and back.
 */
export type Transition =
  | 'died'
  | 'recovered'
  | 'first-alive'
  | 'never-alive'
  | 'suspected'
  | 'cleared'
  | 'withheld'
  | 'path-broken'
  | 'path-restored'
  | null;

export interface Judgement {
  record: PeerRecord;
  transition: Transition;
  /** For died/recovered/path events: when the incident started; its identity. */
  incidentMs: number | null;
  /**
   * path-restored, or died with an alerted broken path: the path incident to close (the record no
   * longer has it).
   */
  restoredPath?: BrokenPath;
  /** withheld: why. */
  withheld?: Exclude<Withhold, null>;
  /** withheld for self-suspicion: the relays that could not reach the peer either. */
  corroboratedBy?: string[];
}

/**
 * Why a confirmed-unreachable peer is not declared dead; null: nothing holds it back. overloaded:
 * this node's own event loop ran so late that its timeouts prove nothing (nor a broken path).
 */
export type Withhold = 'sanity-check' | 'self-suspect' | 'overloaded' | null;

export interface Confirmation {
  /** Ids of the relays that reached the peer during the confirmation. */
  reachedBy: string[];
  /** Ids of the relays that could not reach it either (through silence). */
  corroboratedBy?: string[];
  unhealthyMs: number;
  withhold: Withhold;
}

const same = (record: PeerRecord): Judgement => ({ record, transition: null, incidentMs: null });

/**
 * The id of a peer whose node's name nobody has told yet: `<ip>@<ip>`, the IP standing in for the
 * name. An address, not an identity.
 */
export function placeholderId(address: string): string {
  const ip = ipOf(address);
  return `${ip}@${ip}`;
}

const ipOf = (address: string) => parseAddress(address)?.ip ?? address;

/** The id a peer goes by until it answers: its node's name as discovery knows it, or its IP. */
export function provisionalId(address: string, nodeName?: string): string {
  return nodeName ? `${nodeName}@${ipOf(address)}` : placeholderId(address);
}

/**
 * A peer as first listed: unknown, named as discovery knows its node (`nodeName`: the
 * EndpointSlice's), else by its IP, until it answers with its own id.
 */
export function newRecord(address: string, now: number, nodeName?: string): PeerRecord {
  return {
    address,
    id: provisionalId(address, nodeName),
    nodeName: nodeName ?? ipOf(address),
    health: 'unknown',
    sinceMs: now,
    alerted: false,
    unreachableSinceMs: null,
    unreachableBy: null,
    brokenPath: null,
    lastProbeMs: null,
    lastLatencyMs: null,
    lastSeenMs: null,
    lastFailure: null,
  };
}

/** The peer answered this node directly (a probe, or any other request it made). */
export function answered(record: PeerRecord, answer: Answer | null, now: number): Judgement {
  const learned: PeerRecord = {
    ...record,
    ...(answer
      ? {
          id: answer.id,
          nodeName: answer.nodeName,
          lastLatencyMs: answer.latencyMs,
          lastProbeMs: now,
        }
      : {}),
    lastSeenMs: now,
    unreachableSinceMs: null,
    unreachableBy: null,
    brokenPath: null,
    lastFailure: null,
  };
  const path = record.brokenPath;
  if (record.health === 'alive') {
    if (path?.alerted) {
      return {
        record: learned,
        transition: 'path-restored',
        incidentMs: path.sinceMs,
        restoredPath: path,
      };
    }
    return same(learned);
  }
  const alive: PeerRecord = { ...learned, health: 'alive', sinceMs: now, alerted: false };
  if (record.health === 'suspect') {
    // A suspect peer never stopped being alive as far as alerts go: it keeps its `since`.
    return { record: { ...learned, health: 'alive' }, transition: 'cleared', incidentMs: null };
  }
  if (record.health === 'dead' && record.alerted) {
    return { record: alive, transition: 'recovered', incidentMs: record.sinceMs };
  }
  return { record: alive, transition: 'first-alive', incidentMs: null };
}

/** An attempt that began at `attemptStartMs` failed: the peer becomes suspect (if it was alive). */
export function attemptFailed(
  record: PeerRecord,
  /** `evidence` absent: silence, the reading that vouches for nobody. */
  failure: { latencyMs: number; detail: string; evidence?: Evidence },
  attemptStartMs: number,
  now: number,
): Judgement {
  const failed: PeerRecord = {
    ...record,
    unreachableSinceMs: record.unreachableSinceMs ?? attemptStartMs,
    unreachableBy: failure.evidence ?? 'silence',
    lastProbeMs: now,
    lastFailure: failure.detail,
  };
  if (record.health !== 'alive' || record.brokenPath) return same(failed);
  return {
    record: { ...failed, health: 'suspect' },
    transition: 'suspected',
    incidentMs: null,
  };
}

/** Unreachable for how long at `now`, or 0 when it answers. */
export function unreachableFor(record: PeerRecord, now: number): number {
  return record.unreachableSinceMs === null ? 0 : now - record.unreachableSinceMs;
}

/** The end of a confirmation: the retries failed; what the relays saw decides. */
export function confirm(record: PeerRecord, c: Confirmation, now: number): Judgement {
  if (record.unreachableSinceMs === null) return same(record); // it answered meanwhile
  if (unreachableFor(record, now) < c.unhealthyMs) return same(record);
  const withheld: Judgement | null = c.withhold
    ? {
        record,
        transition: 'withheld',
        incidentMs: null,
        withheld: c.withhold,
        ...(c.withhold === 'self-suspect' ? { corroboratedBy: c.corroboratedBy ?? [] } : {}),
      }
    : null;
  if (c.reachedBy.length > 0) {
    // Relays reach it: up, whatever this node suffers; but a path from an overloaded node that
    // timed out is not shown broken by that.
    if (c.withhold === 'overloaded' && record.health !== 'dead') return withheld!;
    return pathBroken(record, c.reachedBy, now);
  }
  if (record.health === 'dead') return same(record);
  if (withheld) return withheld;
  const dead: PeerRecord = { ...record, health: 'dead', sinceMs: now, brokenPath: null };
  if (record.health === 'unknown') {
    // Not answered since it was listed: dead since then (START_GRACE counts from it).
    return {
      record: { ...dead, sinceMs: record.sinceMs },
      transition: 'never-alive',
      incidentMs: null,
    };
  }
  const path = record.brokenPath?.alerted ? { restoredPath: record.brokenPath } : {};
  return { record: { ...dead, alerted: true }, transition: 'died', incidentMs: now, ...path };
}

function pathBroken(record: PeerRecord, witnesses: string[], now: number): Judgement {
  const sinceMs = record.brokenPath?.sinceMs ?? record.unreachableSinceMs ?? now;
  if (record.health === 'dead') {
    // Others reach it again: the dead alert is resolved; the broken path is alerted next time.
    const alive: PeerRecord = {
      ...record,
      health: 'alive',
      sinceMs: now,
      alerted: false,
      brokenPath: { sinceMs, witnesses, alerted: false },
    };
    return record.alerted
      ? { record: alive, transition: 'recovered', incidentMs: record.sinceMs }
      : { record: alive, transition: 'first-alive', incidentMs: null };
  }
  const alive: PeerRecord = {
    ...record,
    health: 'alive',
    sinceMs: record.health === 'unknown' ? now : record.sinceMs,
    brokenPath: { sinceMs, witnesses, alerted: true },
  };
  if (record.brokenPath?.alerted) return same(alive);
  return { record: alive, transition: 'path-broken', incidentMs: sinceMs };
}

/**
 * Whether this node should suspect itself rather than its peers: most of the peers that were alive
 * (out of those not already dead or never seen) are silent to it (suspect or behind a broken path,
 * their latest failure a timeout or an unreachable network). A peer that refused is not counted:
 * its host answered, so the path to it works. Peers dead before are left out, so earlier deaths do
 * not silence the next one. Never with fewer than two such peers (with one, nobody can tell which
 * side is at fault).
 */
export function selfSuspect(records: readonly PeerRecord[]): SelfSuspicion {
  let considered = 0;
  let unreachable = 0;
  let silent = 0;
  for (const r of records) {
    if (!suspicionCounts(r)) continue;
    considered++;
    if (unreachableNow(r)) unreachable++;
    if (silentNow(r)) silent++;
  }
  return suspicionOf({ unreachable, silent, considered });
}

export interface SelfSuspicion {
  suspect: boolean;
  /** Peers seen alive that this node cannot reach now, out of `considered`. */
  unreachable: number;
  /** Of those, the ones silent to it (the only evidence against its own network). */
  silent: number;
  considered: number;
}

/**
 * Whether the peer was ever seen alive: a peer dead that was never reported (never-alive) was not,
 * nor is one still unknown. One that is dead and reported was.
 */
export function seenAlive(r: Pick<PeerRecord, 'health' | 'alerted'>): boolean {
  return r.health !== 'unknown' && (r.health !== 'dead' || r.alerted);
}

/** Whether selfSuspect counts the peer: seen alive, and not dead since. */
export function suspicionCounts(r: PeerRecord): boolean {
  return r.health !== 'unknown' && r.health !== 'dead';
}

/** Of the peers selfSuspect counts: whether this node cannot reach it now. */
export function unreachableNow(r: PeerRecord): boolean {
  return r.health !== 'alive' || r.brokenPath !== null;
}

/** Of those: whether it is silent to this node (not a refusal, which proves the path works). */
export function silentNow(r: PeerRecord): boolean {
  return unreachableNow(r) && r.unreachableBy === 'silence';
}

/** selfSuspect's verdict from its counts. */
export function suspicionOf(counts: Omit<SelfSuspicion, 'suspect'>): SelfSuspicion {
  const { silent, considered } = counts;
  return { suspect: considered >= 2 && silent * 2 > considered, ...counts };
}

export function toView(r: PeerRecord): PeerView {
  return {
    id: r.id,
    address: r.address,
    node_name: r.nodeName,
    health: r.health,
    since: r.sinceMs,
    alerted: r.alerted,
    ...(r.lastLatencyMs !== null ? { latency_ms: Math.round(r.lastLatencyMs * 10) / 10 } : {}),
    ...(r.lastProbeMs !== null ? { last_probe: r.lastProbeMs } : {}),
    ...(r.brokenPath ? { path_broken: true } : {}),
    // Only while it does not answer, when they say why (an answering peer's is its last probe):
    // a large mesh's announcements carry every peer.
    ...(r.unreachableSinceMs !== null && r.lastSeenMs !== null ? { last_seen: r.lastSeenMs } : {}),
    ...(r.unreachableSinceMs !== null && r.lastFailure !== null
      ? { last_failure: r.lastFailure.slice(0, MAX_FAILURE_CHARS) }
      : {}),
  };
}

/**
 * A failure's detail as views and /status carry it (their schemas allow more): room for the reason,
 * the error and the attempts, and a lost zone's announcements (a third of the mesh dead) stay far
 * from their 4 MiB limit.
 */
export const MAX_FAILURE_CHARS = 120;

/**
 * Whether two records show alike in a view but for their latency, last probe and, while they do
 * not answer, last answer and failure, which change at every probe: what a successor inherits
 * (fromView) is the same.
 */
export function sameVerdict(a: PeerRecord, b: PeerRecord): boolean {
  return (
    a.health === b.health &&
    a.sinceMs === b.sinceMs &&
    a.alerted === b.alerted &&
    a.id === b.id &&
    a.nodeName === b.nodeName &&
    (a.brokenPath === null) === (b.brokenPath === null)
  );
}

/** A successor starts from the view; a suspicion is not inherited (it needs its own evidence). */
export function fromView(v: PeerView): PeerRecord {
  return {
    address: v.address,
    id: v.id,
    nodeName: v.node_name,
    health: v.health === 'suspect' ? 'alive' : v.health,
    sinceMs: v.since,
    alerted: v.alerted,
    unreachableSinceMs: null,
    unreachableBy: null,
    brokenPath: null,
    lastProbeMs: null,
    lastLatencyMs: null,
    lastSeenMs: null,
    lastFailure: null,
  };
}
