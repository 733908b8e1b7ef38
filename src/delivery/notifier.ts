// Validates every outgoing payload against its schema, then hands it to its receiver's queue.
import type { Logger } from '../core/logger.js';
import type { SchemaRegistry } from '../wire/schemas.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../wire/webhooks.js';
import type { DeliveryOutcome, EventSink } from '../alerts/event-sink.js';
import type { WebhookQueue } from './webhook-queue.js';

/** A URL, or where to read it now (a `_FILE` setting, re-read); null: not set. */
export type UrlSetting = string | null | (() => string | null);

export interface NotifierOptions {
  schemas: SchemaRegistry;
  peerStatusUrl: UrlSetting;
  clusterStatusUrl: UrlSetting;
  /** One queue per distinct URL, so both kinds to one receiver stay in order. */
  makeQueue(url: string): WebhookQueue;
  logger: Logger;
}

export class Notifier implements EventSink {
  private readonly queues = new Map<string, WebhookQueue>();

  constructor(private readonly opts: NotifierOptions) {}

  /** Returns whether the event was queued; `onSettled` then hears how its delivery ended. */
  peerStatus(payload: PeerStatusPayload, onSettled?: (outcome: DeliveryOutcome) => void): boolean {
    return this.send(
      this.opts.peerStatusUrl,
      'peer-status',
      payload.dedup_key,
      payload,
      onSettled,
      // One peer's events stay in order; other peers' may be in flight alongside.
      payload.peer.address,
    );
  }

  clusterStatus(payload: ClusterStatusPayload): boolean {
    const key = `cluster:${payload.epoch}:${payload.reason}:${payload.timestamp}`;
    return this.send(this.opts.clusterStatusUrl, 'cluster-status', key, payload);
  }

  /**
   * This node stopped leading: the events not sent yet are withdrawn (their `onSettled` hears
   * `withdrawn`), those in flight end with their attempt. Its successor sends the rest.
   */
  withdraw(): void {
    for (const queue of this.queues.values()) queue.withdraw();
  }

  /** A peer-status event another node delivered: not sent from here if still waiting. */
  cancel(key: string): boolean {
    let cancelled = false;
    for (const queue of this.queues.values()) cancelled = queue.cancel(key) || cancelled;
    return cancelled;
  }

  get pending(): number {
    return [...this.queues.values()].reduce((n, q) => n + q.pending, 0);
  }

  /** Waits up to `ms` for queued events to go; logs what is still undelivered. */
  async drain(ms: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.drain(ms)));
    if (this.pending > 0) {
      this.opts.logger.error({ pending: this.pending }, 'shutting down with undelivered webhooks');
    }
  }

  /** Returns whether the event was queued. */
  private send(
    setting: UrlSetting,
    kind: 'peer-status' | 'cluster-status',
    key: string,
    body: unknown,
    onSettled?: (outcome: DeliveryOutcome) => void,
    orderKey?: string,
  ): boolean {
    const check = this.opts.schemas.check(kind, body);
    if (!check.ok) {
      // A bug in knh, never the receiver's problem: say so loudly and send nothing malformed.
      this.opts.logger.error(
        { kind, key, errors: check.errors, body },
        'BUG: outgoing webhook payload fails its schema; not sent',
      );
      return false;
    }
    const url = typeof setting === 'function' ? setting() : setting;
    if (!url) return false;
    let queue = this.queues.get(url);
    if (!queue) {
      queue = this.opts.makeQueue(url);
      this.queues.set(url, queue);
    }
    queue.enqueue({
      kind,
      key,
      body,
      ...(onSettled ? { onSettled } : {}),
      ...(orderKey !== undefined ? { orderKey } : {}),
    });
    return true;
  }
}
