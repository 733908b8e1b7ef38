// Delivers alerts to every configured receiver (Slack, Alertmanager, PagerDuty, a generic webhook):
// peer-status events → lifecycle (hold-down) → grouping window → each adapter's requests → schema
// check → that receiver's own queue (retries with backoff; a slow receiver delays no other).
// Heartbeats (Alertmanager re-posts, dead man's switch) run only on the leading coordinator.
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import { redactBody } from './redact.js';
import type { WebhookEvent, WebhookQueue } from './webhook-queue.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import type { Alert } from '../wire/alert.js';
import type { AlertGroup, ReceiverAdapter, ReceiverRequest } from '../alerts/receiver-adapter.js';
import { Grouper } from '../alerts/grouping.js';
import { AlertLifecycle } from '../alerts/lifecycle.js';
import { withPodNames, type PodNameOf } from '../alerts/pod-names.js';

export interface DispatcherOptions {
  adapters: readonly ReceiverAdapter[];
  schemas: SchemaRegistry;
  clock: Clock;
  logger: Logger;
  /** A queue per receiver (by adapter name and URL). */
  makeQueue(url: string): WebhookQueue;
  holdDownMs: number;
  groupWaitMs: number;
  /** The pod at an address (discovery's, and this node's POD_NAME): alerts name it. */
  podNameOf?: PodNameOf;
}

export class AlertDispatcher {
  private readonly lifecycle: AlertLifecycle;
  private readonly grouper: Grouper;
  private readonly queues = new Map<string, WebhookQueue>();
  private timer: TimerHandle | null = null;
  private readonly heartbeats: TimerHandle[] = [];
  private leading = false;
  /** Keys of the firing alerts that went out (their group was flushed). */
  private readonly notified = new Set<string>();

  constructor(private readonly opts: DispatcherOptions) {
    this.lifecycle = new AlertLifecycle(opts.holdDownMs, opts.podNameOf);
    this.grouper = new Grouper(opts.groupWaitMs);
  }

  get enabled(): boolean {
    return this.opts.adapters.length > 0;
  }

  /** The receivers' names, for logs and the status page. */
  get receivers(): string[] {
    return this.opts.adapters.map((a) => a.name);
  }

  firing(): Alert[] {
    return this.lifecycle.firingAlerts();
  }

  /**
   * The firing alerts to share with followers: those not yet sent (still in the grouping window)
   * are marked `unsent`, so a successor sends them rather than taking them as paged.
   */
  shared(): Alert[] {
    return this.firing().map((a) => (this.notified.has(a.key) ? a : { ...a, unsent: true }));
  }

  /** Events waiting in the receivers' queues. */
  get pending(): number {
    return [...this.queues.values()].reduce((n, q) => n + q.pending, 0);
  }

  /** A peer-status event went to KNH's webhook: the same problem, for every other receiver. */
  onPeerStatus(payload: PeerStatusPayload): void {
    if (!this.enabled) return;
    const now = this.opts.clock.now();
    this.grouper.add(this.lifecycle.onEvent(payload, now), now);
    this.schedule();
  }

  /** This node leads: it starts from the alerts still firing, and sends heartbeats. */
  startLeading(firing: readonly Alert[]): void {
    this.reset();
    const now = this.opts.clock.now();
    const sent = firing.filter((a) => !a.unsent).map(({ unsent: _, ...a }) => a);
    const unsent = firing.filter((a) => a.unsent).map(({ unsent: _, ...a }) => this.named(a));
    this.lifecycle.adopt(sent);
    for (const a of sent) this.notified.add(a.key);
    // Decided by the predecessor but not sent yet when it went: this node sends them.
    this.lifecycle.adopt(unsent);
    this.grouper.add(
      unsent.map((alert) => ({ type: 'firing' as const, alert })),
      now,
    );
    this.schedule();
    this.leading = true;
    for (const adapter of this.opts.adapters) {
      const every = adapter.heartbeatMs;
      if (!adapter.heartbeat || !every || every <= 0) continue;
      const beat = () => {
        const handle = this.opts.clock.setTimeout(() => {
          this.heartbeats.splice(this.heartbeats.indexOf(handle), 1);
          if (!this.leading) return;
          this.sendAll(adapter, adapter.heartbeat?.(this.firing(), this.opts.clock.now()) ?? []);
          beat();
        }, every);
        this.heartbeats.push(handle);
      };
      // The first heartbeat at once: a new coordinator re-posts what fires and feeds the switch.
      this.sendAll(adapter, adapter.heartbeat(this.firing(), this.opts.clock.now()));
      beat();
    }
  }

  /** Stops heartbeats; changes still in the grouping window go out now rather than never. */
  /**
   * Alerts a predecessor left firing that this node will never see end (a broken path from the
   * predecessor itself, or a peer it sees alive): resolved now.
   */
  resolveInherited(alerts: readonly Alert[]): void {
    if (!this.enabled || alerts.length === 0) return;
    const now = this.opts.clock.now();
    this.grouper.add(
      alerts.map((alert) => ({
        type: 'resolved' as const,
        alert: this.named({ ...alert, endsAt: now }),
      })),
      now,
    );
    this.schedule();
  }

