// Whose term hand-over a new coordinator takes from the replies to its announcements: only a
// coordinator it knows led before it (predecessors.ts), in the sequences that make one.
import { expect } from 'chai';
import type { Outcome } from '../../src/core/transport.js';
import { ElectionDriver } from '../../src/election/driver.js';
import type { HandoverRefusal } from '../../src/election/predecessors.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { Announcement, AnnouncementReply } from '../../src/wire/peer-messages.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import { newRecord } from '../../src/prober/verdict.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { DEFAULT_TIMING as TIMING } from '../support/election-sim.js';
import { failed, ok } from '../support/election-peers.js';
import { FakeClock } from '../support/fake-clock.js';
import { TestDelegate } from '../support/test-delegate.js';

const ref = (name: string, n: number): NodeRef => ({
  id: `${name}@10.0.0.${n}`,
  address: `10.0.0.${n}:8080`,
});
/** In rank order, the highest first. */
const TOP = ref('top', 9);
const SECOND = ref('second', 8);
const THIRD = ref('third', 5);
const LOW = ref('low', 1);

const handover = (epoch: number, extra: Partial<TermHandover> = {}): TermHandover => ({
  epoch,
  settled: [],
  in_flight: [],
  undelivered: [],
  ...extra,
});
/** A false peer_dead of THIRD. */
const falseDeath = peerStatusPayload({
  record: { ...newRecord(THIRD.address, 1_000), health: 'dead', alerted: true },
  event: 'peer_dead',
  incidentMs: 1_000,
  coordinator: LOW,
  epoch: 4,
  now: 1_000,
});
/** A pod holding the secret that never led: it pages for a live peer and silences a real key. */
const injected = (epoch: number) =>
  handover(epoch, { settled: ['knh:10.0.0.6:8080:900:dead'], undelivered: [falseDeath] });
const stale = (epoch: number, coordinator: NodeRef | null): Outcome<AnnouncementReply> =>
  ok({ accepted: false, reason: 'stale-epoch', epoch, coordinator });
const accepted = (a: Announcement, h?: TermHandover): Outcome<AnnouncementReply> =>
  ok({ accepted: true, epoch: a.epoch, coordinator: a.from, ...(h ? { handover: h } : {}) });

/** A node whose peers answer its announcements from `reply`; its elections nobody answers. */
function node(
  self: NodeRef,
  peers: NodeRef[],
  reply: (to: string, a: Announcement) => Outcome<AnnouncementReply>,
) {
  const clock = new FakeClock();
  const logger = new CapturingLogger();
  const taken: { from: string; epoch: number }[] = [];
  const refused: HandoverRefusal[] = [];
  const delegate = new TestDelegate(self, {
    onTermHandover: (h, from) => taken.push({ from, epoch: h.epoch }),
  });
  const driver = new ElectionDriver({
    self,
    timing: TIMING,
    clock,
    logger,
    transport: {
      sendElection: () => Promise.resolve(failed()),
      announce: (to, a) => Promise.resolve(reply(to, a)),
    },
    delegate,
    onCoordinatorChanged: () => undefined,
    onLeading: () => undefined,
    onHandoverRefused: (reason) => refused.push(reason),
  });
  driver.setPeers(peers.map((p) => p.address));
  const warned = () => logger.at('warn').filter((r) => r.fields.event === 'handover-refused');
  const takenFrom = () => new Set(taken.map((t) => t.from));
  return { driver, clock, taken, takenFrom, refused, warned };
}

