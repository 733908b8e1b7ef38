// Alerts and peer deaths as the receivers' tests need them, built one way.
import { peerStatusPayload, type PeerStatusPayload } from '../../src/alerts/payloads.js';
import type { NodeRef } from '../../src/core/node-ref.js';
import {
  answered,
  attemptFailed,
  confirm,
  newRecord,
  type PeerRecord,
} from '../../src/prober/verdict.js';
import type { Alert } from '../../src/receivers/alert.js';

export const COORDINATOR: NodeRef = { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' };

/** Node `worker-<n>` at 10.0.0.<n>:8080, dead since `at`. */
export function deadAlert(
  n: number,
  at: number,
  over: Partial<Alert> = {},
  coordinator = COORDINATOR,
): Alert {
  return {
    key: `knh:10.0.0.${n}:8080:${at}`,
    kind: 'peer_dead',
    peer: { id: `worker-${n}@10.0.0.${n}`, address: `10.0.0.${n}:8080`, node_name: `worker-${n}` },
    coordinator,
    reason: 'timeout',
    path: null,
    startsAt: at,
    endsAt: null,
    ...over,
  };
}

/** A peer seen alive at `at`. */
export function upRecord(name: string, ip: string, at: number): PeerRecord {
  return answered(
    newRecord(`${ip}:8080`, at),
    { latencyMs: 1, id: `${name}@${ip}`, nodeName: name },
    at,
  ).record;
}

/** That peer's record once confirmed dead at `at` (probes failing from 1 s before). */
export function deadRecord(up: PeerRecord, at: number): PeerRecord {
  const suspected = attemptFailed(up, { latencyMs: 1, detail: 'refused' }, at - 1_000, at - 999);
  return confirm(suspected.record, { reachedBy: [], unhealthyMs: 1_000, withhold: null }, at)
    .record;
}

/** The peer_dead (at `at`) and peer_recovered (at `back`) KNH sends for a death. */
export function deathAndRecovery(
  up: PeerRecord,
  at: number,
  back: number,
  coordinator = COORDINATOR,
): [PeerStatusPayload, PeerStatusPayload] {
  const dead = deadRecord(up, at);
  const recovered = answered(dead, { latencyMs: 1, id: up.id, nodeName: up.nodeName }, back).record;
  const make = (r: PeerRecord, event: 'peer_dead' | 'peer_recovered', now: number) =>
    peerStatusPayload({ record: r, event, incidentMs: at, coordinator, epoch: 1, now });
  return [make(dead, 'peer_dead', at), make(recovered, 'peer_recovered', back)];
}
