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

/**
 * Pair probing: this many small probes failing in a row make a path failed (one answer makes it
 * work again). Under 25 % loss each way 6 % of probes fail (docs/benchmarks.md): two in a row is
 * one probe in 280, which the findings' hold below absorbs.
 */
export const PAIR_FAIL_AFTER = 2;

/** A finding opens an incident once found without a break for this long. */
export const FINDING_OPEN_AFTER_MS = 1_000;

/** An open finding closes once it has not been found for this long. */
export const FINDING_CLOSE_AFTER_MS = 10_000;
