// Which of its paths a node tells its coordinator, and how often, for the mesh's size: in a mesh
// small enough for the status page's matrix every path, and in a larger one a sample (its next
// PAIR_PROBES nodes in the ring) and at most PAIR_PROBES paths that are not ok (the worst), so that
// what the coordinator holds grows as N × 2 × PAIR_PROBES at most, not N² (a partition fails half
// of every node's paths). Reports are spaced so that the coordinator takes about
// REPORT_INTAKE_PER_S of them a second whatever N.
import { pairTargets } from './pair-schedule.js';

/** Up to this many nodes, every node tells every path it knows: the coordinator holds them all. */
export const MATRIX_NODES = 100;
/** About this many reports a second reach the coordinator at most, whatever the mesh's size. */
export const REPORT_INTAKE_PER_S = 200;
/** A report with nothing new goes at least this often (more seldom in a large mesh). */
export const REPORT_REFRESH_MS = 5_000;

export interface ReportPolicy {
  /** Every path is told (a small mesh); else only `sample` and the paths not ok. */
  everyPath: boolean;
  /** The targets whose paths are told whatever their state. */
  sample: ReadonlySet<string>;
  /** At most one report a node each `gapMs`. */
  gapMs: number;
  /** At least one report a node each `refreshMs`. */
  refreshMs: number;
  /**
   * A new coordinator's first reports, every node's in full at once, are spread over this long:
   * a coordinator taking over a large mesh has its start-up's work to do (every peer's first
   * verdict) and takes them at a quarter of its intake meanwhile.
   */
  spreadMs: number;
  /** The coordinator forgets the paths of a node that has not reported for this long. */
  staleMs: number;
}

/** How often each node of a mesh of `nodes` reports: the intervals of ReportPolicy. */
export function reportPacing(
  nodes: number,
): Pick<ReportPolicy, 'gapMs' | 'refreshMs' | 'spreadMs' | 'staleMs'> {
  const gapMs = Math.ceil((nodes * 1_000) / REPORT_INTAKE_PER_S);
  const refreshMs = Math.max(REPORT_REFRESH_MS, 4 * gapMs);
  return { gapMs, refreshMs, spreadMs: 4 * gapMs, staleMs: 3 * refreshMs };
}

/** The policy for `self` among `nodes` (every node, ranked, self included). */
export function reportPolicy(
  self: string,
  nodes: readonly string[],
  perRound: number,
): ReportPolicy {
  const everyPath = nodes.length <= MATRIX_NODES;
  return {
    everyPath,
    sample: new Set(everyPath ? [] : pairTargets(self, nodes, 0, perRound)),
    ...reportPacing(nodes.length),
  };
}

/**
 * Whether a path with this state to `to` is told under `policy`: out of the sample, only the
 * paths not ok among `exceptions` (exceptionsTold).
 */
export function tells(
  policy: ReportPolicy,
  to: string,
  state: string,
  exceptions: ReadonlySet<string>,
): boolean {
  return policy.everyPath || policy.sample.has(to) || (state !== 'ok' && exceptions.has(to));
}

/** Failed paths say most, then MTU, then degraded. */
const WORST_FIRST: Record<string, number> = { failed: 0, mtu: 1, degraded: 2 };

/**
 * The targets of the paths not ok, out of the sample, that are told in a large mesh: at most
 * `limit`, the worst first (then by address, so that the same ones stay told).
 */
export function exceptionsTold(
  paths: readonly { to: string; state: string }[],
  policy: ReportPolicy,
  limit: number,
): Set<string> {
  if (policy.everyPath) return new Set();
  const rank = (s: string) => WORST_FIRST[s] ?? 3;
  return new Set(
    paths
      .filter((p) => p.state !== 'ok' && p.state !== 'unknown' && !policy.sample.has(p.to))
      .sort((a, b) => rank(a.state) - rank(b.state) || (a.to < b.to ? -1 : a.to > b.to ? 1 : 0))
      .slice(0, limit)
      .map((p) => p.to),
  );
}
