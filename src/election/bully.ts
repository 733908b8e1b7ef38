// The bully election as pure transitions: step(state, event) → { state, effects }; no I/O, no clock.
//
// Protocol (documented in docs/design.md, "Election"):
// - Rank is the total order of `compareRank` over addresses; the highest-ranked live node leads.
// - A node holds an election at start-up, when its coordinator has been silent for
//   `coordinatorTimeoutMs`, when it sees a lower-ranked node announce itself, when its coordinator
//   leaves the peer set, and when a lower-ranked node asks it to (unless it follows a live leader).
// - Holding an election = asking the higher-ranked peers, in batches, until one answers: first the
//   last coordinator and the successors it named, then the rest from the top, 8 at a time and
//   doubling. None answers → it wins: epoch + 1, announce to all. An answer → wait
//   `electionTimeoutMs` for an announcement, else retry. (Each batch's answers are awaited
//   `answerTimeoutMs`, past the requests' own timeout.)
// - When the coordinator falls silent or leaves, every follower notices at once. The successors it
//   named hold their elections at once (each asks only the coordinator and the successors above
//   it: a few messages), so the first live one leads as fast when the top two or three fail
//   together as when the coordinator alone does. Every other node waits SUCCESSORS + log2(1 + its
//   place among the others, from the top) steps of `answerTimeoutMs` (see electionDelayMs), so
//   that a successor's announcement reaches it before it asks anyone: with the bully's
//   ask-everyone-higher, N followers would send ~N²/2 messages. (A follower that waited has
//   forgotten its coordinator: it asks the successors first, then the rest from the top.)
//   The driver acts on the first answer of a batch rather than awaiting a dead peer's timeout.
// - The coordinator re-announces every `heartbeatIntervalMs`; that is the followers' heartbeat.
//   In a large mesh most followers get one announcement in many, and the coordinator's probe of
//   them, once a round, carries the heartbeat in between ('probe-heartbeat').
// - An announcement is accepted only from a node in the receiver's peer list that outranks it, with an
//   epoch above the receiver's, or equal to it from the node that leads that very term (its
//   heartbeat). Any other node announcing an epoch the receiver has seen is refused ('stale-epoch',
//   or 'conflict' when the receiver follows a higher-ranked coordinator), so it takes a newer one:
//   every term has an epoch of its own, above any the nodes that answered had seen. Rejections carry
//   the receiver's epoch and coordinator, so a restarted coordinator that lost its epoch catches up
//   (it re-announces at max+1) and a stale one steps down to the better leader.
import { compareRank, outranks, type NodeRef } from '../wire/node-ref.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../wire/peer-messages.js';
import type { ElectionEffect, ElectionEvent, ElectionState, StepResult } from './state.js';

export { initialState } from './state.js';
export type {
  ElectionEffect,
  ElectionEvent,
  ElectionState,
  ElectionTiming,
  Role,
  StepResult,
} from './state.js';

const sameNode = (a: NodeRef | null, b: NodeRef | null) => a?.address === b?.address;

/** How many successors a coordinator names in its announcements. */
export const SUCCESSORS = 3;
/** The first batch of higher-ranked peers asked beyond the coordinator and its successors. */
export const FIRST_BATCH = 8;

/** The `n` highest-ranked of `addresses`, highest first. */
export function topRanked(addresses: readonly string[], n: number): string[] {
  const top: string[] = [];
  for (const a of addresses) {
    if (top.length === n && compareRank(a, top[n - 1]!) <= 0) continue;
    let at = top.findIndex((t) => compareRank(a, t) > 0);
    if (at < 0) at = top.length;
    top.splice(at, 0, a);
    if (top.length > n) top.pop();
  }
  return top;
}

/** A fixed spread in [0, span) for this address, so nodes that wait alike do not start together. */
function spreadOf(address: string, span: number): number {
  let h = 2166136261;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 16777619);
  return ((h >>> 0) % 1000) * (span / 1000);
}

