// What a node does as terms begin, renew, pass and end: it takes part in the election while
// listed, starts probing and reporting once its own term is confirmed, and when its term ends it
// hands what it has not sent to the next coordinator, or drains it itself.
import type { Reporter } from '../alerts/reporter.js';
import { succession } from '../alerts/succession.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import { SUCCESSORS, topRanked } from '../election/bully.js';
import { ElectionDriver, type CoordinatorChange } from '../election/driver.js';
import type { MaintenanceBook } from '../maintenance/windows.js';
import type { ElectionMetrics } from '../metrics/election-metrics.js';
import type { PeerClient } from '../peer-client/peer-client.js';
import type { ProbeRounds } from '../prober/rounds.js';
import type { SharedViews } from '../prober/shared-views.js';
import { toView } from '../prober/verdict.js';
import type { EventLog } from '../status/event-log.js';
import type { Alert } from '../wire/alert.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import type { Announcement, AnnouncementReply } from '../wire/peer-messages.js';

import { SHARE_WAIT_MS, TermSharing, type TermSharingOptions } from './term-sharing.js';

export interface LeadershipOptions {
  config: Pick<
    Config,
    | 'heartbeatIntervalMs'
    | 'coordinatorTimeoutMs'
    | 'electionTimeoutMs'
    | 'probeTimeoutMs'
    | 'roundIntervalMs'
  >;
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  transport: Pick<PeerClient, 'sendElection' | 'announce' | 'takesHeartbeats' | 'protocolOf'>;
  rounds: Pick<
    ProbeRounds,
    'running' | 'start' | 'stop' | 'snapshot' | 'sanity' | 'selfSuspicion' | 'adopt'
  >;
  shared: Pick<SharedViews, 'views' | 'successors'>;
  reporter: TermSharingOptions['reporter'] &
    Pick<Reporter, 'startLeading' | 'stopLeading' | 'termRenewed'>;
  dispatcher: TermSharingOptions['dispatcher'] &
    Pick<
      AlertDispatcher,
      'flushNow' | 'stop' | 'stopLeading' | 'startLeading' | 'resolveInherited'
    >;
  book: MaintenanceBook;
  /**
   * Pair probing's findings (path-findings.ts) and nodes out of sight (auth-findings.ts): whether
   * this node judges them, and the incidents of them a predecessor left open, handed over when
   * this node's term starts. Default: none.
   */
  findings?: {
    /** Pair probing's. */
    readonly enabled: boolean;
    /** Nodes out of sight (peer authentication is on). */
    readonly authJudged?: boolean;
    inherit(
      alerts: readonly Alert[],
      undelivered: readonly PeerStatusPayload[],
      nodes: number,
    ): void;
    /** The open findings as alerts, shared with the followers. */
    alerts(): readonly Alert[];
  };
  events: EventLog;
  metrics: {
    election: Pick<ElectionMetrics, 'electionStarted' | 'coordinatorChanged' | 'handoverRefused'>;
  };
  /** The peers taking part (discovered, not departed). */
  present(): readonly string[];
}

export class Leadership {
  readonly election: ElectionDriver;
  readonly sharing: TermSharing;
  /** The node is stopping: it never takes part again. */
  private ended = false;

  constructor(private readonly o: LeadershipOptions) {
    const { config, self, clock, transport, rounds, shared } = o;
    this.sharing = new TermSharing({
      ...o,
      lastLeader: () => this.election.lastLeader,
      findingAlerts: () => o.findings?.alerts() ?? [],
    });
    this.election = new ElectionDriver({
      self,
      // Election messages time out after PROBE_TIMEOUT; their answers are awaited a little longer.
      timing: { ...config, answerTimeoutMs: config.probeTimeoutMs + 500 },
      transport,
      takesHeartbeats: (address) => transport.takesHeartbeats(address),
      protocolOf: (address) => transport.protocolOf(address),
      probeEveryMs: config.roundIntervalMs,
      clock,
      logger: o.logger.child({ component: 'election' }),
      delegate: this.sharing,
      successors: () => (rounds.running ? shared.successors() : topRanked(o.present(), SUCCESSORS)),
      onElectionStarted: () => o.metrics.election.electionStarted(),
      onHandoverRefused: (reason) => o.metrics.election.handoverRefused(reason),
      onCoordinatorChanged: (change) => this.coordinatorChanged(change),
      onTermRenewed: () => o.reporter.termRenewed(this.election.termConfirmed),
      onLeading: () => this.lead(),
    });
  }

  /** Discovery lists this node (it takes part), or no longer does (it steps out). */
  listed(listed: boolean): void {
    if (this.ended) return;
    if (listed && !this.election.started) this.election.start();
    else if (!listed && this.election.started) this.stepOut();
  }

  /** An announcement from a peer; the reply carries every window this node holds. */
  announcement(announcement: Announcement, protocol: number): AnnouncementReply | null {
    const reply = this.election.handleAnnouncement(announcement, protocol);
    if (reply) this.sharing.windowsTold();
    return reply;
  }

