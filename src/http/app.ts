// The node's HTTP API built from its dependencies: the read views first (views.ts), then an
// express app of the peer messages and the other routes; routes only translate.
import type { RequestListener } from 'node:http';
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from '../core/logger.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
  PathEcho,
  PathPull,
  PathReport,
  PathReportReply,
  PingResponse,
  RelayProbeRequest,
} from '../wire/peer-messages.js';
import type { RelayAnswer } from '../prober/relay.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import type { PeerAuth } from '../auth/peer-auth.js';
import type { BodyRefusal, BodySender, Refusal } from '../metrics/peer-message-metrics.js';
import {
  bodyGate,
  DEFAULT_BODY_BUDGET_BYTES,
  DEFAULT_STRANGER_BUDGET_BYTES,
} from './body-budget.js';
import { answerPeer, PEER_PATHS, peerMessageGuard } from './peer-guard.js';
import type { RateLimit } from './rate-limit.js';
import { useFallbacks } from './fallbacks.js';
import { metricsView } from './routes/metrics.js';
import { withViews, type View } from './views.js';
import { rejectMalformed } from './reject-malformed.js';
import { remoteIp } from '../wire/node-ref.js';
import { sentBy } from './sender.js';
import { WarnThrottle } from '../core/warn-throttle.js';
import {
  checkHeartbeat,
  HEARTBEAT_HEADER,
  TAKES_HEARTBEATS,
  type ProbeHeartbeat,
} from '../auth/probe-heartbeat.js';
import { AUTH_HEADER } from '../auth/signature.js';
import { CHALLENGE_HEADER, readChallenge, signedPingHeaders } from '../auth/ping-signature.js';
import { PROTOCOL, PROTOCOL_HEADER, protocolIn } from '../wire/protocol.js';

/** What the routes call; null from a handler means the node is not taking part yet (503). */
export interface NodeApi {
  ping(): PingResponse;
  /**
   * The coordinator's probe carried a heartbeat (probe-heartbeat.ts), checked. True: it kept the
   * coordinator this node follows, and nothing waits to be told in a reply to an announcement
   * (the answer then says `x-knh-heartbeat: 1`: the prober may leave this node's heartbeats to
   * its probes).
   */
  heartbeat?(heartbeat: ProbeHeartbeat): boolean;
  election(request: ElectionRequest): ElectionAnswer | null;
  /** `protocol`: the announcer's (its request's header): what its reply may carry. */
  announcement(announcement: Announcement, protocol: number): AnnouncementReply | null;
  /** An indirect probe for the coordinator. */
  probe(request: RelayProbeRequest): Promise<RelayAnswer>;
  /** Prometheus text exposition. Absent: not served here (OPERATOR_LISTEN serves it elsewhere). */
  metrics?(): Promise<{ contentType: string; body: string }>;
  /** A full-size probe's answer (pair probing): the same payload back. Absent: 404. */
  echo?(echo: PathEcho): PathEcho;
  /** A peer's pair-probe findings, for the coordinator. Absent: 404. */
  pathReport?(report: PathReport): PathReportReply;
  /** Every path this node tells, for its coordinator (null: the asker does not lead it). */
  pathPull?(pull: PathPull): PathReport | null;
}