/**
 * The successors in line, highest first: as the coordinator named them, or without a named list
 * the highest-ranked nodes other than the coordinator (this one included); only those listed.
 */
function lineOf(state: ElectionState): string[] {
  const self = state.self.address;
  const coordinator = state.coordinator?.address;
  const named =
    state.successors.length > 0
      ? state.successors
      : topRanked([self, ...state.peers.filter((p) => p !== coordinator)], SUCCESSORS);
  return named.filter((a) => a === self || state.peers.includes(a));
}

/** Nodes not named wait at most this many steps more than the last successor (log2 of their place). */
const MAX_EXTRA_STEPS = 8;

/**
 * How long this follower waits before holding the election its silent (or departed) coordinator
 * calls for: 0 for a successor still listed (its election asks only the nodes above it in line, so
 * when the successors before it failed with the coordinator it leads as fast as the first would
 * have). Every other node waits SUCCESSORS steps (`answerTimeoutMs`) plus log2(1 + its place among
 * them, from the top) steps, at most MAX_EXTRA_STEPS, then a spread of its own: should the
 * successors all be gone, the highest of the others goes first and is heard before most of the
 * rest start. Without a named list, the highest-ranked peers other than the coordinator stand in.
 */
export function electionDelayMs(state: ElectionState): number {
  const step = state.timing.answerTimeoutMs;
  const self = state.self.address;
  const coordinator = state.coordinator?.address;
  const line = lineOf(state);
  if (line.includes(self)) return 0;
  const inLine = new Set(line);
  let place = 0;
  for (const p of state.peers) {
    if (p !== coordinator && !inLine.has(p) && outranks(p, self)) place++;
  }
  const extra = Math.log2(1 + place);
  if (extra >= MAX_EXTRA_STEPS) return (SUCCESSORS + MAX_EXTRA_STEPS) * step + spreadOf(self, step);
  return (SUCCESSORS + extra) * step;
}

/** Applies `next`, announcing a change of coordinator (as the first effect) when there is one. */
function withCoordinator(
  state: ElectionState,
  next: Partial<ElectionState>,
  effects: ElectionEffect[],
  reason: string,
): StepResult {
  const updated = { ...state, ...next };
  if (updated.role !== 'coordinator') updated.leading = false;
  if (!sameNode(state.coordinator, updated.coordinator)) {
    effects.unshift({
      type: 'coordinator-changed',
      coordinator: updated.coordinator,
      epoch: updated.epoch,
      reason,
    });
  }
  return { state: updated, effects };
}

function becomeCoordinator(state: ElectionState, now: number, reason: string): StepResult {
  const epoch = state.epoch + 1;
  return withCoordinator(
    state,
    {
      role: 'coordinator',
      epoch,
      coordinator: state.self,
      termLeader: state.self,
      leading: false,
      waiting: null,
      electionDueMs: null,
      pending: [],
      nextHeartbeatMs: now + state.timing.heartbeatIntervalMs,
    },
    [{ type: 'announce', epoch, to: state.peers }],
    reason,
  );
}

function holdElection(state: ElectionState, now: number, reason: string): StepResult {
  const self = state.self.address;
  const higher = state.peers.filter((p) => outranks(p, self));
  if (higher.length === 0) return becomeCoordinator(state, now, `${reason}; no higher-ranked peer`);
  // First those most likely to lead: the last coordinator (it may only have been slow) and the
  // successors it named; then the rest, from the top.
  const isHigher = new Set(higher);
  // (At start-up, with no coordinator known, there is no line: the first batch goes from the top.)
  const line = state.coordinator || state.successors.length > 0 ? lineOf(state) : [];
  const first = [
    ...new Set(
      [state.coordinator?.address, ...line].filter(
        (a): a is string => a !== undefined && isHigher.has(a),
      ),
    ),
  ];
  const asked = new Set(first);
  const rest = higher.filter((a) => !asked.has(a)).sort((a, b) => compareRank(b, a));
  const batch = first.length > 0 ? first : rest.slice(0, FIRST_BATCH);
  const pending = first.length > 0 ? rest : rest.slice(FIRST_BATCH);
  const batchSize = first.length > 0 ? FIRST_BATCH : 2 * FIRST_BATCH;
  const round = state.round + 1;
  return withCoordinator(
    state,
    {
      role: 'candidate',
      coordinator: null,
      round,
      waiting: 'answers',
      deadlineMs: now + state.timing.answerTimeoutMs,
      electionDueMs: null,
      pending,
      batchSize,
    },
    [
      { type: 'election-started', round, reason, to: batch },
      { type: 'send-election', round, epoch: state.epoch, to: batch },
    ],
    reason,
  );
}

