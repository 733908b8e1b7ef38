// Heartbeats carried by the coordinator's probes. The coordinator GETs every peer's /ping once a
// round anyway; in a large mesh that probe is also the followers' heartbeat, so that most of them
// need no announcement between the terms' refreshes (5,000 followers heartbeated every 4 s were a
// quarter of the coordinator's requests).
//
// The probe carries `x-knh-heartbeat: v1 epoch=<n>,from=<ip:port>`, and with PEER_SECRET the usual
// `x-knh-auth` request signature over GET, the receiver's /ping and that header's value as the
// body, so that it cannot be forged, altered or replayed. A node that took the heartbeat (it
// follows that coordinator, in that term) and has nothing to tell it (a maintenance window opened
// here travels in a reply to an announcement) says so in its answer (`x-knh-heartbeat: 1`). Any
// other node (one of an older version, one following another node, one that missed the term's
// announcement) gets announcements instead. A heartbeat that fails a check is ignored; the ping
// is answered all the same (a probe must never fail for it).
import type { AuthFailure, PeerAuth } from './peer-auth.js';
import { AUTH_HEADER, signedPath } from './signature.js';
import { parseAddress } from '../wire/node-ref.js';

export const HEARTBEAT_HEADER = 'x-knh-heartbeat';
/** The answer's value: this node took the heartbeat, and needs no announcement for now. */
export const TAKES_HEARTBEATS = '1';

export interface ProbeHeartbeat {
  epoch: number;
  /** The coordinator's address (ip:port). */
  from: string;
}

const FORM = /^v1 epoch=(\d{1,15}),from=(\S{1,300})$/;

export function formatHeartbeat({ epoch, from }: ProbeHeartbeat): string {
  return `v1 epoch=${epoch},from=${from}`;
}

/** The form alone: `from` is not checked to be an address (parseAddress does that, once signed). */
function readHeartbeat(value: string): ProbeHeartbeat | null {
  const m = FORM.exec(value);
  return m ? { epoch: Number(m[1]), from: m[2]! } : null;
}

/** The headers a probe of `target` carries to be a heartbeat (signed when `auth` is set). */
export function heartbeatHeaders(
  heartbeat: ProbeHeartbeat,
  target: string,
  auth: PeerAuth | null,
  offsetMs = 0,
): Record<string, string> {
  const { value, bytes } = formatted(heartbeat);
  if (!auth) return { [HEARTBEAT_HEADER]: value };
  const signed = auth.signRequest('GET', signedPath(target, '/ping'), bytes, offsetMs);
  return { [HEARTBEAT_HEADER]: value, [AUTH_HEADER]: signed.header };
}

/** The last heartbeat's header value and its bytes: the same for every probe of a term. */
let last: { epoch: number; from: string; value: string; bytes: Buffer } | null = null;

function formatted(heartbeat: ProbeHeartbeat): { value: string; bytes: Buffer } {
  if (last?.epoch !== heartbeat.epoch || last.from !== heartbeat.from) {
    const value = formatHeartbeat(heartbeat);
    last = { epoch: heartbeat.epoch, from: heartbeat.from, value, bytes: Buffer.from(value) };
  }
  return last;
}

export type HeartbeatCheck =
  | { ok: true; heartbeat: ProbeHeartbeat }
  | { ok: false; why: 'malformed-heartbeat' | 'wrong-address' | AuthFailure };

/**
 * Whether a probe's heartbeat is good: well formed, sent from the IP it names, and (with `auth`)
 * signed for this node by a holder of the secret, its nonce not seen before.
 */
export function checkHeartbeat(
  value: string,
  authHeader: string | undefined,
  {
    remote,
    auth,
    selfAddress,
    senderCheck,
  }: {
    remote: string | undefined;
    auth: PeerAuth | null;
    selfAddress: string | undefined;
    senderCheck: (remote: string | undefined, claimed: string) => boolean;
  },
): HeartbeatCheck {
  const heartbeat = readHeartbeat(value);
  if (!heartbeat) return { ok: false, why: 'malformed-heartbeat' };
  // The signature first: what an address parse remembers comes from a holder of the secret.
  if (auth) {
    const path = selfAddress === undefined ? '/ping' : signedPath(selfAddress, '/ping');
    const verdict = auth.verifyRequest('GET', path, authHeader, Buffer.from(value));
    if (!verdict.ok) return { ok: false, why: verdict.failure };
  }
  if (!parseAddress(heartbeat.from)) return { ok: false, why: 'malformed-heartbeat' };
  if (!senderCheck(remote, heartbeat.from)) return { ok: false, why: 'wrong-address' };
  return { ok: true, heartbeat };
}