describe('election driver: whose hand-over a new coordinator takes', () => {
  it("started while another node leads: takes that coordinator's hand-over, refuses another peer's", async () => {
    // SECOND leads epoch 5; TOP (re)starts, is refused as stale, goes on at 6, SECOND yields. Its
    // hand-over names the epoch it held when it stopped leading: 6, the one that ended its term.
    const n = node(TOP, [SECOND, LOW], (to, a) => {
      if (a.epoch <= 5) return stale(5, SECOND);
      return accepted(
        a,
        to === SECOND.address ? handover(a.epoch, { settled: ['k1'] }) : injected(5),
      );
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.driver.epoch).to.equal(6);
    expect(n.taken).to.deep.equal([{ from: SECOND.address, epoch: 6 }]);
    expect(n.refused).to.deep.equal(['not-predecessor']);
    expect(n.warned().map((r) => r.fields)).to.deep.include.members([
      {
        event: 'handover-refused',
        from: LOW.address,
        reason: 'not-predecessor',
        epoch: 5,
        ownEpoch: 6,
        predecessors: [SECOND.address],
        undelivered: 1,
        settled: 1,
        inFlight: 0,
      },
    ]);
    n.driver.stop();
  });

  it('refuses a hand-over naming a term newer than its own, even from its predecessor', async () => {
    const n = node(TOP, [SECOND, LOW], (to, a) => {
      if (a.epoch <= 5) return stale(5, SECOND);
      return accepted(a, to === SECOND.address ? injected(a.epoch + 1) : undefined);
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.taken).to.deep.equal([]);
    expect(n.refused).to.deep.equal(['newer-term']);
    n.driver.stop();
  });

  it('knowing no predecessor (nobody named one), refuses every hand-over', async () => {
    // The peers' coordinator fell silent: their refusals name none, so no term was heard of.
    const n = node(TOP, [SECOND, LOW], (to, a) => {
      if (a.epoch <= 5) return stale(5, null);
      return accepted(
        a,
        to === SECOND.address ? handover(a.epoch, { in_flight: ['k1'] }) : undefined,
      );
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.driver.epoch).to.equal(6);
    expect(n.taken).to.deep.equal([]);
    expect(n.refused).to.deep.equal(['not-predecessor']);
    expect(n.warned()[0]?.fields).to.include({ from: SECOND.address, reason: 'not-predecessor' });
    n.driver.stop();
  });

  it("two failovers in a row: takes the hand-over of the coordinator before the one that died, no other peer's", async () => {
    // TOP led 5, SECOND took 6 and died: THIRD, which followed both, takes 7.
    let failedOver = false;
    const n = node(THIRD, [TOP, SECOND, LOW], (to, a) => {
      if (!failedOver) return accepted(a);
      if (to === SECOND.address) return failed();
      return accepted(a, to === TOP.address ? handover(5) : injected(6));
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.driver.handleAnnouncement({ from: TOP, epoch: 5, peers: [] }, 4);
    n.driver.handleAnnouncement(
      { from: SECOND, epoch: 6, peers: [], successors: [THIRD.address] },
      4,
    );
    expect(n.driver.coordinator?.id).to.equal(SECOND.id);
    failedOver = true;
    await n.clock.advanceAsync(TIMING.coordinatorTimeoutMs * 4);
    expect(n.driver.role).to.equal('coordinator');
    expect(n.driver.epoch).to.equal(7);
    expect([...n.takenFrom()]).to.deep.equal([TOP.address]);
    expect(n.refused).to.not.be.empty;
    expect(new Set(n.refused)).to.deep.equal(new Set(['not-predecessor']));
    expect(n.warned()[0]?.fields).to.include({ from: LOW.address });
    n.driver.stop();
  });

  it('a healed partition: takes the hand-over of the coordinator whose newer epoch refused it', async () => {
    // TOP leads epoch 1; meanwhile SECOND led epoch 4 on the other side of a partition.
    let healed = false;
    const n = node(TOP, [SECOND, LOW], (to, a) => {
      if (!healed) return accepted(a);
      if (a.epoch <= 4) return stale(4, SECOND);
      return accepted(a, to === SECOND.address ? handover(a.epoch) : injected(4));
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.driver.epoch).to.equal(1);
    healed = true;
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.driver.epoch).to.equal(5);
    expect(n.taken).to.deep.equal([{ from: SECOND.address, epoch: 5 }]);
    expect(n.refused).to.deep.equal(['not-predecessor']);
    n.driver.stop();
  });

  it('a healed partition whose other side held the older epoch: nobody named its coordinator, refused', async () => {
    // TOP went on at 5 (it heard of epoch 4); SECOND led 3 elsewhere, and takes TOP's term at once.
    const n = node(TOP, [SECOND, LOW], (to, a) =>
      accepted(a, to === SECOND.address && a.epoch === 5 ? injected(5) : undefined),
    );
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.driver.handleElection({ from: LOW, epoch: 4 });
    await n.clock.advanceAsync(0);
    expect(n.driver.epoch).to.equal(5);
    expect(n.taken).to.deep.equal([]);
    expect(n.refused).to.deep.equal(['not-predecessor']);
    n.driver.stop();
  });

  it('takes no hand-over from a peer that refuses its term: it is for the node that peer follows', async () => {
    // THIRD followed TOP; TOP fell silent and THIRD took 6; TOP, back, yielded to TOPMOST's 7.
    const TOPMOST = ref('topmost', 10);
    let failedOver = false;
    const n = node(THIRD, [TOPMOST, TOP, LOW], (to, a) => {
      if (!failedOver || to !== TOP.address) return accepted(a);
      const refusal: AnnouncementReply = {
        accepted: false,
        reason: 'stale-epoch',
        epoch: 7,
        coordinator: TOPMOST,
        handover: handover(7, { settled: ['k1'] }),
      };
      return ok(refusal);
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.driver.handleAnnouncement({ from: TOP, epoch: 5, peers: [], successors: [THIRD.address] }, 4);
    failedOver = true;
    await n.clock.advanceAsync(TIMING.coordinatorTimeoutMs * 4);
    expect(n.driver.coordinator?.id, 'it led 6, then followed TOPMOST').to.equal(TOPMOST.id);
    expect(n.taken).to.deep.equal([]);
    expect(n.refused, 'no refusal either: it was not for this term').to.deep.equal([]);
    n.driver.stop();
  });
});
