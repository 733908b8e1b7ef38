// The bully election's pure transitions: one event at a time, then whole clusters in memory.
import { expect } from 'chai';
// The rank order itself is tested in node-ref.test.ts; here it only names the expected winner.
import { compareRank, type NodeRef } from '../../src/wire/node-ref.js';
import {
  initialState,
  step,
  SUCCESSORS,
  type ElectionEvent,
  type ElectionState,
  type ElectionTiming,
  type StepResult,
} from '../../src/election/bully.js';
import type { AnnouncementReply, ElectionAnswer } from '../../src/wire/peer-messages.js';
import { Cluster, prng, shuffled } from '../support/bully-cluster.js';
import {
  addresses,
  announcement,
  announceResult,
  answer,
  effectsOf,
  electionRequest,
  electionResult,
  peerList,
  refusal,
  tick,
  type Told,
} from '../support/election-events.js';

const timing: ElectionTiming = {
  heartbeatIntervalMs: 500,
  coordinatorTimeoutMs: 1_500,
  electionTimeoutMs: 1_000,
  answerTimeoutMs: 1_000,
};

const node = (ip: string): NodeRef => ({ id: `node-${ip}@${ip}`, address: `${ip}:8080` });
// Ranked A < B < C < D < E.
const [A, B, C, D, E] = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'].map(node) as [
  NodeRef,
  NodeRef,
  NodeRef,
  NodeRef,
  NodeRef,
];
/** `self` knows `peers` and has started at `now`, optionally with a remembered epoch. */
function start(self: NodeRef, peers: NodeRef[], { now = 0, epoch = 0 } = {}): StepResult {
  const known = step({ ...initialState(self, timing), epoch }, peerList(now, ...peers));
  return step(known.state, { type: 'start', now });
}

/** `self` follows `leader` at `epoch`, last heard at `now`, told what `told` says. */
function follower(
  self: NodeRef,
  peers: NodeRef[],
  leader: NodeRef,
  epoch: number,
  now = 0,
  told: Told = {},
) {
  const s = start(self, peers, { now }).state;
  const result = step(s, announcement(leader, epoch, now, told));
  expect(result.state.role).to.equal('follower');
  return result.state;
}

/** `self` leads `peers` (which it must outrank) at `epoch`, confirmed by a clean announcement round. */
function coordinator(self: NodeRef, peers: NodeRef[], epoch = 1, now = 0): ElectionState {
  const s = start(self, peers, { now, epoch: epoch - 1 }).state;
  expect(s.role).to.equal('coordinator');
  expect(s.epoch).to.equal(epoch);
  const accepted = { accepted: true, epoch, coordinator: self };
  const replies = peers.slice(0, 1).map((p) => ({ address: p.address, reply: accepted }));
  const confirmed = step(s, announceResult(epoch, replies, now)).state;
  expect(confirmed.leading).to.equal(true);
  return confirmed;
}

/** `s` with `peers` known (a higher-ranked newcomer, say), without holding an election yet. */
function knowing(s: ElectionState, peers: NodeRef[]): ElectionState {
  return step(s, peerList(0, ...peers)).state;
}

/** `self` has sent election round 1 to its higher peers at `now` and awaits answers. */
function candidate(self: NodeRef, peers: NodeRef[], { now = 0, epoch = 0 } = {}) {
  const s = start(self, peers, { now, epoch }).state;
  expect(s.role).to.equal('candidate');
  return s;
}

