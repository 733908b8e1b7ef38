// A term's events across a change of coordinator: a node that stops leading sends nothing more of
// its term and says what went out; its successor sends each event once, waiting for those in flight.
import { expect } from 'chai';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import { CLUSTER_URL, PEER_URL } from '../support/test-notifier.js';
import { BAD_REQUEST, OK, UNAVAILABLE } from '../support/fake-poster.js';
import { peerDeath, round, setupReporter } from '../support/reporter-fixture.js';
import { cannotJudgeIncident } from '../support/alerts.js';

/** The death of w<n> at 10.0.0.<n>, as decided by the fixture's coordinator. */
const deathOf = (n: number) => peerDeath(`10.0.0.${n}`, `w${n}`);

/** A leading reporter whose KNH receiver fails (503) until `recover()`. */
function failingReceiver() {
  let up = false;
  const fx = setupReporter({
    holdShares: false,
    answer: (call) => (call.url === PEER_URL && !up ? UNAVAILABLE : OK),
  });
  fx.lead();
  const recover = () => {
    up = true;
  };
  return { fx, recover };
}

describe('Reporter: a term handed over', () => {
  it('sends nothing more of its term once another node leads: unsent events are withdrawn and handed over', async () => {
    // One POST at a time: the first hangs in flight, the other two wait in the queue.
    const fx = setupReporter({
      holdShares: false,
      answer: (call, i) => (call.url === PEER_URL && i === 0 ? 'hang' : OK),
    });
    fx.lead();
    const deaths = [1, 2, 3].map(deathOf);
    for (const d of deaths) fx.reporter.onJudgement(d);
    await fx.clock.advanceAsync(0);
    expect(fx.peerPosts()).to.have.length(1);
    const [first, second, third] = fx.reporter.undelivered().map((p) => p.dedup_key);

    fx.reporter.stopLeading('hand-over');
    const handover = fx.reporter.handOver() as TermHandover;
    expect(handover.epoch).to.equal(3);
    expect(handover.in_flight).to.deep.equal([first]);
    expect(handover.settled).to.deep.equal([]);
    expect(handover.undelivered.map((p) => p.dedup_key)).to.deep.equal([second, third]);

    fx.poster.release(OK); // the one in flight gets through
    await fx.clock.advanceAsync(60_000);
    expect(
      fx.peerPosts().map((p) => p.dedup_key),
      'nothing after the hand-over',
    ).to.deep.equal([first]);
    const later = fx.reporter.handOver() as TermHandover;
    expect(later.settled).to.deep.equal([first]);
    expect(later.in_flight).to.deep.equal([]);
    expect(later.undelivered.map((p) => p.dedup_key)).to.deep.equal([second, third]);
    await fx.clock.advanceAsync(1_000);
    expect(fx.reporter.handOver(), 'handed over for a minute only').to.equal(null);
  });

  it('does not retry a POST that was in flight when it handed over, and hands the event over', async () => {
    const fx = setupReporter({
      holdShares: false,
      answer: (call, i) => (call.url === PEER_URL && i === 0 ? 'hang' : UNAVAILABLE),
    });
    fx.lead();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(0);
    fx.reporter.stopLeading('hand-over');
    fx.poster.release(UNAVAILABLE);
    await fx.clock.advanceAsync(60_000);
    expect(fx.peerPosts(), 'no retry').to.have.length(1);
    const handover = fx.reporter.handOver() as TermHandover;
    expect(handover.in_flight).to.deep.equal([]);
    expect(handover.undelivered).to.have.length(1);
  });

  it('drains its queue when it stops (shutdown) rather than handing over', async () => {
    const fx = setupReporter({
      holdShares: false,
      answer: (call, i) => (call.url === PEER_URL && i === 0 ? 'hang' : OK),
    });
    fx.lead();
    for (const d of [1, 2].map(deathOf)) fx.reporter.onJudgement(d);
    await fx.clock.advanceAsync(0);
    fx.reporter.stopLeading('drain');
    fx.poster.release(OK);
    await fx.clock.advanceAsync(100);
    expect(fx.peerPosts()).to.have.length(2);
    expect(fx.reporter.handOver()).to.equal(null);
  });

  it('sends what it withdrew itself when it leads again before any node took its hand-over', async () => {
    const { fx, recover } = failingReceiver();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(100); // failing, waiting for its retry
    const [event] = fx.reporter.undelivered() as [PeerStatusPayload];
    // Told 'outranked' by a node that then dies before leading: it wins the next election itself.
    fx.reporter.stopLeading('hand-over');
    const tried = fx.peerPosts().length;
    fx.lead([]);
    recover();
    await fx.clock.advanceAsync(60_000);
    expect(
      fx
        .peerPosts()
        .slice(tried)
        .map((p) => p.dedup_key),
    ).to.deep.equal([event.dedup_key]);
  });

  it('hands what it withdrew to every node announcing itself within the minute, then forgets it', async () => {
    const { fx } = failingReceiver();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(100);
    fx.reporter.stopLeading('hand-over');
    const key = (fx.reporter.undelivered()[0] as PeerStatusPayload).dedup_key;
    // The first node to take it may lose its lead before sending it: the next one takes it too.
    for (const asker of ['first', 'second']) {
      const handover = fx.reporter.handOver() as TermHandover;
      expect(
        handover.undelivered.map((p) => p.dedup_key),
        asker,
      ).to.deep.equal([key]);
    }
    expect(fx.reporter.undelivered(), 'shared with followers meanwhile').to.have.length(1);
    await fx.clock.advanceAsync(61_000);
    expect(fx.reporter.undelivered(), 'after the hand-over window').to.deep.equal([]);
    expect(fx.reporter.handOver()).to.equal(null);
  });

  it("leading again, sends what it withdrew but for what its successor's hand-over says went out", async () => {
    const { fx, recover } = failingReceiver();
    for (const d of [1, 2].map(deathOf)) fx.reporter.onJudgement(d);
    await fx.clock.advanceAsync(100);
    fx.reporter.stopLeading('hand-over');
    const [sentThere, lost] = (fx.reporter.handOver() as TermHandover).undelivered.map(
      (p) => p.dedup_key,
    );
    // The node that took both sent one, then lost its lead; this node wins again.
    recover();
    const before = fx.peerPosts().length;
    let settle = () => {};
    const ready = new Promise<void>((resolve) => (settle = resolve));
    fx.lead([], { ready });
    fx.reporter.takeHandover({ epoch: 4, settled: [sentThere!], in_flight: [], undelivered: [] });
    settle();
    await fx.clock.advanceAsync(5_000);
    expect(
      fx
        .peerPosts()
        .slice(before)
        .map((p) => p.dedup_key),
    ).to.deep.equal([lost]);
  });

  it('sends an event handed over to it once, however often the hand-over is repeated', async () => {
    const predecessor = setupReporter({ holdShares: false });
    predecessor.lead();
    predecessor.reporter.onJudgement(deathOf(1));
    const [event] = predecessor.reporter.undelivered() as [PeerStatusPayload];
    // Its receiver rejects it: given up here, so nothing but the ledger stops a second POST.
    const fx = setupReporter({ holdShares: false, answer: () => BAD_REQUEST });
    fx.lead();
    const handover = { epoch: 2, settled: [], in_flight: [], undelivered: [event] };
    fx.reporter.takeHandover(structuredClone(handover));
    await fx.clock.advanceAsync(1_000);
    fx.reporter.takeHandover(structuredClone(handover));
    await fx.clock.advanceAsync(1_000);
    expect(fx.peerPosts().map((p) => p.dedup_key)).to.deep.equal([event.dedup_key]);
  });

  it("takes back an event still queued for its receiver once a predecessor's hand-over says it went out", async () => {
    // The receiver is failing: this term's event waits in the queue for its retry.
    const { fx, recover } = failingReceiver();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(100);
    const key = (fx.reporter.undelivered()[0] as PeerStatusPayload).dedup_key;
    const tried = fx.peerPosts().length;
    fx.reporter.takeHandover({ epoch: 2, settled: [key], in_flight: [], undelivered: [] });
    recover();
    await fx.clock.advanceAsync(60_000);
    expect(fx.peerPosts().length, 'not retried').to.equal(tried);
    expect(fx.reporter.undelivered()).to.deep.equal([]);
  });

  it('sends a POST withdrawn in flight itself when it leads again before that POST fails', async () => {
    const fx = setupReporter({
      holdShares: false,
      answer: (call, i) => (call.url === PEER_URL && i === 0 ? 'hang' : OK),
    });
    fx.lead();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(0);
    const key = (fx.reporter.undelivered()[0] as PeerStatusPayload).dedup_key;
    fx.reporter.stopLeading('hand-over');
    fx.lead([]);
    fx.poster.release(UNAVAILABLE); // the withdrawn attempt fails after this node leads again
    await fx.clock.advanceAsync(5_000);
    expect(fx.peerPosts().map((p) => p.dedup_key)).to.deep.equal([key, key]);
  });

  it('does not send twice what the predecessor says it sent, when it says so after the term began', async () => {
    const predecessor = setupReporter({ holdShares: false });
    predecessor.lead();
    predecessor.reporter.onJudgement(deathOf(1));
    const [sent] = predecessor.reporter.undelivered() as [PeerStatusPayload];
    const fx = setupReporter({ holdShares: false });
    let settle = () => {};
    const ready = new Promise<void>((resolve) => (settle = resolve));
    fx.lead([structuredClone(sent)], { ready });
    fx.reporter.takeHandover({
      epoch: 3,
      settled: [sent.dedup_key],
      in_flight: [],
      undelivered: [],
    });
    settle();
    await fx.clock.advanceAsync(10_000);
    expect(fx.peerPosts()).to.deep.equal([]);
  });

  it('forgets a hand-over of a term it did not go on to lead', async () => {
    const predecessor = setupReporter({ holdShares: false });
    predecessor.lead();
    predecessor.reporter.onJudgement(deathOf(1));
    const [event] = predecessor.reporter.undelivered() as [PeerStatusPayload];
    const fx = setupReporter({ holdShares: false });
    fx.reporter.takeHandover({ epoch: 3, settled: [], in_flight: [], undelivered: [event] });
    fx.reporter.stopLeading('hand-over'); // it stepped down: another node leads that term
    await fx.clock.advanceAsync(3_600_000);
    fx.lead([]);
    await fx.clock.advanceAsync(1_000);
    expect(fx.peerPosts()).to.deep.equal([]);
  });

  it('skips what a predecessor sent, waits for what it had in flight, and sends what it did not', async () => {
    const predecessor = setupReporter({ holdShares: false });
    predecessor.lead();
    for (const d of [1, 2, 3].map(deathOf)) predecessor.reporter.onJudgement(d);
    const events = predecessor.reporter.undelivered();
    const [sent, inFlight, unsent] = events as [
      PeerStatusPayload,
      PeerStatusPayload,
      PeerStatusPayload,
    ];

    const fx = setupReporter({ holdShares: false });
    // Its first announcement round: the predecessor's reply says what became of them.
    fx.reporter.takeHandover({
      epoch: 3,
      settled: [sent.dedup_key],
      in_flight: [inFlight.dedup_key],
      undelivered: [unsent],
    });
    fx.lead(structuredClone(events)); // the followers' copies: all three undelivered
    await fx.clock.advanceAsync(0);
    expect(fx.peerPosts().map((p) => p.dedup_key)).to.deep.equal([unsent.dedup_key]);
    // The outcome comes in a later reply: delivered.
    fx.reporter.takeHandover({
      epoch: 3,
      settled: [sent.dedup_key, inFlight.dedup_key],
      in_flight: [],
      undelivered: [],
    });
    await fx.clock.advanceAsync(60_000);
    expect(fx.peerPosts(), 'each event once').to.have.length(1);
  });

  it('sends an event the predecessor had in flight once its outcome is overdue (at least once)', async () => {
    const fx = setupReporter({ holdShares: false });
    const [event] = [deathOf(1)].map((d) => {
      const p = setupReporter({ holdShares: false });
      p.lead();
      p.reporter.onJudgement(d);
      return p.reporter.undelivered()[0] as PeerStatusPayload;
    }) as [PeerStatusPayload];
    fx.reporter.takeHandover({
      epoch: 3,
      settled: [],
      in_flight: [event.dedup_key],
      undelivered: [],
    });
    fx.lead([event]);
    await fx.clock.advanceAsync(6_900);
    expect(fx.peerPosts(), 'left to the predecessor for a while').to.deep.equal([]);
    await fx.clock.advanceAsync(200);
    expect(fx.peerPosts().map((p) => p.dedup_key)).to.deep.equal([event.dedup_key]);
  });

  it("sends nothing of a new term before its first announcement round settles, and then with the term's epoch", async () => {
    const fx = setupReporter({ holdShares: false });
    let epoch = 1;
    let settle = () => {};
    const ready = new Promise<void>((resolve) => (settle = resolve));
    fx.reporter.startLeading({ ...fx.leadership, epoch: () => epoch }, [], { ready });
    fx.reporter.onRound(round(1));
    await fx.clock.advanceAsync(500);
    expect(fx.posted(), 'not before the round settled').to.deep.equal([]);
    epoch = 2; // a late rejection: the term takes a newer epoch
    settle();
    await fx.clock.advanceAsync(0);
    const statuses = fx.poster.calls.filter((c) => c.url === CLUSTER_URL);
    expect(statuses.map((c) => (c.body as ClusterStatusPayload).epoch)).to.deep.equal([2]);
  });

  it('sends an inherited event once even when its receiver refused it and a hand-over repeats it', async () => {
    const predecessor = setupReporter({ holdShares: false });
    predecessor.lead();
    predecessor.reporter.onJudgement(deathOf(1));
    const [event] = predecessor.reporter.undelivered() as [PeerStatusPayload];
    const fx = setupReporter({ holdShares: false, answer: () => BAD_REQUEST });
    fx.lead([structuredClone(event)]);
    await fx.clock.advanceAsync(1_000);
    fx.reporter.takeHandover({ epoch: 2, settled: [], in_flight: [], undelivered: [event] });
    await fx.clock.advanceAsync(1_000);
    expect(fx.peerPosts().map((p) => p.dedup_key)).to.deep.equal([event.dedup_key]);
  });

  it('tells the followers once when a hand-over takes back many queued events', async () => {
    const { fx } = failingReceiver();
    for (const d of [1, 2, 3].map(deathOf)) fx.reporter.onJudgement(d);
    await fx.clock.advanceAsync(100);
    const keys = fx.reporter.undelivered().map((p) => p.dedup_key);
    expect(keys).to.have.length(3);
    const before = fx.order.filter((o) => o === 'share').length;
    fx.reporter.takeHandover({ epoch: 2, settled: keys, in_flight: [], undelivered: [] });
    expect(fx.order.filter((o) => o === 'share').length - before).to.equal(1);
    expect(fx.reporter.undelivered()).to.deep.equal([]);
  });

  it('tells the other receivers of a can_judge the predecessor sent, whose alert it left firing', () => {
    const { resolution } = cannotJudgeIncident(1_000, 5_000);
    const fx = setupReporter({ holdShares: false });
    fx.reporter.takeHandover({
      epoch: 2,
      settled: [resolution.dedup_key],
      in_flight: [],
      undelivered: [],
    });
    fx.lead([resolution]);
    expect(fx.fed.map((p) => p.dedup_key)).to.include(resolution.dedup_key);
    expect(fx.peerPosts()).to.deep.equal([]);
  });

  it('feeds the other receivers an event before sharing it, so the shared alerts carry it', async () => {
    const fx = setupReporter(); // shares held until released
    fx.lead();
    fx.reporter.onJudgement(deathOf(1));
    await fx.clock.advanceAsync(0);
    expect(fx.order).to.include('share');
    expect(fx.peerPosts(), 'not sent before the share').to.deep.equal([]);
    expect(fx.fed.map((p) => p.event)).to.deep.equal(['peer_dead']);
    fx.release();
  });
});
