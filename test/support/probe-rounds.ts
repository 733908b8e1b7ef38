// ProbeRounds as the prober's tests build them: KNH's retry budgets, leading as one coordinator on a
// fake clock, with only what a test's behaviour turns on given (its peers' answers, its callbacks).
import type { Clock } from '../../src/core/clock.js';
import type { PeerTransport } from '../../src/core/transport.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { DetectionPolicy, RetryPolicy } from '../../src/prober/policy.js';
import { ProbeRounds, type ProbeRoundsOptions } from '../../src/prober/rounds.js';
import { CapturingLogger } from './capturing-logger.js';

/** Two retries of each kind, 200 ms apart. */
export const RETRIES: RetryPolicy = {
  connectMaxRetries: 2,
  connectCooldownMs: 200,
  sendMaxRetries: 2,
  sendCooldownMs: 200,
};

/** RETRIES, a 1 s probe timeout and unhealthy duration, and no relays. */
export const DETECTION: DetectionPolicy = {
  ...RETRIES,
  probeTimeoutMs: 1_000,
  unhealthyMs: 1_000,
  indirectProbes: 0,
};

/** The coordinator whose rounds these are. */
export const LEAD: NodeRef = { id: 'lead@10.0.0.100', address: '10.0.0.100:8080' };

type Transport = Pick<PeerTransport, 'ping' | 'probeVia'>;

/**
 * Rounds led by LEAD on `clock`, 1 s apart under DETECTION, without a sanity check, pinging through
 * `ping`; asking a relay fails unless `probeVia` is given. `over` sets any other option.
 */
export function probeRounds({
  clock,
  ping,
  probeVia = () => Promise.reject(new Error('no relays here')),
  ...over
}: Partial<Omit<ProbeRoundsOptions, 'clock' | 'transport'>> & {
  clock: Clock;
  ping: Transport['ping'];
  probeVia?: Transport['probeVia'];
}): ProbeRounds {
  return new ProbeRounds({
    self: LEAD,
    sanity: null,
    logger: new CapturingLogger(),
    policy: DETECTION,
    intervalMs: 1_000,
    onJudgement: () => undefined,
    onRound: () => undefined,
    ...over,
    clock,
    transport: { ping, probeVia },
  });
}