  /** The coordinator's heartbeat in a probe: taken, and nothing to tell (see windowsChanged). */
  heartbeat(from: string, epoch: number): boolean {
    return this.election.handleProbeHeartbeat(from, epoch) && !this.sharing.windowsToTell;
  }

  /**
   * A maintenance window opened or ended here. A coordinator tells the mesh at once; a follower's
   * reply to the next announcement carries it, and until then its answers to probes ask for one.
   */
  windowsChanged(): void {
    this.sharing.windowsChanged();
    void this.election.shareNow(SHARE_WAIT_MS);
  }

  /**
   * Shutdown: a coordinator first hands its latest verdicts, undelivered events and windows over;
   * what it decided still goes out, drained by the caller. Returns the epoch it ends in.
   */
  async end(): Promise<{ epoch: number; wasStarted: boolean }> {
    this.ended = true;
    const { dispatcher, reporter, rounds } = this.o;
    // What is in the receivers' grouping window goes out first, so what it shares is as sent.
    dispatcher.flushNow();
    if (this.election.role === 'coordinator') await this.election.shareNow(SHARE_WAIT_MS);
    const { epoch, started } = this.election;
    // Ended first, so that stopping the election is no hand-over, which would withdraw it.
    reporter.stopLeading('drain');
    dispatcher.stop();
    this.election.stop();
    rounds.stop();
    return { epoch, wasStarted: started };
  }

  /**
   * This pod left the endpoints (deleted, terminating): it must never lead alongside its
   * successor. Its last announcement carries its verdicts, undelivered events and windows (sent
   * now; stop() does not cancel requests under way). It may never hear who leads next, so nobody
   * would take a hand-over: what its term decided still goes out from here (ended before the
   * election stops, so that stopping is no hand-over, which would withdraw it).
   */
  private stepOut(): void {
    const { dispatcher, reporter, logger, self } = this.o;
    logger.warn(
      { event: 'left-endpoints', address: self.address },
      `${self.address} is no longer among the endpoints (being removed?): stepping out of the election`,
    );
    dispatcher.flushNow();
    void this.election.shareNow(SHARE_WAIT_MS);
    reporter.stopLeading('drain');
    dispatcher.stopLeading('drain');
    this.election.stop();
  }

  private coordinatorChanged(change: CoordinatorChange): void {
    const { metrics, events, rounds, reporter, dispatcher, transport } = this.o;
    metrics.election.coordinatorChanged();
    const c = change.coordinator;
    events.add(
      'coordinator',
      c
        ? `coordinator is ${change.isSelf ? 'this node' : c.id}`
        : 'no coordinator: election under way',
      c?.id ?? null,
    );
    this.sharing.forgetFollowed();
    if (change.isSelf) return; // duties start once leadership is confirmed (lead)
    if (rounds.running) this.sharing.memory.keepOwnView(rounds.snapshot().map(toView));
    // Another node leads: what this one has not sent of its term is that node's to send, unless
    // it is of the previous protocol (it takes no hand-over): then this one still sends it.
    const protocol = change.protocol ?? (c ? transport.protocolOf(c.address) : 2);
    const end = c && protocol < 2 ? 'drain' : 'hand-over';
    reporter.stopLeading(end);
    dispatcher.stopLeading(end);
    rounds.stop();
  }

  private lead(): void {
    const { rounds, dispatcher, reporter, self, clock } = this.o;
    const { election } = this;
    const memory = this.sharing.memory;
    rounds.start(this.sharing.inherited(clock.now()), election.firstRoundAfter);
    // The alerts still firing at the other receivers: as the predecessor shared them (with their
    // grouped pages), and any other peer inherited dead whose peer_dead went out (one still
    // undelivered or held comes through the reporter when it goes). First, so that the
    // reporter's re-sends below find them and do not page again.
    const { carried, over } = succession({
      inherited: memory.alerts,
      records: rounds.snapshot(),
      undelivered: memory.undelivered,
      cannotJudge: memory.cannotJudge,
      findingsJudged: this.o.findings?.enabled ?? false,
      authJudged: this.o.findings?.authJudged ?? false,
      self,
      epoch: election.epoch,
      now: clock.now(),
    });
    dispatcher.startLeading(carried);
    dispatcher.resolveInherited(over);
    reporter.startLeading(
      {
        epoch: () => election.epoch,
        records: () => rounds.snapshot(),
        sanity: () => rounds.sanity,
        selfSuspicion: () => rounds.selfSuspicion,
      },
      memory.undelivered,
      { cannotJudge: memory.cannotJudge, ready: election.termConfirmed },
    );
    // The findings a predecessor left open are open here until found again, or closed as over.
    if (this.o.findings?.enabled || this.o.findings?.authJudged) {
      this.o.findings.inherit(memory.alerts, memory.undelivered, this.o.present().length + 1);
    }
    // This node was reported dead and is back (a restart): it resolves its own incident.
    const own = memory.inheritedSelf();
    if (own?.health === 'dead' && own.alerted) reporter.selfRecovered(own);
  }
}
