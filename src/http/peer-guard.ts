// Peer messages at the HTTP edge. With a peer secret, a request is authenticated on its raw bytes
// before anything parses them (401 otherwise, nothing else done), and the answer is signed for the
// request it answers; then the body is parsed as JSON for the route.
import express, { type Request, type RequestHandler, type Response } from 'express';
import { describeAuthFailure, type AuthFailure, type PeerAuth } from '../auth/peer-auth.js';
import { AUTH_HEADER, REFUSED_HEADER, signedPath } from '../auth/signature.js';
import type { Refusal } from '../metrics/peer-message-metrics.js';
import { remoteIp } from '../wire/node-ref.js';
import type { WarnThrottle } from '../core/warn-throttle.js';
import { bodyLimitOf } from './body-budget.js';

/** The routes only a peer calls: signed when a secret is set. */
export const PEER_PATHS = [
  '/election',
  '/coordinator',
  '/leave',
  '/probe',
  '/paths/echo',
  '/paths/report',
  '/paths/pull',
];

export interface PeerGuardOptions {
  /** Null: peer authentication is off (messages are told apart by their source IP only). */
  auth: PeerAuth | null;
  /** This node's address (ip:port): a signature made for another node's is refused. */
  selfAddress?: string;
  /**
   * The largest body a path takes (announcements carry every peer's verdict; others are small),
   * unless the body gate set a smaller one for the sender.
   */
  limitFor: (path: string) => number;
  warn: WarnThrottle;
  onRefused?: (reason: Refusal) => void;
}

/** What a verified request leaves for its answer: the nonce the answer's signature covers. */
interface PeerLocals {
  peerNonce?: string;
}

/** Body reading, authentication and JSON parsing for PEER_PATHS (POST), in that order. */
export function peerMessageGuard({
  auth,
  selfAddress,
  limitFor,
  warn,
  onRefused,
}: PeerGuardOptions): RequestHandler[] {
  // Peers never compress, and a compressed body is a way to make a small request expensive.
  const parsers = new Map<number, RequestHandler>();
  const raw: RequestHandler = (req, res, next) => {
    const limit = bodyLimitOf(req, res, limitFor);
    let parser = parsers.get(limit);
    if (!parser) {
      parser = express.raw({ limit, type: () => true, inflate: false });
      parsers.set(limit, parser);
    }
    parser(req, res, next);
  };
  const refuse = (failure: AuthFailure, req: Request, res: Response) => {
    onRefused?.(failure);
    warn.warn(
      `auth-${failure}`,
      { path: req.path, from: remoteIp(req.socket.remoteAddress), reason: failure },
      'peer message refused: not authenticated',
    );
    // The reason by name too: a sender refused as expired sends again in this node's time (from
    // the answer's Date), one refused otherwise knows its peers cannot authenticate it.
    res.set(REFUSED_HEADER, failure);
    res.status(401).json({ error: describeAuthFailure(failure) });
  };
  // What the header alone shows is refused before the body is read, and the connection closed.
  const precheck: RequestHandler = (req, res, next) => {
    const failure = auth?.checkHeader(req.get(AUTH_HEADER)) ?? null;
    if (failure === null) {
      next();
      return;
    }
    res.set('connection', 'close');
    refuse(failure, req, res);
  };
  const check: RequestHandler = (req, res, next) => {
    const bytes: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (auth) {
      const path = selfAddress === undefined ? req.path : signedPath(selfAddress, req.path);
      const verdict = auth.verifyRequest(req.method, path, req.get(AUTH_HEADER), bytes);
      if (!verdict.ok) {
        refuse(verdict.failure, req, res);
        return;
      }
      (res.locals as PeerLocals).peerNonce = verdict.nonce;
    }
    try {
      req.body = bytes.length === 0 ? undefined : (JSON.parse(bytes.toString('utf8')) as unknown);
    } catch {
      res.status(400).json({ error: 'request body is not JSON' });
      return;
    }
    next();
  };
  return [precheck, raw, check];
}

/** Answers a peer message with `body` as JSON, signed when the request was. */
export function answerPeer(auth: PeerAuth | null, res: Response, body: unknown, status = 200) {
  const bytes = Buffer.from(JSON.stringify(body));
  const nonce = (res.locals as PeerLocals).peerNonce;
  if (auth && nonce !== undefined) res.set(AUTH_HEADER, auth.signResponse(nonce, status, bytes));
  res.status(status).type('application/json').send(bytes);
}
