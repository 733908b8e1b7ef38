// A peer's verdict as it crosses the network: shared in announcements so a successor starts from it
// (schemas/peer-view.schema.json).

export type Health = 'unknown' | 'alive' | 'suspect' | 'dead';

/** The wire form of a record, shared in announcements so a successor starts from it. */
export interface PeerView {
  id: string;
  address: string;
  node_name: string;
  health: Health;
  since: number;
  alerted: boolean;
  /** For status pages of followers; not inherited. */
  latency_ms?: number;
  last_probe?: number;
  path_broken?: boolean;
  /** While it does not answer: epoch ms it last answered the coordinator (absent: not since it leads). */
  last_seen?: number;
  /** While it does not answer: why its last probe failed (refused, timeout, reset…). */
  last_failure?: string;
}
