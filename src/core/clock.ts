// The time source the core sees: injected so tests can step time exactly.

export type TimerHandle = { readonly __timer: unique symbol };

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Resolves after `ms`; rejects with the signal's reason if aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Waits for `work`, but no longer than `ms`; the timer is cancelled either way. */
export async function waitAtMost(clock: Clock, work: Promise<unknown>, ms: number): Promise<void> {
  const timer = new AbortController();
  const elapsed = clock.sleep(ms, timer.signal).catch(() => undefined);
  try {
    await Promise.race([work, elapsed]);
  } finally {
    timer.abort();
  }
}

/** Runs `fn` every `ms` (each run `ms` after the last ended) until the returned stop is called. */
export function every(clock: Clock, ms: number, fn: () => void): () => void {
  let timer: TimerHandle | null = null;
  let stopped = false;
  const schedule = () => {
    timer = clock.setTimeout(() => {
      fn();
      if (!stopped) schedule();
    }, ms);
  };
  schedule();
  return () => {
    stopped = true;
    if (timer) clock.clearTimeout(timer);
  };
}
