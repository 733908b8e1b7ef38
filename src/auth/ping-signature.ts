// Signed liveness. With PEER_SECRET, a probe (GET /ping) carries a challenge made by the prober
// (`x-knh-challenge: <32 hex>`), and the answer is signed over it (`x-knh-auth: v1 sig=…`, the
// answer signature of signature.ts with the challenge as its nonce): only a holder of the secret
// can answer for a pod, and only to this probe. Before, anything that could answer for a pod's
// address (a pod given its IP after it died, a spoofed answer) kept it alive.
//
// Challenges are random, not a counter: a counter's next values are known, and something that
// means to answer for a pod later could ask the pod itself for the answers to them while it lives.
//
// Pure but for the random pool: what an answer proves is decided here; the peer client acts on it.
import { randomFillSync } from 'node:crypto';
import type { PeerAuth } from './peer-auth.js';
import { AUTH_HEADER } from './signature.js';
import { parseAddress } from '../wire/node-ref.js';
import { SIGNED_PING_PROTOCOL } from '../wire/protocol.js';

export const CHALLENGE_HEADER = 'x-knh-challenge';
const CHALLENGE = /^[0-9a-f]{32}$/;

/** The challenge a probe carries, or null when the header is absent or not 32 lowercase hex. */
export function readChallenge(value: string | undefined): string | null {
  return value !== undefined && CHALLENGE.test(value) ? value : null;
}

/**
 * A source of challenges: 16 random bytes each, taken from a pool filled 256 at a time (a
 * coordinator probes 5,000 peers a second; one call to the system's random source each would cost
 * more than the signature).
 */
export function challenges(): () => string {
  const pool = Buffer.alloc(16 * 256);
  let at = pool.length;
  return () => {
    if (at === pool.length) {
      randomFillSync(pool);
      at = 0;
    }
    const challenge = pool.toString('hex', at, at + 16);
    at += 16;
    return challenge;
  };
}

/**
 * What a 200 answer to a challenged probe proves:
 * - `verified`: signed for this challenge by a holder of a secret in force, naming the address
 *   probed;
 * - `unsigned`, `bad-signature`, `other-node` (signed, but by a node naming another address: an
 *   answer relayed from elsewhere): it proves nothing, from a peer that ought to sign: one whose
 *   answer names a protocol that signs, or that signed an answer before (the protocol header is not
 *   signed: something answering for a pod could name an older one);
 * - `not-expected`: not verified, from a peer of an older version that never signed (a rollout).
 */
export type PingProof = 'verified' | 'unsigned' | 'bad-signature' | 'other-node' | 'not-expected';

export function provePing(args: {
  auth: PeerAuth;
  challenge: string;
  /** The address probed (ip:port, as discovery lists it). */
  target: string;
  /** The address the answer's body names. */
  named: string;
  authHeader: string | undefined;
  body: Uint8Array;
  /** The protocol the answer names. */
  protocol: number;
  /** Whether this peer has answered a challenge verified before (since it was listed). */
  signedBefore: boolean;
}): PingProof {
  const expected = args.signedBefore || args.protocol >= SIGNED_PING_PROTOCOL;
  if (args.authHeader === undefined) return expected ? 'unsigned' : 'not-expected';
  if (!args.auth.verifyResponse(args.challenge, 200, args.authHeader, args.body)) {
    return expected ? 'bad-signature' : 'not-expected';
  }
  return sameAddress(args.named, args.target) ? 'verified' : 'other-node';
}

/** Whether two ip:port spellings name the same endpoint (an IPv6 address has several). */
function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const x = parseAddress(a);
  const y = parseAddress(b);
  return x !== null && y !== null && x.ip === y.ip && x.port === y.port;
}

/** The headers of a signed answer to `challenge` whose body is `bytes`. */
export function signedPingHeaders(
  auth: PeerAuth,
  challenge: string,
  bytes: Uint8Array,
): Record<string, string> {
  return { [AUTH_HEADER]: auth.signResponse(challenge, 200, bytes) };
}