/** No peer of the last batch answered: ask the next one (same election, a new round number). */
function askNextBatch(state: ElectionState, now: number): StepResult {
  const batch = state.pending.slice(0, state.batchSize);
  const round = state.round + 1;
  return {
    state: {
      ...state,
      round,
      waiting: 'answers',
      deadlineMs: now + state.timing.answerTimeoutMs,
      pending: state.pending.slice(batch.length),
      batchSize: state.batchSize * 2,
    },
    effects: [{ type: 'send-election', round, epoch: state.epoch, to: batch }],
  };
}

/**
 * The coordinator fell silent or left: hold the election now if this node is first in line,
 * else when its turn in the stagger comes (an announcement meanwhile cancels it).
 */
function electionDue(state: ElectionState, now: number, reason: string): StepResult {
  const delayMs = electionDelayMs(state);
  if (delayMs === 0) return holdElection(state, now, reason);
  return withCoordinator(
    state,
    { coordinator: null, electionDueMs: now + delayMs },
    [{ type: 'election-deferred', delayMs, reason }],
    reason,
  );
}

/** The highest-ranked of the coordinators others name that outranks `self`, if any. */
function bestLeaderAbove(self: NodeRef, named: readonly (NodeRef | null)[]): NodeRef | undefined {
  return named
    .filter((c): c is NodeRef => c !== null && outranks(c.address, self.address))
    .sort((a, b) => compareRank(b.address, a.address))[0];
}

/**
 * Silence that means the coordinator is gone: longer for a follower heartbeated less often, by two
 * of its (longer) intervals, so that one heartbeat sent late by a busy coordinator is no silence.
 */
function silenceMs(state: ElectionState): number {
  const { coordinatorTimeoutMs, heartbeatIntervalMs } = state.timing;
  return coordinatorTimeoutMs + 2 * Math.max(0, state.heartbeatEveryMs - heartbeatIntervalMs);
}

function coordinatorAlive(state: ElectionState, now: number): boolean {
  if (state.role === 'coordinator') return true;
  return (
    state.role === 'follower' &&
    state.coordinator !== null &&
    now - state.lastHeardMs <= silenceMs(state)
  );
}

/** At most this long between heartbeats is taken from an announcement (10 minutes). */
const MAX_HEARTBEAT_EVERY_MS = 600_000;

function onTick(state: ElectionState, now: number): StepResult {
  switch (state.role) {
    case 'follower':
      if (state.electionDueMs !== null) {
        return now >= state.electionDueMs
          ? holdElection(state, now, 'coordinator gone; this node is next in line')
          : { state, effects: [] };
      }
      if (coordinatorAlive(state, now)) return { state, effects: [] };
      if (state.coordinator) return electionDue(state, now, 'coordinator silent');
      return holdElection(state, now, 'no coordinator known');
    case 'candidate':
      if (now >= state.deadlineMs) {
        if (state.waiting === 'answers' && state.pending.length > 0)
          return askNextBatch(state, now);
        return holdElection(
          state,
          now,
          state.waiting === 'announcement' ? 'no announcement after answer' : 'answers timed out',
        );
      }
      return { state, effects: [] };
    case 'coordinator':
      if (now >= state.nextHeartbeatMs) {
        return {
          state: { ...state, nextHeartbeatMs: now + state.timing.heartbeatIntervalMs },
          effects: [{ type: 'announce', epoch: state.epoch, to: state.peers, heartbeat: true }],
        };
      }
      return { state, effects: [] };
  }
}

