// Drives the pure bully state machine: feeds it time and messages, turns its effects into requests.
import { waitAtMost, type Clock, type TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { type NodeRef, outranks } from '../wire/node-ref.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
} from '../wire/peer-messages.js';
import type { PeerTransport } from '../core/transport.js';
import type { ElectionDelegate } from './delegate.js';
import { Predecessors, type HandoverRefusal } from './predecessors.js';
import { alertsFor, undeliveredFor } from './compat.js';
import { alertsToShare, Announcements, termStateOf } from './announcements.js';
import { evidenceOf } from '../core/evidence.js';
import {
  initialState,
  step,
  topRanked,
  SUCCESSORS,
  type ElectionEffect,
  type ElectionEvent,
  type ElectionState,
  type ElectionTiming,
  type Role,
} from './bully.js';

/** Epoch and reason are in the driver's own log line; leadership duties start in onLeading. */
export interface CoordinatorChange {
  coordinator: NodeRef | null;
  isSelf: boolean;
  /** The peer protocol the new coordinator named, when its announcement made the change. */
  protocol?: number;
}

export interface ElectionDriverOptions {
  self: NodeRef;
  timing: ElectionTiming;
  transport: Pick<PeerTransport, 'sendElection' | 'announce'>;
  clock: Clock;
  logger: Logger;
  /** Everything the election's messages carry besides the election: term state, windows. */
  delegate: ElectionDelegate;
  /** Called synchronously on every change of coordinator; must not block. */
  onCoordinatorChanged(change: CoordinatorChange): void;
  /**
   * Called synchronously once this node's leadership is confirmed (its first announcement round
   * showed no newer epoch): the moment to start probing and reporting. Must not block.
   */
  onLeading(epoch: number): void;
  /**
   * Called synchronously when this leading node goes on under a newer epoch of its own: a new
   * term for the receivers. Must not block.
   */
  onTermRenewed?(epoch: number): void;
  /** Called synchronously each time this node holds an election (metrics); must not block. */
  onElectionStarted?(): void;
  /** Called synchronously for each reply whose hand-over is refused (metrics); must not block. */
  onHandoverRefused?(reason: HandoverRefusal): void;
  /**
   * Coordinator: the peers next in line, highest-ranked first (its highest-ranked peers it judges
   * alive). Default: the highest-ranked peers.
   */
  successors?(): string[];
  /**
   * Coordinator of a large mesh: whether the peer takes heartbeats in this node's probes (as its
   * last answer to one said); such a peer gets only every LARGE_MESH_REFRESH_EVERY-th heartbeat
   * announced. Default: none does.
   */
  takesHeartbeats?(address: string): boolean;
  /** How often this node's probes reach each peer while it leads (ROUND_INTERVAL); default 0. */
  probeEveryMs?: number;
  /**
   * The peer protocol the peer's last answer named (wire/protocol.ts): what is new goes only to
   * peers that understand it. Default: 1 for every peer (what a node of f6578aa takes).
   */
  protocolOf?(address: string): number;
}

/**
 * In a mesh of more peers than this, the coordinator's verdicts, undelivered events and alerts go
 * to its successors only: the full map to 5,000 followers twice a second would be gigabytes.
 */
export const FULL_VIEW_PEERS = 100;
/**
 * In such a mesh the followers other than the successors get every this-many-th heartbeat (and
 * wait as much longer before calling the coordinator silent): they act on its silence only
 * after the successors anyway, and 5,000 followers heartbeated twice a second would take more
 * of the coordinator than its probes do.
 */
export const LARGE_MESH_HEARTBEAT_EVERY = 8;
/**
 * Followers that take heartbeats in probes (probe-heartbeat.ts) are announced to only every this
 * many heartbeats (30 s at the default interval), and whenever the successors change: the probe
 * of each, once a round, is their heartbeat in between.
 */
export const LARGE_MESH_REFRESH_EVERY = 60;

