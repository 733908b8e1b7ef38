// Whether a path (or a node, judged on its paths' merged figures) is degraded: pure transitions
// over its window's figures, with a sustain and a hysteresis so that a path on the edge does not
// flap. Degraded is a warning about a live path, never evidence that a peer is dead.
import type { WindowStats } from './path-window.js';

export type PathHealth = 'healthy' | 'degraded';

export interface DegradationOptions {
  /** DEGRADED_LOSS_RATIO: a window losing at least this share of its probes is bad. */
  degradedLossRatio: number;
  /** DEGRADED_LATENCY: a window whose p99 is at least this (ms) is bad. */
  degradedLatencyMs: number;
  /** DEGRADED_FOR: how long (ms) the figures must stay past a bound before the verdict turns. */
  degradedForMs: number;
  /** Below this many samples in the window the figures decide nothing (two probes are no trend). */
  minSamples: number;
  /**
   * Healthy again only once both figures are below this fraction of their thresholds: between the
   * two bounds the verdict holds.
   */
  recoveryFraction: number;
}

export interface DegradationRecord {
  health: PathHealth;
  /** When the current verdict was reached (or the record made). */
  sinceMs: number;
  /**
   * Since when every judgement has found the figures past the bound that would turn the verdict;
   * null while they are not.
   */
  turningSinceMs: number | null;
}

/**
 * - `became-degraded`: the figures stayed at or past a threshold for degradedForMs.
 * - `became-healthy`: they stayed below the lower bounds for degradedForMs.
 */
export type DegradationTransition = 'became-degraded' | 'became-healthy' | null;

export interface DegradationJudgement {
  record: DegradationRecord;
  transition: DegradationTransition;
  /** The figures judged: on a transition, those to report with it. */
  stats: WindowStats;
  /** On a transition: since when the figures had pointed that way. */
  heldSinceMs?: number;
}

export function newDegradation(now: number): DegradationRecord {
  return { health: 'healthy', sinceMs: now, turningSinceMs: null };
}

/** At or past either threshold, on enough samples. */
export function pastThreshold(stats: WindowStats, o: DegradationOptions): boolean {
  if (stats.samples < o.minSamples) return false;
  return (
    stats.lossRatio >= o.degradedLossRatio ||
    (stats.p99Ms !== null && stats.p99Ms >= o.degradedLatencyMs)
  );
}

/** Below both lower bounds (recoveryFraction of each threshold), on enough samples. */
export function belowRecovery(stats: WindowStats, o: DegradationOptions): boolean {
  if (stats.samples < o.minSamples) return false;
  return (
    stats.lossRatio < o.degradedLossRatio * o.recoveryFraction &&
    (stats.p99Ms === null || stats.p99Ms < o.degradedLatencyMs * o.recoveryFraction)
  );
}

/**
 * The verdict after a look at the window's figures at `now`. The verdict turns once the figures
 * have pointed the other way at every judgement for degradedForMs; a judgement that finds them
 * between the bounds, or on too few samples, starts that count again.
 */
export function judgeDegradation(
  record: DegradationRecord,
  stats: WindowStats,
  now: number,
  options: DegradationOptions,
): DegradationJudgement {
  const degraded = record.health === 'degraded';
  const turning = degraded ? belowRecovery(stats, options) : pastThreshold(stats, options);
  if (!turning) {
    const steady = record.turningSinceMs === null ? record : { ...record, turningSinceMs: null };
    return { record: steady, transition: null, stats };
  }
  const heldSinceMs = record.turningSinceMs ?? now;
  if (now - heldSinceMs < options.degradedForMs) {
    return { record: { ...record, turningSinceMs: heldSinceMs }, transition: null, stats };
  }
  return {
    record: { health: degraded ? 'healthy' : 'degraded', sinceMs: now, turningSinceMs: null },
    transition: degraded ? 'became-healthy' : 'became-degraded',
    stats,
    heldSinceMs,
  };
}
