// The real clock: wall time and Node timers behind the Clock interface.
import type { Clock, TimerHandle } from './clock.js';

export const systemClock: Clock = {
  now: () => Date.now(),
  // A deadline already past is due now: Node warns of a negative delay (TimeoutNegativeWarning,
  // on stderr) and treats it as 1 ms, which is what callers mean, without the warning.
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref?.();
    return t as unknown as TimerHandle;
  },
  clearTimeout: (handle) => clearTimeout(handle as unknown as NodeJS.Timeout),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = () => {
        clearTimeout(t);
        reject(signal?.reason as Error);
      };
      const t = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
