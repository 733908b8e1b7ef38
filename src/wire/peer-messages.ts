// The messages nodes exchange (/ping, /election, /coordinator, /probe, /leave, /paths/*), as the core sees
// them; their JSON Schemas live in schemas/.
import type { NodeRef } from './node-ref.js';
import type { PeerStatusPayload } from './webhooks.js';
import type { PeerView } from './peer-view.js';
import type { MaintenanceWindow } from './maintenance-window.js';
import type { Alert } from './alert.js';
import type { TermHandover } from './term-handover.js';

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

export interface PingResponse {
  id: string;
  address: string;
  node_name: string;
  role: 'follower' | 'candidate' | 'coordinator';
  epoch: number;
  coordinator: NodeRef | null;
}

export interface Announcement {
  from: NodeRef;
  epoch: number;
  peers: PeerView[];
  /** Peer-status events decided but not yet delivered: a successor sends them (same dedup key). */
  undelivered?: PeerStatusPayload[];
  /** Maintenance windows the coordinator knows (every node merges them). */
  maintenance?: MaintenanceWindow[];
  /** Alerts firing at the other receivers (Slack, PagerDuty...), so a successor resolves them. */
  alerts?: Alert[];
  /** The peers next in line (highest-ranked first): they hold elections first if this one fails. */
  successors?: string[];
  /**
   * In a large mesh only the successors get the verdicts, undelivered events and alerts; the
   * others get `peers: []` and this mark (the map is on the coordinator's own status page).
   */
  peers_omitted?: boolean;
  /** How often the coordinator heartbeats this follower, in ms (absent: HEARTBEAT_INTERVAL). */
  heartbeat_ms?: number;
  /**
   * Protocol 2: the coordinator's open "cannot judge the mesh" incident (its opening event), so a
   * successor resolves it. Rides where the verdicts do.
   */
  cannot_judge?: PeerStatusPayload;
}

/** POST /probe: the coordinator asks a peer to probe another one for it (an indirect probe). */
export interface RelayProbeRequest {
  from: NodeRef;
  target: string;
  /** How long the relay may try, retries included. */
  timeout_ms: number;
}

export interface RelayProbeResult {
  target: string;
  reachable: boolean;
  attempts: number;
  latency_ms: number;
  /** The target's id when it answered, else the last failure. */
  id?: string;
  detail?: string;
}

/** POST /leave: a node shutting down (SIGTERM) says so, so it is not reported dead. */
export interface LeaveNotice {
  from: NodeRef;
  epoch: number;
}

/** POST /paths/echo and its answer (protocol 3): a full-size probe, `payload` as many bytes each way. */
export interface PathEcho {
  from: NodeRef;
  payload: string;
}

/** One path's latest state in a path report: the path from the sender to `to`. */
export interface ReportedPath {
  to: string;
  /** `unknown`: no longer probed: forget it. */
  state: 'ok' | 'failed' | 'degraded' | 'mtu' | 'unknown';
  /** Epoch ms it has been in this state. */
  since: number;
  samples: number;
  loss_ratio: number;
  p50_ms: number | null;
  p99_ms: number | null;
  /** mtu: the full-size probe's bytes of payload, which fail. */
  mtu_size?: number;
}

/** POST /paths/report (protocol 3): a node's pair probes' findings, to its coordinator. */
export interface PathReport {
  from: NodeRef;
  /** The epoch of the coordinator it reports to. */
  epoch: number;
  /** One more than the sender's last report. */
  seq: number;
  /** These replace every path held from the sender; else they change those named. */
  full: boolean;
  paths: ReportedPath[];
}

/** POST /paths/pull (protocol 3): the coordinator asks for every path a node tells; a full report answers. */
export interface PathPull {
  from: NodeRef;
  /** The epoch the asker leads. */
  epoch: number;
}

export interface PathReportReply {
  /** False: the receiver does not lead that epoch. */
  accepted: boolean;
  /** Send every path, full: the receiver holds none from the sender, or missed a report. */
  resync: boolean;
}
