// The node's side of the election's delegate: what a term's state is here (the prober's verdicts
// and the reporter's events while leading, else what the last followed term left), and where a
// peer's goes (the memory of the followed term, the maintenance book, the reporter).
import type { Reporter } from '../alerts/reporter.js';
import type { Alert } from '../wire/alert.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import type { ElectionDelegate, TermState } from '../election/delegate.js';
import { TermMemory } from '../election/term-memory.js';
import type { MaintenanceBook } from '../maintenance/windows.js';
import type { ProbeRounds } from '../prober/rounds.js';
import type { SharedViews } from '../prober/shared-views.js';
import type { EventLog } from '../status/event-log.js';
import { viewChanges } from '../status/event-feed.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerView } from '../wire/peer-view.js';
import type { MaintenanceWindow } from '../wire/maintenance-window.js';
import type { TermHandover } from '../wire/term-handover.js';

/**
 * How long sharing the verdicts with the followers is waited for at most: well below a probe
 * round, so a slow follower never holds an alert (or a stop) up for long.
 */
export const SHARE_WAIT_MS = 300;

export interface FollowedView {
  views: PeerView[];
  atMs: number;
}

export interface TermSharingOptions {
  self: NodeRef;
  clock: Clock;
  rounds: Pick<ProbeRounds, 'running' | 'adopt'>;
  shared: Pick<SharedViews, 'views'>;
  reporter: Pick<
    Reporter,
    | 'undelivered'
    | 'cannotJudgeOpen'
    | 'handOver'
    | 'takeHandover'
    | 'resend'
    | 'resolveCannotJudge'
    | 'selfRecovered'
  >;
  dispatcher: Pick<AlertDispatcher, 'enabled' | 'shared'>;
  book: MaintenanceBook;
  events: EventLog;
  /** Where hand-overs taken are logged, with their source. */
  logger?: Logger;
  /** The coordinator this node followed last (the election knows). */
  lastLeader(): NodeRef | null;
  /**
   * Pair probing's open findings, as alerts (path-findings.ts): shared whether or not a receiver
   * other than KNH's webhooks is set, so that a successor closes their incidents. Default: none.
   */
  findingAlerts?: () => readonly Alert[];
}

export class TermSharing implements ElectionDelegate {
  readonly memory: TermMemory;
  /** The coordinator's last announced verdicts (a follower's status page shows them). */
  private followedView: FollowedView | null = null;
  /** The last hand-over logged (its source, term and counts), so repeats stay quiet. */
  private handoverLogged = '';
  /** A maintenance window changed here since this node last replied to an announcement. */
  private windowsUntold = false;

  constructor(private readonly o: TermSharingOptions) {
    this.memory = new TermMemory(o.self.address);
  }

  localState(): TermState {
    const { rounds, shared, reporter, dispatcher, clock } = this.o;
    const own = reporter.undelivered();
    if (rounds.running) {
      const alerts = dispatcher.enabled ? dispatcher.shared() : [];
      const keys = new Set(alerts.map((a) => a.key));
      const findings = (this.o.findingAlerts?.() ?? []).filter((a) => !keys.has(a.key));
      return {
        peers: shared.views(),
        undelivered: own,
        alerts: [...alerts, ...findings],
        cannotJudge: reporter.cannotJudgeOpen(),
      };
    }
    // Until it probes, a node passes on what it inherited rather than an empty view; a follower
    // hands on what its coordinator shared (to a restarted node taking over).
    const keys = new Set(own.map((p) => p.dedup_key));
    return {
      peers: this.inherited(clock.now()),
      undelivered: [...this.memory.undelivered.filter((p) => !keys.has(p.dedup_key)), ...own],
      // Without other receivers its coordinator shared only its findings' alerts: those go on.
      alerts: dispatcher.enabled
        ? this.memory.alerts
        : this.memory.alerts.filter((a) => a.severity === 'warning'),
      cannotJudge: this.memory.cannotJudge,
    };
  }

  windows(): MaintenanceWindow[] {
    return [...this.o.book.all()];
  }

  handover(): TermHandover | null {
    return this.o.reporter.handOver();
  }

  mergeWindows(windows: MaintenanceWindow[], from: string): void {
    this.o.book.merge(windows, this.o.clock.now(), from);
  }

  mergeFollowed(state: TermState, peersOmitted: boolean): void {
    this.memory.follow(state, peersOmitted);
    if (peersOmitted) {
      this.followedView = null; // a large mesh: the map is on the coordinator's status page
      return;
    }
    const views = state.peers;
    for (const e of viewChanges(this.followedView?.views ?? views, views)) {
      this.o.events.add(e.kind, e.text, e.peer);
    }
    this.followedView = { views, atMs: this.o.clock.now() };
  }

  mergeSuperseded(state: TermState, leading: boolean): void {
    if (!leading) {
      this.memory.takeOver(state);
      return;
    }
    // A healed partition: the other side's verdicts and events, so its incidents get resolved.
    const { rounds, reporter, self } = this.o;
    rounds.adopt(state.peers);
    reporter.resend(state.undelivered);
    if (state.cannotJudge) reporter.resolveCannotJudge(state.cannotJudge);
    const own = state.peers.find((v) => v.address === self.address);
    if (own?.health === 'dead' && own.alerted) reporter.selfRecovered(own);
  }

  mergeHandover(handover: TermHandover, from: string): void {
    // From a coordinator this node knows led before it (election/predecessors.ts), on record;
    // its every reply repeats the hand-over for a while, so only a changed one is logged again.
    const seen = `${from} ${handover.epoch} ${handover.undelivered.length} ${handover.settled.length} ${handover.in_flight.length}`;
    if (seen !== this.handoverLogged) {
      this.handoverLogged = seen;
      this.logHandover(handover, from);
    }
    this.o.reporter.takeHandover(handover);
  }

  private logHandover(handover: TermHandover, from: string): void {
    this.o.logger?.info(
      {
        event: 'handover-taken',
        from,
        epoch: handover.epoch,
        undelivered: handover.undelivered.length,
        settled: handover.settled.length,
        inFlight: handover.in_flight.length,
      },
      `took the hand-over of ${from}'s term ${handover.epoch}: ${handover.undelivered.length} events to send, ${handover.settled.length} sent, ${handover.in_flight.length} in flight`,
    );
  }

  /** What this node would start a term from: the followed term's verdicts, its leader alive. */
  inherited(now: number): PeerView[] {
    return this.memory.inherited(now, this.o.lastLeader());
  }

  /** The followed coordinator's verdicts, null while leading or following none. */
  get followed(): FollowedView | null {
    return this.followedView;
  }

  /** The coordinator changed: what the previous one announced is no longer followed. */
  forgetFollowed(): void {
    this.followedView = null;
  }

  /** A maintenance window was opened or ended here. */
  windowsChanged(): void {
    this.windowsUntold = true;
  }

  /** A reply to an announcement carried every window this node holds. */
  windowsTold(): void {
    this.windowsUntold = false;
  }

  /** Whether a window changed here that no announcement reply has carried yet. */
  get windowsToTell(): boolean {
    return this.windowsUntold;
  }
}
