// An incident's identity: what it is about and when it started. Every event of an incident (the
// one that opens it, the one that resolves it) names it in its dedup key,
// `knh:<subject>:<started ms>:<event>`, so an alert and its resolution share a stem and a repeated
// delivery (by a successor too: it resends the very payload) carries the same key. The other
// receivers' alerts are keyed by the incident alone, `knh:<subject>:<started ms>`.
import type { PeerStatusEvent, PeerStatusPayload } from './webhooks.js';

/** `knh:<subject>:<started ms>`: an incident, as the alerts of the other receivers name it. */
export type IncidentKey = string;

/** What an incident is about: a peer, the path from one node to another, or a coordinator's view. */
export const incidentSubject = {
  /** A peer dead: its address. */
  peer: (address: string): string => address,
  /** A path broken: `<from>-><to>`. */
  path: (from: string, to: string): string => `${from}->${to}`,
  /** A coordinator that cannot judge the mesh: `judge:<its address>`. */
  judge: (address: string): string => `judge:${address}`,
  /**
   * A finding about a node (degraded, dropping full-size packets, egress cut, out of sight):
   * `<kind>:<address>`.
   */
  node: (kind: 'degraded' | 'mtu' | 'egress' | 'auth', address: string): string =>
    `${kind}:${address}`,
  /** A finding about a path (degraded, dropping full-size packets): `<kind>:<from>-><to>`. */
  pathOf: (kind: 'degraded' | 'mtu', from: string, to: string): string => `${kind}:${from}->${to}`,
  /** The mesh split (one at a time): `partition`. */
  partition: (): string => 'partition',
};

const EVENT_SUFFIX: Record<PeerStatusEvent, string> = {
  peer_dead: 'dead',
  peer_recovered: 'recovered',
  path_broken: 'path-broken',
  path_restored: 'path-restored',
  cannot_judge: 'cannot-judge',
  can_judge: 'can-judge',
  peer_flapping: 'flapping',
  peer_degraded: 'degraded',
  peer_healthy: 'healthy',
  path_degraded: 'path-degraded',
  path_healthy: 'path-healthy',
  peer_mtu: 'mtu',
  peer_mtu_ok: 'mtu-ok',
  path_mtu: 'path-mtu',
  path_mtu_ok: 'path-mtu-ok',
  egress_broken: 'egress-broken',
  egress_restored: 'egress-restored',
  partition: 'partition',
  partition_healed: 'partition-healed',
  peer_unauthenticated: 'unauthenticated',
  peer_authenticated: 'authenticated',
};

export function incidentKey(subject: string, startedMs: number): IncidentKey {
  return `knh:${subject}:${startedMs}`;
}

/** The dedup key of one event of an incident. */
export function eventKey(incident: IncidentKey, event: PeerStatusEvent): string {
  return `${incident}:${EVENT_SUFFIX[event]}`;
}

/** The incident a payload belongs to: its dedup key without the event suffix. */
export function incidentOf(payload: Pick<PeerStatusPayload, 'dedup_key'>): IncidentKey {
  return payload.dedup_key.slice(0, payload.dedup_key.lastIndexOf(':'));
}

/** What an incident is about: its key without `knh:` and its start. */
export function incidentSubjectOf(incident: IncidentKey): string {
  return incident.slice(incident.indexOf(':') + 1, incident.lastIndexOf(':'));
}

/** When an incident started (epoch ms); NaN for a key that is not an incident's. */
export function incidentStart(incident: IncidentKey): number {
  return Number(incident.slice(incident.lastIndexOf(':') + 1));
}
