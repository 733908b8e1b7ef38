// Turns the leader's verdicts and rounds into webhook events: dead/recovered, and cluster status.
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { RoundReport, SelfSuspicion } from '../prober/rounds.js';
import {
  isFindingPayload,
  isJudgementEvent,
  opensIncident,
  type PeerStatusPayload,
} from '../wire/webhooks.js';
import { fromView, placeholderId, type Judgement, type PeerRecord } from '../prober/verdict.js';
import type { PeerView } from '../wire/peer-view.js';
import type { MaintenanceHold } from './maintenance-hold.js';
import { CannotJudge, resolveInherited } from './cannot-judge.js';
import type { MaintenanceWindow } from '../wire/maintenance-window.js';
import type { EventSink } from './event-sink.js';
import { trimOldest } from '../core/trim-oldest.js';
import { peerStatusPayload } from './payloads.js';
import { eventsOf, logDecided, logUndecided, WITHHELD_BECAUSE } from './judgement-events.js';
import { ClusterStatuses } from './cluster-statuses.js';
import { IdIndex } from './id-index.js';
import type { TermView } from './term-view.js';
import { incidentOf } from '../wire/incident.js';
import { DeliveryLog, HandoverLedger } from './term-handover.js';
import type { TermHandover } from '../wire/term-handover.js';
import { FlapDamper, type Damped, type FlapSettings } from './flap-damper.js';

export interface ReporterOptions {
  notifier: EventSink;
  clock: Clock;
  logger: Logger;
  self: NodeRef;
  clusterStatusIntervalMs: number;
  /** START_GRACE: peers never seen alive are left out of cluster statuses this long (default 0). */
  startGraceMs?: number;
  /**
   * Shares the new verdicts with the followers before an alert goes out (bounded), so that a
   * successor that takes over at once does not alert again. Default: nothing to share.
   */
  shareVerdicts?: () => Promise<void>;
  /**
   * Tells the followers that an event was delivered (or given up), so a successor does not
   * deliver it again; must not block. Default: shareVerdicts, not awaited.
   */
  shareSettled?: () => void;
  /** Maintenance: alerts about paused nodes are held back here instead of sent. */
  hold?: MaintenanceHold;
  /**
   * An alert held back (`window`: the maintenance window pausing it), or, with a null window, a
   * resolution that cancelled one held back: for the status page.
   */
  onSuppressed?: (payload: PeerStatusPayload, window: MaintenanceWindow | null) => void;
  /** Every peer-status event as it goes out (after any hold): for the other receivers. */
  onSent?: (payload: PeerStatusPayload) => void;
  /**
   * How long an event a predecessor had in flight when its term ended is left to it: its outcome
   * comes in a later reply, else this node sends it (default 7 s: a webhook timeout and more).
   */
  handoverWaitMs?: number;
  /**
   * Whether the finding (of every node's paths) an event opened is still open here: a held one
   * goes out when its maintenance is over only then. Default: none is.
   */
  findingOpen?: (payload: PeerStatusPayload) => boolean;
  /** Flap damping of peers' dead/recovered events (default: none, every event goes at once). */
  flap?: FlapSettings;
}

const NO_DAMPING: FlapSettings = { recoveryHoldMs: 0, windowMs: 0, changes: 0, stableMs: 0 };

/** How a term ends: another node took over (what is unsent is its now), or this node stops. */
export type TermEnd = 'hand-over' | 'drain';

/** How many delivered event keys a node remembers to avoid repeating them on a handover. */
const MAX_REMEMBERED = 1_000;
/** How many undelivered events ride on each announcement (newest first kept). */
export const MAX_SHARED_UNDELIVERED = 500;

/**
 * Whether the peer incident an alert opened is still open in `records`: the peer is dead, or its
 * path broken. The state, not its start: flap damping continues an incident through a recovery it
 * hid, so a peer down (or a path broken) again is the same incident. Null when the peer has no
 * record here.
 */