describe('bully election: step', () => {
  describe('start-up', () => {
    it('leads at epoch 1 and announces to every peer when no peer outranks it', () => {
      const result = start(D, [A, B, C]);
      expect(result.state.role).to.equal('coordinator');
      expect(result.state.epoch).to.equal(1);
      expect(result.state.coordinator).to.deep.equal(D);
      expect(effectsOf(result, 'announce')).to.deep.equal([
        { type: 'announce', epoch: 1, to: addresses(A, B, C) },
      ]);
    });

    it('becomes a candidate and sends the election only to higher-ranked peers', () => {
      const result = start(B, [D, A, C]);
      expect(result.state.role).to.equal('candidate');
      expect(result.state.coordinator).to.equal(null);
      const sent = effectsOf(result, 'send-election');
      expect(sent).to.have.length(1);
      expect([...(sent[0]?.to ?? [])].sort()).to.deep.equal(addresses(C, D));
      expect(sent[0]?.round).to.equal(result.state.round);
      expect(effectsOf(result, 'announce')).to.deep.equal([]);
    });

    it('does nothing on ticks before it has started', () => {
      const s = initialState(A, timing);
      const result = step(s, tick(60_000));
      expect(result.effects).to.deep.equal([]);
      expect(result.state).to.equal(s);
    });
  });

  describe('election results', () => {
    it('leads at the highest epoch seen + 1 when no higher-ranked peer answers', () => {
      const cases: { name: string; answers: ElectionAnswer[]; epoch: number }[] = [
        { name: 'no answers', answers: [], epoch: 3 },
        // An answer from a lower-ranked node is no answer, but its epoch still counts.
        { name: 'only a lower-ranked answer', answers: [answer(A, 6, null)], epoch: 7 },
      ];
      for (const c of cases) {
        const s = candidate(B, [A, C, D], { epoch: 2 });
        const result = step(s, electionResult(s.round, c.answers, 10));
        expect(result.state.role, c.name).to.equal('coordinator');
        expect(result.state.epoch, c.name).to.equal(c.epoch);
        expect(effectsOf(result, 'announce'), c.name).to.deep.equal([
          { type: 'announce', epoch: c.epoch, to: addresses(A, C, D) },
        ]);
      }
    });

    it('follows the highest coordinator vouched for by a higher-ranked answer', () => {
      const s = candidate(B, [A, C, D, E], { epoch: 1 });
      const result = step(s, electionResult(s.round, [answer(C, 4, D), answer(D, 4, E)], 10));
      expect(result.state.role).to.equal('follower');
      expect(result.state.coordinator).to.deep.equal(E);
      expect(result.state.epoch).to.equal(4);
      expect(result.state.lastHeardMs).to.equal(10);
    });

    it('waits for the announcement after a bare answer, then holds the election again', () => {
      const s = candidate(B, [A, C, D], { now: 0 });
      // A vouched coordinator that B outranks is no leader for B.
      const answers = [answer(C, 0, null), answer(D, 0, A)];
      const answered = step(s, electionResult(s.round, answers, 100));
      expect(answered.state.role).to.equal('candidate');
      expect(answered.effects).to.deep.equal([]);

      const early = step(answered.state, tick(100 + timing.electionTimeoutMs - 1));
      expect(early.effects).to.deep.equal([]);

      const late = step(early.state, tick(100 + timing.electionTimeoutMs));
      const sent = effectsOf(late, 'send-election');
      expect(sent).to.have.length(1);
      expect(sent[0]?.round).to.equal(s.round + 1);
      expect(late.state.role).to.equal('candidate');
    });

    it('follows the winner when its announcement arrives while waiting', () => {
      const s = candidate(B, [A, C, D]);
      const answered = step(s, electionResult(s.round, [answer(C, 0, null)], 10)).state;
      const result = step(answered, announcement(D, 1, 20));
      expect(result.state.role).to.equal('follower');
      expect(result.state.coordinator).to.deep.equal(D);
      expect(step(result.state, tick(20 + timing.electionTimeoutMs)).effects).to.be.empty;
    });

    it('waits for the answers past ELECTION_TIMEOUT when the requests may take longer', () => {
      const patient = { ...timing, answerTimeoutMs: 2_500 };
      const s = step(step({ ...initialState(B, patient) }, peerList(0, A, C)).state, {
        type: 'start',
        now: 0,
      }).state;
      const ticked = step(s, tick(timing.electionTimeoutMs + 100));
      expect(ticked.effects, 'no new round while the requests are still out').to.deep.equal([]);
      const late = step(ticked.state, electionResult(s.round, [], 2_000));
      expect(late.state.role, 'the late result counts').to.equal('coordinator');
      const expired = step(s, tick(2_500));
      expect(
        effectsOf(expired, 'send-election'),
        'and gives up only at answerTimeoutMs',
      ).to.have.length(1);
    });

    it('ignores the result of an older election round', () => {
      const first = candidate(B, [A, C]);
      const second = step(first, tick(timing.electionTimeoutMs)).state;
      expect(second.round).to.equal(first.round + 1);
      const stale = step(second, electionResult(first.round, [], timing.electionTimeoutMs + 1));
      expect(stale.effects).to.deep.equal([]);
      expect(stale.state).to.equal(second);
    });
  });

  describe('coordinator silence', () => {
    it('holds an election only once the coordinator has been silent for longer than the timeout', () => {
      // C is first in line (the highest-ranked peer but the coordinator): it asks D at once.
      const s = follower(C, [A, B, D], D, 3, 100);
      const atTimeout = step(s, tick(100 + timing.coordinatorTimeoutMs));
      expect(atTimeout.effects).to.deep.equal([]);
      expect(atTimeout.state.role).to.equal('follower');

      const after = step(s, tick(100 + timing.coordinatorTimeoutMs + 1));
      expect(after.state.role).to.equal('candidate');
      expect(effectsOf(after, 'send-election')[0]?.to).to.deep.equal(addresses(D));
      expect(effectsOf(after, 'send-election')[0]?.epoch).to.equal(3);
    });

    it('holds at once when second in line too, asking only the coordinator and the successor above it', () => {
      // B is second in line (after C): should C have failed with D, B must lead as fast as C would.
      const s = follower(B, [A, C, D], D, 3, 100);
      const silent = 100 + timing.coordinatorTimeoutMs + 1;
      const held = step(s, tick(silent));
      expect(held.state.role).to.equal('candidate');
      expect(effectsOf(held, 'election-deferred')).to.be.empty;
      expect(effectsOf(held, 'send-election')[0]?.to).to.deep.equal(addresses(D, C));
      // Neither answers (both crashed): B leads, above the epoch it knew.
      const round = held.state.round;
      const won = step(held.state, electionResult(round, [], silent + 5));
      expect(won.state.role).to.equal('coordinator');
      expect(won.state.epoch).to.equal(4);
    });

    /** B, whom D (naming C only) did not name, once D has been silent too long: B defers. */
    function notInLine() {
      let s = start(B, [A, C, D]).state;
      s = step(s, announcement(D, 3, 100, { successors: addresses(C) })).state;
      const silent = 100 + timing.coordinatorTimeoutMs + 1;
      return { deferred: step(s, tick(silent)), silent, wait: SUCCESSORS * timing.answerTimeoutMs };
    }

    it('staggers the nodes not in line: the highest of them holds its election SUCCESSORS steps late', () => {
      const { deferred, silent, wait } = notInLine();
      expect(deferred.state.role).to.equal('follower');
      expect(effectsOf(deferred, 'election-deferred')).to.deep.equal([
        { type: 'election-deferred', delayMs: wait, reason: 'coordinator silent' },
      ]);
      expect(effectsOf(deferred, 'send-election')).to.be.empty;
      const waiting = step(deferred.state, tick(silent + wait - 1));
      expect(waiting.effects).to.deep.equal([]);
      const due = step(waiting.state, tick(silent + wait));
      expect(due.state.role).to.equal('candidate');
      // It forgot D when it deferred: it asks the named successor first, D in the next batch.
      expect(effectsOf(due, 'send-election')[0]?.to).to.deep.equal(addresses(C));
    });

    it('cancels a deferred election when the winner announces itself meanwhile', () => {
      const { deferred, silent, wait } = notInLine();
      // C won meanwhile and announced: B follows it and holds no election.
      const told = step(deferred.state, announcement(C, 4, silent + 10));
      expect(told.state.coordinator).to.deep.equal(C);
      // Past B's turn, with C heard from meanwhile: B holds nothing.
      const heard = step(told.state, announcement(C, 4, silent + wait));
      const later = step(heard.state, tick(silent + wait + 1));
      expect(later.effects).to.deep.equal([]);
    });

    it('puts the successors the coordinator named first in line, and every other node behind them', () => {
      // D names B and A (it judges C dead): B holds at once and asks D, not C, first.
      const s = follower(B, [A, C, D], D, 3, 0, { successors: addresses(B, A) });
      const b = step(s, tick(timing.coordinatorTimeoutMs + 1));
      expect(effectsOf(b, 'send-election')[0]?.to).to.deep.equal(addresses(D));
      // C, not named and the highest of those not named, waits SUCCESSORS steps (+ log2(1 + 0)).
      const c = follower(C, [A, B, D], D, 3, 0, { successors: addresses(B, A) });
      const deferred = effectsOf(step(c, tick(1_501)), 'election-deferred')[0];
      expect(deferred?.delayMs).to.equal(SUCCESSORS * timing.answerTimeoutMs);
    });

    it('waits as much longer as its coordinator said it heartbeats it less often', () => {
      // A large mesh: B is not a successor and is heartbeated every 4 s rather than every 0.5 s.
      let s = follower(B, [A, C, D], D, 3, 0, { successors: addresses(C), heartbeatMs: 4_000 });
      // One late heartbeat is allowed for: two of its intervals beyond the usual.
      const silence = timing.coordinatorTimeoutMs + 2 * (4_000 - timing.heartbeatIntervalMs);
      expect(step(s, tick(silence)).effects).to.deep.equal([]);
      const gone = step(s, tick(silence + 1));
      expect(effectsOf(gone, 'election-deferred')).to.have.length(1);
      // An announcement without the field restores the usual timeout.
      s = step(s, announcement(D, 3, 0, { successors: addresses(C) })).state;
      const usual = step(s, tick(timing.coordinatorTimeoutMs + 1));
      expect(effectsOf(usual, 'election-deferred')).to.have.length(1);
    });

    it("a coordinator's heartbeat keeps its follower from holding an election", () => {
      let s = follower(B, [A, C, D], D, 3, 0);
      for (let now = 500; now <= 5_000; now += 500) {
        s = step(s, announcement(D, 3, now)).state;
        const ticked = step(s, tick(now + 400));
        expect(ticked.effects, `at ${now}`).to.deep.equal([]);
      }
    });
  });

  describe('heartbeat', () => {
    it('announces to every peer each heartbeatIntervalMs while leading', () => {
      let s = coordinator(D, [A, B, C], 1, 0);
      const due: number[] = [];
      for (let now = 0; now <= 2_000; now += 100) {
        const result = step(s, tick(now));
        for (const a of effectsOf(result, 'announce')) {
          expect(a).to.deep.equal({
            type: 'announce',
            epoch: 1,
            to: addresses(A, B, C),
            heartbeat: true,
          });
          due.push(now);
        }
        s = result.state;
      }
      expect(due).to.deep.equal([500, 1_000, 1_500, 2_000]);
    });

    it('takes a heartbeat in a probe from the coordinator it follows, in its term, and nothing else', () => {
      const s = follower(A, [B, C, D], D, 3, 0);
      const silent = timing.coordinatorTimeoutMs + 1;
      // The coordinator's probe at 1 s keeps it followed past the timeout from the announcement.
      const beat = step(s, { type: 'probe-heartbeat', now: 1_000, from: D.address, epoch: 3 });
      expect(beat.effects).to.deep.equal([]);
      expect(step(beat.state, tick(silent)).effects).to.deep.equal([]);
      expect(step(beat.state, tick(1_000 + silent)).state.coordinator).to.equal(null);
      // Another term's, or another node's, heartbeat changes nothing: the silence counts on.
      for (const other of [
        { from: D.address, epoch: 2 },
        { from: D.address, epoch: 4 },
        { from: C.address, epoch: 3 },
      ]) {
        const ignored = step(s, { type: 'probe-heartbeat', now: 1_000, ...other });
        expect(ignored.state).to.deep.equal(s);
        const later = step(ignored.state, tick(silent));
        expect(later.state.coordinator).to.equal(null);
      }
    });

    it('counts the next heartbeat from a late tick', () => {
      const s = coordinator(D, [A], 1, 0);
      const late = step(s, tick(1_700));
      expect(effectsOf(late, 'announce')).to.have.length(1);
      expect(step(late.state, tick(2_199)).effects).to.deep.equal([]);
      expect(effectsOf(step(late.state, tick(2_200)), 'announce')).to.have.length(1);
    });
  });

  describe('announcements', () => {
    const rejection = (result: StepResult): AnnouncementReply | undefined =>
      effectsOf(result, 'reply-announcement')[0]?.reply;

    it("rejects a lower-ranked announcer as 'outranked', sending it to the live coordinator it keeps following", () => {
      const s = follower(C, [A, B, D], D, 3);
      const result = step(s, announcement(A, 9, 10));
      expect(rejection(result)).to.deep.equal(refusal('outranked', 3, D));
      // D is alive and outranks A: the refusal sends A to it, and C keeps following D.
      expect(result.state.role).to.equal('follower');
      expect(result.state.coordinator).to.deep.equal(D);
      expect(effectsOf(result, 'send-election')).to.deep.equal([]);
    });

    it("rejects a lower-ranked announcer as 'outranked' and holds an election once its own coordinator is gone", () => {
      const s = follower(C, [A, B, D], D, 3);
      // D fell silent: C takes over from A (it outranks A) by holding an election.
      const late = timing.coordinatorTimeoutMs + 1;
      const silent = step(s, announcement(A, 9, late));
      expect(rejection(silent)?.reason).to.equal('outranked');
      expect(silent.state.role).to.equal('candidate');
      expect(effectsOf(silent, 'send-election')[0]?.to).to.deep.equal(addresses(D));
    });

    it("as coordinator, rejects a lower-ranked announcer as 'outranked' and re-announces to it", () => {
      const s = coordinator(D, [A, B, C], 2);
      const result = step(s, announcement(C, 5, 10));
      expect(rejection(result)).to.deep.include({ accepted: false, reason: 'outranked' });
      expect(effectsOf(result, 'announce')).to.deep.equal([
        { type: 'announce', epoch: 2, to: addresses(C) },
      ]);
      expect(result.state.role).to.equal('coordinator');
      expect(result.state.epoch).to.equal(2);
    });

    it('as candidate, rejects a lower-ranked announcer without starting another round', () => {
      const s = candidate(B, [A, C]);
      const result = step(s, announcement(A, 1, 10));
      expect(rejection(result)?.reason).to.equal('outranked');
      expect(effectsOf(result, 'send-election')).to.deep.equal([]);
      expect(result.state.round).to.equal(s.round);
    });

    it("rejects an older epoch as 'stale-epoch', telling its own epoch and coordinator", () => {
      const s = follower(B, [A, C, D], D, 3);
      const result = step(s, announcement(C, 2, 10));
      expect(rejection(result)).to.deep.equal(refusal('stale-epoch', 3, D));
      expect(result.state).to.equal(s);
    });

    it('takes an equal epoch only from the node leading that term; any other must take a newer one', () => {
      const cases: { from: NodeRef; accepted: boolean; reason?: string }[] = [
        { from: C, accepted: false, reason: 'conflict' }, // ranks below the current leader D
        { from: D, accepted: true }, // the current leader's heartbeat
        { from: E, accepted: false, reason: 'stale-epoch' }, // outranks D, but epoch 3 is D's term
      ];
      for (const c of cases) {
        const s = follower(B, [A, C, D, E], D, 3);
        const result = step(s, announcement(c.from, 3, 10));
        const reply = effectsOf(result, 'reply-announcement')[0]?.reply;
        expect(reply?.accepted, c.from.id).to.equal(c.accepted);
        expect(reply?.reason, c.from.id).to.equal(c.reason);
        expect(result.state.coordinator, c.from.id).to.deep.equal(c.accepted ? c.from : D);
        if (!c.accepted) expect(reply?.coordinator).to.deep.equal(D);
      }
    });

    it("refuses an equal epoch from a higher-ranked newcomer while leading it, so their terms' epochs differ", () => {
      // C leads epoch 1; D starts later, knows no epoch, and claims epoch 1 too.
      const c = knowing(coordinator(C, [A, B], 1), [A, B, D]);
      const refused = step(c, announcement(D, 1, 5));
      expect(rejection(refused)).to.deep.equal(refusal('stale-epoch', 1, C));
      expect(refused.state.role).to.equal('coordinator');
      // D takes epoch 2, which C accepts: it steps down.
      const d = start(D, [A, B, C]).state;
      const bumped = step(
        d,
        announceResult(1, [{ address: C.address, reply: rejection(refused) ?? null }], 6),
      );
      expect(effectsOf(bumped, 'announce')).to.deep.equal([
        { type: 'announce', epoch: 2, to: addresses(A, B, C) },
      ]);
      expect(effectsOf(bumped, 'leading')).to.be.empty;
      const accepted = step(c, announcement(D, 2, 7));
      expect(accepted.state.role).to.equal('follower');
      expect(accepted.state.coordinator).to.deep.equal(D);
    });

    it('takes no announcement at an epoch it only heard of in an election message', () => {
      // B adopts epoch 5 from A's election request, not from any leader of it.
      const s = follower(B, [A, C, D], D, 3);
      const heard = step(s, electionRequest(A, 5, 1)).state;
      expect(heard.epoch).to.equal(5);
      const result = step(heard, announcement(D, 5, 2));
      expect(rejection(result)?.reason).to.equal('stale-epoch');
      const newer = step(heard, announcement(D, 6, 2));
      expect(newer.state.coordinator).to.deep.equal(D);
    });

    it('refuses a higher-ranked announcer that is not in its peer list, and keeps its leader', () => {
      const states: ElectionState[] = [
        follower(B, [A, C], C, 1),
        coordinator(C, [A, B], 1),
        candidate(B, [A, C]),
      ];
      for (const s of states) {
        const result = step(s, announcement(D, 9, 50));
        expect(result.state, s.role).to.deep.equal(s);
        expect(effectsOf(result, 'reply-announcement')[0]?.reply, s.role).to.deep.include({
          accepted: false,
          reason: 'unknown-sender',
        });
      }
    });

    it('makes a candidate or a coordinator step down to follow an accepted announcer', () => {
      const states: [string, ElectionState][] = [
        ['candidate', candidate(B, [A, C, D])],
        ['coordinator', knowing(coordinator(C, [A, B], 2), [A, B, D])],
      ];
      for (const [name, s] of states) {
        const epoch = s.epoch + 1;
        const result = step(s, announcement(D, epoch, 50));
        expect(result.state.role, name).to.equal('follower');
        expect(result.state.coordinator, name).to.deep.equal(D);
        expect(result.state.lastHeardMs, name).to.equal(50);
        expect(effectsOf(result, 'reply-announcement')[0]?.reply, name).to.deep.equal({
          accepted: true,
          epoch,
          coordinator: D,
        });
      }
    });
  });

  describe('announce results', () => {
    const reply = (
      address: string,
      reason: AnnouncementReply['reason'],
      epoch: number,
      leader: NodeRef | null,
    ) => ({ address, reply: refusal(reason, epoch, leader) });

    it('re-announces above the highest epoch when rejecters follow a lower-ranked coordinator', () => {
      const s = coordinator(D, [A, B, C], 1);
      const result = step(
        s,
        announceResult(
          1,
          [
            reply(A.address, 'stale-epoch', 5, C),
            reply(B.address, 'stale-epoch', 7, C),
            { address: C.address, reply: null },
          ],
          10,
        ),
      );
      expect(result.state.role).to.equal('coordinator');
      expect(result.state.epoch).to.equal(8);
      expect(result.effects).to.deep.equal([
        { type: 'announce', epoch: 8, to: addresses(A, B, C) },
        { type: 'term-renewed', epoch: 8 },
      ]);
      // The re-announcement counts as the heartbeat.
      expect(step(result.state, tick(10 + 499)).effects).to.deep.equal([]);
    });

    it('steps down to a higher-ranked coordinator that the rejecters follow', () => {
      const s = coordinator(C, [A, B], 1);
      const result = step(
        s,
        announceResult(
          1,
          [reply(A.address, 'stale-epoch', 4, D), reply(B.address, 'conflict', 4, E)],
          10,
        ),
      );
      expect(result.state.role).to.equal('follower');
      expect(result.state.coordinator).to.deep.equal(E);
      expect(result.state.epoch).to.equal(4);
      expect(effectsOf(result, 'announce')).to.deep.equal([]);
    });

    it('confirms a new coordinator only after an announcement round shows no newer epoch', () => {
      const fresh = start(D, [A, B, C]);
      expect(fresh.state).to.include({ role: 'coordinator', epoch: 1, leading: false });
      expect(effectsOf(fresh, 'leading')).to.deep.equal([]);
      // A restarted top node hears that the mesh is at epoch 4: no leading yet, a newer claim.
      const stale = step(
        fresh.state,
        announceResult(
          1,
          [reply(A.address, 'stale-epoch', 4, C), reply(B.address, 'stale-epoch', 4, C)],
          5,
        ),
      );
      expect(effectsOf(stale, 'leading')).to.deep.equal([]);
      expect(effectsOf(stale, 'announce')[0]?.epoch).to.equal(5);
      const accepted = step(
        stale.state,
        announceResult(
          5,
          [{ address: A.address, reply: { accepted: true, epoch: 5, coordinator: D } }],
          10,
        ),
      );
      expect(effectsOf(accepted, 'leading')).to.deep.equal([{ type: 'leading', epoch: 5 }]);
      expect(accepted.state.leading).to.equal(true);
      // Confirmed once: later clean rounds say nothing more.
      const again = step(accepted.state, announceResult(5, [], 20));
      expect(effectsOf(again, 'leading')).to.deep.equal([]);
    });

    /** D's first term, announced to A, B and C: none answered. */
    function unanswered() {
      const alone = start(D, [A, B, C]).state;
      const silent = [A, B, C].map((p) => ({ address: p.address, reply: null }));
      return { silent, unheard: step(alone, announceResult(1, silent, 5)) };
    }

    it('confirms no term no peer answered at all: a node cut off from every peer leads nobody', () => {
      const { unheard } = unanswered();
      expect(effectsOf(unheard, 'leading')).to.deep.equal([]);
      expect(unheard.state).to.include({ role: 'coordinator', leading: false });
    });

    it('confirms a term a peer refused: a crashed node holds no term', () => {
      const { silent, unheard } = unanswered();
      // A host that refuses is heard: the term is confirmed.
      const refused = silent.map((r, i) => (i === 0 ? { ...r, refused: true as const } : r));
      const heard = step(unheard.state, announceResult(1, refused, 6));
      expect(effectsOf(heard, 'leading')).to.deep.equal([{ type: 'leading', epoch: 1 }]);
    });

    it('confirms the term of a mesh of two though its one peer is silent', () => {
      // With a single peer, nobody can tell which side is cut off: it leads (and reports it).
      const pair = start(D, [A]).state;
      const lone = step(pair, announceResult(1, [{ address: A.address, reply: null }], 5));
      expect(effectsOf(lone, 'leading')).to.deep.equal([{ type: 'leading', epoch: 1 }]);
    });

    it('an isolated node of a 3-node mesh does not confirm its own term', () => {
      // Two peers is the smallest mesh where the other two can still lead each other: the top
      // node cut off from both would otherwise report itself leader alongside their coordinator.
      const cutOff = start(C, [A, B]).state;
      const silent = [A, B].map((p) => ({ address: p.address, reply: null }));
      const unheard = step(cutOff, announceResult(1, silent, 5));
      expect(effectsOf(unheard, 'leading')).to.deep.equal([]);
      expect(unheard.state).to.include({ role: 'coordinator', leading: false });
    });

    it('never confirms a coordinator that steps down, and forgets leading when it does', () => {
      const led = coordinator(C, [A, B], 2);
      const down = step(knowing(led, [A, B, D]), announcement(D, 3, 1));
      expect(down.state).to.include({ role: 'follower', leading: false });
      const fresh = start(C, [A, B]).state;
      const better = step(fresh, announceResult(1, [reply(A.address, 'stale-epoch', 4, D)], 5));
      expect(better.state).to.include({ role: 'follower', leading: false });
      expect(effectsOf(better, 'leading')).to.deep.equal([]);
    });

    it("stops leading on an 'outranked' reply: a live higher-ranked peer is taking over", () => {
      const s = knowing(coordinator(C, [A, B], 2), [A, B, D]);
      const result = step(s, announceResult(2, [reply(D.address, 'outranked', 2, null)], 10));
      expect(result.state).to.include({ role: 'follower', coordinator: null, leading: false });
      expect(effectsOf(result, 'coordinator-changed')).to.have.length(1);
      // With no coordinator, the next tick asks the higher-ranked peer.
      const asked = step(result.state, tick(20));
      expect(effectsOf(asked, 'send-election')[0]?.to).to.deep.equal([D.address]);
    });

    it('ignores acceptances, silence, and results of an older epoch', () => {
      const s = coordinator(C, [A, B], 2);
      const ignored: ElectionEvent[] = [
        announceResult(
          2,
          [
            { address: A.address, reply: { accepted: true, epoch: 2, coordinator: C } },
            { address: B.address, reply: null },
          ],
          10,
        ),
        announceResult(1, [reply(A.address, 'stale-epoch', 9, E)], 10),
      ];
      for (const event of ignored) {
        const result = step(s, event);
        expect(result.effects).to.deep.equal([]);
        expect(result.state).to.equal(s);
      }
    });
  });

  describe('election requests', () => {
    it('answers a stranger without adopting its epoch or acting for it', () => {
      const s = coordinator(C, [A, B], 2);
      const result = step(s, electionRequest(node('10.9.9.9'), 1e9, 100));
      expect(result.state).to.deep.equal(s);
      expect(result.effects.map((e) => e.type)).to.deep.equal(['reply-answer']);
      expect(effectsOf(result, 'reply-answer')[0]?.answer.epoch).to.equal(2);
    });

    const request = (from: NodeRef, epoch: number) => electionRequest(from, epoch, 100);

    it('as coordinator, answers a lower-ranked asker and announces itself to it', () => {
      const s = coordinator(D, [A, B, C], 2);
      const result = step(s, request(A, 1));
      expect(effectsOf(result, 'reply-answer')).to.deep.equal([
        { type: 'reply-answer', answer: answer(D, 2, D) },
      ]);
      expect(effectsOf(result, 'announce')).to.deep.equal([
        { type: 'announce', epoch: 2, to: addresses(A) },
      ]);
      expect(result.state.role).to.equal('coordinator');
    });

    it('as follower of a live coordinator, only answers, vouching for the coordinator', () => {
      const s = follower(C, [A, B, D], D, 3, 0);
      const result = step(s, request(A, 1));
      expect(result.effects).to.deep.equal([{ type: 'reply-answer', answer: answer(C, 3, D) }]);
      expect(result.state.role).to.equal('follower');
    });

    it('as follower without a live coordinator, answers and holds an election', () => {
      // D has been silent for longer than the timeout, though no tick has noticed yet.
      const s = follower(C, [A, B, D], D, 3, 100 - timing.coordinatorTimeoutMs - 1);
      const result = step(s, request(A, 1));
      expect(effectsOf(result, 'reply-answer')).to.deep.equal([
        { type: 'reply-answer', answer: answer(C, 3, null) },
      ]);
      expect(result.state.role).to.equal('candidate');
      expect(effectsOf(result, 'send-election')[0]?.to).to.deep.equal(addresses(D));
    });

    it("goes on above the asker's epoch when it is higher: another node may lead that one", () => {
      const s = coordinator(D, [A, B, C], 2);
      const result = step(s, request(A, 6));
      expect(result.state).to.include({ epoch: 7, role: 'coordinator' });
      expect(effectsOf(result, 'reply-answer')[0]?.answer.epoch).to.equal(7);
      expect(effectsOf(result, 'announce')).to.deep.equal([
        { type: 'announce', epoch: 7, to: addresses(A, B, C) },
      ]);
      // A new term for the receivers: they are told it as they were told the first.
      expect(effectsOf(result, 'term-renewed')).to.deep.equal([{ type: 'term-renewed', epoch: 7 }]);
    });

    it('renews its term when a confirmed leader learns from rejections of an epoch at or above its own', () => {
      const s = coordinator(D, [A, B, C], 2);
      const result = step(
        s,
        announceResult(
          2,
          [
            {
              address: A.address,
              reply: refusal('stale-epoch', 4, B),
            },
          ],
          1,
        ),
      );
      expect(result.state).to.include({ epoch: 5, role: 'coordinator' });
      expect(effectsOf(result, 'term-renewed')).to.deep.equal([{ type: 'term-renewed', epoch: 5 }]);
      expect(effectsOf(result, 'leading')).to.be.empty;
    });

    it('does not renew a term it has not yet confirmed: its leading effect carries the newer epoch', () => {
      const s = start(D, [A, B, C]).state;
      expect(s.leading).to.equal(false);
      const result = step(s, request(A, 6));
      expect(result.state.epoch).to.equal(7);
      expect(effectsOf(result, 'term-renewed')).to.be.empty;
    });

    it("takes a follower to the asker's epoch, but no announcement at it as is", () => {
      const s = follower(B, [A, C, D], D, 2);
      const result = step(s, request(A, 6));
      expect(result.state.epoch).to.equal(6);
      const at6 = step(result.state, announcement(D, 6, 1));
      expect(effectsOf(at6, 'reply-announcement')[0]?.reply.reason).to.equal('stale-epoch');
    });
  });

  describe('peer changes', () => {
    it('holds an election when the coordinator leaves the peer set, first in line at once', () => {
      // C is first in line: with D gone nobody outranks it, so it leads at once.
      const c = step(follower(C, [A, B, D], D, 3), peerList(10, A, B, C));
      expect(c.state.role).to.equal('coordinator');
      expect(effectsOf(c, 'announce')[0]?.to).to.deep.equal(addresses(A, B));
      // B, second in line, asks C (the successor above it) at once; D is gone.
      const s = follower(B, [A, C, D], D, 3);
      const result = step(s, peerList(10, A, B, C));
      expect(result.state.role).to.equal('candidate');
      expect(result.state.coordinator).to.equal(null);
      expect(result.state.peers).to.deep.equal(addresses(A, C));
      expect(effectsOf(result, 'send-election')[0]?.to).to.deep.equal(addresses(C));
    });

    it('only records the peers when the coordinator stays', () => {
      const s = follower(B, [A, C, D], D, 3);
      const result = step(s, peerList(10, A, D, E));
      expect(result.effects).to.deep.equal([]);
      expect(result.state.peers).to.deep.equal(addresses(A, D, E));
      expect(result.state.coordinator).to.deep.equal(D);
    });
  });

  describe("'coordinator-changed'", () => {
    const changes = (r: StepResult) => effectsOf(r, 'coordinator-changed');

    it('is emitted, first, with the new coordinator and epoch when the coordinator changes', () => {
      const cases: [string, StepResult][] = [
        ['start-up as leader', start(D, [A, B])],
        ['first announcement', step(candidate(B, [C]), announcement(C, 1, 1))],
        ['silence', step(follower(B, [C], C, 1, 0), tick(10_000))],
        ['step down', step(knowing(coordinator(C, [A], 1), [A, D]), announcement(D, 2, 1))],
        ['leader left', step(follower(B, [A, C], C, 1), peerList(1, A))],
      ];
      for (const [name, result] of cases) {
        expect(changes(result), name).to.deep.equal([
          {
            type: 'coordinator-changed',
            coordinator: result.state.coordinator,
            epoch: result.state.epoch,
            reason: changes(result)[0]?.reason ?? 'missing',
          },
        ]);
        expect(result.effects[0]?.type, name).to.equal('coordinator-changed');
      }
    });

    it('is not emitted when the coordinator stays the same', () => {
      const s = follower(B, [A, C, D], D, 3);
      const cases: [string, StepResult][] = [
        ['heartbeat', step(s, announcement(D, 3, 100))],
        ['newer epoch, same leader', step(s, announcement(D, 4, 100))],
        ['rejected announcement', step(s, announcement(C, 1, 100))],
        ['live tick', step(s, tick(100))],
        ['coordinator heartbeat', step(coordinator(D, [A], 1), tick(500))],
        ['candidate retry', step(candidate(B, [C]), tick(5_000))],
      ];
      for (const [name, result] of cases) expect(changes(result), name).to.deep.equal([]);
    });
  });
});

