// One set of figures from several windows' (a node's, from the paths to or from it), each window
// weighing as much as the samples behind its figures.
import { NO_SAMPLES, type WindowStats } from './path-window.js';

/**
 * Samples and failures add up, so the loss ratio is that of all the probes together. The
 * percentiles are the mean of the windows', each weighted by its answered probes: not the
 * percentiles of all the latencies together (which the figures no longer hold), and meant so, since
 * one slow path among a node's many is that path's problem, not the node's.
 */
export function mergeStats(windows: readonly WindowStats[]): WindowStats {
  let samples = 0;
  let failures = 0;
  let answered = 0;
  let p50Sum = 0;
  let p99Sum = 0;
  for (const w of windows) {
    samples += w.samples;
    failures += w.failures;
    const n = w.samples - w.failures;
    if (n === 0 || w.p50Ms === null || w.p99Ms === null) continue;
    answered += n;
    p50Sum += w.p50Ms * n;
    p99Sum += w.p99Ms * n;
  }
  if (samples === 0) return NO_SAMPLES;
  return {
    samples,
    failures,
    lossRatio: failures / samples,
    p50Ms: answered > 0 ? p50Sum / answered : null,
    p99Ms: answered > 0 ? p99Sum / answered : null,
  };
}
