// Bounded waiting for integration tests: poll a condition until it holds or a deadline passes.
import { setTimeout as sleep } from 'node:timers/promises';

export { sleep };

/**
 * Calls `probe` every `everyMs` until it returns a value other than undefined, and returns it.
 * On timeout it throws, naming `what` and the last state `describe` reports (for the failure message).
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  {
    timeoutMs,
    everyMs = 250,
    describe = () => '',
  }: { timeoutMs: number; everyMs?: number; describe?: () => string },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      const last = describe();
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? `; last seen: ${last}` : ''}`);
    }
    await sleep(everyMs);
  }
}