function checkCoordinatorChanged(before: ElectionState, result: StepResult, event: ElectionEvent) {
  const changed = before.coordinator?.address !== result.state.coordinator?.address;
  const emitted = effectsOf(result, 'coordinator-changed');
  const consistent = emitted.every(
    (e) =>
      e.coordinator?.address === result.state.coordinator?.address &&
      e.epoch === result.state.epoch,
  );
  // Checked cheaply on every step of every simulation; chai only words a failure.
  if (emitted.length !== (changed ? 1 : 0) || !consistent) {
    expect(
      { emitted, coordinator: result.state.coordinator, epoch: result.state.epoch },
      `${before.self.address} on ${event.type}, coordinator was ${before.coordinator?.address}`,
    ).to.deep.equal({
      emitted: changed ? 'one matching coordinator-changed effect' : [],
      coordinator: result.state.coordinator,
      epoch: result.state.epoch,
    });
  }
}

/** Exactly one live node leads, the expected one, and every live node follows it at its epoch. */
function expectConverged(cluster: Cluster, leader: NodeRef, context: string) {
  const live = cluster.live();
  const summary = live
    .map((r) => {
      const s = cluster.state(r);
      return `${r.address}:${s.role}/${s.coordinator?.address ?? '-'}@${s.epoch}`;
    })
    .join(' ');
  const leaders = live.filter((r) => cluster.state(r).role === 'coordinator');
  expect(
    leaders.map((r) => r.address),
    `${context}: leaders; ${summary}`,
  ).to.deep.equal([leader.address]);
  const epoch = cluster.state(leader).epoch;
  for (const r of live) {
    const s = cluster.state(r);
    expect(s.coordinator?.address, `${context}: ${r.address}; ${summary}`).to.equal(leader.address);
    expect(s.epoch, `${context}: ${r.address}; ${summary}`).to.equal(epoch);
    if (r !== leader) expect(s.role, `${context}: ${r.address}; ${summary}`).to.equal('follower');
  }
}