/**
 * Requests started in one go at most: a heartbeat to 5,000 followers is started in chunks, with the
 * event loop free between them (for answers, probes and /ping), not in one 100 ms-long burst.
 */
const SEND_CHUNK = 250;

/** Runs `send` for every address, SEND_CHUNK started at a time; resolves when all have. */
async function inChunks(
  addresses: readonly string[],
  send: (address: string) => Promise<void>,
): Promise<void> {
  const running: Promise<void>[] = [];
  for (let i = 0; i < addresses.length; i += SEND_CHUNK) {
    if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    for (const address of addresses.slice(i, i + SEND_CHUNK)) running.push(send(address));
  }
  await Promise.all(running);
}

/** How long a new coordinator waits for its first announcement round's answers at most. */
const CONFIRM_WAIT_MS = 300;
/** A predecessor with POSTs in flight is announced to again this soon, for their outcome. */
const HANDOVER_ASK_AGAIN_MS = 1_000;

export class ElectionDriver {
  private state: ElectionState;
  private timer: TimerHandle | null = null;
  private leader: NodeRef | null = null;
  private readonly tickMs: number;
  /** A large mesh's verdicts on their way to the successors, and the sharing queued behind. */
  private successorsSharing: Promise<void> | null = null;
  private successorsNext: { launched: Promise<void>; sent: Promise<void> } | null = null;
  /** The announcement launched by the latest dispatch, for shareNow() to await. */
  private lastAnnouncement: Promise<void> | null = null;
  private lastTick: number | null = null;
  /** The round of the latest election-started: later rounds of it are further batches. */
  private startedRound = 0;
  /** The current term's first announcement to every follower, until all answered or timed out. */
  private termAnnounced: Promise<void> = Promise.resolve();
  private termAnnouncedEpoch = 0;
  /** What the announcements carry, built once per change. */
  private readonly built: Announcements;
  /** Periodic heartbeats sent this term (a large mesh: every LARGE_MESH_HEARTBEAT_EVERY-th goes to all). */
  private heartbeats = 0;
  /** The successors named in the last announcement to every follower (a large mesh). */
  private announcedSuccessors: readonly string[] = [];
  /** The last accepted announcement carried no verdicts (a large mesh, not a successor). */
  private viewOmitted = false;
  /** The protocol of the announcement being handled (its sender's), null outside of one. */
  private announcerProtocol: number | null = null;
  /** The handover taken in this term so far: a later, poorer reply does not replace it. */
  private adopted: { epoch: number; size: number } | null = null;
  /** Who led before this node, as it knows: the only peers whose term hand-over it takes. */
  private readonly predecessors: Predecessors;

  constructor(private readonly opts: ElectionDriverOptions) {
    this.state = initialState(opts.self, opts.timing);
    this.built = new Announcements(opts);
    this.predecessors = new Predecessors({
      logger: opts.logger,
      now: () => opts.clock.now(),
      onRefused: (reason) => opts.onHandoverRefused?.(reason),
    });
    this.tickMs = Math.max(10, Math.min(100, opts.timing.heartbeatIntervalMs / 2));
  }

  get role(): Role {
    return this.state.role;
  }

  /**
   * The role this node claims to others (/ping, /status, knh_is_coordinator): a coordinator whose
   * term no peer has confirmed yet (none heard it, or all refused to authenticate it) says
   * candidate, so that no two nodes say they lead.
   */
  get claimedRole(): Role {
    const { role, leading } = this.state;
    return role === 'coordinator' && !leading ? 'candidate' : role;
  }

  get epoch(): number {
    return this.state.epoch;
  }

  /**
   * What a new coordinator's first probe round waits for. In a large mesh: the term's first
   * announcement answered by every follower (or timed out, PROBE_TIMEOUT), so that the round's
   * probes find those connections open rather than opening 5,000 more while the announcements
   * are still on their way. In a small mesh, nothing: the round starts at once.
   */
  get firstRoundAfter(): Promise<void> {
    return this.largeMesh ? this.termAnnounced : Promise.resolve();
  }

