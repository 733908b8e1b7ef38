// One probe of one peer with KNH's retry budgets: connect failures and send failures counted apart.
import type { Clock } from '../core/clock.js';
import type { Outcome, PingResponse } from '../core/transport.js';

export interface RetryPolicy {
  connectMaxRetries: number;
  connectCooldownMs: number;
  sendMaxRetries: number;
  sendCooldownMs: number;
}

export interface ProbeAttempts {
  outcome: Outcome<PingResponse>;
  attempts: number;
  /** From the first attempt to the final outcome, cooldowns included. */
  elapsedMs: number;
}

/**
 * Tries until one attempt succeeds or a budget is spent: at most 1 + connectMaxRetries +
 * sendMaxRetries attempts. A connect failure (refused, unreachable, connect timeout) spends the
 * connect budget; a send failure (answer timeout, reset, bad status or body) the send budget.
 */
export async function probeWithRetries(
  ping: (signal?: AbortSignal) => Promise<Outcome<PingResponse>>,
  policy: RetryPolicy,
  clock: Clock,
  signal?: AbortSignal,
): Promise<ProbeAttempts> {
  const started = clock.now();
  let connectFailures = 0;
  let sendFailures = 0;
  for (let attempts = 1; ; attempts++) {
    const outcome = await ping(signal);
    if (outcome.ok || outcome.reason === 'aborted' || signal?.aborted) {
      return { outcome, attempts, elapsedMs: clock.now() - started };
    }
    const connect = outcome.phase === 'connect';
    const spent = connect ? ++connectFailures : ++sendFailures;
    const budget = connect ? policy.connectMaxRetries : policy.sendMaxRetries;
    if (spent > budget) return { outcome, attempts, elapsedMs: clock.now() - started };
    try {
      await clock.sleep(connect ? policy.connectCooldownMs : policy.sendCooldownMs, signal);
    } catch {
      return { outcome, attempts, elapsedMs: clock.now() - started };
    }
  }
}