function isOpen(
  payload: PeerStatusPayload,
  records: ReadonlyMap<string, PeerRecord>,
): boolean | null {
  // A finding of the paths between nodes: the verdicts of the coordinator's own probes say
  // nothing of it.
  if (isFindingPayload(payload)) return null;
  const r = records.get(payload.peer.address);
  if (!r) return null;
  return payload.event === 'peer_dead' ? r.health === 'dead' : r.brokenPath != null;
}

/** What a held alert says that is still true when its maintenance ends. */
function stillTrue(payload: PeerStatusPayload): string {
  if (payload.event === 'cannot_judge') return 'the mesh still cannot be judged';
  if (payload.event === 'peer_dead') return `${payload.peer.id} still dead`;
  if (isFindingPayload(payload)) return `still so: ${payload.reason ?? payload.event}`;
  return `${payload.peer.id} still behind a broken path`;
}

/** Handlers run synchronously from the prober's callbacks; they only queue work. */
export class Reporter {
  private leadership: TermView | null = null;
  /** Webhooks go out in the order they were decided, each after the sharing before it. */
  private outbox: Promise<void> = Promise.resolve();
  /**
   * Peer-status events decided and not yet delivered, by dedup key, in decision order. Shared
   * with the followers in every announcement: if this node dies, its successor delivers them.
   */
  private readonly pending = new Map<string, PeerStatusPayload>();
  /** Keys of the events this node delivered lately (bounded), so a handover never repeats them. */
  private readonly delivered = new Set<string>();
  /** Which of this node's events went out: what it hands over when its term ends. */
  private readonly log = new DeliveryLog();
  /** What predecessors handed over: events they sent, or still had in flight. */
  private readonly ledger: HandoverLedger;
  /** Settling events without telling the followers each time (takeHandover tells them once). */
  private quiet = false;
  /** Inherited events left to a predecessor that had them in flight, until it says or time's up. */
  private awaiting: PeerStatusPayload[] = [];
  private awaitTimer: TimerHandle | null = null;
  /**
   * Events a predecessor handed over unsent while this node was confirming its term: sent when
   * it leads (forgotten if it steps down instead).
   */
  private handedIn: PeerStatusPayload[] = [];
  /** The term this node handed over: its outbox sends nothing more of it. */
  private handedOverTerm = -1;
  /** Counts the terms this node led: what its outbox holds belongs to one of them. */
  private term = 0;
  /** Its own alert when it cannot judge the mesh. */
  private readonly cannotJudge: CannotJudge;
  /** Peers whose death is being withheld: warned about once per spell. */
  private readonly withheld = new Set<string>();
  /**
   * The addresses of each id among the records, for telling two nodes that share an id apart:
   * built on the first peer that comes alive in a round and kept up to date through it (a first
   * round over 5,000 peers must not scan every record for each), rebuilt the next round.
   */
  private ids: IdIndex | null = null;
  /** Peer-status events queued in the outbox whose turn has not come: they go together. */
  private batch: { payload: PeerStatusPayload; share: boolean }[] | null = null;
  /** This term's cluster statuses, which go through the outbox too. */
  private readonly statuses: ClusterStatuses;
  /** Holds back the events of peers that go down and up (a recovery waits out RECOVERY_HOLD). */
  private readonly damper: FlapDamper;
  private damperTimer: TimerHandle | null = null;
  /**
   * Verdict changes the damper hid from the receivers since the last round's report (or
   * confirmation): a cluster status does not go out for them alone.
   */
  private hidden = 0;

  constructor(private readonly opts: ReporterOptions) {
    this.ledger = new HandoverLedger(opts.handoverWaitMs ?? 7_000);
    this.cannotJudge = new CannotJudge(opts.self);
    this.damper = new FlapDamper(opts.flap ?? NO_DAMPING);
    this.statuses = new ClusterStatuses({
      ...opts,
      intervalMs: opts.clusterStatusIntervalMs,
      startGraceMs: opts.startGraceMs ?? 0,
      send: (work) => this.send(work),
      eventsWaiting: () => this.batch !== null,
      term: () => this.term,
    });
  }