  /**
   * The current term's first announcement to every peer, answered by all or timed out: until
   * then a late rejection may still give the term a newer epoch, so nothing of it is posted.
   */
  get termConfirmed(): Promise<void> {
    return this.termAnnounced;
  }

  /** Over FULL_VIEW_PEERS peers: only the successors take the verdicts, at every heartbeat. */
  get largeMesh(): boolean {
    return this.state.peers.length > FULL_VIEW_PEERS;
  }

  get coordinator(): NodeRef | null {
    return this.state.coordinator;
  }

  get started(): boolean {
    return this.state.started;
  }

  /** When the driver last ticked or started (liveness: it ticks every ≤100 ms while started). */
  get lastTickAt(): number | null {
    return this.lastTick;
  }

  /** The coordinator this node followed last (a successor passes it on as alive). */
  get lastLeader(): NodeRef | null {
    return this.leader;
  }

  start(): void {
    this.dispatch({ type: 'start', now: this.opts.clock.now() });
    this.lastTick = this.opts.clock.now();
    this.scheduleTick();
  }

  /** Stops leading or following; the node no longer takes part (shutdown). */
  stop(): void {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    this.dispatch({ type: 'resign', now: this.opts.clock.now() });
  }

  /**
   * Coordinator: sends its verdicts to every follower now, and resolves once they have answered or
   * `maxWaitMs` has passed. Run before an alert goes out, so that a successor taking over in the
   * next instant starts from the same verdicts and does not alert again. No-op for a follower.
   */
  async shareNow(maxWaitMs: number): Promise<void> {
    if (this.state.role === 'coordinator' && this.largeMesh) {
      // Behind one in flight, it waits for its own to go: an alert never leaves before an
      // announcement carrying it has.
      const { launched, sent } = this.shareWithSuccessors(this.state.epoch);
      await launched;
      await waitAtMost(this.opts.clock, sent, maxWaitMs);
      return;
    }
    this.lastAnnouncement = null;
    this.dispatch({ type: 'share', now: this.opts.clock.now() });
    const sent = this.lastAnnouncement as Promise<void> | null;
    if (sent) await waitAtMost(this.opts.clock, sent, maxWaitMs);
  }

  /**
   * A large mesh: only the successors take the verdicts (a megabyte at 5,000 peers); the others'
   * heartbeats go on as due. One such announcement is in flight at a time, and at most one waits
   * behind it, built when it goes: a storm of verdict changes (thousands of peers suspect at once)
   * then costs one view in flight, not one per change, each held until its successors answer.
   * `launched`: the caller's announcement has gone (at once, or once the one ahead of it ended,
   * within a request timeout). It goes even if this node stopped leading meanwhile (a last share
   * before stop()), in the term it was decided in.
   */
  private shareWithSuccessors(epoch: number): { launched: Promise<void>; sent: Promise<void> } {
    if (this.successorsNext) return this.successorsNext;
    const ahead = this.successorsSharing;
    if (!ahead) return { launched: Promise.resolve(), sent: this.launchSuccessors(epoch) };
    let markLaunched = () => {};
    const launched = new Promise<void>((resolve) => (markLaunched = resolve));
    const sent = ahead.then(() => {
      this.successorsNext = null;
      const going = this.launchSuccessors(epoch);
      markLaunched();
      return going;
    });
    this.successorsNext = { launched, sent };
    return this.successorsNext;
  }

  private launchSuccessors(epoch: number): Promise<void> {
    const listed = new Set(this.state.peers);
    const successors = this.successorsNow();
    const to = successors.filter((a) => listed.has(a));
    const sent = this.background(this.announce(epoch, to, successors), 'announcement');
    const sharing = sent.finally(() => {
      if (this.successorsSharing === sharing) this.successorsSharing = null;
    });
    this.successorsSharing = sharing;
    return sharing;
  }

