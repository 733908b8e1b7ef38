// The election's wire messages as the core sees them (their JSON Schemas live in schemas/).
import type { NodeRef } from '../core/node-ref.js';
import type { PeerStatusPayload } from '../alerts/payloads.js';
import type { PeerView } from '../prober/verdict.js';
import type { MaintenanceWindow } from '../maintenance/windows.js';
import type { Alert } from '../receivers/alert.js';
import type { TermHandover } from '../alerts/term-handover.js';

/** POST /election: "I am holding an election; are you, a higher-ranked node, alive?" */
export interface ElectionRequest {
  from: NodeRef;
  epoch: number;
}

/** The answer to an election: the receiver outranks the sender and is alive. */
export interface ElectionAnswer {
  type: 'answer';
  from: NodeRef;
  epoch: number;
  /** The coordinator the answerer currently follows or is, if any. */
  coordinator: NodeRef | null;
}

export type RejectReason = 'outranked' | 'stale-epoch' | 'conflict' | 'unknown-sender';

/** The reply to a coordinator announcement. */
export interface AnnouncementReply {
  accepted: boolean;
  epoch: number;
  reason?: RejectReason;
  /** The coordinator the receiver follows after handling the announcement. */
  coordinator: NodeRef | null;
  /** stale-epoch: the receiver's verdicts, for a restarted node that is taking over. */
  peers?: PeerView[];
  /** stale-epoch: events decided but not yet delivered. */
  undelivered?: PeerStatusPayload[];
  /** The maintenance windows the receiver knows. */
  maintenance?: MaintenanceWindow[];
  /** stale-epoch: the alerts firing at the other receivers, as last shared with the receiver. */
  alerts?: Alert[];
  /** stale-epoch, protocol 2: the open "cannot judge" incident, as last shared with the receiver. */
  cannot_judge?: PeerStatusPayload;
  /**
   * Protocol 2: the receiver stopped leading a term lately; which of its events went out, which
   * are in flight, which it did not send (term-handover.ts).
   */
  handover?: TermHandover;
}
