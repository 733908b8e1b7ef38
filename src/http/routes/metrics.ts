// GET /metrics: the Prometheus text, served from a snapshot (snapshot.ts) so scrapes arriving
// together cost one rendering.
import { Snapshot } from '../snapshot.js';
import type { View } from '../views.js';

export interface MetricsViewOptions {
  /** Prometheus text exposition. */
  metrics: () => Promise<{ contentType: string; body: string }>;
  /** The clock a snapshot's age is read on. */
  now: () => number;
  /** How long a built /metrics is served (0: built for every scrape). */
  maxAgeMs: number;
}

export function metricsView({ metrics, now, maxAgeMs }: MetricsViewOptions): View {
  const snapshot = new Snapshot({
    now,
    maxAgeMs,
    build: async () => ({ status: 200, ...(await metrics()) }),
  });
  return { path: '/metrics', snapshot, headers: { 'cache-control': 'no-cache' } };
}
