// How the core reaches peers: a small interface with a real HTTP implementation in src/peer-client/.
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
  LeaveNotice,
  PathPull,
  PathReport,
  PathReportReply,
  PingResponse,
  RelayProbeRequest,
  RelayProbeResult,
} from '../wire/peer-messages.js';

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

/**
 * Why a peer refused a signed message as not authenticated (401), as it names it; 'unnamed': a
 * 401 that names no reason this node knows.
 */
export type AuthRefusal =
  'missing' | 'malformed' | 'expired' | 'bad-signature' | 'replayed' | 'busy' | 'unnamed';

/**
 * Why a peer's answer to a challenged probe proved nothing though it ought to sign it
 * (auth/ping-signature.ts): unsigned, signed with another secret, or by a node naming another address.
 */
export type UnprovenPing = 'ping-unsigned' | 'ping-bad-signature' | 'ping-other-node';

/** A request that failed, how far it got, and why. */
export interface Failure {
  ok: false;
  reason: FailureReason;
  phase: 'connect' | 'send';
  detail: string;
  latencyMs: number;
  /**
   * The peer refused the message as not authenticated: its host answered, but the answer says
   * nothing of this node's term (an election or announcement so refused is neither answered nor
   * heard: a node its peers cannot authenticate must not lead).
   */
  authRefused?: AuthRefusal;
}

export type Outcome<T> = { ok: true; value: T; latencyMs: number } | Failure;

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

/** Pair probing's requests (protocol 3): full-size echoes, and reports to the coordinator. */
export interface PathTransport {
  /** Sends `size` bytes of payload and takes as many back: a full-size probe. */
  echo(address: string, size: number, signal?: AbortSignal): Promise<Outcome<void>>;
  reportPaths(address: string, report: PathReport): Promise<Outcome<PathReportReply>>;
  /** Asks a node for every path it tells (its reports stopped coming): a full report. */
  pullPaths(address: string, pull: PathPull): Promise<Outcome<PathReport>>;
}
