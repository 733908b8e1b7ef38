// The default thresholds of degraded paths and nodes: how they were chosen, from measurement, is
// in docs/benchmarks.md ("Path loss and latency under random packet loss").
import type { DegradationOptions } from './degradation.js';
import type { Finding } from './path-state.js';

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
 * The settings for a mesh in which each path is probed once every `probedEveryMs` (its pair
 * probes' cover of the ring, in a large mesh; pair-schedule.ts): a window too short to hold
 * `minSamples` probes of one path would never judge it, so the window grows to hold them, and the
 * sustain by as much (it is not shorter than the window: see above). In a mesh small enough for
 * the window, as set.
 */
export function scaledDegradation(
  s: PathDegradationSettings,
  probedEveryMs: number,
): PathDegradationSettings {
  const pathWindowMs = Math.max(s.pathWindowMs, s.minSamples * probedEveryMs);
  if (pathWindowMs === s.pathWindowMs) return s;
  return { ...s, pathWindowMs, degradedForMs: s.degradedForMs + (pathWindowMs - s.pathWindowMs) };
}

/**
 * Pair probing: this many small probes failing in a row make a path failed (one answer makes it
 * work again): a broken path is failed within three rounds. Under 25 % loss each way 6 % of probes
 * fail (docs/benchmarks.md): three in a row is one probe in 4,600, where two would be one in 280.
 */
export const PAIR_FAIL_AFTER = 3;

/**
 * Pair probing: a path's full-size probe goes with one of its small probes in this many rounds
 * (each while its full-size probes fail, until decided). An MTU seldom changes, and the full-size
 * probe is half of a path's requests and most of its bytes. Counted in the path's own probes: where
 * a path comes round every c rounds (a cover of the ring), one in ceil(5 / c) of them, so every 5
 * rounds up to 1 + PAIR_PROBES nodes, every 6–8 up to 1 + 4 × PAIR_PROBES, and each probe above.
 * A black hole is found within that and PAIR_FAIL_AFTER probes more.
 */
export const FULL_SIZE_EVERY_ROUNDS = 5;

/**
 * How long a finding is found without a break before it opens an incident. A broken path, a cut
 * egress, a partition and the nodes' findings at once: the paths' own states were held already
 * (PAIR_FAIL_AFTER, DEGRADED_FOR). A degraded or MTU path waits longer: a degraded node's paths
 * turn one after another, and its node finding, which explains them, comes a few seconds after
 * the first; the paths alone would open and close an incident each meanwhile.
 */
export function findingOpenAfterMs(kind: Finding['kind']): number {
  return kind === 'path-degraded' || kind === 'path-mtu' ? 8_000 : 0;
}

/**
 * How long a degraded or MTU path that shares an end with another path in its state waits: its
 * node is probably the cause, and its node finding (most of its paths so) explains them all once
 * enough of them have turned; the paths are told one by one only if it does not come.
 */
export const SHARED_END_OPEN_AFTER_MS = 30_000;

/**
 * A path broken one way only waits this many rounds more: a real break between two nodes fails
 * both directions (every probe is a round trip), while random loss now and then fails three
 * probes in a row on one path alone, for a round or two.
 */
export const ONE_WAY_OPEN_AFTER_ROUNDS = 2;

/** An open finding closes once it has not been found for this long. */
export const FINDING_CLOSE_AFTER_MS = 10_000;
