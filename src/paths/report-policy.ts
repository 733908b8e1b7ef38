// Which of its paths a node tells its coordinator, and how often, for the mesh's size: in a mesh
// small enough for the status page's matrix every path, and in a larger one a sample (its next
// PAIR_PROBES nodes in the ring) and every path that is not ok, so that what the coordinator holds
// grows as N × PAIR_PROBES, not N². Reports are spaced so that the coordinator takes about
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

/** The policy for `self` among `nodes` (every node, ranked, self included). */
export function reportPolicy(
  self: string,
  nodes: readonly string[],
  perRound: number,
): ReportPolicy {
  const everyPath = nodes.length <= MATRIX_NODES;
  const gapMs = Math.ceil((nodes.length * 1_000) / REPORT_INTAKE_PER_S);
  const refreshMs = Math.max(REPORT_REFRESH_MS, 4 * gapMs);
  return {
    everyPath,
    sample: new Set(everyPath ? [] : pairTargets(self, nodes, 0, perRound)),
    gapMs,
    refreshMs,
    spreadMs: 4 * gapMs,
    staleMs: 3 * refreshMs,
  };
}

/** Whether a path with this state to `to` is told under `policy`. */
export function tells(policy: ReportPolicy, to: string, state: string): boolean {
  return policy.everyPath || state !== 'ok' || policy.sample.has(to);
}