  /**
   * Starts reporting for a new term. `inherited`: the predecessor's undelivered peer-status
   * events; they are delivered first, as they were (same payload, same dedup key), unless a
   * predecessor handed over that it sent them. `cannotJudge`: the predecessor's open "cannot
   * judge" incident, resolved now (this node judges with its own eyes). `ready`: nothing of the
   * term goes out before it settles (the term's first announcement round: a late rejection may
   * still give the term a newer epoch).
   */
  startLeading(
    leadership: TermView,
    inherited: readonly PeerStatusPayload[] = [],
    {
      cannotJudge = null,
      ready,
    }: { cannotJudge?: PeerStatusPayload | null; ready?: Promise<void> } = {},
  ): void {
    const handedIn = this.handedIn;
    this.stopLeading('drain');
    // What this node withdrew when it last handed a term over is its to send again, but for what a
    // successor's hand-over (or the outbox gate's recheck) says went out meanwhile.
    const reclaimed = this.log.startTerm(this.opts.clock.now());
    // This term's to send, whatever their outcome: a hand-over repeating them sends them no more.
    this.ledger.took([...handedIn, ...inherited, ...reclaimed]);
    this.term++;
    this.leadership = leadership;
    this.statuses.startTerm(leadership);
    this.holdOutboxUntil(ready);
    // Whether or not its opening went out (it may be in flight still), an incident the
    // predecessor left open is resolved: a resolution too many beats an incident open for good.
    if (cannotJudge) this.resolveCannotJudge(cannotJudge);
    const seen = new Set<string>();
    const all = [...inherited, ...handedIn, ...reclaimed].filter(
      (p) => !seen.has(p.dedup_key) && seen.add(p.dedup_key),
    );
    this.resend(all);
  }

  /**
   * This node leads on under a newer epoch (it heard of a term at or above its own): the next
   * round's cluster status is the new term's first (reason `election`), and nothing more goes out
   * before `ready` (the new epoch's first announcement round) settles.
   */
  termRenewed(ready?: Promise<void>): void {
    if (!this.leadership) return;
    this.statuses.renewTerm();
    this.holdOutboxUntil(ready);
  }

  /** Nothing queued from now on goes out before `ready` settles (a term's confirmation). */
  private holdOutboxUntil(ready: Promise<void> | undefined): void {
    if (!ready) return;
    const gate = ready.catch(() => undefined);
    this.outbox = this.outbox.then(() => gate);
  }

  /** A predecessor's open "cannot judge" incident: this node leads now and resolves it. */
  resolveCannotJudge(opening: PeerStatusPayload): void {
    const lead = this.leadership;
    if (!lead || opening.event !== 'cannot_judge') return;
    const payload = resolveInherited(opening, {
      coordinator: this.opts.self,
      epoch: lead.epoch(),
      now: this.opts.clock.now(),
      records: lead.records(),
    });
    if (this.known(payload.dedup_key)) return;
    this.opts.logger.info(
      { event: 'can-judge', dedupKey: payload.dedup_key, was: opening.peer.id },
      `resolving ${opening.peer.id}'s "cannot judge the mesh": this node leads now`,
    );
    this.deliver(payload, true);
  }

  /**
   * An ended term's hand-over, from a reply of the node that led it: what it sent is not sent
   * again, what it had in flight is left to it for a while, what it did not send goes now.
   */
  takeHandover(h: TermHandover): void {
    const toSend = this.ledger.take(h, this.opts.clock.now());
    if (this.leadership) this.resend(toSend);
    else this.handedIn = [...this.handedIn, ...toSend].slice(-MAX_SHARED_UNDELIVERED);
    // Told after this term's events were queued: what the predecessor sent is not sent twice,
    // from the outbox or from the receivers' queues (one in flight there goes as it will).
    this.recheckQueued();
    // Taken back quietly, then the followers hear once (not one announcement per event).
    this.quiet = true;
    let cancelled = 0;
    try {
      for (const key of h.settled) {
        if (!this.log.isPosted(key) || !this.opts.notifier.cancel(key)) continue;
        this.remember(key);
        cancelled++;
      }
    } finally {
      this.quiet = false;
    }
    if (cancelled > 0) this.shareSettled();
  }

