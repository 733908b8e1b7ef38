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
  let failures = 0;
  const latencies: number[] = [];
  for (const s of samples) {
    count++;
    if (s.ok && s.latencyMs !== null) latencies.push(s.latencyMs);
    else failures++;
  }
  if (count === 0) return NO_SAMPLES;
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
 * maxSamples are kept.
 */
export class PathWindow {
  /** Set anew when the mesh's size changes how often the path is probed (pair-prober.ts). */
  pathWindowMs: number;
  private readonly maxSamples: number;
  /** Live samples are kept[head..]; the dropped prefix is cut off once it is half the array. */
  private kept: PathSample[] = [];
  private head = 0;
  private newestMs = -Infinity;

  constructor({ pathWindowMs, maxSamples = MAX_SAMPLES }: PathWindowOptions) {
    if (!(pathWindowMs > 0)) throw new RangeError(`pathWindowMs ${pathWindowMs}: expected > 0`);
    if (!(maxSamples >= 1)) throw new RangeError(`maxSamples ${maxSamples}: expected ≥ 1`);
    this.pathWindowMs = pathWindowMs;
    this.maxSamples = maxSamples;
  }

  record({ atMs, ok, latencyMs }: PathSample): void {
    this.kept.push({ atMs, ok, latencyMs: ok ? latencyMs : null });
    this.newestMs = Math.max(this.newestMs, atMs);
    const oldest = this.newestMs - this.pathWindowMs;
    while (this.size > this.maxSamples || (this.size > 0 && this.kept[this.head]!.atMs <= oldest)) {
      this.head++;
    }
    if (this.head * 2 >= this.kept.length) {
      this.kept = this.kept.slice(this.head);
      this.head = 0;
    }
  }

  /** Forgets the samples sent at or after `atMs` (the newest ones). */
  dropSince(atMs: number): void {
    while (this.size > 0 && this.kept[this.kept.length - 1]!.atMs >= atMs) this.kept.pop();
  }

  /** Samples held (some may already be out of the window at a later `now`). */
  get size(): number {
    return this.kept.length - this.head;
  }

  /**
   * The figures over the samples sent in (now − pathWindowMs, now]. One sent after `now` (a clock
   * stepped back) is left out until `now` passes it, rather than counted for longer than a window;
   * and what is a window older than the newest sample is gone, whatever `now`.
   */
  stats(now: number): WindowStats {
    return statsOf(this.inWindow(now));
  }

  private *inWindow(now: number): Generator<PathSample> {
    const oldest = now - this.pathWindowMs;
    for (let i = this.head; i < this.kept.length; i++) {
      const s = this.kept[i]!;
      if (s.atMs > oldest && s.atMs <= now) yield s;
    }
  }
}
