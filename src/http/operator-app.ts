// The operator's own listener (OPERATOR_LISTEN) as an express app: the views and changes an
// operator uses (status page, /status, /metrics, maintenance, test alert) and the health checks,
// and no peer message. Each view keeps the guards it has on the peer port: a change only from
// loopback and not from a browser page (operator-guard.ts, inside its router), reads limited per
// client (views.ts), bodies small and bounded over every connection (body-budget.ts).
import type { RequestListener } from 'node:http';
import express, { type Router } from 'express';
import type { Logger } from '../core/logger.js';
import type { BodyRefusal, BodySender } from '../metrics/peer-message-metrics.js';
import { bodyGate, DEFAULT_STRANGER_BUDGET_BYTES } from './body-budget.js';
import { useFallbacks } from './fallbacks.js';
import type { RateLimit } from './rate-limit.js';
import { metricsView } from './routes/metrics.js';
import { withViews, type View } from './views.js';
import { WarnThrottle } from '../core/warn-throttle.js';

export interface OperatorAppOptions {
  logger: Logger;
  /** Prometheus text exposition (GET /metrics). */
  metrics: () => Promise<{ contentType: string; body: string }>;
  /** The operator's routes (status, maintenance, test alert, health), each built by its owner. */
  routers: readonly Router[];
  /** The operator's read views beside /metrics (/status, the page), answered first (views.ts). */
  views?: readonly View[];
  /** Wall clock for throttling warnings and the age of /metrics' snapshot. */
  now?: () => number;
  /** How long a built /metrics is served (default 1 s). */
  metricsMaxAgeMs?: number;
  /** Reads (/, /status, /metrics) one remote IP may make, beside every request's limit. */
  readRateLimit?: RateLimit | null;
  /** The largest body taken (a maintenance request is a few hundred bytes). */
  bodyLimitBytes?: number;
  /** Bytes of request bodies read at once, over every connection of this listener. */
  bodyBudgetBytes?: number;
  /** A request body was refused by its headers (metrics). */
  onBodyRefused?: (sender: BodySender, reason: BodyRefusal) => void;
}

export function buildOperatorApp({
  logger,
  metrics,
  routers,
  views = [],
  now = Date.now,
  metricsMaxAgeMs = 1_000,
  readRateLimit,
  bodyLimitBytes = 64 * 1024,
  bodyBudgetBytes = DEFAULT_STRANGER_BUDGET_BYTES,
  onBodyRefused,
}: OperatorAppOptions): RequestListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const warn = new WarnThrottle(logger, now);
  // No peer sends anything here: every client reads from one small budget, apart from the peer
  // port's, so a flood of bodies on one port never turns away the other's.
  app.use(
    bodyGate({
      peerBudgetBytes: 0,
      strangerBudgetBytes: bodyBudgetBytes,
      limitFor: () => bodyLimitBytes,
      strangerLimitBytes: bodyLimitBytes,
      isPeerIp: () => false,
      ...(onBodyRefused ? { onRefused: onBodyRefused } : {}),
    }),
  );
  app.post(
    /.*/,
    express.json({ limit: bodyLimitBytes, strict: true, type: () => true, inflate: false }),
  );
  for (const router of routers) app.use(router);
  useFallbacks(app, logger, warn);
  return withViews([metricsView({ metrics, now, maxAgeMs: metricsMaxAgeMs }), ...views], app, {
    logger,
    ...(readRateLimit !== undefined ? { readRateLimit } : {}),
  });
}
