// Delivers events to one receiver URL in order, retrying with backoff; never blocks the caller.
import type { DeliveryOutcome } from '../alerts/event-sink.js';
import { waitAtMost, type Clock, type TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PostResult, Poster } from './poster.js';
import { retryAfterMs } from './retry-after.js';

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
  /**
   * Events with the same order key are delivered one after another, in the order queued; events
   * with different keys may be in flight together (up to maxInFlight). An event without one goes
   * alone: after every event queued before it, and before any queued after it.
   */
  orderKey?: string;
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
  /** POSTs in flight at once, at most (default 1: strictly one after another). */
  maxInFlight?: number;
  /** Backoff between retries: starts here, doubles, capped at maxBackoffMs. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Told how every event ended, after the event's own `onSettled` (metrics); must not block. */
  onSettled?(kind: WebhookEvent['kind'], outcome: DeliveryOutcome): void;
}

interface Entry extends WebhookEvent {
  firstTryMs: number | null;
  inFlight: boolean;
  /** Withdrawn while in flight: it ends with this attempt, whatever its outcome. */
  withdrawn: boolean;
}

/**
 * In order per receiver: events are posted in the order queued, up to maxInFlight at once, never
 * two with one order key (or any with an event without one); a failing event is retried before
 * later events of its key go. A queued cluster status is replaced by a newer one (it is a full
 * snapshot). Past maxSize the oldest waiting event is dropped, loudly.
 *
 * A retryable failure pauses the whole queue for the backoff, which doubles with each failure
 * after it (up to maxBackoffMs), and until a POST succeeds again only one goes at a time: an
 * outage costs the receiver one request per backoff, as with a single POST in flight.
 */
export class WebhookQueue {
  private readonly queue: Entry[] = [];
  private inFlight = 0;
  private backoffMs: number;
  /** The pause after a retryable failure (no POST starts until it fires), and how long it is. */
  private resume: TimerHandle | null = null;
  private pauseMs = 0;
  /** POSTs started so far: a failing one started before the latest pause adds no backoff. */
  private launches = 0;
  /** `launches` when the latest pause was decided. */
  private pausedAfter = 0;
  /** A retryable failure since the last success: one POST at a time until the receiver answers. */
  private failing = false;
  private idle: { promise: Promise<void>; resolve: () => void } | null = null;
  readonly counts: Record<DeliveryOutcome, number> = {
    delivered: 0,
    'given-up': 0,
    rejected: 0,
    dropped: 0,
    superseded: 0,
    withdrawn: 0,
  };

  constructor(private readonly opts: WebhookQueueOptions) {
    this.backoffMs = this.minBackoffMs;
  }

  get pending(): number {
    return this.queue.length;
  }

