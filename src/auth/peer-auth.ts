// Authentication of peer messages with a shared secret: signs what this node sends, verifies what
// it receives (timestamp window, signature, nonce not seen before), and signs its answers.
import { randomBytes } from 'node:crypto';
import type { AuthRefusal } from '../core/transport.js';
import { PeerStanding } from './peer-standing.js';
import { ReplayGuard } from './replay-guard.js';
import {
  formatRequestAuth,
  formatResponseAuth,
  parseRequestAuth,
  parseResponseAuth,
  requestSignature,
  responseSignature,
  sameSignature,
  type RequestAuth,
} from './signature.js';

export type AuthFailure = Exclude<AuthRefusal, 'unnamed'>;

export const AUTH_FAILURES: readonly AuthFailure[] = [
  'missing',
  'malformed',
  'expired',
  'bad-signature',
  'replayed',
  'busy',
];

const FAILURE_TEXT: Record<AuthFailure, string> = {
  missing:
    'the message is not signed (no x-knh-auth header): set the same PEER_SECRET on every node',
  malformed: 'the x-knh-auth header is not of the form "v1 ts=…,nonce=…,sig=…"',
  expired: "the message timestamp is outside PEER_AUTH_MAX_SKEW of this node's clock",
  'bad-signature':
    'the signature does not match: the sender holds another secret, or the message was altered',
  replayed: 'this message was already received (its nonce is spent)',
  busy: 'too many signed messages to remember; try again',
};

export function describeAuthFailure(failure: AuthFailure): string {
  return FAILURE_TEXT[failure];
}

/**
 * Why a peer's 401 says it refused a message: the reason it names (x-knh-refused), else the one
 * its error text gives (versions before that header wrote only the text), else 'unnamed'.
 */
export function refusalOf(named: string | undefined, body: Buffer): AuthRefusal {
  if (named !== undefined && (AUTH_FAILURES as readonly string[]).includes(named)) {
    return named as AuthFailure;
  }
  let error: unknown;
  try {
    error = (JSON.parse(body.toString('utf8')) as { error?: unknown }).error;
  } catch {
    return 'unnamed';
  }
  return AUTH_FAILURES.find((f) => FAILURE_TEXT[f] === error) ?? 'unnamed';
}

export type VerifyResult = { ok: true; nonce: string } | { ok: false; failure: AuthFailure };

export interface PeerAuthOptions {
  /** The secrets now in force: the first signs, any of them verifies (rotation). Never empty. */
  secrets(): readonly string[];
  /** Wall-clock epoch ms: timestamps are compared across hosts. */
  now(): number;
  /** How far a timestamp may be from now, either way. */
  maxSkewMs: number;
  /**
   * Nonces remembered at most (default 100,000: at the default skew, nonces live 60 s, so about
   * 1,600 signed messages a second; only holders of the secret can spend them).
   */
  maxNonces?: number;
  /** A monotonic clock in ms for how long nonces are remembered (default performance.now). */
  monotonic?: () => number;
  /** Random nonce source (tests make it deterministic). */
  nonce?: () => string;
}

/**
 * Nonces only need to be unique, not unpredictable (the signature covers them): a random prefix
 * for this process and a counter, rather than 16 random bytes for each of 5,000 probes a second.
 */
function counterNonces(): () => string {
  const prefix = randomBytes(8).toString('hex');
  let count = 0;
  return () => prefix + (count++).toString(16).padStart(16, '0');
}

export class PeerAuth {
  /** What peers say of this node's signed messages: their clocks, their refusals. */
  readonly standing = new PeerStanding();
  private readonly guard: ReplayGuard;
  private readonly makeNonce: () => string;

  constructor(private readonly opts: PeerAuthOptions) {
    // A nonce must be remembered as long as its timestamp is acceptable: skew either side.
    this.guard = new ReplayGuard(2 * opts.maxSkewMs, opts.maxNonces ?? 100_000);
    this.makeNonce = opts.nonce ?? counterNonces();
  }

  private signer(): string {
    const secret = this.opts.secrets()[0];
    if (secret === undefined) throw new Error('PeerAuth needs at least one secret');
    return secret;
  }

  /**
   * The header value for a request, and its nonce (to check the answer against). `offsetMs`: how
   * far the receiver's clock is from this node's (peer-clocks.ts): the timestamp is the receiver's
   * time, so that its window (PEER_AUTH_MAX_SKEW) bounds replays, not how well clocks agree.
   */
  signRequest(
    method: string,
    path: string,
    body: Uint8Array,
    offsetMs = 0,
  ): { header: string; nonce: string } {
    const timestampMs = Math.round(this.opts.now() + offsetMs);
    const nonce = this.makeNonce();
    const signature = requestSignature(this.signer(), method, path, timestampMs, nonce, body);
    return { header: formatRequestAuth({ timestampMs, nonce, signature }), nonce };
  }

  /**
   * What can be told of a request from its header alone (missing, malformed, expired), before its
   * body is read; null: the header may be good.
   */
  checkHeader(header: string | undefined): AuthFailure | null {
    const read = this.readHeader(header);
    return 'failure' in read ? read.failure : null;
  }

  /** The header's parts if its form and its age are acceptable; else why not. */
  private readHeader(header: string | undefined): { auth: RequestAuth } | { failure: AuthFailure } {
    if (header === undefined || header === '') return { failure: 'missing' };
    const auth = parseRequestAuth(header);
    if (!auth) return { failure: 'malformed' };
    const expired = Math.abs(this.opts.now() - auth.timestampMs) > this.opts.maxSkewMs;
    return expired ? { failure: 'expired' } : { auth };
  }

  /** Checks a received request; a valid one's nonce is spent (a second delivery is refused). */
  verifyRequest(
    method: string,
    path: string,
    header: string | undefined,
    body: Uint8Array,
  ): VerifyResult {
    const read = this.readHeader(header);
    if ('failure' in read) return { ok: false, failure: read.failure };
    const { auth } = read;
    const valid = this.opts
      .secrets()
      .some((secret) =>
        sameSignature(
          requestSignature(secret, method, path, auth.timestampMs, auth.nonce, body),
          auth.signature,
        ),
      );
    if (!valid) return { ok: false, failure: 'bad-signature' };
    const remembered = this.guard.remember(
      auth.nonce,
      this.opts.monotonic?.() ?? performance.now(),
    );
    if (remembered === 'replayed') return { ok: false, failure: 'replayed' };
    if (remembered === 'full') return { ok: false, failure: 'busy' };
    return { ok: true, nonce: auth.nonce };
  }

  signResponse(nonce: string, status: number, body: Uint8Array): string {
    return formatResponseAuth(responseSignature(this.signer(), nonce, status, body));
  }

  /** Whether an answer to the request with `nonce` was signed by a holder of a secret in force. */
  verifyResponse(
    nonce: string,
    status: number,
    header: string | undefined,
    body: Uint8Array,
  ): boolean {
    const signature = parseResponseAuth(header);
    if (signature === null) return false;
    return this.opts
      .secrets()
      .some((secret) => sameSignature(responseSignature(secret, nonce, status, body), signature));
  }
}
