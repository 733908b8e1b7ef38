// What an app answers once no route has: 404 naming the request, and errors as JSON (a client's
// 4xx warned at most once a kind per throttle interval, a 500 logged in full).
import type { Express, NextFunction, Request, Response } from 'express';
import type { Logger } from '../core/logger.js';
import type { WarnThrottle } from '../core/warn-throttle.js';

/** Mounts the 404 and the error handler: last, after every route. */
export function useFallbacks(app: Express, logger: Logger, warn: WarnThrottle): void {
  app.use((req, res) => {
    res.status(404).json({ error: `no route for ${req.method} ${req.path}` });
  });
  // Express recognises an error handler by its four parameters.
  app.use(
    (
      err: Error & { status?: number; type?: string },
      req: Request,
      res: Response,
      _next: NextFunction,
    ) => {
      const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 500;
      if (status === 500) logger.error({ err, path: req.path }, 'request failed');
      else
        warn.warn(
          `bad-request-${status}`,
          { path: req.path, from: req.ip, reason: err.type ?? err.message },
          'bad request rejected',
        );
      res.status(status).json({ error: status === 500 ? 'internal error' : err.message });
    },
  );
}
