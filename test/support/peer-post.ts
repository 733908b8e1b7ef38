// Sends a peer message to a node the way another node would (signed with the mesh's secret when
// one is given), or the way an attacker would (unsigned, or with a header of its choosing).
import { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';

export interface PeerPostResult {
  status: number;
  body: string;
  /** The answer's x-knh-auth header. */
  auth: string | null;
}

/** A signer for `secret` on the real clock. */
export function signer(secret: string, maxSkewMs = 30_000): PeerAuth {
  return new PeerAuth({ secrets: () => [secret], now: () => Date.now(), maxSkewMs });
}

/** POSTs `body` (sent byte for byte) to `address` + `path` with the given auth header, if any. */
export async function peerPost(
  address: string,
  path: string,
  body: string,
  authHeader?: string,
): Promise<PeerPostResult> {
  const res = await fetch(`http://${address}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(authHeader === undefined ? {} : { [AUTH_HEADER]: authHeader }),
    },
    body,
    signal: AbortSignal.timeout(5_000),
  });
  return { status: res.status, body: await res.text(), auth: res.headers.get(AUTH_HEADER) };
}

/** POSTs `body` signed with `auth`; returns the answer and the request's signature header. */
export async function signedPost(
  auth: PeerAuth,
  address: string,
  path: string,
  body: string,
): Promise<PeerPostResult & { header: string; nonce: string }> {
  const { header, nonce } = auth.signRequest('POST', signedPath(address, path), Buffer.from(body));
  return { ...(await peerPost(address, path, body, header)), header, nonce };
}