  setPeers(peers: readonly string[]): void {
    this.dispatch({ type: 'peers', now: this.opts.clock.now(), peers });
  }

  handleElection(request: ElectionRequest): ElectionAnswer | null {
    if (!this.state.started) return null;
    const effects = this.dispatch({
      type: 'election-request',
      now: this.opts.clock.now(),
      request,
    });
    const reply = effects.find((e) => e.type === 'reply-answer');
    return reply?.type === 'reply-answer' ? reply.answer : null;
  }

  /**
   * A probe from the coordinator carried its heartbeat (checked by the HTTP edge); true if it
   * kept the coordinator this node follows (in its term).
   */
  handleProbeHeartbeat(from: string, epoch: number): boolean {
    if (!this.state.started) return false;
    this.dispatch({ type: 'probe-heartbeat', now: this.opts.clock.now(), from, epoch });
    const s = this.state;
    return s.role === 'follower' && s.coordinator?.address === from && s.epoch === epoch;
  }

  /** Coordinator: announces itself to one peer now (one that no longer takes its heartbeats). */
  announceTo(address: string): void {
    if (this.state.role !== 'coordinator' || !this.state.peers.includes(address)) return;
    const successors = this.successorsNow();
    void this.background(this.announce(this.state.epoch, [address], successors), 'announcement');
  }

  /** `protocol`: the announcer's: what the reply may carry (see protocolOf). */
  handleAnnouncement(announcement: Announcement, protocol = 1): AnnouncementReply | null {
    if (!this.state.started) return null;
    // The change of coordinator this announcement makes, if any, names the announcer's protocol.
    this.announcerProtocol = protocol;
    let effects: ElectionEffect[];
    try {
      effects = this.dispatch({
        type: 'announcement',
        now: this.opts.clock.now(),
        from: announcement.from,
        epoch: announcement.epoch,
        successors: announcement.successors ?? [],
        ...(announcement.heartbeat_ms === undefined
          ? {}
          : { heartbeatMs: announcement.heartbeat_ms }),
      });
    } finally {
      this.announcerProtocol = null;
    }
    const reply = effects.find((e) => e.type === 'reply-announcement');
    if (reply?.type !== 'reply-announcement') return null;
    // Windows are taken from the coordinator of the term this node follows only: a node whose
    // announcement is refused (a stale term, a stranger) opens none here; what it holds comes in
    // its reply to the coordinator once it follows, and on from there.
    const { delegate } = this.opts;
    if (announcement.maintenance && reply.reply.accepted) {
      delegate.mergeWindows(announcement.maintenance, announcement.from.address);
    }
    if (reply.reply.accepted) {
      this.viewOmitted = announcement.peers_omitted === true;
      delegate.mergeFollowed(termStateOf(announcement), this.viewOmitted);
    }
    const windows = delegate.windows();
    const withWindows = windows.length > 0 ? { maintenance: windows } : {};
    // A protocol 2 node refuses events it does not know: those go to it no more than elsewhere.
    const ended = protocol >= 2 ? delegate.handover() : null;
    const handover = ended && {
      ...ended,
      undelivered: undeliveredFor(protocol, ended.undelivered),
    };
    const withHandover = handover ? { handover } : {};
    if (reply.reply.reason === 'stale-epoch' && !this.viewOmitted) {
      // A node that did not see our term (it restarted, or led elsewhere) is taking over: hand it
      // what we know, so it neither repeats alerts already sent nor forgets incidents still open.
      // A follower that was sent no verdicts (a large mesh) has none to hand: the successors do.
      const local = delegate.localState();
      const cannotJudge = protocol >= 2 ? local.cannotJudge : null;
      return {
        ...reply.reply,
        peers: local.peers,
        undelivered: undeliveredFor(protocol, local.undelivered),
        ...withWindows,
        ...alertsToShare(alertsFor(protocol, local.alerts)),
        ...(cannotJudge ? { cannot_judge: cannotJudge } : {}),
        ...withHandover,
      };
    }
    return { ...reply.reply, ...withWindows, ...withHandover };
  }

