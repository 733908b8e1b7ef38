// Rounds over thousands of peers: probes spread evenly over half the interval, a bound on those in
// flight, every peer probed once a round, and a long round's peers not probed twice.
import { expect } from 'chai';
import type { Outcome } from '../../src/core/transport.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { MAX_PROBES_IN_FLIGHT, PACE_ABOVE_PEERS } from '../../src/prober/pacing.js';
import type { RoundReport } from '../../src/prober/rounds.js';
import { FakeClock } from '../support/fake-clock.js';
import { ABORTED, answer, pingResponse } from '../support/pings.js';
import { probeRounds } from '../support/probe-rounds.js';

const INTERVAL = 1_000;
const address = (i: number) => `10.1.${i >> 8}.${i & 255}:8080`;

/** Peers that answer after `answerMs` (fake time); records when each ping went out. */
function setup(size: number, answerMs: number) {
  const clock = new FakeClock(0);
  const pings: { address: string; atMs: number }[] = [];
  let open = 0;
  let maxOpen = 0;
  const ping = async (to: string, signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    pings.push({ address: to, atMs: clock.now() });
    open++;
    maxOpen = Math.max(maxOpen, open);
    try {
      if (answerMs > 0) await clock.sleep(answerMs, signal);
    } catch {
      return ABORTED;
    } finally {
      open--;
    }
    return answer(pingResponse(to, 'n'), answerMs);
  };
  const reports: RoundReport[] = [];
  const rounds = probeRounds({
    clock,
    ping,
    intervalMs: INTERVAL,
    onRound: (r) => reports.push(r),
  });
  const peers = Array.from({ length: size }, (_, i) => address(i + 1));
  rounds.setPeers(peers);
  return { clock, pings, rounds, reports, peers, maxOpen: () => maxOpen };
}

describe('ProbeRounds at scale (paced rounds)', () => {
  it('spreads 5,000 probes evenly over the first half of the interval, each peer once a round', async () => {
    const t = setup(5_000, 2);
    t.rounds.start([]);
    await t.clock.advanceAsync(INTERVAL - 1);
    t.rounds.stop();
    expect(t.pings).to.have.length(5_000);
    expect(new Set(t.pings.map((p) => p.address)).size).to.equal(5_000);
    // 10 ms buckets over the first 500 ms: every bucket has its share (100), none a burst.
    const buckets = new Array<number>(INTERVAL / 10).fill(0);
    for (const p of t.pings) buckets[Math.floor(p.atMs / 10)]!++;
    const busy = buckets.slice(0, 50);
    expect(Math.max(...busy)).to.be.at.most(2 * (5_000 / 50));
    expect(Math.min(...busy)).to.be.at.least(5_000 / 50 / 2);
    expect(buckets.slice(50).every((n) => n === 0)).to.be.true;
    expect(t.reports).to.have.length(1);
    expect(t.reports[0]?.durationMs).to.be.below(INTERVAL);
  });

  it('probes each peer at the same place in every round: one interval apart', async () => {
    const t = setup(1_000, 2);
    t.rounds.start([]);
    await t.clock.advanceAsync(3 * INTERVAL - 1);
    t.rounds.stop();
    const first = t.pings.filter((p) => p.address === address(500)).map((p) => p.atMs);
    expect(first).to.have.length(3);
    expect(first[1]! - first[0]!).to.be.within(INTERVAL - 20, INTERVAL + 20);
    expect(first[2]! - first[1]!).to.be.within(INTERVAL - 20, INTERVAL + 20);
  });

  it(`keeps at most ${MAX_PROBES_IN_FLIGHT} probes in flight, and never probes a peer of a long round twice`, async () => {
    // Every peer takes 3 s to answer: a round cannot finish within its interval.
    const t = setup(3_000, 3_000);
    t.rounds.start([]);
    await t.clock.advanceAsync(2 * INTERVAL + 10);
    expect(t.maxOpen()).to.equal(MAX_PROBES_IN_FLIGHT);
    // Rounds 2 and 3 started meanwhile; the peers still waiting for round 1 were not probed again.
    expect(new Set(t.pings.map((p) => p.address)).size).to.equal(t.pings.length);
    await t.clock.advanceAsync(10 * INTERVAL);
    t.rounds.stop();
    const perPeer = new Map<string, number>();
    for (const p of t.pings) perPeer.set(p.address, (perPeer.get(p.address) ?? 0) + 1);
    expect(perPeer.size).to.equal(3_000);
  });

  it('probeSoon probes a peer waiting for its place in a paced round now, and the round skips it', async () => {
    const t = setup(1_000, 2);
    t.rounds.start([]);
    await t.clock.advanceAsync(INTERVAL + 5);
    // Round 2 is under way; peer 900's place in it is at about 450 ms.
    const peer = address(900);
    t.rounds.probeSoon(peer);
    await t.clock.advanceAsync(1);
    const inRound2 = t.pings.filter((p) => p.address === peer && p.atMs >= INTERVAL);
    expect(inRound2.map((p) => p.atMs)).to.deep.equal([INTERVAL + 5]);
    await t.clock.advanceAsync(INTERVAL - 20);
    t.rounds.stop();
    expect(t.pings.filter((p) => p.address === peer && p.atMs >= INTERVAL)).to.have.length(1);
  });

  it(`probes a mesh of up to ${PACE_ABOVE_PEERS} peers all at once, as before`, async () => {
    const t = setup(PACE_ABOVE_PEERS, 2);
    t.rounds.start([]);
    await t.clock.advanceAsync(5);
    t.rounds.stop();
    expect(t.pings).to.have.length(PACE_ABOVE_PEERS);
    expect(t.pings.every((p) => p.atMs === 0)).to.be.true;
  });
});
