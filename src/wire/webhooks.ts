// KNH's webhooks as knh sends them: peer-status and cluster-status payloads (schemas/peer-status
// and cluster-status), KNH's fields plus knh's.
import type { Health } from './peer-view.js';

export type SanityState = 'ok' | 'failed' | 'not-configured';

export interface PeerPayload {
  id: string;
  address: string;
  alive: boolean;
  node_name: string;
  health: Health;
  path_broken: boolean;
  since: string;
}

export type PeerStatusEvent =
  | 'peer_dead'
  | 'peer_recovered'
  | 'path_broken'
  | 'path_restored'
  | 'cannot_judge'
  | 'can_judge'
  | UpdateEvent
  | FindingEvent;

/**
 * Events that neither open nor resolve an incident but tell of one still open (protocol 4):
 * `peer_flapping`, a peer reported dead that keeps going down and up, or (with `path`) a path
 * from the coordinator that keeps breaking and healing (alerts/flap-damper.ts). Its key stem names
 * the incident; its kind here is the peer's, which only the protocol it needs is read from.
 */
export type UpdateEvent = 'peer_flapping';

/** The incident each update event tells of: its opening event. */
export const UPDATES = { peer_flapping: 'peer_dead' } as const satisfies Record<
  UpdateEvent,
  OpeningEvent
>;

/** The first peer protocol whose nodes take each update event. */
export const UPDATE_SINCE_PROTOCOL: Readonly<Record<UpdateEvent, number>> = { peer_flapping: 4 };

export function isUpdateEvent(event: PeerStatusEvent): event is UpdateEvent {
  return Object.hasOwn(UPDATES, event);
}

/**
 * What the coordinator's localization of every node's paths finds (src/paths/), protocol 3: a node
 * or path degraded, full-size packets dropped, a node's egress cut, the mesh split. Warnings: the
 * nodes answer. (A path broken between two nodes is `path_broken`, as from the coordinator.)
 */
export type FindingEvent =
  | 'peer_degraded'
  | 'peer_healthy'
  | 'path_degraded'
  | 'path_healthy'
  | 'peer_mtu'
  | 'peer_mtu_ok'
  | 'path_mtu'
  | 'path_mtu_ok'
  | 'egress_broken'
  | 'egress_restored'
  | 'partition'
  | 'partition_healed'
  | 'peer_unauthenticated'
  | 'peer_authenticated';

/** Every incident's opening event, and the event that resolves it (same dedup key stem). */
export const RESOLVED_BY = {
  peer_dead: 'peer_recovered',
  path_broken: 'path_restored',
  cannot_judge: 'can_judge',
  peer_degraded: 'peer_healthy',
  path_degraded: 'path_healthy',
  peer_mtu: 'peer_mtu_ok',
  path_mtu: 'path_mtu_ok',
  egress_broken: 'egress_restored',
  partition: 'partition_healed',
  peer_unauthenticated: 'peer_authenticated',
} as const satisfies Partial<Record<PeerStatusEvent, PeerStatusEvent>>;

/** How urgent an incident is: a dead node pages; a degraded one warns. */
export type Severity = 'critical' | 'warning';

/**
 * The first peer protocol (wire/protocol.ts) whose nodes take each kind of incident: a node of an
 * older one refuses a message holding an event it does not know, so those are left out for it.
 */
export const INCIDENT_SINCE_PROTOCOL: Readonly<Record<OpeningEvent, number>> = {
  peer_dead: 1,
  path_broken: 1,
  cannot_judge: 2,
  peer_degraded: 3,
  path_degraded: 3,
  peer_mtu: 3,
  path_mtu: 3,
  egress_broken: 3,
  partition: 3,
  peer_unauthenticated: 4,
};

export type OpeningEvent = keyof typeof RESOLVED_BY;

export function opensIncident(event: PeerStatusEvent): event is OpeningEvent {
  return Object.hasOwn(RESOLVED_BY, event);
}

/** The event that opened the incident an event opens or resolves: the incident's kind. */
export function openingOf(event: PeerStatusEvent): OpeningEvent {
  if (opensIncident(event)) return event;
  if (isUpdateEvent(event)) return UPDATES[event];
  const opening = (Object.keys(RESOLVED_BY) as OpeningEvent[]).find(
    (o) => RESOLVED_BY[o] === event,
  );
  // Every event opens, updates or resolves an incident (the schema's enum, RESOLVED_BY's).
  if (!opening) throw new Error(`BUG: ${event} neither opens nor resolves an incident`);
  return opening;
}

