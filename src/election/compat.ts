// What a peer of an older protocol takes: a node of protocol 1 (f6578aa) refuses a whole message
// that holds an event, an alert kind or a field it does not know, so those are left out for it.
import { isJudgementEvent, type PeerStatusPayload } from '../wire/webhooks.js';
import type { Alert } from '../wire/alert.js';

/** The undelivered events a peer of `protocol` takes. */
export function undeliveredFor(protocol: number, events: PeerStatusPayload[]): PeerStatusPayload[] {
  if (protocol >= 2 || !events.some((e) => isJudgementEvent(e.event))) return events;
  return events.filter((e) => !isJudgementEvent(e.event));
}

/** The firing alerts a peer of `protocol` takes. */
export function alertsFor(protocol: number, alerts: Alert[]): Alert[] {
  if (protocol >= 2 || !alerts.some((a) => a.kind === 'cannot_judge')) return alerts;
  return alerts.filter((a) => a.kind !== 'cannot_judge');
}