  /** Delivers events another coordinator decided and did not deliver, unless already pending. */
  resend(inherited: readonly PeerStatusPayload[]): void {
    const lead = this.leadership;
    if (!lead) return;
    const now = this.opts.clock.now();
    // A "cannot judge" incident is the deciding coordinator's own: a successor resolves it
    // (startLeading), it never opens it again. Its resolution is sent like any event.
    const candidates = inherited.filter((p) => p.event !== 'cannot_judge');
    // An alert whose incident this node's verdicts show over (another coordinator saw the end, or
    // a newer incident started) is stale: dropped, and its resolution with it.
    const records = new Map(lead.records().map((r) => [r.address, r]));
    const stale = new Set(
      candidates
        .filter((p) => opensIncident(p.event) && isOpen(p, records) === false)
        .map(incidentOf),
    );
    if (stale.size > 0) {
      this.opts.logger.info(
        { event: 'stale-dropped', incidents: [...stale] },
        `${stale.size} inherited alert(s) no longer true here: not sent`,
      );
    }
    const fresh: PeerStatusPayload[] = [];
    for (const p of candidates) {
      if (this.known(p.dedup_key) || stale.has(incidentOf(p))) continue;
      const status = this.ledger.statusOf(p.dedup_key, now);
      if (status === 'settled') {
        // A can_judge the predecessor sent to KNH's webhook may not have reached the other
        // receivers (it waited out their hold-down there); the successor left its alert firing
        // for it (succession), so they hear it from here.
        if (p.event === 'can_judge') this.opts.onSent?.(p);
        continue;
      }
      if (status === 'awaited') this.await(p);
      else fresh.push(p);
    }
    if (fresh.length > 0) {
      this.opts.logger.info(
        { event: 'resending', keys: fresh.map((p) => p.dedup_key) },
        `delivering ${fresh.length} event(s) the previous coordinator decided but had not delivered`,
      );
    }
    for (const payload of fresh) this.deliver(payload, false);
  }

  /** Leaves an inherited event to the predecessor that has it in flight, for a while. */
  private await(payload: PeerStatusPayload): void {
    if (!this.awaiting.some((p) => p.dedup_key === payload.dedup_key)) this.awaiting.push(payload);
    if (this.awaitTimer) return;
    const due = this.ledger.nextDue(this.opts.clock.now());
    if (due === null) return;
    this.awaitTimer = this.opts.clock.setTimeout(
      () => {
        this.awaitTimer = null;
        const waited = this.awaiting;
        this.awaiting = [];
        // Those whose outcome did not come are sent (at least once); the rest wait on, or went.
        this.resend(waited);
      },
      Math.max(0, due - this.opts.clock.now()),
    );
  }

  /** This node was reported dead by a predecessor and now leads: it resolves that incident. */
  selfRecovered(view: PeerView): void {
    const lead = this.leadership;
    if (!lead) return;
    const now = this.opts.clock.now();
    const record = { ...fromView(view), health: 'alive' as const, sinceMs: now, alerted: false };
    const payload = peerStatusPayload({
      record,
      event: 'peer_recovered',
      incidentMs: view.since,
      coordinator: this.opts.self,
      epoch: lead.epoch(),
      now,
    });
    if (this.known(payload.dedup_key)) return;
    this.opts.logger.info(
      { event: 'peer-recovered', dedupKey: payload.dedup_key },
      `this node was reported dead and is back: resolving that incident`,
    );
    this.deliver(payload, true);
  }

  /**
   * What to share with followers: decided, not yet delivered (and, of a term lately handed over,
   * withdrawn); the newest MAX_SHARED_UNDELIVERED, so a long receiver outage during a mass
   * failure cannot bloat every heartbeat.
   */
  undelivered(): PeerStatusPayload[] {
    const withdrawn = this.log.withdrawnNow(this.opts.clock.now());
    return [...this.pending.values(), ...withdrawn].slice(-MAX_SHARED_UNDELIVERED);
  }

  /** The open "cannot judge the mesh" incident (its opening event), shared with followers. */
  cannotJudgeOpen(): PeerStatusPayload | null {
    return this.cannotJudge.open;
  }