  private scheduleTick(): void {
    this.timer = this.opts.clock.setTimeout(() => {
      if (!this.state.started) return;
      this.lastTick = this.opts.clock.now();
      this.dispatch({ type: 'tick', now: this.opts.clock.now() });
      this.scheduleTick();
    }, this.tickMs);
  }

  private dispatch(event: ElectionEvent): ElectionEffect[] {
    const { state, effects } = step(this.state, event);
    this.state = state;
    for (const effect of effects) this.execute(effect);
    return effects;
  }

  private execute(effect: ElectionEffect): void {
    const { logger, self } = this.opts;
    switch (effect.type) {
      case 'election-started':
        logger.info(
          {
            event: 'election-started',
            round: effect.round,
            reason: effect.reason,
            to: effect.to,
            epoch: this.state.epoch,
          },
          `holding an election (${effect.reason})`,
        );
        this.startedRound = effect.round;
        this.opts.onElectionStarted?.();
        return;
      case 'election-deferred':
        logger.info(
          { event: 'election-deferred', delayMs: effect.delayMs, reason: effect.reason },
          `${effect.reason}: holding an election in ${effect.delayMs} ms unless a successor announces itself first`,
        );
        return;
      case 'send-election':
        if (effect.round !== this.startedRound) {
          logger.info(
            { event: 'election-batch', round: effect.round, to: effect.to },
            `no higher-ranked peer answered: asking the next ${effect.to.length}`,
          );
        }
        void this.background(this.sendElection(effect.round, effect.epoch, effect.to), 'election');
        return;
      case 'announce': {
        // Named in the announcements, and in a large mesh the only ones to get most heartbeats
        // (see heartbeat_ms): worked out once per announcement, over every verdict.
        const successors = this.successorsNow();
        const to =
          effect.heartbeat && this.largeMesh
            ? this.heartbeatTargets(effect.to, successors)
            : effect.to;
        if (to.length === this.state.peers.length) this.announcedSuccessors = successors;
        this.lastAnnouncement = this.background(
          this.announce(effect.epoch, to, successors),
          'announcement',
        );
        return;
      }
      case 'coordinator-changed': {
        const c = effect.coordinator;
        if (c?.address === self.address) this.adopted = null;
        if (c && c.address !== self.address) {
          this.leader = c;
          this.predecessors.learn(c);
        }
        logger.info(
          {
            event: 'coordinator-changed',
            coordinator: c?.id ?? null,
            coordinatorAddress: c?.address ?? null,
            epoch: effect.epoch,
            reason: effect.reason,
          },
          c
            ? `coordinator is ${c.id} (epoch ${effect.epoch})`
            : `no coordinator (${effect.reason})`,
        );
        const protocol = this.announcerProtocol;
        this.opts.onCoordinatorChanged({
          coordinator: c,
          isSelf: c?.address === self.address,
          ...(protocol === null || !c || c.address === self.address ? {} : { protocol }),
        });
        return;
      }
      case 'leading':
        logger.info(
          { event: 'leading', epoch: effect.epoch },
          `leading the mesh (epoch ${effect.epoch})`,
        );
        this.opts.onLeading(effect.epoch);
        return;
      case 'term-renewed':
        logger.info(
          { event: 'term-renewed', epoch: effect.epoch },
          `leading the mesh under a newer epoch (${effect.epoch})`,
        );
        this.opts.onTermRenewed?.(effect.epoch);
        return;
      case 'reply-answer':
      case 'reply-announcement':
        return; // returned to the HTTP handler by dispatch
    }
  }

  /** Announces to `address` again in a while, in the same term, while this node leads it. */
  private askAgain(address: string, epoch: number): void {
    this.opts.clock.setTimeout(() => {
      if (this.state.role === 'coordinator' && this.state.epoch === epoch) {
        this.announceTo(address);
      }
    }, HANDOVER_ASK_AGAIN_MS);
  }

