// The `paths` section of GET /status (pair probing, issue 22): its wire shape, which
// schemas/status.schema.json states as the contract.
import type { Finding } from '../paths/path-state.js';
import type { NodeRef } from '../wire/node-ref.js';

/** A path's state as /status tells it; `unknown` paths are left out. */
export type KnownPathState = 'ok' | 'degraded' | 'mtu' | 'failed';

/** Paths by state. */
export type PathCounts = Record<KnownPathState, number>;

/** The pair-probing settings a reader of the figures needs. */
export interface PathsSettings {
  /** PAIR_PROBES: the peers each node probes a round. */
  probes_per_round: number;
  /** The peers each node probes a round at the mesh's size now: PAIR_PROBES, or all the others. */
  peers_per_round: number;
  /** ELECTION_COOLDOWN_PERIOD: a round, ms. */
  round_ms: number;
  /** Rounds a node takes to probe every other node once, at the mesh's size now. */
  rounds_to_cover: number;
  /** PATH_WINDOW: how far back a path's figures go, ms. */
  window_ms: number;
  /** DEGRADED_LOSS_RATIO and DEGRADED_LATENCY (ms, against p99), held for DEGRADED_FOR. */
  degraded_loss_ratio: number;
  degraded_latency_ms: number;
  /** MTU_PROBE_SIZE, bytes; null: no full-size probes. */
  mtu_probe_size: number | null;
}

/** A node of the matrix or summary: rows and columns follow this order (the election's rank). */
export interface PathsNode {
  address: string;
  id: string;
  node_name: string;
}

/**
 * One row of the matrix: the paths from one node (the node of the same place in `nodes`) to every
 * node, one entry a column. `states` holds one character a column: `o` ok, `d` degraded, `m` mtu,
 * `f` failed, `-` not known (never probed lately, or the node itself); the figures of a path not
 * known are null.
 */
export interface MatrixRow {
  states: string;
  p50_ms: (number | null)[];
  p99_ms: (number | null)[];
  loss_ratio: (number | null)[];
}

/** A node's paths in one direction (out of it, or into it) in the summary. */
export interface DirectionSummary {
  /** Paths known, of which failed, degraded and mtu (the rest are ok). */
  known: number;
  failed: number;
  degraded: number;
  mtu: number;
  /** Over every known path's probes together; null with no samples. */
  loss_ratio: number | null;
  /** The paths' percentiles averaged, each weighted by its answered probes (merge-stats.ts). */
  p50_ms: number | null;
  p99_ms: number | null;
}

export interface NodePathsSummary {
  out: DirectionSummary;
  in: DirectionSummary;
}

/** A finding of the coordinator's last localization (src/paths/localize.ts). */
export interface PathFinding {
  kind: Finding['kind'];
  /** The nodes it blames: a node's, or a path's two ends; none for a partition (see `sides`). */
  nodes: string[];
  /** Path findings: the path. */
  from?: string;
  to?: string;
  /** partition: the groups of nodes that cannot reach each other. */
  sides?: string[][];
  /** node-mtu, path-mtu: the full-size probe's bytes that fail. */
  size?: number;
}

/** One of this node's own paths. */
export interface OwnPath {
  to: string;
  state: KnownPathState;
  /** ISO time it has been in this state. */
  since: string;
  samples: number;
  loss_ratio: number;
  p50_ms: number | null;
  p99_ms: number | null;
  mtu_size?: number;
}

interface Probing {
  settings: PathsSettings;
  /** The paths told below by state: every path the coordinator holds, or this node's own. */
  counts: PathCounts;
}

interface Localized extends Probing {
  /** Every node taking part, this one included, in rank order. */
  nodes: PathsNode[];
  /** The last localization's findings, most serious kind first; at most 100 of findings_total. */
  findings: PathFinding[];
  findings_total: number;
}

export type PathsStatus =
  /** PAIR_PROBES=0: nodes do not probe each other's paths. */
  | { view: 'off' }
  /**
   * Not the coordinator: this node's own paths, worst first, at most 100 (`counts` has them
   * all). Every node's are on `coordinator`'s status (null while there is none).
   */
  | (Probing & { view: 'own'; coordinator: NodeRef | null; own: OwnPath[] })
  /** The coordinator of at most 100 nodes: every path it holds, nodes by nodes. */
  | (Localized & { view: 'matrix'; matrix: MatrixRow[] })
  /** The coordinator of more: each node's paths out and in, summed up (same order as `nodes`). */
  | (Localized & { view: 'summary'; summary: NodePathsSummary[] });
