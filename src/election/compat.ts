// What a peer of an older protocol takes: a node of protocol 1 (f6578aa) refuses a whole message
// that holds an event, an alert kind or a field it does not know, and one of protocol 2 an event or
// alert kind it does not know, and one of protocol 3 the `peer_flapping` event and the
// `peer_unauthenticated` incident, so those are left out for it.
import {
  INCIDENT_SINCE_PROTOCOL,
  isFindingPayload,
  isUpdateEvent,
  openingOf,
  UPDATE_SINCE_PROTOCOL,
  type PeerStatusPayload,
} from '../wire/webhooks.js';
import type { Alert } from '../wire/alert.js';
import { PROTOCOL } from '../wire/protocol.js';

/** The undelivered events a peer of `protocol` takes. */
export function undeliveredFor(protocol: number, events: PeerStatusPayload[]): PeerStatusPayload[] {
  if (protocol >= PROTOCOL) return events;
  // A finding of every node's paths is protocol 3's, whatever its event (a path_broken between
  // two followers carries fields older nodes do not know).
  const since = (e: PeerStatusPayload) =>
    isUpdateEvent(e.event)
      ? UPDATE_SINCE_PROTOCOL[e.event]
      : Math.max(isFindingPayload(e) ? 3 : 1, INCIDENT_SINCE_PROTOCOL[openingOf(e.event)]);
  const takes = (e: PeerStatusPayload) => since(e) <= protocol;
  return events.every(takes) ? events : events.filter(takes);
}

/** The firing alerts a peer of `protocol` takes. */
export function alertsFor(protocol: number, alerts: Alert[]): Alert[] {
  if (protocol >= PROTOCOL) return alerts;
  const takes = (a: Alert) =>
    Math.max(a.severity === 'warning' ? 3 : 1, INCIDENT_SINCE_PROTOCOL[a.kind]) <= protocol;
  return alerts.every(takes) ? alerts : alerts.filter(takes);
}
