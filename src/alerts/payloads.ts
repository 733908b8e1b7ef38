// Builds webhook payloads (KNH's fields plus knh's) from verdicts; pure.
import type { NodeRef } from '../core/node-ref.js';
import type { PeerRecord } from '../prober/verdict.js';
import type { SanityState } from '../prober/rounds.js';

export interface PeerPayload {
  id: string;
  address: string;
  alive: boolean;
  node_name: string;
  health: PeerRecord['health'];
  path_broken: boolean;
  since: string;
}

export type PeerStatusEvent = 'peer_dead' | 'peer_recovered' | 'path_broken' | 'path_restored';

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
}

const iso = (ms: number) => new Date(ms).toISOString();

export function peerPayload(r: PeerRecord): PeerPayload {
  return {
    id: r.id,
    address: r.address,
    // A suspect peer is not known to be down: KNH's consumers page on alive=false.
    alive: r.health === 'alive' || r.health === 'suspect',
    node_name: r.nodeName,
    health: r.health,
    path_broken: r.brokenPath !== null,
    since: iso(r.sinceMs),
  };
}

const KEY_SUFFIX: Record<PeerStatusEvent, string> = {
  peer_dead: 'dead',
  peer_recovered: 'recovered',
  path_broken: 'path-broken',
  path_restored: 'path-restored',
};

/**
 * The dedup key names the incident (peer address + when its dead spell or broken path started),
 * so an alert and its resolution share a stem, and a repeated delivery of either (by a successor
 * too: it resends the very payload) carries the same key. A path's key also names its source.
 */
export function dedupKey(
  event: PeerStatusEvent,
  address: string,
  incidentMs: number,
  from?: string,
): string {
  const subject = event.startsWith('path_') && from ? `${from}->${address}` : address;
  return `knh:${subject}:${incidentMs}:${KEY_SUFFIX[event]}`;
}

export function peerStatusPayload(args: {
  record: PeerRecord;
  event: PeerStatusPayload['event'];
  incidentMs: number;
  coordinator: NodeRef;
  epoch: number;
  now: number;
  /** Path events: the relays that reached the peer (default: the record's). */
  witnesses?: string[];
}): PeerStatusPayload {
  const { record, event, incidentMs, coordinator, epoch, now } = args;
  const path = event === 'path_broken' || event === 'path_restored';
  return {
    peer: peerPayload(record),
    coordinator: coordinator.id,
    coordinator_address: coordinator.address,
    event,
    epoch,
    timestamp: iso(now),
    dedup_key: dedupKey(event, record.address, incidentMs, coordinator.address),
    ...(event !== 'peer_recovered' && event !== 'path_restored' && record.lastFailure
      ? { reason: record.lastFailure }
      : {}),
    ...(path
      ? {
          path: {
            from: coordinator.id,
            to: record.id,
            witnesses: args.witnesses ?? record.brokenPath?.witnesses ?? [],
          },
        }
      : {}),
  };
}

export function clusterStatusPayload(args: {
  records: readonly PeerRecord[];
  coordinator: NodeRef;
  epoch: number;
  reason: ClusterStatusReason;
  sanity: SanityState;
  selfSuspicion: { suspect: boolean; unreachable: number };
  now: number;
}): ClusterStatusPayload {
  return {
    peer_map: args.records.map(peerPayload),
    coordinator: args.coordinator.id,
    coordinator_address: args.coordinator.address,
    event: 'cluster_status',
    reason: args.reason,
    epoch: args.epoch,
    timestamp: iso(args.now),
    sanity_check: args.sanity,
    self_suspect: args.selfSuspicion.suspect,
    unreachable_peers: args.selfSuspicion.unreachable,
  };
}
