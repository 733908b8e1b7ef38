// Builds webhook payloads (KNH's fields plus knh's) from verdicts; pure.
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import { seenAlive, type PeerRecord } from '../prober/verdict.js';
import {
  eventKey,
  incidentKey,
  incidentOf,
  incidentStart,
  incidentSubject,
} from '../wire/incident.js';
import {
  isPathEvent,
  type ClusterStatusPayload,
  type ClusterStatusReason,
  type JudgementFacts,
  type PeerPayload,
  type PeerStatusEvent,
  type PeerStatusPayload,
  type SanityState,
} from '../wire/webhooks.js';

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

/** When the incident a payload belongs to started (epoch ms), from its dedup key. */
export function incidentStartOf(payload: Pick<PeerStatusPayload, 'dedup_key'>): number {
  return incidentStart(incidentOf(payload));
}

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
  const subject =
    isPathEvent(event) && from
      ? incidentSubject.path(from, address)
      : incidentSubject.peer(address);
  return eventKey(incidentKey(subject, incidentMs), event);
}

/**
 * cannot_judge (the coordinator cannot reach most of its peers and withholds their verdicts) or
 * can_judge (that is over, or another coordinator took over). The `peer` is the coordinator that
 * could not judge (`subject`), alive: KNH's receivers, which page on `alive: false`, take it as the
 * notice it is. `coordinator`: the one sending it (the subject, or its successor resolving it).
 */
export function judgementPayload(args: {
  event: 'cannot_judge' | 'can_judge';
  subject: NodeRef;
  coordinator: NodeRef;
  /** When the subject started withholding verdicts: the incident's identity. */
  sinceMs: number;
  epoch: number;
  now: number;
  facts: JudgementFacts;
  reason: string;
}): PeerStatusPayload {
  const { event, subject, coordinator, sinceMs, facts } = args;
  return {
    peer: {
      id: subject.id,
      address: subject.address,
      alive: true,
      node_name: nodeNameOf(subject.id),
      health: 'alive',
      path_broken: false,
      since: iso(sinceMs),
    },
    coordinator: coordinator.id,
    coordinator_address: coordinator.address,
    event,
    epoch: args.epoch,
    timestamp: iso(args.now),
    dedup_key: eventKey(incidentKey(incidentSubject.judge(subject.address), sinceMs), event),
    reason: args.reason,
    judgement: facts,
  };
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
  const path = isPathEvent(event);
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

/**
 * The full peer map, but for peers never seen alive that were listed less than `startGraceMs`
 * ago: still starting, not judged yet, so not shown `alive: false` (a KNH receiver reads that as
 * dead); they are counted in `unseen_peers`.
 */
export function clusterStatusPayload(args: {
  records: readonly PeerRecord[];
  coordinator: NodeRef;
  epoch: number;
  reason: ClusterStatusReason;
  sanity: SanityState;
  selfSuspicion: { suspect: boolean; unreachable: number };
  startGraceMs: number;
  now: number;
}): ClusterStatusPayload {
  const shown = args.records.filter(
    (r) => seenAlive(r) || args.now - r.sinceMs >= args.startGraceMs,
  );
  return {
    peer_map: shown.map(peerPayload),
    coordinator: args.coordinator.id,
    coordinator_address: args.coordinator.address,
    event: 'cluster_status',
    reason: args.reason,
    epoch: args.epoch,
    timestamp: iso(args.now),
    sanity_check: args.sanity,
    self_suspect: args.selfSuspicion.suspect,
    unreachable_peers: args.selfSuspicion.unreachable,
    unseen_peers: args.records.length - shown.length,
  };
}