export interface AppOptions {
  api: NodeApi;
  schemas: SchemaRegistry;
  logger: Logger;
  /** Announcements carry every peer's verdict; this bounds them. */
  bodyLimitBytes?: number;
  /** Every other body (election messages, leaves, probes, maintenance): small. */
  smallBodyLimitBytes?: number;
  /** Bytes of discovered peers' request bodies read at once, over all their connections. */
  bodyBudgetBytes?: number;
  /** Bytes of everyone else's request bodies read at once (each at most the small limit). */
  strangerBodyBudgetBytes?: number;
  /**
   * Further routes (health, status, maintenance), each built by the module that owns them; on the
   * peer port, and checked after the peer messages.
   */
  routers?: readonly Router[];
  /** The operator's read views (/status, the page) served here, ahead of every route (views.ts). */
  views?: readonly View[];
  /**
   * Whether a message claiming to come from `claimed` (ip:port) may be taken from the connection's
   * remote address; default: only from that IP (sender.ts).
   */
  senderCheck?: (remote: string | undefined, claimed: string) => boolean;
  /**
   * Whether an address is among this node's discovered peers: announcements from anyone else are
   * refused (403). An election message from a node not discovered yet (a pod that just started,
   * before every watch lists it) is answered, and changes nothing (bully.ts): refusing it would let
   * the new pod think no higher node is alive. Default: everyone is (tests of the routes alone).
   */
  isPeer?: (address: string) => boolean;
  /**
   * Whether a connection's remote IP is a discovered peer's: only they may send bodies over the
   * small limit, and they read from their own budget (body-budget.ts). Default: every IP is.
   */
  isPeerIp?: (ip: string) => boolean;
  /** Peer authentication (PEER_SECRET); null or absent: off. */
  auth?: PeerAuth | null;
  /** This node's address: signatures are checked as made for it (absent: for any node). */
  selfAddress?: string;
  /** A peer message was refused (metrics). */
  onRefused?: (reason: Refusal) => void;
  /** A request body was refused by its headers (metrics). */
  onBodyRefused?: (sender: BodySender, reason: BodyRefusal) => void;
  /** Wall clock for throttling refusal warnings and the age of /metrics' snapshot (Date.now). */
  now?: () => number;
  /** How long a built /metrics is served (default 1 s; 0: built for every scrape). */
  metricsMaxAgeMs?: number;
  /** Reads (/, /status, /metrics) one remote IP may make, beside every request's limit. */
  readRateLimit?: RateLimit | null;
}

