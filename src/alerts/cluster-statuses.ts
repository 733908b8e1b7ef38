// A term's cluster statuses: the first after its first round (reason election), one after each
// round or confirmation that changed a verdict (change), one every CLUSTER_STATUS_INTERVAL
// (periodic). One waits at a time, built when its turn in the outbox comes, and they go at least
// CLUSTER_STATUS_MIN_GAP_MS apart: changes meanwhile ride on the next.
import { every, type Clock, type TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { ClusterStatusPayload, ClusterStatusReason } from '../wire/webhooks.js';
import type { EventSink } from './event-sink.js';
import { clusterStatusPayload } from './payloads.js';
import type { TermView } from './term-view.js';

/**
 * Cluster statuses of one term go at least this far apart; changes meanwhile ride on the next. A
 * start-up or a lost zone of a large mesh changes verdicts one confirmation at a time, and each
 * status is a snapshot of every peer, built and checked against its schema.
 */
export const CLUSTER_STATUS_MIN_GAP_MS = 1_000;

/** A waiting status of a weaker reason takes the stronger one's. */
const REASON_RANK: Record<ClusterStatusReason, number> = { periodic: 0, change: 1, election: 2 };

/** A cluster status decided and waiting its turn: built when its turn comes, in its term only. */
interface WaitingStatus {
  lead: TermView;
  /** The term it belongs to (the reporter's count). */
  term: number;
  reason: ClusterStatusReason;
  /** In the outbox; until then it waits out CLUSTER_STATUS_MIN_GAP_MS after the last one. */
  queued: boolean;
}

export interface ClusterStatusesOptions {
  clock: Clock;
  logger: Logger;
  notifier: Pick<EventSink, 'clusterStatus'>;
  self: NodeRef;
  intervalMs: number;
  startGraceMs: number;
  /** Runs `work` in the reporter's outbox, after every webhook decided before. */
  send(work: () => void): void;
  /** Peer-status events wait in the outbox, not yet started: a status goes after them. */
  eventsWaiting(): boolean;
  /** The reporter's count of the terms it led: a status of a term that ended is not sent. */
  term(): number;
}

export class ClusterStatuses {
  private lead: TermView | null = null;
  private reportedElection = false;
  private waiting: WaitingStatus | null = null;
  /** When this term's last cluster status went into the outbox; null: none yet. */
  private lastAt: number | null = null;
  private gapTimer: TimerHandle | null = null;
  private stopPeriodic: (() => void) | null = null;

  constructor(private readonly o: ClusterStatusesOptions) {}

  /** A term starts: its first round's report sends its first status (reason election). */
  startTerm(lead: TermView): void {
    this.stop();
    this.lead = lead;
    this.reportedElection = false;
    this.lastAt = null;
    this.schedulePeriodic();
  }

  /** The term goes on under a newer epoch: the next round's status is its first (election). */
  renewTerm(): void {
    this.reportedElection = false;
  }

  /** The term ended: nothing more of it goes out, one waiting is dropped. */
  stop(): void {
    this.lead = null;
    this.waiting = null;
    if (this.gapTimer) this.o.clock.clearTimeout(this.gapTimer);
    this.gapTimer = null;
    this.stopPeriodic?.();
    this.stopPeriodic = null;
  }

  /** A round ended; `changed`: it changed a verdict or the membership. */
  roundEnded(changed: boolean): void {
    if (!this.lead) return;
    if (!this.reportedElection) {
      this.reportedElection = true;
      this.decide('election');
    } else if (changed) {
      this.decide('change');
    }
  }

  /** A confirmation changed a verdict between rounds. */
  verdictsChanged(): void {
    // Before the first round's report, that report (the election status) will carry it.
    if (!this.lead || !this.reportedElection) return;
    this.decide('change');
  }

  /**
   * A peer-status event entered the outbox: a change from here on gets a status after it, not
   * folded into one before (one still waiting out its gap goes into the outbox after it anyway).
   */
  eventQueued(): void {
    if (this.waiting?.queued) this.waiting = null;
  }

  private schedulePeriodic(): void {
    if (this.o.intervalMs <= 0) return;
    // Stopped with the term (stop()), so it never runs without one.
    this.stopPeriodic = every(this.o.clock, this.o.intervalMs, () => {
      try {
        this.decide('periodic');
      } catch (err) {
        this.o.logger.error({ err }, 'BUG: building the periodic cluster status failed');
      }
    });
  }

  private decide(reason: ClusterStatusReason): void {
    const lead = this.lead;
    if (!lead) return;
    // One cluster status waits in the outbox at a time, built when its turn comes: it carries
    // every change made meanwhile. A storm of changes (thousands of peers suspect at once) then
    // costs one snapshot per turn, not a snapshot of every peer held in memory for each change.
    const waiting = this.waiting;
    if (waiting?.term === this.o.term()) {
      if (REASON_RANK[reason] > REASON_RANK[waiting.reason]) waiting.reason = reason;
      return;
    }
    const entry: WaitingStatus = { lead, term: this.o.term(), reason, queued: false };
    this.waiting = entry;
    const { clock } = this.o;
    // Never more than the gap, even if the wall clock stepped back meanwhile.
    const wait =
      this.lastAt === null
        ? 0
        : Math.min(
            CLUSTER_STATUS_MIN_GAP_MS,
            this.lastAt + CLUSTER_STATUS_MIN_GAP_MS - clock.now(),
          );
    if (wait <= 0) {
      this.queue(entry);
      return;
    }
    this.gapTimer = clock.setTimeout(() => {
      this.gapTimer = null;
      if (this.waiting === entry) this.queue(entry);
    }, wait);
  }

  private queue(entry: WaitingStatus): void {
    entry.queued = true;
    this.lastAt = this.o.clock.now();
    this.o.send(() => {
      if (this.waiting === entry) this.waiting = null;
      // A term that ended sends no more cluster statuses: the next coordinator's say.
      if (!this.lead || this.o.term() !== entry.term) return;
      // Peer-status events decided since wait behind it (a batch not yet started came after it):
      // it goes after them, so that no cluster status shows a verdict before that peer's event.
      if (this.o.eventsWaiting()) {
        this.decide(entry.reason);
        return;
      }
      this.post(this.build(entry));
    });
  }

  /** The cluster status of a term, as its records (and its epoch) are now. */
  private build({ lead, reason }: WaitingStatus): ClusterStatusPayload {
    return clusterStatusPayload({
      records: lead.records(),
      coordinator: this.o.self,
      epoch: lead.epoch(),
      reason,
      sanity: lead.sanity(),
      selfSuspicion: lead.selfSuspicion(),
      startGraceMs: this.o.startGraceMs,
      now: this.o.clock.now(),
    });
  }

  private post(payload: ClusterStatusPayload): void {
    const { reason } = payload;
    const alive = payload.peer_map.filter((p) => p.alive).length;
    this.o.logger.info(
      {
        event: 'cluster-status',
        reason,
        epoch: payload.epoch,
        alive,
        peers: payload.peer_map.length,
      },
      `cluster status (${reason}): ${alive}/${payload.peer_map.length} peers alive`,
    );
    this.o.notifier.clusterStatus(payload);
  }
}
