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
  since: string;
}

export interface PeerStatusPayload {
  peer: PeerPayload;
  coordinator: string;
  coordinator_address: string;
  event: 'peer_dead' | 'peer_recovered';
  epoch: number;
  timestamp: string;
  dedup_key: string;
  reason?: string;
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
}

const iso = (ms: number) => new Date(ms).toISOString();

export function peerPayload(r: PeerRecord): PeerPayload {
  return {
    id: r.id,
    address: r.address,
    alive: r.health === 'alive',
    node_name: r.nodeName,
    health: r.health,
    since: iso(r.sinceMs),
  };
}

/**
 * The dedup key names the incident (peer address + when its dead spell started), so a dead alert
 * and its recovery share a stem and a repeated delivery of either carries the same key.
 */
export function dedupKey(event: PeerStatusPayload['event'], address: string, incidentMs: number) {
  return `knh:${address}:${incidentMs}:${event === 'peer_dead' ? 'dead' : 'recovered'}`;
}

export function peerStatusPayload(args: {
  record: PeerRecord;
  event: PeerStatusPayload['event'];
  incidentMs: number;
  coordinator: NodeRef;
  epoch: number;
  now: number;
}): PeerStatusPayload {
  const { record, event, incidentMs, coordinator, epoch, now } = args;
  return {
    peer: peerPayload(record),
    coordinator: coordinator.id,
    coordinator_address: coordinator.address,
    event,
    epoch,
    timestamp: iso(now),
    dedup_key: dedupKey(event, record.address, incidentMs),
    ...(event === 'peer_dead' && record.lastFailure ? { reason: record.lastFailure } : {}),
  };
}

export function clusterStatusPayload(args: {
  records: readonly PeerRecord[];
  coordinator: NodeRef;
  epoch: number;
  reason: ClusterStatusReason;
  sanity: SanityState;
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
  };
}
