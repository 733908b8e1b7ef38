// A peer's health verdict as a pure transition over probe results; alerts are derived from it.
import { parseAddress } from '../core/node-ref.js';

export type Health = 'unknown' | 'alive' | 'dead';

export interface PeerRecord {
  address: string;
  /** `NODE_NAME@POD_IP` once the peer has told us, else `unknown@<ip>`. */
  id: string;
  nodeName: string;
  health: Health;
  /** When `health` last changed (epoch ms). */
  sinceMs: number;
  /** Whether a dead-peer alert went out for the current `dead` spell (so recovery resolves it). */
  alerted: boolean;
  lastProbeMs: number | null;
  lastLatencyMs: number | null;
  lastFailure: string | null;
}

/** The wire form of a record, shared in announcements so a successor starts from it. */
export interface PeerView {
  id: string;
  address: string;
  node_name: string;
  health: Health;
  since: number;
  alerted: boolean;
}

export type ProbeResult =
  | { ok: true; latencyMs: number; id: string; nodeName: string }
  | { ok: false; latencyMs: number; failure: string };

/**
 * - `died`: alive → dead; a dead-peer alert.
 * - `recovered`: dead → alive after a `died` alert; a recovery alert resolving it.
 * - `first-alive` / `never-alive`: the first verdict on a peer never seen alive; no alert, since a
 *   peer that is still starting would otherwise page.
 * - `withheld`: the probe failed but this node could not vouch for its own network (sanity check).
 */
export type Transition = 'died' | 'recovered' | 'first-alive' | 'never-alive' | 'withheld' | null;

export interface Judgement {
  record: PeerRecord;
  transition: Transition;
  /** For died/recovered: when the dead spell started; the incident's identity. */
  incidentMs: number | null;
}

export function newRecord(address: string, now: number): PeerRecord {
  const ip = parseAddress(address)?.ip ?? address;
  return {
    address,
    id: `unknown@${ip}`,
    nodeName: 'unknown',
    health: 'unknown',
    sinceMs: now,
    alerted: false,
    lastProbeMs: null,
    lastLatencyMs: null,
    lastFailure: null,
  };
}

export function judge(
  record: PeerRecord,
  result: ProbeResult,
  now: number,
  { withholdDeath }: { withholdDeath: boolean },
): Judgement {
  const probed = { ...record, lastProbeMs: now, lastLatencyMs: result.latencyMs };
  if (result.ok) {
    const learned = { ...probed, id: result.id, nodeName: result.nodeName, lastFailure: null };
    if (record.health === 'alive') return { record: learned, transition: null, incidentMs: null };
    const alive = { ...learned, health: 'alive' as const, sinceMs: now, alerted: false };
    if (record.health === 'dead' && record.alerted) {
      return { record: alive, transition: 'recovered', incidentMs: record.sinceMs };
    }
    return { record: alive, transition: 'first-alive', incidentMs: null };
  }
  const failed = { ...probed, lastFailure: result.failure };
  if (record.health === 'dead') return { record: failed, transition: null, incidentMs: null };
  if (withholdDeath) return { record: failed, transition: 'withheld', incidentMs: null };
  const dead = { ...failed, health: 'dead' as const, sinceMs: now };
  if (record.health === 'alive') {
    return { record: { ...dead, alerted: true }, transition: 'died', incidentMs: now };
  }
  return { record: dead, transition: 'never-alive', incidentMs: null };
}

export function toView(r: PeerRecord): PeerView {
  return {
    id: r.id,
    address: r.address,
    node_name: r.nodeName,
    health: r.health,
    since: r.sinceMs,
    alerted: r.alerted,
  };
}

export function fromView(v: PeerView): PeerRecord {
  return {
    address: v.address,
    id: v.id,
    nodeName: v.node_name,
    health: v.health,
    sinceMs: v.since,
    alerted: v.alerted,
    lastProbeMs: null,
    lastLatencyMs: null,
    lastFailure: null,
  };
}
