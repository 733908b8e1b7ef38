// Turns the leader's verdicts and rounds into webhook events: dead/recovered, and cluster status.
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../core/node-ref.js';
import type { RoundReport, SanityState, SelfSuspicion } from '../prober/rounds.js';
import {
  fromView,
  placeholderId,
  type Judgement,
  type PeerRecord,
  type PeerView,
  type Withhold,
} from '../prober/verdict.js';
import { incidentOf, type AlertHold } from './alert-hold.js';
import type { MaintenanceWindow } from '../maintenance/windows.js';
import type { Notifier } from './notifier.js';
import {
  clusterStatusPayload,
  peerStatusPayload,
  type ClusterStatusPayload,
  type ClusterStatusReason,
  type PeerStatusEvent,
  type PeerStatusPayload,
} from './payloads.js';

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
  /**
   * Tells the followers that an event was delivered (or given up), so a successor does not
   * deliver it again; must not block. Default: shareVerdicts, not awaited.
   */
  shareSettled?: () => void;
  /** Maintenance: alerts about paused nodes are held back here instead of sent. */
  hold?: AlertHold;
  /**
   * An alert held back (`window`: the maintenance window pausing it), or, with a null window, a
   * resolution that cancelled one held back: for the status page.
   */
  onSuppressed?: (payload: PeerStatusPayload, window: MaintenanceWindow | null) => void;
  /** Every peer-status event as it goes out (after any hold): for the other receivers. */
  onSent?: (payload: PeerStatusPayload) => void;
}

/** What the reporter reads of the current leadership. */
export interface Leadership {
  epoch(): number;
  records(): PeerRecord[];
  sanity(): SanityState;
  selfSuspicion(): SelfSuspicion;
}

/** How many delivered event keys a node remembers to avoid repeating them on a handover. */
const MAX_REMEMBERED = 1_000;
/** How many undelivered events ride on each announcement (newest first kept). */
export const MAX_SHARED_UNDELIVERED = 500;

const EVENT: Partial<Record<NonNullable<Judgement['transition']>, PeerStatusEvent>> = {
  died: 'peer_dead',
  recovered: 'peer_recovered',
  'path-broken': 'path_broken',
  'path-restored': 'path_restored',
};

const OPENS_INCIDENT: Partial<Record<PeerStatusEvent, true>> = {
  peer_dead: true,
  path_broken: true,
};

/**
 * Whether the incident an alert opened is still open in `records`: the peer is dead since that
 * very moment, or its path broken since then. Null when the peer has no record here.
 */
function isOpen(
  payload: PeerStatusPayload,
  records: ReadonlyMap<string, PeerRecord>,
): boolean | null {
  const r = records.get(payload.peer.address);
  if (!r) return null;
  const parts = payload.dedup_key.split(':');
  const incident = Number(parts[parts.length - 2]);
  return payload.event === 'peer_dead'
    ? r.health === 'dead' && r.sinceMs === incident
    : r.brokenPath?.sinceMs === incident;
}

/** A cluster status decided and waiting its turn: built then, or when its term ends. */
interface WaitingStatus {
  lead: Leadership;
  reason: ClusterStatusReason;
  /** The term's epoch, as when it was decided. */
  epoch: number;
  payload: ClusterStatusPayload | null;
  /** In the outbox; until then it waits out CLUSTER_STATUS_MIN_GAP_MS after the last one. */
  queued: boolean;
}

/**
 * Cluster statuses of one term go at least this far apart; changes meanwhile ride on the next. A
 * start-up or a lost zone among 5,000 peers changes verdicts one confirmation at a time, and each
 * status is a snapshot of every peer, built and checked against its schema.
 */
export const CLUSTER_STATUS_MIN_GAP_MS = 1_000;

/** Why a verdict is withheld, as the warning says it. */
const WITHHELD_BECAUSE: Record<NonNullable<Withhold>, (peer: string) => string> = {
  'self-suspect': (peer) =>
    `cannot reach ${peer}, but this coordinator cannot reach most of its peers either: suspecting itself, not declaring it dead`,
  'sanity-check': (peer) =>
    `cannot reach ${peer}, but this coordinator cannot reach SANITY_CHECK_URL either: not declaring it dead`,
  overloaded: (peer) =>
    `${peer} timed out, but this coordinator's event loop was running too late to tell a slow peer from its own slowness: not declaring it dead or its path broken`,
};

