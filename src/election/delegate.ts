// What rides on the election's messages besides the election itself. As memberlist's Delegate:
// this node's state goes out, a peer's is merged in; the driver decides when, the delegate what.
import type { Alert } from '../wire/alert.js';
import type { MaintenanceWindow } from '../wire/maintenance-window.js';
import type { PeerView } from '../wire/peer-view.js';
import type { TermHandover } from '../wire/term-handover.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

/** What a term's coordinator shares, so that whoever leads next neither repeats nor forgets. */
export interface TermState {
  /** Its verdicts. */
  peers: PeerView[];
  /** Its peer-status events not yet delivered. */
  undelivered: PeerStatusPayload[];
  /** The alerts firing at the other receivers. */
  alerts: Alert[];
  /** The open "cannot judge the mesh" incident. */
  cannotJudge: PeerStatusPayload | null;
}

export interface ElectionDelegate {
  /**
   * This node's term state: what a coordinator announces, and what a node that refuses a stale
   * epoch hands to the node taking over (it restarted, or led elsewhere).
   */
  localState(): TermState;
  /** The maintenance windows this node knows: in announcements and in replies alike. */
  windows(): MaintenanceWindow[];
  /** What this node hands over of a term it stopped leading lately (in replies, protocol 2). */
  handover(): TermHandover | null;
  /** Windows the peer at `from` sent (its announcement, or its reply to ours), to merge. */
  mergeWindows(windows: MaintenanceWindow[], from: string): void;
  /**
   * The state of the coordinator this node now follows, from its accepted announcement.
   * `peersOmitted`: a large mesh's coordinator sent its verdicts to its successors only.
   */
  mergeFollowed(state: TermState, peersOmitted: boolean): void;
  /**
   * A newer term's state, from a refusal of this node's announcement. `leading`: this node leads
   * already (a healed partition: the other side's incidents are to be resolved); otherwise it is
   * what this node starts from. Must not block.
   */
  mergeSuperseded(state: TermState, leading: boolean): void;
  /** The reply of the peer at `from` handed over a term it stopped leading lately. Must not block. */
  mergeHandover(handover: TermHandover, from: string): void;
}

/** No term state: what a node that followed no coordinator yet starts from. */
export function emptyTermState(): TermState {
  return { peers: [], undelivered: [], alerts: [], cannotJudge: null };
}
