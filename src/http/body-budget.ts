// Request bodies being read, in bytes, over every connection: bounded, so that many clients each
// sending a large body (up to 4 MiB for /coordinator) cannot take the pod's memory before a single
// signature or schema is checked. A body that does not fit now gets 503 and its connection closed.
//
// A body's signature covers its bytes, so it is checked only once they are read: until then, what
// a client says of itself is only its address. Large bodies are therefore taken from discovered
// peers only (their pod IPs; pods reach each other without NAT, and a TCP connection cannot come
// from an address its sender does not hold), and everyone else, however many, reads from a small
// budget of its own: strangers flooding the node with bogus large bodies cannot take the room its
// peers' signed messages need.
import type { Request, RequestHandler, Response } from 'express';
import type { BodyRefusal, BodySender } from '../metrics/peer-message-metrics.js';
import { remoteIp } from '../wire/node-ref.js';

/** Far below the DaemonSet's 192 MiB limit; a few announcements at once fit. */
export const DEFAULT_BODY_BUDGET_BYTES = 24 * 1024 * 1024;
/** For everyone but discovered peers (operators, a pod not discovered yet): small bodies only. */
export const DEFAULT_STRANGER_BUDGET_BYTES = 1024 * 1024;

export interface BodyGateOptions {
  /** Bytes discovered peers' bodies may hold at once. */
  peerBudgetBytes: number;
  /** Bytes everyone else's bodies may hold at once. */
  strangerBudgetBytes: number;
  /** The largest body a path takes from a peer. */
  limitFor: (path: string) => number;
  /** The largest body anyone else may send, whatever the path. */
  strangerLimitBytes: number;
  /** Whether a connection's remote IP is a discovered peer's. */
  isPeerIp: (ip: string) => boolean;
  /** A body was refused (metrics). */
  onRefused?: (sender: BodySender, reason: BodyRefusal) => void;
}

interface BodyLocals {
  bodyLimit?: number;
}

/** The largest body this request may send (as bodyGate judged it; before it, the path's). */
export function bodyLimitOf(req: Request, res: Response, limitFor: (path: string) => number) {
  return (res.locals as BodyLocals).bodyLimit ?? limitFor(req.path);
}

/** A counter of bytes held, with what is left. */
class Budget {
  private reserved = 0;
  constructor(readonly bytes: number) {}
  take(n: number): boolean {
    if (this.reserved + n > this.bytes) return false;
    this.reserved += n;
    return true;
  }
  give(n: number): void {
    this.reserved -= n;
  }
}

/**
 * Judges a body by its headers before a byte of it is read: larger than its sender may send (413,
 * or 403 naming why for a stranger's large body), or not fitting the sender's budget now (503);
 * both close the connection, so the body announced is never read.
 */
export function bodyGate(o: BodyGateOptions): RequestHandler {
  const peers = new Budget(o.peerBudgetBytes);
  const strangers = new Budget(o.strangerBudgetBytes);
  return (req, res, next) => {
    const declared = Number(req.get('content-length') ?? NaN);
    const chunked = req.get('transfer-encoding') !== undefined;
    const ip = remoteIp(req.socket.remoteAddress);
    const peer = ip !== undefined && o.isPeerIp(ip);
    const pathLimit = o.limitFor(req.path);
    const limit = peer ? pathLimit : Math.min(pathLimit, o.strangerLimitBytes);
    (res.locals as BodyLocals).bodyLimit = limit;
    if (!chunked && !(declared > 0)) {
      next();
      return;
    }
    const sender: BodySender = peer ? 'peer' : 'other';
    if (declared > limit) {
      res.set('connection', 'close');
      if (declared <= pathLimit) {
        o.onRefused?.(sender, 'peers-only');
        res.status(403).json({
          error: `bodies over ${limit} bytes are taken from discovered peers only`,
        });
      } else {
        o.onRefused?.(sender, 'too-large');
        res.status(413).json({ error: `request body larger than ${limit} bytes` });
      }
      return;
    }
    // A chunked body may be as large as its sender may send; a declared one is what it says (the
    // parser refuses a body longer than declared, and one longer than the limit).
    const bytes = chunked ? limit : declared;
    const budget = peer ? peers : strangers;
    if (!budget.take(bytes)) {
      o.onRefused?.(sender, 'busy');
      res.set('connection', 'close');
      res.status(503).json({ error: 'too many request bodies being read; try again' });
      return;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      budget.give(bytes);
    };
    res.once('close', release);
    res.once('finish', release);
    next();
  };
}
