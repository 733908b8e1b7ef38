// The default thresholds of degraded paths and nodes: how they were chosen, from measurement, is
// in docs/benchmarks.md ("Path loss and latency under random packet loss").
import type { DegradationOptions } from './degradation.js';

/** The degradation verdict's options and the window it judges. */
export interface PathDegradationSettings extends DegradationOptions {
  /** PATH_WINDOW: how far back a path's probes count. */
  pathWindowMs: number;
}

export const DEFAULT_PATH_DEGRADATION: PathDegradationSettings = {
  degradedLossRatio: 0.1,
  degradedLatencyMs: 400,
  // Not shorter than the window: one slow or lost probe holds the window's p99 or loss past the
  // threshold for as long as it stays in the window, so a shorter sustain would let it decide.
  degradedForMs: 10_000,
  pathWindowMs: 10_000,
  minSamples: 5,
  recoveryFraction: 0.5,
};
