// What a failed request says about whose network is at fault: silence, or the peer's host answering.
//
// A refused or reset connection, or an answer that is an error, comes from the peer's own host: the
// path between the two nodes works, whatever is wrong with the peer. Only silence (a timeout, an
// unreachable network) could be this node's own network failing, so only silence counts towards
// this node suspecting itself.
import type { FailureReason } from './transport.js';

export type Evidence = 'silence' | 'refusal';

const ANSWERED_BY_HOST: ReadonlySet<FailureReason> = new Set<FailureReason>([
  'refused',
  'reset',
  'http-status',
  'bad-response',
]);

export function evidenceOf(reason: FailureReason): Evidence {
  return ANSWERED_BY_HOST.has(reason) ? 'refusal' : 'silence';
}

const REASONS: ReadonlySet<string> = new Set<FailureReason>([
  'refused',
  'unreachable',
  'connect-timeout',
  'timeout',
  'reset',
  'http-status',
  'bad-response',
  'aborted',
]);

/**
 * The failure reason a relay's answer gives: the first word of its `detail`, which every version
 * writes as `<reason> (<detail>)` (schemas/probe-result.schema.json). Null when it names none.
 */
export function relayFailureReason(result: { detail?: string }): FailureReason | null {
  const named = result.detail?.split(' ', 1)[0];
  return named !== undefined && REASONS.has(named) ? (named as FailureReason) : null;
}
