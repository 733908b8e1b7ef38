// Holds alerts back during maintenance: an alert about a paused node (any node a finding names)
// is kept, not sent; its
// resolution cancels it (nothing happened worth a page); one still open when the pause ends goes
// out then. A resolution of an alert that did go out is always sent, so no incident stays open.
import type { MaintenanceWindow, PeerNames } from '../wire/maintenance-window.js';
import { incidentOf } from '../wire/incident.js';
import {
  isFindingPayload,
  isUpdateEvent,
  opensIncident,
  type PeerStatusPayload,
} from '../wire/webhooks.js';
import { nodeNameOf } from '../wire/node-ref.js';

export type Admission =
  | { send: true }
  /** Kept back: `window` pauses it, or it resolves an alert kept back (`cancels` its key). */
  | { send: false; window: MaintenanceWindow | null; cancels: string | null };

export class MaintenanceHold {
  /** Openings kept back, by incident. */
  private readonly held = new Map<string, PeerStatusPayload>();

  constructor(
    private readonly pausing: (peer: PeerNames, now: number) => MaintenanceWindow | null,
  ) {}

  admit(payload: PeerStatusPayload, now: number): Admission {
    const incident = incidentOf(payload);
    if (opensIncident(payload.event)) {
      const window = this.pausingAny(payload, now);
      if (!window) return { send: true };
      this.held.set(incident, payload);
      return { send: false, window, cancels: null };
    }
    const opening = this.held.get(incident);
    if (!opening) return { send: true };
    // News of an incident kept back (a peer flapping in maintenance): dropped, not kept.
    if (isUpdateEvent(payload.event)) {
      return { send: false, window: this.pausingAny(opening, now), cancels: payload.dedup_key };
    }
    this.held.delete(incident);
    return { send: false, window: null, cancels: opening.dedup_key };
  }

  /** Openings whose pause is over, still unresolved: they go out now, in the order decided. */
  release(now: number): PeerStatusPayload[] {
    const due: PeerStatusPayload[] = [];
    for (const [incident, payload] of this.held) {
      if (this.pausingAny(payload, now)) continue;
      this.held.delete(incident);
      due.push(payload);
    }
    return due;
  }

  /** Whether a maintenance window pauses alerts about this node now. */
  paused(peer: PeerNames, now: number): boolean {
    return this.pausing(peer, now) !== null;
  }

  get size(): number {
    return this.held.size;
  }

  /** The first window pausing any node the alert is about. */
  private pausingAny(payload: PeerStatusPayload, now: number): MaintenanceWindow | null {
    for (const names of namesOf(payload)) {
      const window = this.pausing(names, now);
      if (window) return window;
    }
    return null;
  }
}

/**
 * Every node an alert is about: its peer, and for a finding of pair probing every node it names
 * (a path's two ends, by id; a partition's sides, by address: its peer is the coordinator), so
 * that a node in maintenance pauses the findings about its paths too.
 */
function namesOf(payload: PeerStatusPayload): PeerNames[] {
  const { peer, path, partition } = payload;
  if (partition)
    return partition.sides.flat().map((address) => ({ address, id: '', nodeName: '' }));
  const names = [{ address: peer.address, id: peer.id, nodeName: peer.node_name }];
  if (path && isFindingPayload(payload)) {
    for (const id of [path.from, path.to])
      names.push({ address: '', id, nodeName: nodeNameOf(id) });
  }
  return names;
}