function onElectionRequest(state: ElectionState, now: number, req: ElectionRequest): StepResult {
  // Only a peer's epoch is adopted and only a peer is acted for: a stranger (another mesh, or a
  // pod this node has not discovered yet) gets an answer and changes nothing.
  const known = state.peers.includes(req.from.address);
  const newer = known && req.epoch > state.epoch;
  // A coordinator that hears of a newer epoch goes on under a term above it (another node may
  // lead that epoch), announced to every peer; anyone else takes the epoch, but no announcement
  // at it as is (not heard from its leader).
  const bump = newer && state.role === 'coordinator';
  const epoch = bump ? req.epoch + 1 : newer ? req.epoch : state.epoch;
  const termLeader = bump ? state.self : newer ? null : state.termLeader;
  const answer: ElectionAnswer = {
    type: 'answer',
    from: state.self,
    epoch,
    coordinator: coordinatorAlive(state, now) ? state.coordinator : null,
  };
  const effects: ElectionEffect[] = [{ type: 'reply-answer', answer }];
  const next = { ...state, epoch, termLeader };
  if (bump) effects.push(...renewTerm(state, epoch));
  if (!known || !outranks(state.self.address, req.from.address)) return { state: next, effects };
  if (state.role === 'coordinator') {
    // Tell the asker at once who leads, instead of waiting for the next heartbeat.
    if (!bump) effects.push({ type: 'announce', epoch, to: [req.from.address] });
    return { state: next, effects };
  }
  if (state.role === 'candidate' || coordinatorAlive(state, now)) return { state: next, effects };
  const held = holdElection(next, now, `election request from ${req.from.id}`);
  return { state: held.state, effects: [...effects, ...held.effects] };
}

function onElectionResult(
  state: ElectionState,
  now: number,
  round: number,
  answers: readonly ElectionAnswer[],
): StepResult {
  if (state.role !== 'candidate' || round !== state.round || state.waiting !== 'answers') {
    return { state, effects: [] };
  }
  const epoch = answers.reduce((m, a) => Math.max(m, a.epoch), state.epoch);
  const termLeader = epoch > state.epoch ? null : state.termLeader;
  const valid = answers.filter((a) => outranks(a.from.address, state.self.address));
  if (valid.length === 0) {
    if (state.pending.length > 0) return askNextBatch({ ...state, epoch, termLeader }, now);
    return becomeCoordinator({ ...state, epoch }, now, 'no higher-ranked peer answered');
  }
  // A live leader that outranks us, vouched for by a higher node: follow it provisionally; its
  // heartbeats confirm it, or the coordinator timeout starts a new election.
  const vouched = bestLeaderAbove(
    state.self,
    valid.map((a) => a.coordinator),
  );
  if (vouched) {
    return withCoordinator(
      state,
      {
        role: 'follower',
        epoch,
        coordinator: vouched,
        termLeader: vouched,
        lastHeardMs: now,
        waiting: null,
      },
      [],
      'coordinator vouched for by a higher-ranked peer',
    );
  }
  return {
    state: {
      ...state,
      epoch,
      termLeader,
      waiting: 'announcement',
      deadlineMs: now + state.timing.electionTimeoutMs,
    },
    effects: [],
  };
}

