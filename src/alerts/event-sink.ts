// What the reporter needs of the delivery of KNH's webhooks (delivery/notifier.ts is the real one):
// a peer-status or cluster-status event queued for its receiver, taken back, or withdrawn.
import type { ClusterStatusPayload, PeerStatusPayload } from '../wire/webhooks.js';

/**
 * `withdrawn`: not sent (or, in flight, not retried) because its sender handed it to another node
 * to send (a coordinator that stopped leading): withdraw().
 */
export type DeliveryOutcome =
  'delivered' | 'given-up' | 'rejected' | 'dropped' | 'superseded' | 'withdrawn';

export interface EventSink {
  /** Queues a peer-status event; false when no receiver is set or it was refused (invalid). */
  peerStatus(payload: PeerStatusPayload, onSettled?: (outcome: DeliveryOutcome) => void): boolean;
  clusterStatus(payload: ClusterStatusPayload): boolean;
  /** This node stopped leading: the events not sent yet are withdrawn. */
  withdraw(): void;
  /** Takes back a queued event (its outcome: superseded); false when none was waiting. */
  cancel(key: string): boolean;
}
