// What localization reads and what it concludes: the latest state of each ordered path between two
// nodes, and the findings, each a small tagged object naming nodes by address.

/**
 * The latest state of the path `from` → `to` (addresses). `unknown`: not tested yet, or tested too
 * long ago to count (the caller decides); the same as not giving the path at all.
 */
export type PathState =
  | { from: string; to: string; state: 'ok' | 'failed' | 'degraded' | 'unknown' }
  /** Small probes pass and full-size ones fail: `size` is the size that failed, in bytes. */
  | { from: string; to: string; state: 'mtu'; size: number };

export interface LocalizeInput {
  /** Every node's address, the coordinator's among them. */
  nodes: readonly string[];
  /** Each ordered path at most once; a sparse list (only what was sampled), not a matrix. */
  paths: Iterable<PathState>;
}

export type Finding =
  | { kind: 'partition'; sides: string[][] }
  | { kind: 'unreachable'; node: string }
  | { kind: 'egress-broken'; node: string; reaches: string[]; reachedBy: string[] }
  | { kind: 'path-broken'; from: string; to: string; witnesses: string[] }
  | { kind: 'node-mtu'; node: string; size: number }
  | { kind: 'path-mtu'; from: string; to: string; size: number }
  | { kind: 'node-degraded'; node: string }
  | { kind: 'path-degraded'; from: string; to: string };

/** The nodes a finding names. */
export function nodesOf(f: Finding): string[] {
  switch (f.kind) {
    case 'partition':
      return f.sides.flat();
    case 'unreachable':
    case 'egress-broken':
    case 'node-mtu':
    case 'node-degraded':
      return [f.node];
    case 'path-broken':
    case 'path-mtu':
    case 'path-degraded':
      return [f.from, f.to];
  }
}
