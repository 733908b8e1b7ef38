// The outcomes of one path's probes (this node → a peer) over a sliding window of time, and what
// they add up to: loss ratio and latency percentiles.

/** One probe's outcome. */
export interface PathSample {
  /** When the probe was sent (epoch ms). */
  atMs: number;
  /**
   * Answered. A failure counts against the path: a timeout does; a refusal shows the path works
   * (its host answered), so the caller may rather leave it out.
   */
  ok: boolean;
  /** How long the answer took; null for a probe that failed (its time says nothing of latency). */
  latencyMs: number | null;
}

/** A window's figures. */
export interface WindowStats {
  /** Probes in the window, answered or not. */
  samples: number;
  failures: number;
  /** failures / samples, in [0, 1]; 0 with no samples. */
  lossRatio: number;
  /** Over the answered probes' latencies; null when none was answered. */
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface PathWindowOptions {
  /** How far back a sample counts (PATH_WINDOW). */
  pathWindowMs: number;
  /** Samples kept at most, whatever the probe rate: the oldest go first. */
  maxSamples?: number;
}

/** Enough for a probe a second over a window of minutes, or bursts of retries within one. */
export const MAX_SAMPLES = 256;

export const NO_SAMPLES: WindowStats = {
  samples: 0,
  failures: 0,
  lossRatio: 0,
  p50Ms: null,
  p99Ms: null,
};

/**
 * The nearest-rank percentile of `sorted` (ascending, not empty): the smallest value that at least
 * `p` % of the values are less than or equal to. Always one of the values, never interpolated: over
 * fewer than 100 values, p99 is the largest.
 */
export function nearestRank(sorted: readonly number[], p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** The figures of a set of samples (all of them: filter by time first). */
export function statsOf(samples: Iterable<PathSample>): WindowStats {
  let count = 0;
  const latencies: number[] = [];
  for (const s of samples) {
    count++;
    if (s.ok && s.latencyMs !== null) latencies.push(s.latencyMs);
  }
  return figuresOf(count, latencies);
}

/** The figures of `count` probes, of which those answered took `latencies` (sorted here). */
function figuresOf(count: number, latencies: number[]): WindowStats {
  if (count === 0) return NO_SAMPLES;
  const failures = count - latencies.length;
  latencies.sort((a, b) => a - b);
  const answered = latencies.length > 0;
  return {
    samples: count,
    failures,
    lossRatio: failures / count,
    p50Ms: answered ? nearestRank(latencies, 50) : null,
    p99Ms: answered ? nearestRank(latencies, 99) : null,
  };
}

/**
 * One path's recent probes, in the order recorded. Memory stays bounded: samples older than the
 * window (behind the newest recorded) are dropped as new ones come, and never more than
 * maxSamples are kept. Held as two arrays of numbers, not an object a sample: a large mesh's node
 * keeps a window for each of thousands of paths (docs/benchmarks.md).
 */
export class PathWindow {
  /** Set anew when the mesh's size changes how often the path is probed (pair-prober.ts). */
  pathWindowMs: number;
  private readonly maxSamples: number;
  /**
   * The samples held, in the order recorded: when each was sent, and its latency (NaN: failed).
   * Copied to their exact length at each record (a few dozen probes a second at most): an array
   * grown by push keeps room for many more numbers than a large mesh's path holds (its window is
   * scaled to hold about minSamples: defaults.ts).
   */
  private at: number[] = [];
  private latency: number[] = [];
  private newestMs = -Infinity;

  constructor({ pathWindowMs, maxSamples = MAX_SAMPLES }: PathWindowOptions) {
    if (!(pathWindowMs > 0)) throw new RangeError(`pathWindowMs ${pathWindowMs}: expected > 0`);
    if (!(maxSamples >= 1)) throw new RangeError(`maxSamples ${maxSamples}: expected ≥ 1`);
    this.pathWindowMs = pathWindowMs;
    this.maxSamples = maxSamples;
  }

  record({ atMs, ok, latencyMs }: PathSample): void {
    this.at.push(atMs);
    this.latency.push(ok && latencyMs !== null ? latencyMs : NaN);
    this.newestMs = Math.max(this.newestMs, atMs);
    const oldest = this.newestMs - this.pathWindowMs;
    const count = this.at.length;
    let drop = 0;
    while (count - drop > this.maxSamples || (drop < count && this.at[drop]! <= oldest)) drop++;
    this.at = this.at.slice(drop);
    this.latency = this.latency.slice(drop);
  }

  /** Forgets the samples sent at or after `atMs` (the newest ones). */
  dropSince(atMs: number): void {
    while (this.size > 0 && this.at[this.at.length - 1]! >= atMs) {
      this.at.pop();
      this.latency.pop();
    }
  }

  /** Samples held (some may already be out of the window at a later `now`). */
  get size(): number {
    return this.at.length;
  }

  /**
   * The figures over the samples sent in (now − pathWindowMs, now]. One sent after `now` (a clock
   * stepped back) is left out until `now` passes it, rather than counted for longer than a window;
   * and what is a window older than the newest sample is gone, whatever `now`.
   */
  stats(now: number): WindowStats {
    const oldest = now - this.pathWindowMs;
    let count = 0;
    const latencies: number[] = [];
    for (let i = 0; i < this.at.length; i++) {
      const atMs = this.at[i]!;
      if (atMs <= oldest || atMs > now) continue;
      count++;
      const ms = this.latency[i]!;
      if (!Number.isNaN(ms)) latencies.push(ms);
    }
    return figuresOf(count, latencies);
  }
}
