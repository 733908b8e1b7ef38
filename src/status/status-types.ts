// GET /status: what one node knows, as JSON (schemas/status.schema.json is the wire contract).
import type { NodeRef } from '../wire/node-ref.js';
import type { PathsStatus } from './paths-types.js';

/** A peer as this node sees it; `left`: it shut down deliberately (SIGTERM), not reported dead. */
export type PeerState = 'unknown' | 'alive' | 'suspect' | 'dead' | 'left';

export interface StatusPeer {
  id: string;
  address: string;
  node_name: string;
  state: PeerState;
  /** ISO time of the last change between alive, dead and unknown; null when never judged. */
  since: string | null;
  /** ISO time of the coordinator's last probe of it; null when not known. */
  last_probe: string | null;
  /** Round-trip of the last answered probe, ms; null when not known. */
  latency_ms: number | null;
  /**
   * While it does not answer (suspect, dead, or never answered): ISO time it last answered the
   * coordinator, null when not since that coordinator leads; null while it answers.
   */
  last_seen: string | null;
  /** While it does not answer: why its last probe failed (refused, timeout, reset…); else null. */
  last_failure: string | null;
  /** The coordinator cannot reach it, but other peers can. */
  path_broken: boolean;
  /** A dead-peer alert was sent (or, during maintenance, would have been). */
  alerted: boolean;
  /** Alerts about this peer are paused by a maintenance window. */
  in_maintenance: boolean;
}

export interface StatusEvent {
  /** ISO time. */
  time: string;
  /**
   * peer_dead, peer_recovered, path_broken, path_restored, cannot_judge, can_judge, suspected,
   * cleared, withheld, alive, never_alive, coordinator, left, returned, maintenance; on the
   * coordinator the findings about the paths as they open and close (partition, egress_broken,
   * peer_degraded, path_mtu… and their ends), the nodes named by node name and address.
   */
  kind: string;
  /** The id of the peer concerned, when there is one. */
  peer: string | null;
  /** One human sentence. */
  text: string;
  /** An alert that maintenance or dry-run kept from being sent. */
  suppressed: boolean;
}

export interface MaintenanceWindowView {
  id: string;
  /** The whole mesh, or the named nodes (node names or ids). */
  scope: 'mesh' | 'nodes';
  nodes: string[];
  /** ISO time it started. */
  starts: string;
  /** ISO time it ends. */
  until: string;
  reason: string;
}

export interface NodeStatus {
  id: string;
  address: string;
  node_name: string;
  version: string;
  /** The git revision built (absent from knh before 0.2.0). */
  revision?: string;
  role: 'follower' | 'candidate' | 'coordinator';
  epoch: number;
  coordinator: NodeRef | null;
  /** ISO time of this answer. */
  now: string;
  ready: boolean;
  dry_run: boolean;
  /**
   * Whose verdicts `peers` shows: this node's own (it leads), the coordinator's last announcement
   * (a follower), or none yet.
   */
  view: { source: 'own' | 'coordinator' | 'none'; as_of: string | null };
  /** Coordinator only: it cannot reach most of its peers and declares none dead. */
  self_suspect: boolean | null;
  peers: StatusPeer[];
  /** Newest first, at most 100. */
  events: StatusEvent[];
  maintenance: MaintenanceWindowView[];
  /** Pair probing: every node's paths (the coordinator), or this node's own. */
  paths: PathsStatus;
  /** With a peer secret: what peers said of this node's signed messages in the last minute. */
  authentication?: AuthenticationStatus;
}

export interface AuthenticationStatus {
  /** Why this node cannot prove itself to its peers (and so neither leads nor is ready), or null. */
  unauthenticated: string | null;
  /** When a peer last took one of its signed messages (within the minute), or null. */
  last_accepted: string | null;
  /** Peers whose last answer refused one, why (expired, bad-signature...), since when. */
  refused_by: { address: string; reason: string; since: string; at: string }[];
  /** Peers whose clocks are 2 s or more from this node's (positive: ahead), from their answers. */
  clock_offsets: { address: string; offset_ms: number }[];
}