  /**
   * What this node hands over of a term it stopped leading lately (null: nothing), to the node
   * whose announcement it is answering: what it did not send is that node's to send from now on.
   */
  handOver(): TermHandover | null {
    return this.log.handOver(this.opts.clock.now());
  }

  /**
   * Ends the term. Either way, no cluster status of it goes out any more (one waiting is dropped:
   * the next coordinator sends its own), and its "cannot judge" incident is the next
   * coordinator's to resolve. 'hand-over': another node leads, and sends what this one has not:
   * its peer-status events still unsent are withdrawn, and handed over. 'drain' (shutdown): they
   * are still sent while the process drains (the successor may send them too: at least once).
   */
  stopLeading(end: TermEnd = 'drain'): void {
    const lead = this.leadership;
    this.statuses.stop();
    this.leadership = null;
    this.ids = null;
    if (this.awaitTimer) this.opts.clock.clearTimeout(this.awaitTimer);
    this.awaitTimer = null;
    this.awaiting = [];
    this.handedIn = [];
    this.ledger.endTerm();
    this.cannotJudge.reset();
    // Held recoveries are pending events: handed over with the rest (the successor sends them at
    // once), or, when this node drains, sent now (the peer is up; a successor may send them too).
    // What is known of flapping starts again with the next term.
    const held = this.damper.held();
    this.damper.reset();
    if (this.damperTimer) this.opts.clock.clearTimeout(this.damperTimer);
    this.damperTimer = null;
    this.hidden = 0;
    if (!lead || end !== 'hand-over') {
      for (const p of held) if (this.pending.has(p.dedup_key)) this.queue(p, false);
      return;
    }
    this.handedOverTerm = this.term;
    this.log.endTerm(lead.epoch(), this.opts.clock.now());
    // What is queued comes back `withdrawn` (post()); what never reached the queues goes too.
    this.opts.notifier.withdraw();
    for (const [key, payload] of [...this.pending]) {
      if (this.log.isPosted(key)) continue;
      this.pending.delete(key);
      this.log.withdraw(payload);
    }
  }

  /**
   * Events of this term waiting in the outbox that a predecessor's hand-over says it sent, or
   * still has in flight: not sent (the latter waited for, as resend does).
   */
  private recheckQueued(batch = this.batch): void {
    if (!batch) return;
    const now = this.opts.clock.now();
    for (let i = batch.length - 1; i >= 0; i--) {
      const { payload } = batch[i]!;
      const status = this.ledger.statusOf(payload.dedup_key, now);
      if (status === null) continue;
      batch.splice(i, 1);
      this.pending.delete(payload.dedup_key);
      if (status === 'settled') this.remember(payload.dedup_key);
      else this.await(payload);
    }
  }

  /** Resolves once every decided webhook has been handed to its queue. */
  flush(): Promise<void> {
    return this.outbox;
  }

  onJudgement(judgement: Judgement): void {
    const { record, transition } = judgement;
    if (transition !== 'withheld') this.withheld.delete(record.address);
    const lead = this.leadership;
    if (!lead) return;
    const log = this.opts.logger.child({ peer: record.id, peerAddress: record.address });
    const events = eventsOf(judgement, this.opts.self, lead.epoch(), this.opts.clock.now());
    const last = events.at(-1);
    if (last) {
      // A path incident the death closes goes unshared: the peer_dead right behind it is shared.
      for (const closed of events.slice(0, -1)) this.damped(log, this.damper.ended(closed), false);
      logDecided(log, judgement, last);
      this.damped(log, this.damp(last));
      return;
    }
    if (transition === 'first-alive') {
      log.info({ event: 'peer-alive' }, `peer ${record.id} is alive`);
      // Alive by another answer than a probe's (an announcement's), it has no id of its own yet.
      const twin =
        record.id === this.opts.self.id
          ? this.opts.self.address
          : record.id === placeholderId(record.address)
            ? undefined
            : this.twinOf(record, lead);
      if (twin) {
        log.error(
          { event: 'duplicate-id', otherAddress: twin },
          `nodes at ${record.address} and ${twin} share the id ${record.id}: give each node its own NODE_NAME`,
        );
      }
      return;
    }
    if (transition === 'withheld') {
      if (judgement.withheld === 'self-suspect') this.noteCannotJudge(judgement, lead);
      if (this.withheld.has(record.address)) {
        log.debug({ event: 'verdict-withheld', why: judgement.withheld }, 'still withheld');
        return;
      }
      this.withheld.add(record.address);
      log.warn(
        { event: 'verdict-withheld', reason: record.lastFailure, why: judgement.withheld },
        WITHHELD_BECAUSE[judgement.withheld ?? 'self-suspect'](record.id),
      );
      return;
    }
    logUndecided(log, judgement);
  }