function highest(refs: readonly NodeRef[]): NodeRef {
  const top = [...refs].sort((a, b) => compareRank(b.address, a.address))[0];
  if (!top) throw new Error('no nodes');
  return top;
}

/** 3 to 7 nodes with distinct addresses, mixing IPv4 and IPv6 so rank is not string order. */
function makeCluster(seed: number): { cluster: Cluster; random: () => number } {
  const random = prng(seed);
  const n = 3 + Math.floor(random() * 5);
  const refs = new Map<string, NodeRef>();
  while (refs.size < n) {
    const k = Math.floor(random() * 40);
    const ip = random() < 0.7 ? `10.0.${k % 3}.${k}` : `fd00::${k.toString(16)}`;
    const address = ip.includes(':') ? `[${ip}]:8080` : `${ip}:${8080 + (k % 2)}`;
    refs.set(address, { id: `node-${k}@${ip}`, address });
  }
  const leaders = new Map<number, string>();
  const cluster = new Cluster({
    refs: [...refs.values()],
    timing,
    random,
    onStep: (before, result, event) => {
      checkCoordinatorChanged(before, result, event);
      checkOneLeaderPerEpoch(leaders, result);
    },
  });
  return { cluster, random };
}

/** Every epoch is led (confirmed, so it may report) by one node only, whatever happens. */
function checkOneLeaderPerEpoch(leaders: Map<number, string>, result: StepResult) {
  for (const e of effectsOf(result, 'leading')) {
    const self = result.state.self.address;
    const before = leaders.get(e.epoch);
    if (before !== undefined && before !== self) {
      expect.fail(`epoch ${e.epoch} led by ${before} and then by ${self}`);
    }
    leaders.set(e.epoch, self);
  }
}