  enqueue(event: WebhookEvent): void {
    if (event.kind === 'cluster-status') {
      // A cluster status not in flight is an older snapshot than this one.
      for (let i = this.queue.length - 1; i >= 0; i--) {
        const entry = this.queue[i];
        if (entry?.kind === 'cluster-status' && !entry.inFlight) {
          this.queue.splice(i, 1);
          this.settle(entry, 'superseded');
        }
      }
    }
    // maxSize bounds the events waiting; those in flight are not counted.
    if (this.queue.length - this.inFlight >= this.opts.maxSize) {
      const i = this.queue.findIndex((e) => !e.inFlight);
      const [dropped] = this.queue.splice(i, 1);
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
    this.queue.push({ ...event, firstTryMs: null, inFlight: false, withdrawn: false });
    this.pump();
  }

  /**
   * Takes back every event not sent yet (settled `withdrawn`), and lets those in flight end with
   * their current attempt: a failure of theirs is not retried (settled `withdrawn`, a success
   * `delivered`). Another node sends them now.
   */
  withdraw(): void {
    const waiting = this.queue.filter((e) => !e.inFlight);
    for (const entry of this.queue) if (entry.inFlight) entry.withdrawn = true;
    this.queue.splice(0, this.queue.length, ...this.queue.filter((e) => e.inFlight));
    // In the order they were queued: the next coordinator sends them in that order.
    for (const entry of waiting) this.settle(entry, 'withdrawn');
    this.resolveIdle();
  }

  /**
   * Takes back the event with this key if it is waiting (settled `superseded`: it went out from
   * elsewhere); one in flight ends as it will. Returns whether one was taken back.
   */
  cancel(key: string): boolean {
    const i = this.queue.findIndex((e) => e.key === key && !e.inFlight);
    if (i < 0) return false;
    const [entry] = this.queue.splice(i, 1);
    this.settle(entry, 'superseded');
    this.resolveIdle();
    this.pump();
    return true;
  }

  /** Resolves when the queue is empty or `ms` has passed; what is left is logged by the caller. */
  async drain(ms: number): Promise<void> {
    if (this.queue.length === 0) return;
    if (!this.idle) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    await waitAtMost(this.opts.clock, this.idle.promise, ms);
  }

  private get minBackoffMs(): number {
    return this.opts.minBackoffMs ?? 500;
  }

  /** Starts every event that may go now, in queue order. */
  private pump(): void {
    if (this.resume) return; // paused: the timer pumps
    const max = this.failing ? 1 : Math.max(1, this.opts.maxInFlight ?? 1);
    /** Order keys of the events before this one: their later events wait. */
    const ahead = new Set<string>();
    for (const entry of this.queue) {
      if (this.inFlight >= max) return;
      const key = entry.orderKey;
      if (key === undefined) {
        // Goes alone: once everything before it has gone, and nothing after it goes meanwhile.
        if (entry === this.queue[0] && !entry.inFlight) this.launch(entry);
        return;
      }
      if (!entry.inFlight && !ahead.has(key)) this.launch(entry);
      ahead.add(key);
    }
  }

  private launch(entry: Entry): void {
    entry.inFlight = true;
    this.inFlight++;
    entry.firstTryMs ??= this.opts.clock.now();
    this.attempt(entry, ++this.launches).catch((err: unknown) =>
      this.opts.logger.error(
        { err, url: this.opts.logUrl ?? this.opts.url },
        'BUG: webhook delivery failed',
      ),
    );
  }

  private async attempt(entry: Entry, launch: number): Promise<void> {
    const { poster, clock, logger, url } = this.opts;
    let result: PostResult;
    try {
      result = await poster.post(url, entry.body, this.opts.timeoutMs, entry.headers);
    } catch (err) {
      // A poster answers every failure; should one throw, the event is retried, not stuck.
      result = { ok: false, retryable: true, detail: `BUG: the poster threw: ${String(err)}` };
    }
    entry.inFlight = false;
    this.inFlight--;
    const log = { url: this.opts.logUrl ?? url, key: entry.key, kind: entry.kind };
    const now = clock.now();
    if (entry.withdrawn && !result.ok) {
      this.finish(entry, 'withdrawn');
      logger.info({ ...log, detail: result.detail }, 'webhook failed; withdrawn, not retried');
    } else if (result.ok) {
      this.failing = false;
      this.backoffMs = this.minBackoffMs;
      this.finish(entry, 'delivered');
      logger.info({ ...log, status: result.status }, 'webhook delivered');
    } else if (!result.retryable) {
      // The receiver is up: the next event starts afresh.
      this.failing = false;
      this.backoffMs = this.minBackoffMs;
      this.finish(entry, 'rejected');
      logger.error(
        { ...log, detail: result.detail, body: entry.logged ?? entry.body },
        'webhook rejected by receiver; not retried',
      );
    } else {
      // The receiver may say how long to wait (a 429's or 503's Retry-After): at least that long.
      const asked = retryAfterMs(result.retryAfter, now);
      const waitMs = Math.max(this.backoffMs, asked ?? 0);
      if (now - (entry.firstTryMs ?? now) + waitMs > this.opts.retryForMs) {
        this.finish(entry, 'given-up');
        logger.error(
          { ...log, detail: result.detail, body: entry.logged ?? entry.body },
          'webhook given up after retries',
        );
      } else {
        this.failing = true;
        // POSTs already in flight when the queue paused fail with it: they add no further
        // backoff. (No POST starts while paused, so a later one finds the pause over.)
        if (launch > this.pausedAfter) {
          this.pausedAfter = this.launches;
          this.pauseMs = waitMs;
          this.backoffMs = Math.min(this.backoffMs * 2, this.opts.maxBackoffMs ?? 30_000);
          this.resume = clock.setTimeout(() => {
            this.resume = null;
            this.pump();
          }, this.pauseMs);
        }
        logger.warn(
          {
            ...log,
            detail: result.detail,
            retryInMs: this.pauseMs,
            ...(asked !== null ? { retryAfterMs: asked } : {}),
          },
          'webhook failed; will retry',
        );
      }
    }
    this.pump();
  }

  private finish(entry: Entry, outcome: DeliveryOutcome): void {
    const i = this.queue.indexOf(entry);
    if (i >= 0) this.queue.splice(i, 1);
    this.settle(entry, outcome);
    this.resolveIdle();
  }

  private resolveIdle(): void {
    if (this.queue.length === 0 && this.idle) {
      this.idle.resolve();
      this.idle = null;
    }
  }

  private settle(entry: Entry | undefined, outcome: DeliveryOutcome): void {
    this.counts[outcome]++;
    if (!entry) return;
    entry.onSettled?.(outcome);
    this.opts.onSettled?.(entry.kind, outcome);
  }
}
