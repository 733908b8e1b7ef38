// A Clock whose time moves only when a test says so; timers fire like Node's, in due-time order.
import type { Clock, TimerHandle } from '../../src/core/clock.js';

interface Timer {
  id: number;
  dueMs: number;
  fn: () => void;
}

/** Lets every pending promise callback run (a macrotask turn drains the microtask queue). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Time starts at `startMs` and changes only through `advance` / `advanceAsync`. Timers due at the
 * same moment fire in the order they were set, as Node's do; a timer set while time advances fires
 * in the same advance when it falls due within the window. A delay below 0 counts as 0.
 */
export class FakeClock implements Clock {
  private nowMs: number;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.nowMs = startMs;
  }

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, dueMs: this.nowMs + Math.max(0, ms), fn });
    return { id } as unknown as TimerHandle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete((handle as unknown as { id: number }).id);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = () => {
        this.clearTimeout(handle);
        reject(signal?.reason as Error);
      };
      const handle = this.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Timers set and not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers synchronously (promise callbacks wait). */
  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.fire(timer);
    }
    this.nowMs = target;
  }

  /**
   * Moves time forward by `ms`, letting promise chains run before and after each timer, so code
   * that awaits one sleep and then sets the next makes progress within the same advance.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.nowMs + ms;
    await flushMicrotasks();
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.fire(timer);
      await flushMicrotasks();
    }
    this.nowMs = target;
    await flushMicrotasks();
  }

  private nextDue(limitMs: number): Timer | undefined {
    let next: Timer | undefined;
    for (const t of this.timers.values()) {
      // Map iteration follows insertion (= id) order, so `<` keeps the earliest-set of equals.
      if (t.dueMs <= limitMs && (!next || t.dueMs < next.dueMs)) next = t;
    }
    return next;
  }

  private fire(timer: Timer): void {
    this.timers.delete(timer.id);
    this.nowMs = Math.max(this.nowMs, timer.dueMs);
    timer.fn();
  }
}