  /** What flap damping makes of a peer's dead or recovered event, or a path's broken or restored. */
  private damp(payload: PeerStatusPayload): Damped {
    const now = this.opts.clock.now();
    if (payload.event === 'peer_dead' || payload.event === 'path_broken') {
      return this.damper.failed(payload, now);
    }
    if (payload.event === 'peer_recovered' || payload.event === 'path_restored') {
      return this.damper.recovered(payload, now);
    }
    return { send: [payload], cancelled: null, held: null, hidden: false };
  }

  private damped(log: Logger, d: Damped, share = true): void {
    if (d.cancelled) {
      this.pending.delete(d.cancelled.dedup_key);
      log.info(
        { event: 'recovery-cancelled', dedupKey: d.cancelled.dedup_key },
        d.cancelled.event === 'path_restored'
          ? `the path to ${d.cancelled.peer.id} is broken again before its restoration went out: the same incident goes on`
          : `${d.cancelled.peer.id} is down again before its recovery went out: the same incident goes on`,
      );
    }
    if (d.held) {
      // Pending, so it rides on announcements: a successor sends it if this node goes.
      this.pending.set(d.held.dedup_key, d.held);
      log.info(
        { event: 'recovery-held', dedupKey: d.held.dedup_key },
        `${d.held.peer.id} is back: its ${d.held.event} waits until it has stayed up a while (RECOVERY_HOLD, FLAP_STABLE)`,
      );
    }
    if (d.hidden) this.hidden++;
    for (const p of d.send) {
      if (p.event === 'peer_flapping') {
        log.warn({ event: 'peer-flapping', dedupKey: p.dedup_key }, p.reason ?? p.event);
      }
      this.deliver(p, share);
    }
    this.scheduleDamper();
  }

  /** Wakes when the next held event is due. */
  private scheduleDamper(): void {
    const due = this.damper.nextDue();
    if (this.damperTimer) this.opts.clock.clearTimeout(this.damperTimer);
    this.damperTimer = null;
    if (due === null || !this.leadership) return;
    this.damperTimer = this.opts.clock.setTimeout(
      () => {
        this.damperTimer = null;
        const due = this.damper.due(this.opts.clock.now());
        for (const p of due) {
          this.opts.logger.info(
            { event: 'damped-final', dedupKey: p.dedup_key, peer: p.peer.id },
            p.reason ?? `${p.peer.id} stayed up: sending its ${p.event}`,
          );
          this.deliver(p, true);
        }
        // CLUSTER_STATUS_URL hears the final state too, as a change.
        if (due.length > 0) this.statuses.verdictsChanged();
        this.scheduleDamper();
      },
      Math.max(0, due - this.opts.clock.now()),
    );
  }

  /** A verdict withheld for self-suspicion: the mesh cannot be judged, and every receiver hears. */
  private noteCannotJudge(judgement: Judgement, lead: TermView): void {
    const now = this.opts.clock.now();
    // Peers a maintenance window pauses are left out: rebooting them is no reason to page.
    const hold = this.opts.hold;
    const records = hold ? lead.records().filter((r) => !hold.paused(r, now)) : lead.records();
    const opening = this.cannotJudge.withheld(
      judgement.corroboratedBy ?? [],
      records,
      lead.epoch(),
      now,
    );
    if (!opening) return;
    this.opts.logger.warn(
      { event: 'cannot-judge', dedupKey: opening.dedup_key, judgement: opening.judgement },
      opening.reason ?? 'cannot judge the mesh',
    );
    this.deliver(opening, true);
  }

