// What a verdict's transition means for the receivers (the peer-status events it decides) and for
// the log (one line a transition, at the level an operator needs). Pure but for the log.
import type { Logger } from '../core/logger.js';
import type { Judgement, Withhold } from '../prober/verdict.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerStatusEvent, PeerStatusPayload } from '../wire/webhooks.js';
import { peerStatusPayload } from './payloads.js';

const EVENT: Partial<Record<NonNullable<Judgement['transition']>, PeerStatusEvent>> = {
  died: 'peer_dead',
  recovered: 'peer_recovered',
  'path-broken': 'path_broken',
  'path-restored': 'path_restored',
};

export const WITHHELD_BECAUSE: Record<NonNullable<Withhold>, (peer: string) => string> = {
  'self-suspect': (peer) =>
    `cannot reach ${peer}, but this coordinator cannot reach most of its peers either: suspecting itself, not declaring it dead`,
  'sanity-check': (peer) =>
    `cannot reach ${peer}, but this coordinator cannot reach SANITY_CHECK_URL either: not declaring it dead`,
  overloaded: (peer) =>
    `${peer} timed out, but this coordinator's event loop was running too late to tell a slow peer from its own slowness: not declaring it dead or its path broken`,
};

/**
 * The events a judgement decides, in the order they go: a peer behind a broken path that dies
 * closes the path incident first (path_restored), then its peer_dead. None for the transitions
 * the receivers do not hear of.
 */
export function eventsOf(
  judgement: Judgement,
  coordinator: NodeRef,
  epoch: number,
  now: number,
): PeerStatusPayload[] {
  const { record, transition, incidentMs } = judgement;
  const event = transition ? EVENT[transition] : undefined;
  if (!event) return [];
  const restored = judgement.restoredPath;
  const payload = peerStatusPayload({
    record,
    event,
    incidentMs: incidentMs ?? record.sinceMs,
    coordinator,
    epoch,
    now,
    ...(transition === 'path-restored' && restored ? { witnesses: restored.witnesses } : {}),
  });
  if (transition !== 'died' || !restored) return [payload];
  // The path incident ends here: the peer itself is down, as its peer_dead says next.
  const closed = peerStatusPayload({
    record,
    event: 'path_restored',
    incidentMs: restored.sinceMs,
    coordinator,
    epoch,
    now,
    witnesses: restored.witnesses,
  });
  return [closed, payload];
}

/** The log line of a judgement that decided `payload` (its last event). */
export function logDecided(log: Logger, judgement: Judgement, payload: PeerStatusPayload): void {
  const { record, transition } = judgement;
  const fields = { event: payload.event.replace('_', '-'), dedupKey: payload.dedup_key };
  if (transition === 'died') {
    log.warn({ ...fields, reason: record.lastFailure }, `peer ${record.id} is dead`);
  } else if (transition === 'path-broken') {
    log.warn(
      { ...fields, reason: record.lastFailure, witnesses: payload.path?.witnesses },
      `cannot reach ${record.id}, but ${payload.path?.witnesses.join(', ') ?? 'other peers'} can: the path from this node to it is broken, the peer is not dead`,
    );
  } else {
    log.info(
      fields,
      `peer ${record.id} ${transition === 'recovered' ? 'recovered' : 'is reachable again'}`,
    );
  }
}

/** The log line of a transition the receivers do not hear of (withheld and first-alive aside). */
export function logUndecided(log: Logger, judgement: Judgement): void {
  const { record, transition } = judgement;
  if (transition === 'suspected') {
    log.info(
      { event: 'peer-suspect', reason: record.lastFailure },
      `peer ${record.id} did not answer: confirming (retries, indirect probes)`,
    );
  } else if (transition === 'cleared') {
    log.info({ event: 'peer-cleared' }, `peer ${record.id} answered again: not dead`);
  } else if (transition === 'never-alive') {
    log.warn(
      { event: 'peer-never-alive', reason: record.lastFailure },
      `peer ${record.address} has not answered since it was discovered; no alert until it has been seen alive`,
    );
  }
}
