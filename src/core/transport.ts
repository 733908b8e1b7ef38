// How the core reaches peers: a small interface with a real HTTP implementation in src/http/.
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { NodeRef } from './node-ref.js';
import type { PeerView } from '../prober/verdict.js';

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

export type Outcome<T> =
  | { ok: true; value: T; latencyMs: number }
  | {
      ok: false;
      reason: FailureReason;
      phase: 'connect' | 'send';
      detail: string;
      latencyMs: number;
    };

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
}

export interface PeerTransport {
  ping(address: string, signal?: AbortSignal): Promise<Outcome<PingResponse>>;
  sendElection(address: string, request: ElectionRequest): Promise<Outcome<ElectionAnswer>>;
  announce(address: string, announcement: Announcement): Promise<Outcome<AnnouncementReply>>;
}

/** Checks that the coordinator itself can reach the world (SANITY_CHECK_URL). */
export interface SanityCheck {
  check(): Promise<Outcome<void>>;
}
