// The operator's read views (/, /status, /metrics) are answered here, ahead of the app: each is a
// snapshot (snapshot.ts) already built, so a read costs what it passes through on its way, and a
// client over the read limit, refused here, costs less than behind express's routing
// (docs/benchmarks.md, "Why the read views are answered before express"). Only an exact GET or
// HEAD of a view's path is taken; every other request goes on to the app as before.
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '../core/logger.js';
import { answerSnapshot, type Snapshot } from './snapshot.js';
import { DEFAULT_READ_RATE_LIMIT, isPodItself, RateLimiter, type RateLimit } from './rate-limit.js';

/** A read view: its path, the snapshot it serves, and the headers every answer carries. */
export interface View {
  path: string;
  snapshot: Snapshot;
  headers: Readonly<Record<string, string>>;
}

export interface ViewsOptions {
  /**
   * Reads one remote IP may make, over all views (default DEFAULT_READ_RATE_LIMIT); null: none.
   * The pod's own loopback is never limited.
   */
  readRateLimit?: RateLimit | null;
  /** Headers every answer carries, beside the view's own (the peer port names its protocol). */
  headers?: Readonly<Record<string, string>>;
  /** An error building a view is logged here, and answered 500. */
  logger: Logger;
}

/** `app` with `views` answered before it. */
export function withViews(
  views: readonly View[],
  app: RequestListener,
  { readRateLimit = DEFAULT_READ_RATE_LIMIT, headers = {}, logger }: ViewsOptions,
): RequestListener {
  if (views.length === 0) return app;
  const byPath = new Map(views.map((v) => [v.path, v]));
  const limiter = readRateLimit ? new RateLimiter(readRateLimit) : null;
  return (req, res) => {
    const view = viewOf(req, byPath);
    if (view === undefined) {
      app(req, res);
      return;
    }
    const ip = req.socket.remoteAddress ?? '';
    if (limiter !== null && !isPodItself(ip) && !limiter.take(ip, performance.now())) {
      answerJson(res, 429, 'too many reads of this view from this address; try again', {
        ...headers,
        'retry-after': '1',
      });
      return;
    }
    answerSnapshot(view.snapshot, req, res, { ...headers, ...view.headers }).catch(
      (err: unknown) => {
        logger.error({ err, path: view.path }, 'request failed');
        if (!res.headersSent) answerJson(res, 500, 'internal error', headers);
        else res.destroy();
      },
    );
  };
}

/** The view a request reads: a GET or HEAD of its exact path (a query string aside). */
function viewOf(req: IncomingMessage, byPath: ReadonlyMap<string, View>): View | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return byPath.get(q === -1 ? url : url.slice(0, q));
}

function answerJson(
  res: ServerResponse,
  status: number,
  error: string,
  headers: Readonly<Record<string, string>>,
): void {
  const body = JSON.stringify({ error });
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}
