// A peer's answers to a ping as the prober's tests script them: a follower's pong, a refusal, and a
// black hole that answers nothing until the probe gives up on it.
import type { Clock } from '../../src/core/clock.js';
import type { Failure, Outcome } from '../../src/core/transport.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';

const HOUR = 3_600_000;

/** The pong of node `name` at `address` (IPv4): id `name@ip`, a follower of nobody yet at epoch 1. */
export function pingResponse(
  address: string,
  name: string,
  over: Partial<PingResponse> = {},
): PingResponse {
  const ip = address.slice(0, address.lastIndexOf(':'));
  return {
    id: `${name}@${ip}`,
    address,
    node_name: name,
    role: 'follower',
    epoch: 1,
    coordinator: null,
    ...over,
  };
}

/** An answer that took `latencyMs`. */
export const answer = <T>(value: T, latencyMs = 1): Outcome<T> => ({ ok: true, value, latencyMs });

/** The peer's host refused the connection: nothing listens on its port. */
export const REFUSED: Failure = {
  ok: false,
  reason: 'refused',
  phase: 'connect',
  detail: 'ECONNREFUSED',
  latencyMs: 1,
};

/** A probe nothing answered within its timeout (a lost packet, a black hole): silence. */
export const TIMED_OUT: Failure = {
  ok: false,
  reason: 'timeout',
  phase: 'send',
  detail: 'no answer within 1000 ms',
  latencyMs: 1_000,
};

/** What the peer client reports for a request its caller aborted. */
export const ABORTED: Failure = {
  ok: false,
  reason: 'aborted',
  phase: 'send',
  detail: 'aborted',
  latencyMs: 0,
};

/** A black hole: no answer (for an hour) unless `signal` aborts the request first: ABORTED. */
export function blackHole<T>(clock: Clock, value: T, signal?: AbortSignal): Promise<Outcome<T>> {
  return clock.sleep(HOUR, signal).then(
    () => answer(value, HOUR),
    () => ABORTED,
  );
}