  /** Whether this node suspects itself changed: when that ends, so does "cannot judge". */
  onSelfSuspicion(suspicion: SelfSuspicion): void {
    const lead = this.leadership;
    if (!lead || suspicion.suspect) return;
    const resolution = this.cannotJudge.judgingAgain(
      lead.records(),
      lead.epoch(),
      this.opts.clock.now(),
    );
    if (!resolution) return;
    this.opts.logger.info(
      { event: 'can-judge', dedupKey: resolution.dedup_key, judgement: resolution.judgement },
      resolution.reason ?? 'can judge the mesh again',
    );
    this.deliver(resolution, true);
  }

  /**
   * A finding of every node's paths opened or closed (src/paths/): its event goes out like a
   * verdict's, but without a sharing first (a warning: a successor repeating it, with the same
   * key, costs less than holding every finding behind a round trip to the followers).
   */
  onFinding(payload: PeerStatusPayload): void {
    if (!this.leadership) return;
    this.opts.logger.info(
      { event: 'path-finding', dedupKey: payload.dedup_key, finding: payload.event },
      payload.reason ?? payload.event,
    );
    this.deliver(payload, false);
  }

  /** A confirmation changed a verdict between rounds: the cluster status goes out now. */
  onVerdictsChanged(changes = 1): void {
    const hidden = this.hidden;
    this.hidden = 0;
    // Only flaps the damper hid: the next periodic status shows them.
    if (hidden > 0 && changes <= hidden) return;
    this.statuses.verdictsChanged();
  }

  onRound(report: RoundReport): void {
    this.ids = null;
    const hidden = this.hidden;
    this.hidden = 0;
    if (!this.leadership) return;
    this.forgetDeparted();
    const changed = report.changed > hidden || report.membership > 0;
    const level = changed ? 'info' : 'debug';
    this.opts.logger[level](
      { event: 'round', ...report },
      `round ${report.round}: probed ${report.probed}, ${report.changed} changed` +
        (report.membership > 0 ? `, ${report.membership} joined or left` : ''),
    );
    this.statuses.roundEnded(changed);
  }

  /** Peers that left the mesh have no incident to damp any more. */
  private forgetDeparted(): void {
    const lead = this.leadership;
    if (!lead || this.damper.size === 0) return;
    this.damper.sweep(this.opts.clock.now());
    if (this.damper.size === 0) return;
    // This node is in the paths from it, and has not left.
    const present = new Set([this.opts.self.address, ...lead.records().map((r) => r.address)]);
    for (const address of this.damper.nodes()) {
      if (present.has(address)) continue;
      // It was back up when it left: its recovery is true, and goes now.
      for (const held of this.damper.forget(address)) this.deliver(held, false);
    }
  }

  /** Another peer's address that answered with the same id as `record`, if any. */
  private twinOf(record: PeerRecord, lead: TermView): string | undefined {
    const ids = (this.ids ??= new IdIndex(lead.records()));
    ids.set(record);
    return ids.other(record);
  }

  /**
   * Queues a peer-status event, tracked as undelivered until its receiver takes it. `share`: first
   * tell the followers (bounded), so a successor taking over in the next instant neither repeats
   * the verdict nor loses the event.
   */
  private deliver(payload: PeerStatusPayload, share: boolean): void {
    const key = payload.dedup_key;
    this.pending.set(key, payload);
    const admission = this.opts.hold?.admit(payload, this.opts.clock.now()) ?? { send: true };
    if (!admission.send) {
      // Held: still pending, so it rides on announcements and a successor holds it too. A
      // resolution of a held alert ends both: there is nothing left to tell.
      if (admission.cancels !== null) {
        this.pending.delete(admission.cancels);
        this.pending.delete(key);
      }
      this.opts.logger.info(
        { event: 'alert-held', dedupKey: key, window: admission.window?.id ?? null },
        admission.window
          ? `${payload.event} for ${payload.peer.id} held: alerts are paused by maintenance window ${admission.window.id} until ${new Date(admission.window.until).toISOString()}`
          : `${payload.event} for ${payload.peer.id} resolves an alert held during maintenance: neither is sent`,
      );
      this.opts.onSuppressed?.(payload, admission.window);
      if (share && this.leadership) void this.opts.shareVerdicts?.();
      return;
    }
    this.queue(payload, share);
  }

