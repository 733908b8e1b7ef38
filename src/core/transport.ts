// How the core reaches peers: a small interface with a real HTTP implementation in src/http/.
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { NodeRef } from './node-ref.js';
import type { PeerView } from '../prober/verdict.js';
import type { PeerStatusPayload } from '../alerts/payloads.js';
import type { MaintenanceWindow } from '../maintenance/windows.js';
import type { Alert } from '../receivers/alert.js';

/** Why a request failed. `connect` failures never reached the peer's process; `send` ones did. */
export type FailureReason =
  | 'refused'
  | 'unreachable'
  | 'connect-timeout'
  | 'timeout'
  | 'reset'
  | 'http-status'
  | 'bad-response'
  | 'aborted';

/** A request that failed, how far it got, and why. */
export interface Failure {
  ok: false;
  reason: FailureReason;
  phase: 'connect' | 'send';
  detail: string;
  latencyMs: number;
}

export type Outcome<T> = { ok: true; value: T; latencyMs: number } | Failure;

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

export interface PeerTransport {
  ping(address: string, signal?: AbortSignal): Promise<Outcome<PingResponse>>;
  sendElection(address: string, request: ElectionRequest): Promise<Outcome<ElectionAnswer>>;
  announce(address: string, announcement: Announcement): Promise<Outcome<AnnouncementReply>>;
  /** Asks `relay` to probe `request.target`; bounded by the request's timeout plus a margin. */
  probeVia(
    relay: string,
    request: RelayProbeRequest,
    signal?: AbortSignal,
  ): Promise<Outcome<RelayProbeResult>>;
  /** Tells a peer this node is leaving; any 2xx is success. */
  leave(address: string, notice: LeaveNotice): Promise<Outcome<void>>;
}

/** Checks that the coordinator itself can reach the world (SANITY_CHECK_URL). */
export interface SanityCheck {
  check(): Promise<Outcome<void>>;
}
