// The Node.js process metrics prom-client collects (CPU, memory, event loop, GC), under their
// standard names (`process_*`, `nodejs_*`), so the dashboards and queries people have work as is.
import { collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client also exports these gauges with a `_total` suffix, which Prometheus reserves for
 * counters (`promtool check metrics` rejects them; prometheus/client_js issue #283). Their
 * by-type siblings (`nodejs_active_handles{type}`...) stay: sum() gives the same totals.
 */
const MISNAMED = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export function registerProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED) registry.removeSingleMetric(name);
}
