// Three nodes in rank order and the transport outcomes the election driver's tests give them.
import type { Outcome } from '../../src/core/transport.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { ElectionAnswer } from '../../src/wire/peer-messages.js';

export const LOW: NodeRef = { id: 'low@10.0.0.1', address: '10.0.0.1:8080' };
export const MID: NodeRef = { id: 'mid@10.0.0.2', address: '10.0.0.2:8080' };
export const HIGH: NodeRef = { id: 'high@10.0.0.9', address: '10.0.0.9:8080' };

/** A request the peer's host refused: the peer is down. */
export const failed = <T>(): Outcome<T> => ({
  ok: false,
  reason: 'refused',
  phase: 'connect',
  detail: 'ECONNREFUSED',
  latencyMs: 1,
});

export const ok = <T>(value: T): Outcome<T> => ({ ok: true, value, latencyMs: 1 });

/** HIGH answers an election and follows nobody yet: the asker waits to be told who leads. */
export const highAnswers = (): Outcome<ElectionAnswer> =>
  ok({ type: 'answer', from: HIGH, epoch: 0, coordinator: null });
