// GET /metrics: the Prometheus text, served from a snapshot (snapshot.ts) so scrapes arriving
// together cost one rendering.
import { Router } from 'express';
import { serveSnapshot, Snapshot } from '../snapshot.js';

export interface MetricsRouterOptions {
  /** Prometheus text exposition. */
  metrics: () => Promise<{ contentType: string; body: string }>;
  /** The clock a snapshot's age is read on. */
  now: () => number;
  /** How long a built /metrics is served (0: built for every scrape). */
  maxAgeMs: number;
}

export function metricsRouter({ metrics, now, maxAgeMs }: MetricsRouterOptions): Router {
  const router = Router();
  const snapshot = new Snapshot({
    now,
    maxAgeMs,
    build: async () => ({ status: 200, ...(await metrics()) }),
  });
  router.get('/metrics', serveSnapshot(snapshot, { 'Cache-Control': 'no-cache' }));
  return router;
}