  /** Changes still in the grouping window go out now (before sharing, when handing over). */
  flushNow(): void {
    if (this.leading) this.flush(true);
  }

  /**
   * Stops heartbeats and forgets the alerts: the next coordinator owns them now (this node starts
   * again from what it is handed, should it lead). What is in the grouping window is sent first
   * when this node stops ('drain'), and left to the next coordinator when another took over
   * ('hand-over': it was shared unsent, and is sent once, by that node). Messages already queued
   * go out.
   */
  stopLeading(end: 'hand-over' | 'drain' = 'drain'): void {
    if (end === 'drain') this.flushNow();
    this.leading = false;
    this.reset();
  }

  /**
   * Peers no longer discovered (deleted, re-addressed): their alerts are resolved, or they would
   * fire forever.
   */
  reconcile(present: readonly string[]): void {
    if (!this.leading) return;
    const here = new Set(present);
    const gone = this.firing().filter((a) => !here.has(a.peer.address));
    if (gone.length === 0) return;
    const now = this.opts.clock.now();
    this.grouper.add(this.lifecycle.drop(new Set(gone.map((a) => a.key)), now), now);
    this.schedule();
  }

  private named(alert: Alert): Alert {
    return this.opts.podNameOf ? withPodNames(alert, this.opts.podNameOf) : alert;
  }

  private reset(): void {
    for (const h of this.heartbeats.splice(0)) this.opts.clock.clearTimeout(h);
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    this.lifecycle.clear();
    this.grouper.clear();
    this.notified.clear();
  }

  /** Sends a test alert to every receiver now (POST /test-alert); returns their names. */
  sendTest(): string[] {
    const now = this.opts.clock.now();
    const group: AlertGroup = {
      key: `knh:test:${now}`,
      at: now,
      changes: [],
      firing: [],
      test: true,
    };
    for (const adapter of this.opts.adapters) this.sendAll(adapter, adapter.render(group));
    return this.receivers;
  }

  /** Waits up to `ms` for every receiver's queue to empty. */
  async drain(ms: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.drain(ms)));
  }

  stop(): void {
    this.stopLeading();
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Wakes up when the group window closes or a hold-down ends, whichever comes first. */
  private schedule(): void {
    const dues = [this.grouper.dueAt(), this.lifecycle.nextDue()].filter(
      (d): d is number => d !== null,
    );
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    if (dues.length === 0) return;
    const wait = Math.max(0, Math.min(...dues) - this.opts.clock.now());
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
  }

  private flush(force = false): void {
    const now = this.opts.clock.now();
    this.grouper.add(this.lifecycle.tick(now), now);
    const taken = this.grouper.take(now, this.firing(), force);
    const group = taken ? this.marked(taken) : null;
    if (group) {
      for (const c of group.changes) {
        if (c.type === 'firing') this.notified.add(c.alert.key);
        else this.notified.delete(c.alert.key);
      }
      this.opts.logger.info(
        {
          event: 'alert-group',
          key: group.key,
          firing: group.changes.filter((c) => c.type === 'firing').map((c) => c.alert.key),
          resolved: group.changes.filter((c) => c.type === 'resolved').map((c) => c.alert.key),
        },
        `alerts: ${group.changes.length} change(s) to ${this.receivers.join(', ')}`,
      );
      for (const adapter of this.opts.adapters) {
        try {
          this.sendAll(adapter, adapter.render(group));
        } catch (err) {
          this.opts.logger.error({ err, receiver: adapter.name }, 'BUG: rendering an alert failed');
        }
      }
    }
    if (!force) this.schedule();
  }

  /** A group that fires several alerts is one page: each of them remembers which. */
  private marked(group: AlertGroup): AlertGroup {
    const firing = new Set(
      group.changes.filter((c) => c.type === 'firing').map((c) => c.alert.key),
    );
    if (firing.size < 2) return group;
    this.lifecycle.markGroup(firing, group.key);
    return {
      ...group,
      changes: group.changes.map((c) =>
        c.type === 'firing' && c.alert.group === undefined
          ? { ...c, alert: { ...c.alert, group: group.key } }
          : c,
      ),
      firing: this.firing(),
    };
  }

  private sendAll(adapter: ReceiverAdapter, requests: readonly ReceiverRequest[]): void {
    for (const request of requests) {
      const check = this.opts.schemas.check(adapter.schema as SchemaName, request.body);
      if (!check.ok) {
        this.opts.logger.error(
          {
            receiver: adapter.name,
            key: request.key,
            errors: check.errors,
            body: redactBody(request.body),
          },
          `BUG: outgoing ${adapter.name} payload fails its schema; not sent`,
        );
        continue;
      }
      let queue = this.queues.get(request.url);
      if (!queue) {
        queue = this.opts.makeQueue(request.url);
        this.queues.set(request.url, queue);
      }
      queue.enqueue({
        kind: adapter.name as WebhookEvent['kind'],
        key: request.key,
        body: request.body,
        logged: redactBody(request.body),
        ...(request.headers ? { headers: request.headers } : {}),
      });
    }
  }
}