/** Which reason a coalesced cluster status gives: the first report of a term, then a change. */
const REASON_RANK: Record<ClusterStatusReason, number> = { periodic: 0, change: 1, election: 2 };

/** Handlers run synchronously from the prober's callbacks; they only queue work. */
export class Reporter {
  private leadership: Leadership | null = null;
  private reportedElection = false;
  private periodic: TimerHandle | null = null;
  /** Webhooks go out in the order they were decided, each after the sharing before it. */
  private outbox: Promise<void> = Promise.resolve();
  /**
   * Peer-status events decided and not yet delivered, by dedup key, in decision order. Shared
   * with the followers in every announcement: if this node dies, its successor delivers them.
   */
  private readonly pending = new Map<string, PeerStatusPayload>();
  /** Keys of the events this node delivered lately (bounded), so a handover never repeats them. */
  private readonly delivered = new Set<string>();
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
  /** The cluster status waiting to be built (in the outbox, or for its gap), and for which term. */
  private clusterStatusWaiting: WaitingStatus | null = null;
  /** When this term's last cluster status went into the outbox; null: none yet. */
  private lastStatusAt: number | null = null;
  private statusTimer: TimerHandle | null = null;

  constructor(private readonly opts: ReporterOptions) {}

  /**
   * Starts reporting for a new term. `inherited`: the predecessor's undelivered peer-status
   * events; they are delivered first, as they were (same payload, same dedup key).
   */
  startLeading(leadership: Leadership, inherited: readonly PeerStatusPayload[] = []): void {
    this.stopLeading();
    this.leadership = leadership;
    this.reportedElection = false;
    this.lastStatusAt = null;
    this.schedulePeriodic();
    this.resend(inherited);
  }