  /** The transport reports failures as values; anything thrown is a bug, logged, never fatal. */
  private background(work: Promise<void>, what: string): Promise<void> {
    return work.catch((err: unknown) =>
      this.opts.logger.error({ err }, `BUG: sending ${what} failed`),
    );
  }

  /**
   * Asks one batch of higher-ranked peers. The first answer from a higher-ranked peer decides (it
   * is alive and takes over): no waiting out a dead peer's timeout; with none, once all failed.
   */
  private async sendElection(round: number, epoch: number, to: readonly string[]): Promise<void> {
    const request: ElectionRequest = { from: this.opts.self, epoch };
    const answers: ElectionAnswer[] = [];
    let decided = false;
    const decide = () => {
      if (decided) return;
      decided = true;
      this.opts.logger.debug({ round, answers: answers.map((a) => a.from.id) }, 'election answers');
      this.dispatch({
        type: 'election-result',
        now: this.opts.clock.now(),
        round,
        answers: [...answers],
      });
    };
    await Promise.all(
      to.map(async (address) => {
        const outcome = await this.opts.transport.sendElection(address, request);
        if (!outcome.ok) return;
        answers.push(outcome.value);
        if (outranks(outcome.value.from.address, this.opts.self.address)) decide();
      }),
    );
    decide();
  }

  /**
   * A node not yet leading that is told its epoch is stale (it restarted) takes the verdicts the
   * newest-epoch rejection carries, and the coordinator those peers followed as last leader.
   */
  private adoptHandedOver(replies: readonly (AnnouncementReply | null)[]): void {
    // A late answer to an announcement of a term this node has left since (it stepped down and
    // follows another node): what the coordinator it follows announces is newer.
    if (this.state.role !== 'coordinator') return;
    // The newest epoch's fullest view: in a large mesh only its successors held one.
    const better = (r: { epoch: number; size: number }, than: { epoch: number; size: number }) =>
      r.epoch > than.epoch || (r.epoch === than.epoch && r.size > than.size);
    let best: AnnouncementReply | null = null;
    const sizeOf = (r: AnnouncementReply) => ({ epoch: r.epoch, size: r.peers?.length ?? 0 });
    for (const r of replies) {
      if (r?.reason !== 'stale-epoch' || !r.peers) continue;
      if (!best || better(sizeOf(r), sizeOf(best))) best = r;
    }
    const peers = best?.peers;
    if (!best || !peers) return;
    if (this.adopted && !better(sizeOf(best), this.adopted)) return;
    this.adopted = sizeOf(best);
    this.opts.delegate.mergeSuperseded(termStateOf({ ...best, peers }), this.state.leading);
    if (this.state.leading) return;
    const leader = best.coordinator;
    if (leader && leader.address !== this.opts.self.address) this.leader = leader;
  }

  /**
   * Who a large mesh's periodic heartbeat goes to: the successors every time; every
   * LARGE_MESH_HEARTBEAT_EVERY-th, the followers its probes do not heartbeat; every
   * LARGE_MESH_REFRESH_EVERY-th, or when the successors changed, everyone.
   */
  private heartbeatTargets(
    peers: readonly string[],
    successors: readonly string[],
  ): readonly string[] {
    const n = ++this.heartbeats;
    const changed =
      successors.length !== this.announcedSuccessors.length ||
      successors.some((a, i) => this.announcedSuccessors[i] !== a);
    if (changed || n % LARGE_MESH_REFRESH_EVERY === 0) return peers;
    const inLine = new Set(successors);
    if (n % LARGE_MESH_HEARTBEAT_EVERY !== 0) return peers.filter((a) => inLine.has(a));
    return peers.filter((a) => inLine.has(a) || !(this.opts.takesHeartbeats?.(a) ?? false));
  }

