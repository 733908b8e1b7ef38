// Event-loop lag by timer drift: a repeating timer notes how late it fires, over a sliding window.
import { performance } from 'node:perf_hooks';

export interface EventLoopLagOptions {
  /** How often the timer fires, ms: lag is measured at this granularity. */
  sampleMs?: number;
  /**
   * How often it fires while precision is asked for (precise(true)), ms: a coordinator's probe
   * timeouts are excused by lags of a few hundred ms, which a coarse timer would blur; a follower,
   * whose liveness alone reads the lag, needs no more than sampleMs, and wakes its process less.
   * Default: sampleMs.
   */
  preciseSampleMs?: number;
  /** How long a lag is remembered, ms: one stall fails liveness for about this long, no longer. */
  windowMs?: number;
}

/** Twice a second; a stall stays visible for 10 s, so it fails at most a probe or two in a row. */
export const LAG_DEFAULTS = { sampleMs: 500, windowMs: 10_000 };

export class EventLoopLag {
  readonly sampleMs: number;
  readonly preciseSampleMs: number;
  readonly windowMs: number;
  /** The timer's period now: sampleMs, or preciseSampleMs while precision is asked for. */
  private periodMs: number;
  private timer: NodeJS.Timeout | null = null;
  /** When the pending timer should fire, on performance.now()'s monotonic clock. */
  private dueAt = 0;
  /** Lags seen within the window, oldest first; `at` is performance.now() ms. */
  private samples: { at: number; lagMs: number }[] = [];

  constructor({
    sampleMs = LAG_DEFAULTS.sampleMs,
    preciseSampleMs = sampleMs,
    windowMs = LAG_DEFAULTS.windowMs,
  }: EventLoopLagOptions = {}) {
    this.sampleMs = sampleMs;
    this.preciseSampleMs = preciseSampleMs;
    this.periodMs = sampleMs;
    this.windowMs = windowMs;
  }

  /** Samples every preciseSampleMs from now on (true) or every sampleMs (false). */
  precise(on: boolean): void {
    const periodMs = on ? this.preciseSampleMs : this.sampleMs;
    if (periodMs === this.periodMs) return;
    this.periodMs = periodMs;
    if (!this.timer) return;
    // The pending sample, if overdue, is taken now; the next is due a new period from now.
    clearTimeout(this.timer);
    this.sample();
  }

  start(): void {
    if (this.timer) return;
    this.schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.samples = [];
  }

  /**
   * The largest lag within the window, ms. A sample overdue right now counts too, so a stall that
   * has just ended shows before its timer gets to run.
   */
  maxLagMs(): number {
    return this.maxLagWithinMs(this.windowMs);
  }

  /** The largest lag over the last `ms` (at most the window), ms; an overdue sample counts. */
  maxLagWithinMs(ms: number): number {
    if (!this.timer) return 0;
    const now = performance.now();
    const since = now - Math.min(ms, this.windowMs);
    let max = Math.max(0, now - this.dueAt);
    for (let i = this.samples.length - 1; i >= 0; i--) {
      const s = this.samples[i]!;
      if (s.at < since) break;
      if (s.lagMs > max) max = s.lagMs;
    }
    return max;
  }

  private sample(): void {
    const now = performance.now();
    this.samples.push({ at: now, lagMs: Math.max(0, now - this.dueAt) });
    while (this.samples[0] && now - this.samples[0].at > this.windowMs) this.samples.shift();
    this.schedule();
  }

  private schedule(): void {
    this.dueAt = performance.now() + this.periodMs;
    this.timer = setTimeout(() => this.sample(), this.periodMs);
    // Measuring the loop must never be what keeps the process alive.
    this.timer.unref();
  }
}
