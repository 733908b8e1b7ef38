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
  'peer_dead' | 'peer_recovered' | 'path_broken' | 'path_restored' | 'cannot_judge' | 'can_judge';

/** Every incident's opening event, and the event that resolves it (same dedup key stem). */
export const RESOLVED_BY = {
  peer_dead: 'peer_recovered',
  path_broken: 'path_restored',
  cannot_judge: 'can_judge',
} as const satisfies Partial<Record<PeerStatusEvent, PeerStatusEvent>>;

export type OpeningEvent = keyof typeof RESOLVED_BY;

export function opensIncident(event: PeerStatusEvent): event is OpeningEvent {
  return Object.hasOwn(RESOLVED_BY, event);
}

/** The event that opened the incident an event opens or resolves: the incident's kind. */
export function openingOf(event: PeerStatusEvent): OpeningEvent {
  if (opensIncident(event)) return event;
  const opening = (Object.keys(RESOLVED_BY) as OpeningEvent[]).find(
    (o) => RESOLVED_BY[o] === event,
  );
  // Every event either opens an incident or resolves one (the schema's enum, RESOLVED_BY's).
  if (!opening) throw new Error(`BUG: ${event} neither opens nor resolves an incident`);
  return opening;
}

/** Events about the path from the coordinator to a peer, not about the peer itself. */
export function isPathEvent(event: PeerStatusEvent): boolean {
  return openingOf(event) === 'path_broken';
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
