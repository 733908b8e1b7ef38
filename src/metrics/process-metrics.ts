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

/**
 * How often the event-loop delay is sampled for `nodejs_eventloop_lag_*`, ms. prom-client's default
 * (10 ms) wakes an idle process 200 times a second, which alone costs most of a percent of a core
 * (docs/benchmarks.md); at 100 ms a stall of 100 ms or more is still always seen, and a scrape
 * interval's percentiles are still taken from a hundred samples or more.
 */
export const EVENT_LOOP_PRECISION_MS = 100;

export function registerProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({
    register: registry,
    eventLoopMonitoringPrecision: EVENT_LOOP_PRECISION_MS,
  });
  for (const name of MISNAMED) registry.removeSingleMetric(name);
}
