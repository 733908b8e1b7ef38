// Turns the leader's verdicts and rounds into webhook events: dead/recovered, and cluster status.
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../core/node-ref.js';
import type { RoundReport, SanityState } from '../prober/rounds.js';
import type { Judgement, PeerRecord } from '../prober/verdict.js';
import type { Notifier } from './notifier.js';
import { clusterStatusPayload, peerStatusPayload, type ClusterStatusReason } from './payloads.js';

export interface ReporterOptions {
  notifier: Notifier;
  clock: Clock;
  logger: Logger;
  self: NodeRef;
  clusterStatusIntervalMs: number;
  /**
   * Shares the new verdicts with the followers before an alert goes out (bounded), so that a
   * successor that takes over at once does not alert again. Default: nothing to share.
   */
  shareVerdicts?: () => Promise<void>;
}

/** What the reporter reads of the current leadership. */
export interface Leadership {
  epoch(): number;
  records(): PeerRecord[];
  sanity(): SanityState;
}

/** Handlers run synchronously from the prober's callbacks; they only queue work. */
export class Reporter {
  private leadership: Leadership | null = null;
  private reportedElection = false;
  private periodic: TimerHandle | null = null;
  /** Webhooks go out in the order they were decided, each after the sharing before it. */
  private outbox: Promise<void> = Promise.resolve();

  constructor(private readonly opts: ReporterOptions) {}

  startLeading(leadership: Leadership): void {
    this.stopLeading();
    this.leadership = leadership;
    this.reportedElection = false;
    this.schedulePeriodic();
  }

  stopLeading(): void {
    this.leadership = null;
    if (this.periodic) this.opts.clock.clearTimeout(this.periodic);
    this.periodic = null;
  }

  /** Resolves once every decided webhook has been handed to its queue. */
  flush(): Promise<void> {
    return this.outbox;
  }

  onJudgement({ record, transition, incidentMs }: Judgement): void {
    const lead = this.leadership;
    if (!lead) return;
    const log = this.opts.logger.child({ peer: record.id, peerAddress: record.address });
    switch (transition) {
      case 'died':
      case 'recovered': {
        const event = transition === 'died' ? 'peer_dead' : 'peer_recovered';
        const payload = peerStatusPayload({
          record,
          event,
          incidentMs: incidentMs ?? record.sinceMs,
          coordinator: this.opts.self,
          epoch: lead.epoch(),
          now: this.opts.clock.now(),
        });
        if (transition === 'died') {
          log.warn(
            { event: 'peer-dead', reason: record.lastFailure, dedupKey: payload.dedup_key },
            `peer ${record.id} is dead`,
          );
        } else {
          log.info(
            { event: 'peer-recovered', dedupKey: payload.dedup_key },
            `peer ${record.id} recovered`,
          );
        }
        const share = this.opts.shareVerdicts ?? (() => Promise.resolve());
        this.send(async () => {
          await share();
          this.opts.notifier.peerStatus(payload);
        });
        return;
      }
      case 'first-alive': {
        log.info({ event: 'peer-alive' }, `peer ${record.id} is alive`);
        const twin =
          record.id === this.opts.self.id
            ? this.opts.self.address
            : lead.records().find((r) => r.id === record.id && r.address !== record.address)
                ?.address;
        if (twin) {
          log.error(
            { event: 'duplicate-id', otherAddress: twin },
            `nodes at ${record.address} and ${twin} share the id ${record.id}: give each node its own NODE_NAME`,
          );
        }
        return;
      }
      case 'never-alive':
        log.warn(
          { event: 'peer-never-alive', reason: record.lastFailure },
          `peer ${record.address} has not answered since it was discovered; no alert until it has been seen alive`,
        );
        return;
      case 'withheld':
        log.warn(
          { event: 'verdict-withheld', reason: record.lastFailure },
          `cannot reach ${record.id}, but this coordinator cannot reach SANITY_CHECK_URL either: not declaring it dead`,
        );
        return;
      case null:
        return;
    }
  }

  onRound(report: RoundReport): void {
    if (!this.leadership) return;
    const changed = report.changed > 0 || report.membership > 0;
    const level = changed ? 'info' : 'debug';
    this.opts.logger[level](
      { event: 'round', ...report },
      `round ${report.round}: probed ${report.probed}, ${report.changed} changed` +
        (report.membership > 0 ? `, ${report.membership} joined or left` : ''),
    );
    if (!this.reportedElection) {
      this.reportedElection = true;
      this.sendClusterStatus('election');
    } else if (changed) {
      this.sendClusterStatus('change');
    }
  }

  private schedulePeriodic(): void {
    const every = this.opts.clusterStatusIntervalMs;
    if (every <= 0) return;
    this.periodic = this.opts.clock.setTimeout(() => {
      if (!this.leadership) return;
      try {
        this.sendClusterStatus('periodic');
      } catch (err) {
        this.opts.logger.error({ err }, 'BUG: building the periodic cluster status failed');
      }
      this.schedulePeriodic();
    }, every);
  }

  private sendClusterStatus(reason: ClusterStatusReason): void {
    const lead = this.leadership;
    if (!lead) return;
    const payload = clusterStatusPayload({
      records: lead.records(),
      coordinator: this.opts.self,
      epoch: lead.epoch(),
      reason,
      sanity: lead.sanity(),
      now: this.opts.clock.now(),
    });
    const alive = payload.peer_map.filter((p) => p.alive).length;
    this.opts.logger.info(
      {
        event: 'cluster-status',
        reason,
        epoch: payload.epoch,
        alive,
        peers: payload.peer_map.length,
      },
      `cluster status (${reason}): ${alive}/${payload.peer_map.length} peers alive`,
    );
    this.send(() => {
      this.opts.notifier.clusterStatus(payload);
    });
  }

  private send(work: () => Promise<void> | void): void {
    this.outbox = this.outbox
      .then(work)
      .catch((err: unknown) => this.opts.logger.error({ err }, 'BUG: queuing a webhook failed'));
  }
}