function onAnnouncement(
  state: ElectionState,
  now: number,
  from: NodeRef,
  epoch: number,
  successors: readonly string[],
  heartbeatMs: number,
): StepResult {
  const reject = (reason: AnnouncementReply['reason'], s: ElectionState = state): StepResult => ({
    state: s,
    effects: [
      {
        type: 'reply-announcement',
        reply: { accepted: false, reason, epoch: s.epoch, coordinator: s.coordinator },
      },
    ],
  });
  // Only a member of this node's own peer list can lead it: a process of another mesh that reached
  // this address (a reused port or pod IP) must not capture it.
  if (!state.peers.includes(from.address)) return reject('unknown-sender');
  if (!outranks(from.address, state.self.address)) {
    // A lower-ranked node claims to lead: refuse, and take over.
    const rejected = reject('outranked');
    if (state.role === 'coordinator') {
      rejected.effects.push({ type: 'announce', epoch: state.epoch, to: [from.address] });
      return rejected;
    }
    if (state.role === 'candidate') return rejected;
    // Following a live coordinator, which outranks this node and so the announcer: refusing is
    // enough (the announcer steps down and asks, and finds it). An election here would only drop
    // the coordinator for a moment (a late heartbeat of a node that led before it started).
    if (coordinatorAlive(state, now)) return rejected;
    const held = holdElection(state, now, `lower-ranked ${from.id} announced itself`);
    return { state: held.state, effects: [...rejected.effects, ...held.effects] };
  }
  if (epoch < state.epoch) return reject('stale-epoch');
  if (epoch === state.epoch && !sameNode(state.termLeader, from)) {
    // That epoch is another node's term (or heard of second-hand): the announcer takes a newer
    // one, unless this node follows a higher-ranked coordinator, which the announcer should ask.
    const higher = state.coordinator && compareRank(from.address, state.coordinator.address) < 0;
    return reject(higher ? 'conflict' : 'stale-epoch');
  }
  const reply: AnnouncementReply = { accepted: true, epoch, coordinator: from };
  return withCoordinator(
    state,
    {
      role: 'follower',
      epoch,
      coordinator: from,
      termLeader: from,
      lastHeardMs: now,
      waiting: null,
      electionDueMs: null,
      successors: successors.slice(0, SUCCESSORS),
      heartbeatEveryMs: Math.min(Math.max(0, heartbeatMs), MAX_HEARTBEAT_EVERY_MS),
    },
    [{ type: 'reply-announcement', reply }],
    `announcement from ${from.id}`,
  );
}

/**
 * A heartbeat in a probe keeps the coordinator this node follows, in its term, from being called
 * silent; it changes nothing else (it names no successors: the announcements do).
 */
function onProbeHeartbeat(
  state: ElectionState,
  now: number,
  from: string,
  epoch: number,
): StepResult {
  if (state.role !== 'follower' || state.coordinator?.address !== from || epoch !== state.epoch) {
    return { state, effects: [] };
  }
  return { state: { ...state, lastHeardMs: Math.max(state.lastHeardMs, now) }, effects: [] };
}

