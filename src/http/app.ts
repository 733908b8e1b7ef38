// The node's HTTP API as an express app built from its dependencies; routes only translate.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../core/logger.js';
import type { Announcement, PingResponse } from '../core/transport.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';

/** What the routes call; null from a handler means the node is not taking part yet (503). */
export interface NodeApi {
  ping(): PingResponse;
  election(request: ElectionRequest): ElectionAnswer | null;
  announcement(announcement: Announcement): AnnouncementReply | null;
}

export interface AppOptions {
  api: NodeApi;
  schemas: SchemaRegistry;
  logger: Logger;
  /** Announcements carry every peer's verdict; this bounds them. */
  bodyLimitBytes?: number;
}

export function buildApp({ api, schemas, logger, bodyLimitBytes = 4 * 1024 * 1024 }: AppOptions) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: bodyLimitBytes, strict: true, type: () => true }));

  /** Validates the body against `schema`, then answers with `handle`'s result or 503. */
  const message =
    <T, R>(schema: SchemaName, handle: (body: T) => R | null) =>
    (req: Request, res: Response) => {
      const check = schemas.check(schema, req.body);
      if (!check.ok) {
        logger.warn(
          { path: req.path, from: req.ip, errors: check.errors },
          'malformed request rejected',
        );
        res
          .status(400)
          .json({ error: `request body does not match ${schema}`, details: check.errors });
        return;
      }
      const result = handle(req.body as T);
      if (result === null) {
        res.status(503).json({ error: 'this node is not taking part in elections yet' });
        return;
      }
      res.json(result);
    };

  app.get('/ping', (_req, res) => {
    res.json(api.ping());
  });
  app.post(
    '/election',
    message<ElectionRequest, ElectionAnswer>('election-request', (b) => api.election(b)),
  );
  app.post(
    '/coordinator',
    message<Announcement, AnnouncementReply>('announcement', (b) => api.announcement(b)),
  );

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
        logger.warn(
          { path: req.path, from: req.ip, reason: err.type ?? err.message },
          'bad request rejected',
        );
      res.status(status).json({ error: status === 500 ? 'internal error' : err.message });
    },
  );
  return app;
}