/** Starts every live node in a random order and lets the messages settle. */
function startUp(cluster: Cluster, random: () => number): NodeRef {
  cluster.start(shuffled(cluster.live(), random));
  cluster.settle();
  return highest(cluster.live());
}

const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);
const FAILOVER_MS = timing.coordinatorTimeoutMs + 2 * timing.electionTimeoutMs;

describe('bully election: clusters in memory', () => {
  it('converges on the highest-ranked live node once messages settle', () => {
    for (const seed of SEEDS) {
      const { cluster, random } = makeCluster(seed);
      // Some nodes are down from the start; at least one is up.
      for (const ref of cluster.refs) {
        if (random() < 0.3 && cluster.live().length > 1) cluster.crash(ref);
      }
      const leader = startUp(cluster, random);
      expectConverged(cluster, leader, `seed ${seed}`);
    }
  });

  it('never lets two nodes lead one epoch when they start one by one, in any order', () => {
    for (const seed of SEEDS) {
      const { cluster, random } = makeCluster(seed);
      // Each node starts after the one before has led for a while (a rolling start-up).
      for (const ref of shuffled(cluster.refs, random)) {
        cluster.start([ref]);
        cluster.settle();
        cluster.pass(2 * timing.heartbeatIntervalMs);
      }
      cluster.pass(FAILOVER_MS);
      expectConverged(cluster, highest(cluster.refs), `seed ${seed}`);
    }
  });

  it('fails over to the next-highest node at a higher epoch when the coordinator crashes', () => {
    for (const seed of SEEDS) {
      const { cluster, random } = makeCluster(seed);
      const first = startUp(cluster, random);
      expectConverged(cluster, first, `seed ${seed} before the crash`);
      const oldEpoch = cluster.state(first).epoch;

      cluster.crash(first);
      cluster.pass(FAILOVER_MS);
      const next = highest(cluster.live());
      expectConverged(cluster, next, `seed ${seed} after the crash`);
      expect(cluster.state(next).epoch, `seed ${seed}`).to.be.greaterThan(oldEpoch);
    }
  });

  it('fails over as fast when the top two or three crash together: the next in line leads at once', () => {
    for (const seed of SEEDS) {
      const { cluster, random } = makeCluster(seed);
      if (cluster.refs.length < 4) continue;
      const top = startUp(cluster, random);
      const oldEpoch = cluster.state(top).epoch;
      const ranked = [...cluster.refs].sort((a, b) => compareRank(b.address, a.address));
      const down = 2 + (seed % 2);
      for (const ref of ranked.slice(0, down)) cluster.crash(ref);
      // Silence, then one election round (refused at once) and one announcement: no stagger.
      cluster.pass(timing.coordinatorTimeoutMs + 2 * 100);
      const next = highest(cluster.live());
      expectConverged(cluster, next, `seed ${seed} after the crash`);
      expect(cluster.state(next).epoch, `seed ${seed}`).to.be.greaterThan(oldEpoch);
    }
  });

  it('lets a restarted highest node (epoch 0) take over above the current epoch', () => {
    for (const seed of SEEDS) {
      const { cluster, random } = makeCluster(seed);
      const top = startUp(cluster, random);
      cluster.crash(top);
      cluster.pass(FAILOVER_MS);
      const interim = cluster.state(highest(cluster.live()));
      expect(interim.role, `seed ${seed}`).to.equal('coordinator');

      cluster.restart(top);
      expect(cluster.state(top).epoch).to.equal(0);
      cluster.settle();
      expectConverged(cluster, top, `seed ${seed} after the restart`);
      expect(cluster.state(top).epoch, `seed ${seed}`).to.be.greaterThan(interim.epoch);

      // And it holds through heartbeats and timeouts.
      cluster.pass(2 * timing.coordinatorTimeoutMs);
      expectConverged(cluster, top, `seed ${seed} later`);
    }
  });
});