  /** Delivers events another coordinator decided and did not deliver, unless already pending. */
  resend(inherited: readonly PeerStatusPayload[]): void {
    const lead = this.leadership;
    if (!lead) return;
    // An alert whose incident this node's verdicts show over (another coordinator saw the end, or
    // a newer incident started) is stale: dropped, and its resolution with it.
    const records = new Map(lead.records().map((r) => [r.address, r]));
    const stale = new Set(
      inherited
        .filter((p) => OPENS_INCIDENT[p.event] && isOpen(p, records) === false)
        .map(incidentOf),
    );
    if (stale.size > 0) {
      this.opts.logger.info(
        { event: 'stale-dropped', incidents: [...stale] },
        `${stale.size} inherited alert(s) no longer true here: not sent`,
      );
    }
    const fresh = inherited.filter((p) => !this.known(p.dedup_key) && !stale.has(incidentOf(p)));
    if (fresh.length > 0) {
      this.opts.logger.info(
        { event: 'resending', keys: fresh.map((p) => p.dedup_key) },
        `delivering ${fresh.length} event(s) the previous coordinator decided but had not delivered`,
      );
    }
    for (const payload of fresh) this.deliver(payload, false);
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
   * What to share with followers: decided, not yet delivered; the newest MAX_SHARED_UNDELIVERED,
   * so a long receiver outage during a mass failure cannot bloat every heartbeat.
   */
  undelivered(): PeerStatusPayload[] {
    return [...this.pending.values()].slice(-MAX_SHARED_UNDELIVERED);
  }

  stopLeading(): void {
    // A cluster status still waiting its turn is this term's: built now, while its records are.
    const waiting = this.clusterStatusWaiting;
    if (waiting) {
      waiting.payload ??= this.clusterStatusOf(waiting);
      if (!waiting.queued) this.queueClusterStatus(waiting); // its gap is not waited out
    }
    this.clusterStatusWaiting = null;
    if (this.statusTimer) this.opts.clock.clearTimeout(this.statusTimer);
    this.statusTimer = null;
    this.leadership = null;
    this.ids = null;
    if (this.periodic) this.opts.clock.clearTimeout(this.periodic);
    this.periodic = null;
  }

  /** Resolves once every decided webhook has been handed to its queue. */
  flush(): Promise<void> {
    return this.outbox;
  }

  onJudgement(judgement: Judgement): void {
    const { record, transition, incidentMs } = judgement;
    if (transition !== 'withheld') this.withheld.delete(record.address);
    const lead = this.leadership;
    if (!lead) return;
    const log = this.opts.logger.child({ peer: record.id, peerAddress: record.address });
    switch (transition) {
      case 'died':
      case 'recovered':
      case 'path-broken':
      case 'path-restored': {
        const event = EVENT[transition] as PeerStatusEvent;
        const payload = peerStatusPayload({
          record,
          event,
          incidentMs: incidentMs ?? record.sinceMs,
          coordinator: this.opts.self,
          epoch: lead.epoch(),
          now: this.opts.clock.now(),
          ...(transition === 'path-restored' && judgement.restoredPath
            ? { witnesses: judgement.restoredPath.witnesses }
            : {}),
        });
        const closed = judgement.restoredPath;
        if (transition === 'died' && closed) {
          // The path incident ends here: the peer itself is down, as its peer_dead says next.
          this.deliver(
            peerStatusPayload({
              record,
              event: 'path_restored',
              incidentMs: closed.sinceMs,
              coordinator: this.opts.self,
              epoch: lead.epoch(),
              now: this.opts.clock.now(),
              witnesses: closed.witnesses,
            }),
            false,
          );
        }
        const fields = { event: event.replace('_', '-'), dedupKey: payload.dedup_key };
        if (transition === 'died') {
          log.warn({ ...fields, reason: record.lastFailure }, `peer ${record.id} is dead`);
        } else if (transition === 'path-broken') {
          log.warn(
            { ...fields, reason: record.lastFailure, witnesses: payload.path?.witnesses },
            `cannot reach ${record.id}, but ${payload.path?.witnesses.join(', ') ?? 'other peers'} can: the path from this node to it is broken, the peer is not dead`,
          );
        } else {
          log.info(
            fields,
            `peer ${record.id} ${transition === 'recovered' ? 'recovered' : 'is reachable again'}`,
          );
        }
        this.deliver(payload, true);
        return;
      }
      case 'suspected':
        log.info(
          { event: 'peer-suspect', reason: record.lastFailure },
          `peer ${record.id} did not answer: confirming (retries, indirect probes)`,
        );
        return;
      case 'cleared':
        log.info({ event: 'peer-cleared' }, `peer ${record.id} answered again: not dead`);
        return;
      case 'first-alive': {
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
      case 'never-alive':
        log.warn(
          { event: 'peer-never-alive', reason: record.lastFailure },
          `peer ${record.address} has not answered since it was discovered; no alert until it has been seen alive`,
        );
        return;
      case 'withheld':
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
      case null:
        return;
    }
  }

  /** A confirmation changed a verdict between rounds: the cluster status goes out now. */
  onVerdictsChanged(): void {
    // Before the first round's report, that report (the election status) will carry it.
    if (!this.leadership || !this.reportedElection) return;
    this.sendClusterStatus('change');
  }

  onRound(report: RoundReport): void {
    this.ids = null;
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

  /** Another peer's address that answered with the same id as `record`, if any. */
  private twinOf(record: PeerRecord, lead: Leadership): string | undefined {
    const ids = (this.ids ??= new IdIndex(lead.records()));
    ids.set(record);
    return ids.other(record);
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
    // One cluster status waits in the outbox at a time, built when its turn comes: it carries
    // every change made meanwhile. A storm of changes (thousands of peers suspect at once) then
    // costs one snapshot per turn, not a 5,000-peer snapshot held in memory for each change.
    const waiting = this.clusterStatusWaiting;
    if (waiting?.lead === lead) {
      if (REASON_RANK[reason] > REASON_RANK[waiting.reason]) waiting.reason = reason;
      return;
    }
    const entry: WaitingStatus = {
      lead,
      reason,
      epoch: lead.epoch(),
      payload: null,
      queued: false,
    };
    this.clusterStatusWaiting = entry;
    const { clock } = this.opts;
    // Never more than the gap, even if the wall clock stepped back meanwhile.
    const wait =
      this.lastStatusAt === null
        ? 0
        : Math.min(
            CLUSTER_STATUS_MIN_GAP_MS,
            this.lastStatusAt + CLUSTER_STATUS_MIN_GAP_MS - clock.now(),
          );
    if (wait <= 0) {
      this.queueClusterStatus(entry);
      return;
    }
    this.statusTimer = clock.setTimeout(() => {
      this.statusTimer = null;
      if (this.clusterStatusWaiting === entry) this.queueClusterStatus(entry);
    }, wait);
  }

  private queueClusterStatus(entry: WaitingStatus): void {
    entry.queued = true;
    this.lastStatusAt = this.opts.clock.now();
    this.send(() => {
      if (this.clusterStatusWaiting === entry) this.clusterStatusWaiting = null;
      // Peer-status events decided since wait behind it (a batch not yet started came after it):
      // it goes after them, so that no cluster status shows a verdict before that peer's event.
      if (this.batch && entry.payload === null && this.leadership === entry.lead) {
        this.sendClusterStatus(entry.reason);
        return;
      }
      this.postClusterStatus(entry.payload ?? this.clusterStatusOf(entry));
    });
  }

  /** The cluster status of a term, as its records are now. */
  private clusterStatusOf({ lead, reason, epoch }: WaitingStatus): ClusterStatusPayload {
    return clusterStatusPayload({
      records: lead.records(),
      coordinator: this.opts.self,
      epoch,
      reason,
      sanity: lead.sanity(),
      selfSuspicion: lead.selfSuspicion(),
      now: this.opts.clock.now(),
    });
  }

  private postClusterStatus(payload: ClusterStatusPayload): void {
    const { reason } = payload;
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
    this.opts.notifier.clusterStatus(payload);
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
      if (isOpen(payload, records) !== true) {
        this.pending.delete(payload.dedup_key);
        this.opts.logger.info(
          { event: 'alert-dropped', dedupKey: payload.dedup_key },
          `maintenance over; the held ${payload.event} for ${payload.peer.id} is no longer true: not sent`,
        );
        continue;
      }
      this.opts.logger.info(
        { event: 'alert-released', dedupKey: payload.dedup_key },
        `maintenance over and ${payload.peer.id} still ${payload.event === 'peer_dead' ? 'dead' : 'behind a broken path'}: sending the held ${payload.event}`,
      );
      this.queue(payload, true);
    }
  }

  private queue(payload: PeerStatusPayload, share: boolean): void {
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
    // A change from here on gets a cluster status after these events, not folded into one before
    // (one still waiting out its gap goes into the outbox after them anyway).
    if (this.clusterStatusWaiting?.queued) this.clusterStatusWaiting = null;
    this.send(async () => {
      if (this.batch === batch) this.batch = null;
      if (this.opts.shareVerdicts && batch.some((e) => e.share)) await this.opts.shareVerdicts();
      for (const e of batch) this.post(e.payload);
    });
  }

  private post(payload: PeerStatusPayload): void {
    const key = payload.dedup_key;
    // Settled either way: delivered, or given up / dropped (the queue logs those loudly). The
    // followers hear at once, so a successor does not deliver it again.
    const queued = this.opts.notifier.peerStatus(payload, (outcome) => {
      this.pending.delete(key);
      if (outcome === 'delivered') this.remember(key);
      if (!this.leadership) return;
      if (this.opts.shareSettled) this.opts.shareSettled();
      else void this.opts.shareVerdicts?.();
    });
    if (!queued) this.pending.delete(key);
  }

  private known(key: string): boolean {
    return this.pending.has(key) || this.delivered.has(key);
  }

  private remember(key: string): void {
    this.delivered.add(key);
    if (this.delivered.size > MAX_REMEMBERED) {
      const oldest = this.delivered.values().next().value;
      if (oldest !== undefined) this.delivered.delete(oldest);
    }
  }

  private send(work: () => Promise<void> | void): void {
    this.outbox = this.outbox
      .then(work)
      .catch((err: unknown) => this.opts.logger.error({ err }, 'BUG: queuing a webhook failed'));
  }
}

/** Which addresses answered with each id, and each address's id. */
class IdIndex {
  private readonly byId = new Map<string, Set<string>>();
  private readonly idOf = new Map<string, string>();

  constructor(records: readonly PeerRecord[]) {
    for (const r of records) this.set(r);
  }

  set({ address, id }: PeerRecord): void {
    if (id === placeholderId(address)) return; // not an identity: no twin of anything
    const before = this.idOf.get(address);
    if (before === id) return;
    if (before !== undefined) this.byId.get(before)?.delete(address);
    this.idOf.set(address, id);
    let addresses = this.byId.get(id);
    if (!addresses) this.byId.set(id, (addresses = new Set()));
    addresses.add(address);
  }

  /** An address other than `record`'s with its id. */
  other({ address, id }: PeerRecord): string | undefined {
    for (const a of this.byId.get(id) ?? []) if (a !== address) return a;
    return undefined;
  }
}
