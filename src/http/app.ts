// The node's HTTP API as an express app built from its dependencies; routes only translate.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from '../core/logger.js';
import type { Announcement, PingResponse, RelayProbeRequest } from '../core/transport.js';
import type { RelayAnswer } from '../prober/relay.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import { rejectMalformed } from './reject-malformed.js';
import { remoteIp, sentBy } from './sender.js';

/** What the routes call; null from a handler means the node is not taking part yet (503). */
export interface NodeApi {
  ping(): PingResponse;
  election(request: ElectionRequest): ElectionAnswer | null;
  announcement(announcement: Announcement): AnnouncementReply | null;
  /** An indirect probe for the coordinator. */
  probe(request: RelayProbeRequest): Promise<RelayAnswer>;
  /** Prometheus text exposition. */
  metrics(): Promise<{ contentType: string; body: string }>;
}

export interface AppOptions {
  api: NodeApi;
  schemas: SchemaRegistry;
  logger: Logger;
  /** Announcements carry every peer's verdict; this bounds them. */
  bodyLimitBytes?: number;
  /** Further routes (health, status, maintenance), each built by the module that owns them. */
  routers?: readonly Router[];
  /**
   * Whether a message claiming to come from `claimed` (ip:port) may be taken from the connection's
   * remote address; default: only from that IP (sender.ts).
   */
  senderCheck?: (remote: string | undefined, claimed: string) => boolean;
}

export function buildApp({
  api,
  schemas,
  logger,
  bodyLimitBytes = 4 * 1024 * 1024,
  routers = [],
  senderCheck = sentBy,
}: AppOptions) {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(express.json({ limit: bodyLimitBytes, strict: true, type: () => true }));

  const malformed = (schema: SchemaName, req: Request, res: Response) =>
    rejectMalformed(schemas, logger, schema, req, res);

  /** Validates the body against `schema`, then answers with `handle`'s result or 503. */
  const message =
    <T extends { from: { address: string } }, R>(
      schema: SchemaName,
      handle: (body: T) => R | null,
    ) =>
    (req: Request, res: Response) => {
      if (malformed(schema, req, res)) return;
      const claimed = (req.body as T).from.address;
      if (!senderCheck(req.socket.remoteAddress, claimed)) {
        logger.warn(
          { path: req.path, from: remoteIp(req.socket.remoteAddress), claimed },
          'message refused: not sent from the address it names',
        );
        res.status(403).json({ error: `a message from ${claimed} must come from its own IP` });
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

  app.get('/metrics', async (_req, res) => {
    const { contentType, body } = await api.metrics();
    res.type(contentType).send(body);
  });
  app.post('/probe', async (req, res) => {
    if (malformed('probe-request', req, res)) return;
    const answer = await api.probe(req.body as RelayProbeRequest);
    if (answer.status === 200) res.json(answer.body);
    else {
      logger.warn({ path: req.path, from: req.ip, reason: answer.error }, 'indirect probe refused');
      res.status(answer.status).json({ error: answer.error });
    }
  });

  for (const router of routers) app.use(router);

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