/** Events about a path broken (from the coordinator, or between two nodes), not about a peer. */
export function isPathEvent(event: PeerStatusEvent): boolean {
  return openingOf(event) === 'path_broken';
}

/** Events of the coordinator's localization of every node's paths (src/paths/). */
export function isFindingEvent(event: PeerStatusEvent): event is FindingEvent {
  return INCIDENT_SINCE_PROTOCOL[openingOf(event)] >= 3;
}

/**
 * Whether a payload tells a finding of the localization of every node's paths: every such event
 * carries severity `warning` (a `path_broken` between two followers too), and no other event does.
 */
export function isFindingPayload(payload: Pick<PeerStatusPayload, 'event' | 'severity'>): boolean {
  return payload.severity === 'warning' || isFindingEvent(payload.event);
}

/** A window's figures as a degradation event carries them. */
export interface PathFigures {
  /** Probes counted (those of every path judged, for a node). */
  samples: number;
  loss_ratio: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

/** What a finding event says beyond KNH's fields (each event carries its own). */
export interface FindingFacts {
  /** peer_degraded, path_degraded (and their resolutions): the figures when decided. */
  figures?: PathFigures;
  /** peer_mtu, path_mtu: the probe size, in bytes of payload, that fails where small ones pass. */
  mtu?: { size: number };
  /** egress_broken: the nodes it still reaches, and those that reach it (addresses). */
  egress?: { reaches: string[]; reached_by: string[] };
  /** partition: the sides, each a list of node addresses, that cannot reach each other. */
  partition?: { sides: string[][] };
  /** peer_unauthenticated (protocol 4): why the node refuses the coordinator's signed messages. */
  auth?: AuthFacts;
}

/** What a node out of sight (its messages and the coordinator's not authenticated) says of it. */
export interface AuthFacts {
  /** Its answers' reason for refusing (x-knh-refused): bad-signature, expired, missing, … */
  refusal: string;
  /** How far its clock is from the coordinator's, ms (positive: ahead), when 2 s or more. */
  offset_ms: number | null;
}

/** Events about the coordinator's own ability to judge, not about a peer (peer: the coordinator). */
export function isJudgementEvent(event: PeerStatusEvent): boolean {
  return event === 'cannot_judge' || event === 'can_judge';
}

/** cannot_judge / can_judge: what the coordinator could see when it said so. */
export interface JudgementFacts {
  /** Peers it reaches (they answer, or their hosts refuse), of `peers`. */
  reaches: number;
  /** Peers seen alive and not dead: those it judges. */
  peers: number;
  /** The peers silent to it (at most MAX_LISTED_UNREACHABLE; `unreachable_count` has them all). */
  unreachable: { id: string; address: string; node_name: string }[];
  unreachable_count: number;
  /** Ids of the peers that probed them for it and could not reach them either. */
  corroborated_by: string[];
}

export interface PeerStatusPayload {
  peer: PeerPayload;
  coordinator: string;
  coordinator_address: string;
  event: PeerStatusEvent;
  epoch: number;
  timestamp: string;
  dedup_key: string;
  reason?: string;
  path?: { from: string; to: string; witnesses: string[] };
  /** cannot_judge / can_judge only. */
  judgement?: JudgementFacts;
  /** Finding events only (protocol 3): warning; the others are critical and say nothing. */
  severity?: Severity;
  figures?: FindingFacts['figures'];
  mtu?: FindingFacts['mtu'];
  egress?: FindingFacts['egress'];
  partition?: FindingFacts['partition'];
  auth?: FindingFacts['auth'];
}

export type ClusterStatusReason = 'election' | 'change' | 'periodic';

export interface ClusterStatusPayload {
  peer_map: PeerPayload[];
  coordinator: string;
  coordinator_address: string;
  event: 'cluster_status';
  reason: ClusterStatusReason;
  epoch: number;
  timestamp: string;
  sanity_check: SanityState;
  self_suspect: boolean;
  unreachable_peers: number;
  /** Listed peers never seen alive, within START_GRACE: left out of peer_map (still starting). */
  unseen_peers: number;
}

/** At most this many unreachable peers are named in a cannot_judge event (all are counted). */
export const MAX_LISTED_UNREACHABLE = 50;
