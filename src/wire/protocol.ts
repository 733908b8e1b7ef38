// Which peer protocol a node speaks: a header on every request and answer between nodes, so that a
// node sends what is new only to peers that understand it (rolling upgrades: docs/compatibility.md).

export const PROTOCOL_HEADER = 'x-knh-protocol';

/**
 * 1: knh up to f6578aa, which sends no header and whose schemas refuse fields they do not know.
 * 2: adds `cannot_judge` / `can_judge` events and the `cannot_judge` alert kind to what is shared,
 *    the `cannot_judge` and `handover` fields of announcements and their replies, and schemas
 *    that accept fields they do not know.
 * 3: adds the path reports (POST /paths/report) and full-size echoes (POST /paths/echo) of pair
 *    probing, and the finding events and alert kinds (wire/webhooks.ts) to what is shared.
 * 4: adds the `peer_flapping` event (wire/webhooks.ts, UPDATES) to what is shared.
 * 5: answers a probe's challenge (`x-knh-challenge`) signed, with a PEER_SECRET
 *    (auth/ping-signature.ts); nothing else changes on the wire.
 */
export const PROTOCOL = 5;

/** The first protocol whose nodes take path reports and full-size echoes (pair probing). */
export const PATHS_PROTOCOL = 3;

/** The first protocol whose nodes sign their answers to a probe's challenge. */
export const SIGNED_PING_PROTOCOL = 5;

/** The protocol a header value names: absent or unreadable, 1 (a node of f6578aa or before). */
export function protocolIn(value: string | null | undefined): number {
  if (value === undefined || value === null || !/^\d{1,4}$/.test(value)) return 1;
  return Math.max(1, Number(value));
}
