// One probe of one peer with KNH's retry budgets: connect failures and send failures counted apart.
import type { RetryPolicy } from './policy.js';
import type { Clock } from '../core/clock.js';
import type { Outcome } from '../core/transport.js';
import type { PingResponse } from '../wire/peer-messages.js';

export interface ProbeAttempts {
  outcome: Outcome<PingResponse>;
  attempts: number;
  /** From the first attempt to the final outcome, cooldowns included. */
  elapsedMs: number;
}

export interface RetryBounds {
  /** No attempt runs past this moment (clock ms): the last one is cut short, none starts after. */
  deadlineMs?: number;
  /** Failures already seen (an earlier attempt), counted against the budgets. */
  spent?: { connect: number; send: number };
  /** Wait this long before the first attempt (the cooldown after an earlier failure). */
  firstDelayMs?: number;
}

/**
 * Tries until one attempt succeeds or a budget is spent: at most 1 + connectMaxRetries +
 * sendMaxRetries attempts. A connect failure (refused, unreachable, connect timeout) spends the
 * connect budget; a send failure (answer timeout, reset, bad status or body) the send budget.
 * With a deadline, attempts are also cut short there, and an attempt cut short is a timeout.
 */
export async function probeWithRetries(
  ping: (signal?: AbortSignal) => Promise<Outcome<PingResponse>>,
  policy: RetryPolicy,
  clock: Clock,
  signal?: AbortSignal,
  bounds: RetryBounds = {},
): Promise<ProbeAttempts> {
  const started = clock.now();
  const delay = bounds.firstDelayMs ?? 0;
  if (delay > 0) {
    try {
      await clock.sleep(delay, signal);
    } catch {
      // aborted: the attempt below reports it
    }
  }
  let connectFailures = bounds.spent?.connect ?? 0;
  let sendFailures = bounds.spent?.send ?? 0;
  for (let attempts = 1; ; attempts++) {
    const outcome = await attempt(ping, clock, signal, bounds.deadlineMs);
    const done = () => ({ outcome, attempts, elapsedMs: clock.now() - started });
    if (outcome.ok || signal?.aborted) return done();
    const connect = outcome.phase === 'connect';
    const spent = connect ? ++connectFailures : ++sendFailures;
    const budget = connect ? policy.connectMaxRetries : policy.sendMaxRetries;
    if (spent > budget) return done();
    const cooldown = connect ? policy.connectCooldownMs : policy.sendCooldownMs;
    if (bounds.deadlineMs !== undefined && clock.now() + cooldown >= bounds.deadlineMs) {
      return done();
    }
    try {
      await clock.sleep(cooldown, signal);
    } catch {
      return done();
    }
  }
}

/** One attempt, aborted at the deadline if it has one (reported as a timeout, not an abort). */
async function attempt(
  ping: (signal?: AbortSignal) => Promise<Outcome<PingResponse>>,
  clock: Clock,
  signal: AbortSignal | undefined,
  deadlineMs: number | undefined,
): Promise<Outcome<PingResponse>> {
  if (deadlineMs === undefined) return ping(signal);
  const cut = new AbortController();
  const onAbort = () => cut.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) cut.abort(signal.reason);
  const timer = clock.setTimeout(() => cut.abort(new Error('deadline')), deadlineMs - clock.now());
  try {
    const outcome = await ping(cut.signal);
    if (outcome.ok || signal?.aborted || outcome.reason !== 'aborted') return outcome;
    return { ...outcome, reason: 'timeout', detail: 'no answer before the confirmation ended' };
  } finally {
    clock.clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
