// Delivers events to one receiver URL in order, retrying with backoff; never blocks the caller.
import { waitAtMost, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Poster } from './poster.js';

export interface WebhookEvent {
  /** KNH's two webhooks, or a receiver adapter's name (slack, alertmanager, pagerduty, webhook). */
  kind: 'peer-status' | 'cluster-status' | 'slack' | 'alertmanager' | 'pagerduty' | 'webhook';
  /** Extra request headers (a receiver's auth). */
  headers?: Record<string, string>;
  /** Logged with every outcome, e.g. the dedup key. */
  key: string;
  body: unknown;
  /** What logs show of the body when it differs (secrets redacted); default: the body. */
  logged?: unknown;
  /** Told how the event ended: delivered, or why not. */
  onSettled?(outcome: DeliveryOutcome): void;
}

export interface WebhookQueueOptions {
  url: string;
  /** The URL as logs show it, when the URL holds a secret (a Slack webhook's path); default: url. */
  logUrl?: string;
  poster: Poster;
  clock: Clock;
  logger: Logger;
  timeoutMs: number;
  /** Give an event up after retrying it this long. */
  retryForMs: number;
  maxSize: number;
  /** Backoff between retries: starts here, doubles, capped at maxBackoffMs. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Told how every event ended, after the event's own `onSettled` (metrics); must not block. */
  onSettled?(kind: WebhookEvent['kind'], outcome: DeliveryOutcome): void;
}

export type DeliveryOutcome = 'delivered' | 'given-up' | 'rejected' | 'dropped' | 'superseded';

interface Entry extends WebhookEvent {
  firstTryMs: number | null;
}

/**
 * FIFO per receiver: a failing head is retried before later events go, so a receiver sees events
 * in the order they happened. A queued cluster status is replaced by a newer one (it is a full
 * snapshot). Past maxSize the oldest waiting event is dropped, loudly.
 */
export class WebhookQueue {
  private readonly queue: Entry[] = [];
  private busy = false;
  private idle: Promise<void> = Promise.resolve();
  readonly counts: Record<DeliveryOutcome, number> = {
    delivered: 0,
    'given-up': 0,
    rejected: 0,
    dropped: 0,
    superseded: 0,
  };

  constructor(private readonly opts: WebhookQueueOptions) {}

  get pending(): number {
    return this.queue.length;
  }

  enqueue(event: WebhookEvent): void {
    if (event.kind === 'cluster-status') {
      // Entry 0 may be in flight; any later cluster status is an older snapshot than this one.
      for (let i = this.queue.length - 1; i >= (this.busy ? 1 : 0); i--) {
        if (this.queue[i]?.kind === 'cluster-status') {
          const [superseded] = this.queue.splice(i, 1);
          this.settle(superseded, 'superseded');
        }
      }
    }
    // maxSize bounds the events waiting; the one in flight (entry 0 while busy) is not counted.
    const firstWaiting = this.busy ? 1 : 0;
    if (this.queue.length - firstWaiting >= this.opts.maxSize) {
      const [dropped] = this.queue.splice(firstWaiting, 1);
      this.settle(dropped, 'dropped');
      this.opts.logger.error(
        {
          url: this.opts.logUrl ?? this.opts.url,
          key: dropped?.key,
          kind: dropped?.kind,
          body: dropped ? (dropped.logged ?? dropped.body) : undefined,
        },
        'webhook queue full: dropped the oldest undelivered event',
      );
    }
    this.queue.push({ ...event, firstTryMs: null });
    if (!this.busy) {
      this.idle = this.run().catch((err: unknown) =>
        this.opts.logger.error(
          { err, url: this.opts.logUrl ?? this.opts.url },
          'BUG: webhook delivery loop failed',
        ),
      );
    }
  }

  /** Resolves when the queue is empty or `ms` has passed; what is left is logged by the caller. */
  async drain(ms: number): Promise<void> {
    if (!this.busy) return;
    await waitAtMost(this.opts.clock, this.idle, ms);
  }

  private async run(): Promise<void> {
    this.busy = true;
    const { poster, clock, logger, url } = this.opts;
    const minBackoff = this.opts.minBackoffMs ?? 500;
    const maxBackoff = this.opts.maxBackoffMs ?? 30_000;
    let backoff = minBackoff;
    try {
      for (let head = this.queue[0]; head; head = this.queue[0]) {
        head.firstTryMs ??= clock.now();
        const result = await poster.post(url, head.body, this.opts.timeoutMs, head.headers);
        const log = { url: this.opts.logUrl ?? url, key: head.key, kind: head.kind };
        if (result.ok) {
          this.finish('delivered');
          backoff = minBackoff;
          logger.info({ ...log, status: result.status }, 'webhook delivered');
          continue;
        }
        if (!result.retryable) {
          this.finish('rejected');
          backoff = minBackoff; // the receiver is up: the next event starts afresh
          logger.error(
            { ...log, detail: result.detail, body: head.logged ?? head.body },
            'webhook rejected by receiver; not retried',
          );
          continue;
        }
        if (clock.now() - head.firstTryMs + backoff > this.opts.retryForMs) {
          this.finish('given-up');
          logger.error(
            { ...log, detail: result.detail, body: head.logged ?? head.body },
            'webhook given up after retries',
          );
          continue;
        }
        logger.warn(
          { ...log, detail: result.detail, retryInMs: backoff },
          'webhook failed; will retry',
        );
        await clock.sleep(backoff);
        backoff = Math.min(backoff * 2, maxBackoff);
      }
    } finally {
      this.busy = false;
    }
  }

  private finish(outcome: DeliveryOutcome): void {
    this.settle(this.queue.shift(), outcome);
  }

  private settle(entry: Entry | undefined, outcome: DeliveryOutcome): void {
    this.counts[outcome]++;
    if (!entry) return;
    entry.onSettled?.(outcome);
    this.opts.onSettled?.(entry.kind, outcome);
  }
}