function onAnnounceResult(
  state: ElectionState,
  now: number,
  epoch: number,
  replies: readonly { address: string; reply: AnnouncementReply | null; refused?: true }[],
  partial: boolean,
): StepResult {
  if (state.role !== 'coordinator' || epoch !== state.epoch) return { state, effects: [] };
  // A live higher-ranked peer that counts us as a peer: it is taking over, so stop leading now
  // rather than lead alongside it; with no coordinator, the next tick asks it (election).
  const higher = replies.find((r) => r.reply?.reason === 'outranked');
  if (higher) {
    return withCoordinator(
      state,
      { role: 'follower', coordinator: null, waiting: null },
      [],
      `stepped down: ${higher.address} outranks this node`,
    );
  }
  const rejections = replies
    .map((r) => r.reply)
    // 'unknown-sender': it does not count us as a peer (yet); no evidence of a better leader.
    .filter(
      (r): r is AnnouncementReply => r !== null && !r.accepted && r.reason !== 'unknown-sender',
    );
  if (rejections.length === 0) {
    // Unanswered or accepted everywhere it went: nothing says a newer epoch exists. Only a round to
    // every peer confirms the term (one peer that accepted knows nothing of the others), and only
    // one that some peer took, or whose host refused the connection: a node cut off from every
    // peer (among two or more) leads nobody, and its term would share its epoch with other such
    // nodes'. Nor does a node that no peer counts as one yet ('unknown-sender': it left and came
    // back, or discovery has not listed it there yet): they still follow their coordinator, and
    // two would say they lead. It announces on each heartbeat, and leads once a peer takes it.
    if (state.leading || partial) return { state, effects: [] };
    const heard = replies.some((r) => r.reply?.accepted === true || r.refused === true);
    if (!heard && state.peers.length >= 2) return { state, effects: [] };
    return {
      state: { ...state, leading: true },
      effects: [{ type: 'leading', epoch: state.epoch }],
    };
  }
  const maxEpoch = rejections.reduce((m, r) => Math.max(m, r.epoch), state.epoch);
  const better = bestLeaderAbove(
    state.self,
    rejections.map((r) => r.coordinator),
  );
  if (better) {
    return withCoordinator(
      state,
      {
        role: 'follower',
        epoch: maxEpoch,
        coordinator: better,
        // Its followers' epoch is its term; at our own epoch it must take a newer one.
        termLeader: maxEpoch > state.epoch ? better : state.termLeader,
        lastHeardMs: now,
      },
      [],
      `stepped down: peers follow higher-ranked ${better.id}`,
    );
  }
  // We outrank whoever they follow: start a newer term so our claim supersedes theirs.
  const newEpoch = maxEpoch + 1;
  return {
    state: {
      ...state,
      epoch: newEpoch,
      termLeader: state.self,
      nextHeartbeatMs: now + state.timing.heartbeatIntervalMs,
    },
    effects: renewTerm(state, newEpoch),
  };
}

/**
 * A coordinator going on under a newer epoch of its own: announced to every peer, and, when it
 * already led, a new term for the receivers.
 */
function renewTerm(state: ElectionState, epoch: number): ElectionEffect[] {
  const announce: ElectionEffect = { type: 'announce', epoch, to: state.peers };
  return state.leading ? [announce, { type: 'term-renewed', epoch }] : [announce];
}

function onPeers(state: ElectionState, now: number, peers: readonly string[]): StepResult {
  const next = { ...state, peers: peers.filter((p) => p !== state.self.address) };
  if (!state.started) return { state: next, effects: [] };
  const coordinator = state.coordinator;
  if (
    state.role === 'follower' &&
    coordinator !== null &&
    !next.peers.includes(coordinator.address)
  ) {
    return electionDue(next, now, `coordinator ${coordinator.id} left the peer set`);
  }
  return { state: next, effects: [] };
}

function onResign(state: ElectionState): StepResult {
  // Leaving (shutdown, or no longer listed): stop leading and stop taking part until started again.
  return withCoordinator(
    state,
    { role: 'follower', coordinator: null, waiting: null, started: false, electionDueMs: null },
    [],
    'resigned',
  );
}

export function step(state: ElectionState, event: ElectionEvent): StepResult {
  switch (event.type) {
    case 'start':
      return holdElection({ ...state, started: true }, event.now, 'start-up');
    case 'tick':
      return state.started ? onTick(state, event.now) : { state, effects: [] };
    case 'peers':
      return onPeers(state, event.now, event.peers);
    case 'election-request':
      return onElectionRequest(state, event.now, event.request);
    case 'election-result':
      return onElectionResult(state, event.now, event.round, event.answers);
    case 'announcement':
      return onAnnouncement(
        state,
        event.now,
        event.from,
        event.epoch,
        event.successors ?? [],
        event.heartbeatMs ?? 0,
      );
    case 'announce-result':
      return onAnnounceResult(state, event.now, event.epoch, event.replies, event.partial === true);
    case 'probe-heartbeat':
      return onProbeHeartbeat(state, event.now, event.from, event.epoch);
    case 'share':
      return state.role === 'coordinator'
        ? {
            state: { ...state, nextHeartbeatMs: event.now + state.timing.heartbeatIntervalMs },
            effects: [{ type: 'announce', epoch: state.epoch, to: state.peers }],
          }
        : { state, effects: [] };
    case 'resign':
      return onResign(state);
  }
}