/** The peer port's app: the views answered first (views.ts), then the routes of an express app. */
export function buildApp({
  api,
  schemas,
  logger,
  bodyLimitBytes = 4 * 1024 * 1024,
  smallBodyLimitBytes = 64 * 1024,
  bodyBudgetBytes = DEFAULT_BODY_BUDGET_BYTES,
  strangerBodyBudgetBytes = DEFAULT_STRANGER_BUDGET_BYTES,
  routers = [],
  views = [],
  senderCheck = sentBy,
  isPeer = () => true,
  isPeerIp = () => true,
  auth = null,
  selfAddress,
  onRefused,
  onBodyRefused,
  now = Date.now,
  metricsMaxAgeMs = 1_000,
  readRateLimit,
}: AppOptions): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const ownProtocol = String(PROTOCOL);
  // Every answer names the peer protocol this node speaks (peers send it what is new only then).
  app.use((_req, res, next) => {
    res.set(PROTOCOL_HEADER, ownProtocol);
    next();
  });
  const warn = new WarnThrottle(logger, now);
  const small = Math.min(smallBodyLimitBytes, bodyLimitBytes);
  // A path report carries up to 1,000 paths (schemas/path-report), an echo up to 9,000 bytes of
  // payload: whatever the small limit, both fit, and the schema judges them.
  const atLeast = (bytes: number) => Math.min(Math.max(small, bytes), bodyLimitBytes);
  const limits = new Map([
    ['/coordinator', bodyLimitBytes],
    ['/paths/report', atLeast(256 * 1024)],
    ['/paths/echo', atLeast(16 * 1024)],
  ]);
  const limitFor = (path: string) => limits.get(path) ?? small;
  app.use(
    bodyGate({
      peerBudgetBytes: bodyBudgetBytes,
      strangerBudgetBytes: strangerBodyBudgetBytes,
      limitFor,
      strangerLimitBytes: small,
      isPeerIp,
      ...(onBodyRefused ? { onRefused: onBodyRefused } : {}),
    }),
  );
  // Peer messages are authenticated on their raw bytes first; other POST bodies are parsed here
  // (no other method takes one).
  app.post(PEER_PATHS, ...peerMessageGuard({ auth, selfAddress, limitFor, warn, onRefused }));
  app.post(/.*/, express.json({ limit: small, strict: true, type: () => true, inflate: false }));

  const malformed = (schema: SchemaName, req: Request, res: Response) =>
    rejectMalformed(schemas, logger, schema, req, res, warn);

  /** Refuses (403) a message whose `from.address` is not the connection's IP; true if it did. */
  const wrongSender = (req: Request, res: Response, claimed: string): boolean => {
    if (senderCheck(req.socket.remoteAddress, claimed)) return false;
    onRefused?.('wrong-address');
    warn.warn(
      'wrong-address',
      { path: req.path, from: remoteIp(req.socket.remoteAddress), claimed },
      'message refused: not sent from the address it names',
    );
    res.status(403).json({ error: `a message from ${claimed} must come from its own IP` });
    return true;
  };

  /** Validates the body against `schema`, then answers with `handle`'s result or 503. */
  const message =
    <T extends { from: { address: string } }, R>(
      schema: SchemaName,
      handle: (body: T, protocol: number) => R | null,
      {
        peersOnly,
        unavailable = 'this node is not taking part in elections yet',
      }: { peersOnly: boolean; /** Why a null from `handle` is a 503. */ unavailable?: string },
    ) =>
    (req: Request, res: Response) => {
      if (malformed(schema, req, res)) return;
      const claimed = (req.body as T).from.address;
      if (wrongSender(req, res, claimed)) return;
      if (peersOnly && !isPeer(claimed)) {
        onRefused?.('stranger');
        warn.warn(
          'stranger',
          { path: req.path, from: remoteIp(req.socket.remoteAddress), claimed },
          'message refused: the sender is not a discovered peer',
        );
        res.status(403).json({ error: `${claimed} is not a discovered peer of this node` });
        return;
      }
      const result = handle(req.body as T, protocolIn(req.get(PROTOCOL_HEADER)));
      if (result === null) {
        res.status(503).json({ error: unavailable });
        return;
      }
      answerPeer(auth, res, result);
    };

  app.get('/ping', (req, res) => {
    const value = req.get(HEARTBEAT_HEADER);
    if (value !== undefined && api.heartbeat) {
      const check = checkHeartbeat(value, req.get(AUTH_HEADER), {
        remote: req.socket.remoteAddress,
        auth,
        selfAddress,
        senderCheck,
      });
      if (check.ok) {
        if (api.heartbeat(check.heartbeat)) res.set(HEARTBEAT_HEADER, TAKES_HEARTBEATS);
      } else {
        if (check.why !== 'malformed-heartbeat') onRefused?.(check.why);
        warn.warn(
          `heartbeat-${check.why}`,
          { path: req.path, from: remoteIp(req.socket.remoteAddress), reason: check.why },
          'heartbeat in a probe ignored (the probe is answered)',
        );
      }
    }
    // With a secret, a probe's challenge is answered signed (ping-signature.ts): the prober then
    // knows it is this node that answers, not whatever holds its address.
    const challenge = auth ? readChallenge(req.get(CHALLENGE_HEADER)) : null;
    if (!auth || challenge === null) {
      res.json(api.ping());
      return;
    }
    const bytes = Buffer.from(JSON.stringify(api.ping()));
    res
      .set(signedPingHeaders(auth, challenge, bytes))
      .type('application/json')
      .send(bytes);
  });
  app.post(
    '/election',
    message<ElectionRequest, ElectionAnswer>('election-request', (b) => api.election(b), {
      peersOnly: false,
    }),
  );
  app.post(
    '/coordinator',
    message<Announcement, AnnouncementReply>(
      'announcement',
      (b, protocol) => api.announcement(b, protocol),
      { peersOnly: true },
    ),
  );

  // Called on `api`, not taken off it: an implementation's methods may use `this`.
  if (api.echo) {
    app.post(
      '/paths/echo',
      message<PathEcho, PathEcho>('path-echo', (b) => api.echo!(b), { peersOnly: true }),
    );
  }
  if (api.pathPull) {
    app.post(
      '/paths/pull',
      message<PathPull, PathReport>('path-pull', (b) => api.pathPull!(b), {
        peersOnly: true,
        unavailable: 'the asker does not lead this node in that epoch',
      }),
    );
  }
  if (api.pathReport) {
    app.post(
      '/paths/report',
      message<PathReport, PathReportReply>('path-report', (b) => api.pathReport!(b), {
        peersOnly: true,
      }),
    );
  }

  app.post('/probe', async (req, res) => {
    if (malformed('probe-request', req, res)) return;
    if (wrongSender(req, res, (req.body as RelayProbeRequest).from.address)) return;
    const answer = await api.probe(req.body as RelayProbeRequest);
    if (answer.status === 200) answerPeer(auth, res, answer.body);
    else {
      logger.warn({ path: req.path, from: req.ip, reason: answer.error }, 'indirect probe refused');
      res.status(answer.status).json({ error: answer.error });
    }
  });

  for (const router of routers) app.use(router);
  useFallbacks(app, logger, warn);
  const metrics = api.metrics
    ? [metricsView({ metrics: () => api.metrics!(), now, maxAgeMs: metricsMaxAgeMs })]
    : [];
  return withViews([...metrics, ...views], app, {
    logger,
    headers: { [PROTOCOL_HEADER]: ownProtocol },
    ...(readRateLimit !== undefined ? { readRateLimit } : {}),
  });
}
