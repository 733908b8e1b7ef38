// The election at scale: batches of election messages in the pure core, and whole meshes of 100
// and 1,000 nodes on simulated time (test/support/election-sim.ts), counting every message.
import { expect } from 'chai';
import type { NodeRef } from '../../src/wire/node-ref.js';
import {
  FIRST_BATCH,
  electionDelayMs,
  initialState,
  step,
  type ElectionState,
  type StepResult,
} from '../../src/election/bully.js';
import { DEFAULT_TIMING, simulateFailover } from '../support/election-sim.js';
import { answer, effectsOf, electionResult, peerList, tick } from '../support/election-events.js';

const node = (i: number): NodeRef => ({ id: `n${i}@10.0.0.${i}`, address: `10.0.0.${i}:8080` });
const sends = (r: StepResult) => effectsOf(r, 'send-election');

/** Node 1 of `n` nodes, started: a candidate asking its first batch. */
function lowest(n: number): StepResult {
  const nodes = Array.from({ length: n }, (_, i) => node(i + 1));
  const known = step(initialState(node(1), DEFAULT_TIMING), peerList(0, ...nodes));
  return step(known.state, { type: 'start', now: 0 });
}

const noAnswers = (s: ElectionState, now: number) => step(s, electionResult(s.round, [], now));

describe('election at scale', () => {
  describe('batches of election messages', () => {
    it('asks the highest-ranked peers first, 8 then doubling, and wins only once every one failed', () => {
      const first = lowest(40); // 39 higher-ranked peers
      expect(sends(first)[0]?.to).to.deep.equal(
        Array.from({ length: FIRST_BATCH }, (_, i) => node(40 - i).address),
      );
      const second = noAnswers(first.state, 10);
      expect(second.state.role).to.equal('candidate');
      expect(sends(second)[0]?.to).to.have.length(2 * FIRST_BATCH);
      expect(sends(second)[0]?.to[0]).to.equal(node(32).address);
      const third = noAnswers(second.state, 20);
      expect(sends(third)[0]?.to).to.have.length(39 - 3 * FIRST_BATCH);
      const last = noAnswers(third.state, 30);
      expect(last.state.role).to.equal('coordinator');
      const asked = [first, second, third].flatMap((r) => sends(r)[0]?.to ?? []);
      expect(new Set(asked).size).to.equal(39);
    });

    it('stops asking once a higher-ranked peer answers, and waits for its announcement', () => {
      const first = lowest(40);
      const answered = step(
        first.state,
        electionResult(first.state.round, [answer(node(37), 0, null)], 10),
      );
      expect(sends(answered)).to.be.empty;
      expect(answered.state.waiting).to.equal('announcement');
    });

    it('asks the next batch when a batch gets no result before the answer timeout', () => {
      const first = lowest(40);
      const late = step(first.state, tick(DEFAULT_TIMING.answerTimeoutMs));
      expect(sends(late)[0]?.to).to.have.length(2 * FIRST_BATCH);
      // A result for the earlier batch, arriving late, changes nothing.
      const stale = step(
        late.state,
        electionResult(first.state.round, [], DEFAULT_TIMING.answerTimeoutMs + 1),
      );
      expect(stale.state).to.equal(late.state);
    });
  });

  describe('a mesh after its coordinator fails (simulated time, every message counted)', function () {
    this.timeout(60_000);
    for (const size of [100, 1_000]) {
      for (const fault of ['crash', 'blackhole'] as const) {
        it(`${size} nodes, coordinator ${fault === 'crash' ? 'crashed' : 'black-holed'}: the next node leads, all follow, ≤ 10 × N election messages`, () => {
          const r = simulateFailover(size, fault);
          expect(r.coordinator).to.equal(
            `10.0.${((size - 2) >> 8) & 255}.${(size - 2) & 255}:8080`,
          );
          // Silence (COORDINATOR_TIMEOUT) plus, black-holed, one request timeout; then one announcement round.
          expect(r.agreedMs).to.be.below(fault === 'crash' ? 2_500 : 3_500);
          expect(r.electionMessages).to.be.at.most(10 * size);
        });
      }
    }

    it('1,000 nodes, the coordinator and its three successors black-holed together: the next one leads, still ≤ 10 × N', () => {
      const r = simulateFailover(1_000, 'blackhole', { alsoFailing: 3 });
      expect(r.coordinator).to.equal('10.0.3.227:8080');
      expect(r.agreedMs).to.not.equal(null);
      expect(r.electionMessages).to.be.at.most(10 * 1_000);
    });
  });
});

describe('electionDelayMs: the stagger', () => {
  const peers = Array.from({ length: 20 }, (_, i) => node(i + 1).address);
  const delayOf = (i: number, successors: string[]) =>
    electionDelayMs({
      ...initialState(node(i), DEFAULT_TIMING),
      peers: peers.filter((p) => p !== node(i).address),
      coordinator: node(20),
      successors,
    });
  const step = DEFAULT_TIMING.answerTimeoutMs;

  it('lets the named successors hold at once, the others after 3 + log2(1 + place) steps', () => {
    const named = [node(19), node(18), node(17)].map((n) => n.address);
    expect([19, 18, 17].map((i) => delayOf(i, named))).to.deep.equal([0, 0, 0]);
    // Node 16 is the highest not named (place 0), node 13 has 3 above it among those not named.
    expect(delayOf(16, named)).to.equal(3 * step);
    expect(delayOf(13, named)).to.equal(5 * step);
    expect(delayOf(1, named)).to.equal((3 + Math.log2(16)) * step);
  });

  it('without a named list, the highest-ranked peers but the coordinator stand in for it', () => {
    expect(delayOf(19, [])).to.equal(0);
    expect(delayOf(17, [])).to.equal(0);
    expect(delayOf(16, [])).to.equal(3 * step);
  });

  it('skips a named successor that left the peer list', () => {
    const named = ['10.0.0.99:8080', node(18).address];
    expect(delayOf(18, named)).to.equal(0);
  });
});
