// HMAC-SHA256 signatures of peer messages and of their answers (pure: no I/O, no clock).
//
// A request carries `x-knh-auth: v1 ts=<epoch ms>,nonce=<32 hex>,sig=<64 hex>`; the MAC covers the
// method, the path, the timestamp, the nonce and the exact body bytes, so a signed election
// message cannot be replayed as an announcement, altered, or sent again once its nonce is spent.
// The answer carries `x-knh-auth: v1 sig=<64 hex>` over the request's nonce, the status and the
// answer's bytes: only a holder of the secret can answer for a peer, and not with an old answer.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

export const AUTH_HEADER = 'x-knh-auth';
/** On a 401 to a peer message: why it was refused (an AuthFailure), so the sender can act on it. */
export const REFUSED_HEADER = 'x-knh-refused';

export interface RequestAuth {
  timestampMs: number;
  nonce: string;
  signature: string;
}

const REQUEST_AUTH = /^v1 ts=(\d{1,15}),nonce=([0-9a-f]{32}),sig=([0-9a-f]{64})$/;
const RESPONSE_AUTH = /^v1 sig=([0-9a-f]{64})$/;

/** Each secret's key, imported once (a probe a second to each of 5,000 peers is signed). */
const keys = new Map<string, KeyObject>();

function mac(secret: string, head: string, body: Uint8Array): string {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 16) keys.clear(); // secrets rotate seldom: a handful at most in force
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    keys.set(secret, key);
  }
  return createHmac('sha256', key).update(head).update(body).digest('hex');
}

export function requestSignature(
  secret: string,
  method: string,
  path: string,
  timestampMs: number,
  nonce: string,
  body: Uint8Array,
): string {
  return mac(secret, `knh-v1\nrequest\n${method}\n${path}\n${timestampMs}\n${nonce}\n`, body);
}

export function responseSignature(
  secret: string,
  nonce: string,
  status: number,
  body: Uint8Array,
): string {
  return mac(secret, `knh-v1\nresponse\n${nonce}\n${status}\n`, body);
}

/**
 * What a request's signature covers besides method and body: the receiver's address (ip:port, as
 * discovery lists it) and the path, so that a message captured on its way to one node is refused
 * by every other.
 */
export function signedPath(receiver: string, path: string): string {
  return `${receiver}${path}`;
}

export function formatRequestAuth({ timestampMs, nonce, signature }: RequestAuth): string {
  return `v1 ts=${timestampMs},nonce=${nonce},sig=${signature}`;
}

/** The parts of a request's auth header, or null when it is not exactly the v1 form. */
export function parseRequestAuth(header: string | undefined): RequestAuth | null {
  const m = header === undefined ? null : REQUEST_AUTH.exec(header);
  if (!m) return null;
  return { timestampMs: Number(m[1]), nonce: m[2]!, signature: m[3]! };
}

export function formatResponseAuth(signature: string): string {
  return `v1 sig=${signature}`;
}

export function parseResponseAuth(header: string | undefined): string | null {
  const m = header === undefined ? null : RESPONSE_AUTH.exec(header);
  return m ? m[1]! : null;
}

/**
 * Constant-time comparison of two hex signatures of the same length: every character is looked
 * at whatever differs (without the two Buffers timingSafeEqual needs, for each of 5,000 answers
 * a second).
 */
export function sameSignature(a: string, b: string): boolean {
  if (a.length !== b.length || a.length === 0) return false;
  let differs = 0;
  for (let i = 0; i < a.length; i++) differs |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differs === 0;
}
