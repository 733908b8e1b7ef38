// Prometheus metrics of webhook delivery: how each event ended, and how many wait.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DeliveryOutcome } from '../alerts/event-sink.js';
import type { WebhookEvent } from '../delivery/webhook-queue.js';

const KINDS: readonly WebhookEvent['kind'][] = [
  'peer-status',
  'cluster-status',
  'slack',
  'alertmanager',
  'pagerduty',
  'webhook',
];
const OUTCOMES: readonly DeliveryOutcome[] = [
  'delivered',
  'given-up',
  'rejected',
  'dropped',
  'superseded',
  'withdrawn',
];

export class WebhookMetrics {
  private readonly deliveries: Counter<'kind' | 'outcome'>;

  /** `pending`: events queued or being delivered, over every receiver. */
  constructor(registry: Registry, pending: () => number) {
    this.deliveries = new Counter({
      name: 'knh_webhook_deliveries_total',
      help: 'Webhook events that left the queue, by kind (peer-status, cluster-status, slack, alertmanager, pagerduty, webhook) and outcome: delivered, given-up (retried too long), rejected (4xx other than 429, not retried), dropped (queue full), superseded (a newer cluster status replaced it), withdrawn (not sent by a coordinator that stopped leading: its successor sends it).',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    });
    for (const kind of KINDS) {
      for (const outcome of OUTCOMES) this.deliveries.inc({ kind, outcome }, 0);
    }
    new Gauge({
      name: 'knh_webhook_queue_length',
      help: 'Webhook events waiting for delivery or being delivered, over every receiver.',
      registers: [registry],
      collect() {
        this.set(pending());
      },
    });
  }

  settled(kind: WebhookEvent['kind'], outcome: DeliveryOutcome): void {
    this.deliveries.inc({ kind, outcome });
  }
}