  private successorsNow(): string[] {
    return (this.opts.successors?.() ?? topRanked(this.state.peers, SUCCESSORS)).slice(
      0,
      SUCCESSORS,
    );
  }

  private async announce(
    epoch: number,
    to: readonly string[],
    successors: readonly string[],
  ): Promise<void> {
    // Heartbeated by announcements every so often, or by this node's probes once a round.
    const thinHeartbeatMs = this.largeMesh
      ? Math.max(
          this.opts.timing.heartbeatIntervalMs * LARGE_MESH_HEARTBEAT_EVERY,
          this.opts.probeEveryMs ?? 0,
        )
      : null;
    const announcementFor = this.built.forPeers(epoch, successors, thinHeartbeatMs);
    const replies = new Map<string, AnnouncementReply | null>();
    /** Peers whose host answered with a refusal or an error: nothing there holds another term. */
    const refused = new Set<string>();
    const one = async (address: string) => {
      const outcome = await this.opts.transport.announce(address, announcementFor(address));
      replies.set(address, outcome.ok ? outcome.value : null);
      // A refusal to authenticate this node is not a peer hearing it: a node whose every peer
      // refuses it (another secret) must not lead, as one cut off from them all does not.
      if (!outcome.ok && evidenceOf(outcome.reason) === 'refusal' && !outcome.authRefused) {
        refused.add(address);
      }
      if (outcome.ok && outcome.value.maintenance) {
        this.opts.delegate.mergeWindows(outcome.value.maintenance, address);
      }
      // Taken only from a peer that took this term (one that refuses it follows another node,
      // whose hand-over it is), and only while this term is still this node's: a reply that comes
      // after it stepped down (or went on to a newer epoch) is for the term it left, whose
      // successor asks for itself.
      const handover = outcome.ok && outcome.value.accepted ? outcome.value.handover : undefined;
      if (
        handover &&
        this.state.role === 'coordinator' &&
        this.state.epoch === epoch &&
        this.predecessors.admits(handover, address, epoch)
      ) {
        this.opts.delegate.mergeHandover(handover, address);
        // Its POSTs in flight end within a webhook timeout: ask again soon rather than at its next
        // heartbeat (in a large mesh, 30 s away), so that their outcome comes before the wait ends.
        if (handover.in_flight.length > 0) this.askAgain(address, epoch);
      }
    };
    const all = inChunks(to, one);
    const partial = to.length < this.state.peers.length;
    const settle = (from: readonly string[]) => {
      const got = from.map((address) => ({
        address,
        reply: replies.get(address) ?? null,
        ...(refused.has(address) ? { refused: true as const } : {}),
      }));
      // A late answer to a term this node has left since names no predecessor of its own.
      if (this.state.role === 'coordinator') {
        this.predecessors.learnSuperseded(
          got.map((r) => r.reply),
          this.opts.self.address,
          this.state.peers,
        );
      }
      this.adoptHandedOver(got.map((r) => r.reply));
      this.dispatch({
        type: 'announce-result',
        now: this.opts.clock.now(),
        epoch,
        replies: got,
        ...(partial ? { partial: true as const } : {}),
      });
    };
    // A term's first round to every peer confirms it: a new term's, or one renewed under a newer
    // epoch while leading.
    if (!partial && (!this.state.leading || epoch !== this.termAnnouncedEpoch)) {
      this.termAnnounced = all;
      this.termAnnouncedEpoch = epoch;
    }
    if (this.state.leading) {
      await all;
      settle(to);
      return;
    }
    // Confirming a new term: a peer that cannot answer (black-holed, gone) must not hold the
    // confirmation up for a whole request timeout. Those that answered within the bound decide;
    // a late answer (a stale-epoch rejection, say) is still acted on when it comes.
    await waitAtMost(this.opts.clock, all, CONFIRM_WAIT_MS);
    const early = to.filter((address) => replies.has(address));
    settle(early);
    if (early.length === to.length) return;
    await all;
    settle(to.filter((address) => !early.includes(address)));
  }
}