  /** Alerts held during maintenance whose pause is over and that are still open go out now. */
  releaseHeld(): void {
    const lead = this.leadership;
    if (!lead || !this.opts.hold) return;
    const records = new Map(lead.records().map((r) => [r.address, r]));
    for (const payload of this.opts.hold.release(this.opts.clock.now())) {
      // Held since an earlier term, perhaps: only what is still true goes out.
      const open = isJudgementEvent(payload.event)
        ? this.cannotJudge.isOpen(payload)
        : isFindingPayload(payload)
          ? (this.opts.findingOpen?.(payload) ?? false)
          : isOpen(payload, records) === true;
      if (!open) {
        this.pending.delete(payload.dedup_key);
        this.opts.logger.info(
          { event: 'alert-dropped', dedupKey: payload.dedup_key },
          `maintenance over; the held ${payload.event} for ${payload.peer.id} is no longer true: not sent`,
        );
        continue;
      }
      this.opts.logger.info(
        { event: 'alert-released', dedupKey: payload.dedup_key },
        `maintenance over and ${stillTrue(payload)}: sending the held ${payload.event}`,
      );
      this.queue(payload, true);
    }
  }

  private queue(payload: PeerStatusPayload, share: boolean): void {
    // The other receivers hear it now, before the sharing below: a successor taking over in the
    // next instant gets its alert with the verdicts (marked unsent) and pages for it.
    this.opts.onSent?.(payload);
    // Events decided while others wait their turn go with them, after one sharing that covers
    // them all (each is pending, so every announcement carries it): a lost zone of 1,666 peers
    // is 1,666 webhooks after one sharing, not each after its own.
    if (this.batch) {
      this.batch.push({ payload, share });
      return;
    }
    const batch = [{ payload, share }];
    this.batch = batch;
    const term = this.term;
    this.statuses.eventQueued();
    this.send(async () => {
      if (this.batch === batch) this.batch = null;
      if (this.handedOverTerm === term) return; // the successor sends them
      if (this.opts.shareVerdicts && batch.some((e) => e.share)) await this.opts.shareVerdicts();
      if (this.handedOverTerm === term) return;
      // A predecessor's hand-over told while these waited (behind the term's gate, a sharing).
      this.recheckQueued(batch);
      for (const e of batch) this.post(e.payload);
    });
  }

  private post(payload: PeerStatusPayload): void {
    const key = payload.dedup_key;
    this.log.posting(key);
    // Settled either way: delivered, or given up / dropped (the queue logs those loudly). The
    // followers hear at once, so a successor does not deliver it again. Withdrawn (this node
    // stopped leading): still pending, handed over to the next coordinator; or, when this node
    // leads again by the time a withdrawn POST in flight failed, its to send after all.
    const queued = this.opts.notifier.peerStatus(payload, (outcome) => {
      const sent = outcome !== 'withdrawn';
      this.log.settled(key, sent, this.opts.clock.now());
      this.pending.delete(key);
      if (!sent) return this.leadership ? this.resend([payload]) : this.log.withdraw(payload);
      if (outcome === 'delivered') this.remember(key);
      if (!this.quiet) this.shareSettled();
    });
    if (!queued) {
      this.pending.delete(key);
      this.log.settled(key, false, this.opts.clock.now());
    }
  }

  /** The followers hear that events settled (so a successor does not deliver them again). */
  private shareSettled(): void {
    if (!this.leadership) return;
    if (this.opts.shareSettled) this.opts.shareSettled();
    else void this.opts.shareVerdicts?.();
  }

  private known(key: string): boolean {
    return this.pending.has(key) || this.delivered.has(key);
  }

  private remember(key: string): void {
    this.delivered.add(key);
    trimOldest(this.delivered, MAX_REMEMBERED);
  }

  private send(work: () => Promise<void> | void): void {
    this.outbox = this.outbox
      .then(work)
      .catch((err: unknown) => this.opts.logger.error({ err }, 'BUG: queuing a webhook failed'));
  }
}
