// What an ended term hands to the next coordinator, in an announcement reply (protocol 2).
import type { PeerStatusPayload } from './webhooks.js';

/** What an ended term hands over (the `handover` of an announcement reply). */
export interface TermHandover {
  /** The epoch of the term that ended. */
  epoch: number;
  /** Dedup keys of its events that went out (delivered, or given up) lately. */
  settled: string[];
  /** Dedup keys of its events whose POST was in flight: their outcome comes in a later reply. */
  in_flight: string[];
  /** Its events not sent: the new coordinator sends them. */
  undelivered: PeerStatusPayload[];
}
