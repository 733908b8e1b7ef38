// One set of figures from several windows' (a node's, from the paths to or from it), each window
// weighing as much as the samples behind its figures.
import { NO_SAMPLES, type WindowStats } from './path-window.js';

/**
 * Samples and failures add up, so the loss ratio is that of all the probes together. The
 * percentiles are the mean of the windows', each weighted by its answered probes: not the
 * percentiles of all the latencies together (which the figures no longer hold), and meant so, since
 * one slow path among a node's many is that path's problem, not the node's.
 */
export function mergeStats(windows: Iterable<WindowStats>): WindowStats {
  const sum = new StatsSum();
  for (const w of windows) sum.add(w);
  return sum.stats;
}

/**
 * mergeStats one window at a time, in constant memory: for many nodes' figures at once (the
 * status page's summary of a large mesh) without a list of windows for each.
 */
export class StatsSum {
  private samples = 0;
  private failures = 0;
  private answered = 0;
  private p50Sum = 0;
  private p99Sum = 0;

  add(w: WindowStats): void {
    this.samples += w.samples;
    this.failures += w.failures;
    const n = w.samples - w.failures;
    if (n === 0 || w.p50Ms === null || w.p99Ms === null) return;
    this.answered += n;
    this.p50Sum += w.p50Ms * n;
    this.p99Sum += w.p99Ms * n;
  }

  get stats(): WindowStats {
    const { samples, failures, answered } = this;
    if (samples === 0) return NO_SAMPLES;
    return {
      samples,
      failures,
      lossRatio: failures / samples,
      p50Ms: answered > 0 ? this.p50Sum / answered : null,
      p99Ms: answered > 0 ? this.p99Sum / answered : null,
    };
  }
}
