// The reporter: which verdicts and rounds become webhooks, in what order, and when; which events
// are still undelivered (shared with followers), and how a successor delivers them.
import { expect } from 'chai';
import { dedupKey } from '../../src/alerts/payloads.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import { CLUSTER_STATUS_MIN_GAP_MS } from '../../src/alerts/cluster-statuses.js';
import { MAX_SHARED_UNDELIVERED } from '../../src/alerts/reporter.js';
import { answered, newRecord, toView } from '../../src/prober/verdict.js';
import { PEER_URL } from '../support/test-notifier.js';
import { FakeClock } from '../support/fake-clock.js';
import { BAD_REQUEST, OK, UNAVAILABLE } from '../support/fake-poster.js';
import {
  deadAlertFrom,
  peerDeath,
  round,
  SELF,
  setupReporter as setup,
} from '../support/reporter-fixture.js';
import { alive, answersAgain, confirmed } from '../support/verdicts.js';

/** This node as its predecessor reported it: dead since 1_234, alerted. */
const SELF_REPORTED_DEAD = {
  id: SELF.id,
  address: SELF.address,
  node_name: 'lead',
  health: 'dead' as const,
  since: 1_234,
  alerted: true,
};

/** A leading reporter that decided a's death, whose POST hangs: that event stays undelivered. */
async function deathInFlight() {
  const fx = setup({ holdShares: false, answer: (call) => (call.url === PEER_URL ? 'hang' : OK) });
  fx.lead();
  fx.reporter.onJudgement(peerDeath());
  await fx.clock.advanceAsync(0);
  const held = fx.reporter.undelivered();
  expect(held).to.have.length(1);
  return { ...fx, held };
}

describe('Reporter', () => {
  it('sends a change status when a confirmation changed a verdict, but not before the election status', async () => {
    const { reporter, lead, posted, clock } = setup();
    lead();
    reporter.onVerdictsChanged();
    expect(posted(), "the first round's election status will carry it").to.deep.equal([]);
    reporter.onRound(round(1, 1));
    await clock.advanceAsync(0);
    reporter.onVerdictsChanged();
    await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    const reasons = posted().map((b) => ('reason' in b ? b.reason : b.event));
    expect(reasons).to.deep.equal(['election', 'change']);
  });

  it('folds changes made while a cluster status waits its turn into it, built when sent', async () => {
    const { reporter, lead, posted, clock, setRecords } = setup();
    lead();
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    // A storm: many changes before the outbox's next turn, the peers changing meanwhile.
    reporter.onRound(round(2, 1));
    for (let i = 0; i < 100; i++) reporter.onVerdictsChanged();
    setRecords([alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record]);
    await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    const statuses = posted() as ClusterStatusPayload[];
    expect(statuses.map((s) => s.reason)).to.deep.equal(['election', 'change']);
    expect(
      statuses[1]!.peer_map.map((p) => p.address),
      'the latest peers',
    ).to.deep.equal(['10.0.0.1:8080']);
  });

  it("folds a change made before the term's first report into it, which stays the election status", async () => {
    const { reporter, lead, posted, clock } = setup();
    lead();
    reporter.onRound(round(1));
    reporter.onVerdictsChanged();
    await clock.advanceAsync(0);
    expect((posted() as ClusterStatusPayload[]).map((s) => s.reason)).to.deep.equal(['election']);
  });

  it('tells a renewed term as a new one: its first cluster status is an election status at the new epoch, sent once that epoch is confirmed', async () => {
    const { clock, reporter, posted, leadership } = setup();
    let epoch = 3;
    reporter.startLeading({ ...leadership, epoch: () => epoch });
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    // It hears of epoch 4 and goes on under 5: the announcement round at 5 is under way.
    epoch = 5;
    let confirm = () => {};
    reporter.termRenewed(new Promise<void>((resolve) => (confirm = resolve)));
    reporter.onRound(round(2));
    await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    const statuses = () =>
      (posted() as ClusterStatusPayload[]).map((s) => [s.reason, s.epoch] as const);
    expect(statuses(), 'nothing of the new term before it is confirmed').to.deep.equal([
      ['election', 3],
    ]);
    confirm();
    await clock.advanceAsync(0);
    expect(statuses()).to.deep.equal([
      ['election', 3],
      ['election', 5],
    ]);
    // Then as in any term: only rounds that changed something.
    reporter.onRound(round(3));
    await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    expect(statuses()).to.have.length(2);
  });

  it('sends cluster statuses CLUSTER_STATUS_MIN_GAP_MS apart at least, changes meanwhile riding on the next', async () => {
    const { clock, reporter, posted, setRecords, lead } = setup();
    lead();
    const t0 = clock.now();
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    // Verdicts changing one confirmation at a time, every 50 ms, for 3 s.
    for (let i = 0; i < 60; i++) {
      setRecords([alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record]);
      reporter.onVerdictsChanged();
      await clock.advanceAsync(50);
    }
    const statuses = posted() as ClusterStatusPayload[];
    const at = statuses.map((p) => Date.parse(p.timestamp) - t0);
    expect(statuses.map((p) => p.reason)).to.deep.equal(['election', 'change', 'change', 'change']);
    expect(at).to.deep.equal([0, 1_000, 2_000, 3_000]);
    // A term that ends sends nothing more: the status waiting is dropped (the next coordinator
    // sends its own).
    reporter.onVerdictsChanged();
    reporter.stopLeading();
    await clock.advanceAsync(5_000);
    expect(posted(), 'nothing after the term').to.have.length(4);
  });

  it('sends the events decided while a sharing is under way after one more sharing, all together', async () => {
    const { clock, reporter, order, peerPosts, release, setRecords, lead } = setup();
    lead();
    const peers = Array.from({ length: 50 }, (_, i) =>
      alive(`10.0.1.${i + 1}:8080`, `p${i}@10.0.1.${i + 1}`, 1),
    );
    const deaths = peers.map((p) => confirmed(p.record, 1_000).verdict);
    setRecords(deaths.map((d) => d.record));
    reporter.onJudgement(deaths[0]!);
    await clock.advanceAsync(0);
    expect(order, 'the first shares').to.deep.equal(['share']);
    // A lost zone: the rest die while the first event's sharing is under way.
    for (const d of deaths.slice(1)) reporter.onJudgement(d);
    await clock.advanceAsync(0);
    expect(peerPosts(), 'none before its sharing').to.have.length(0);
    release();
    await clock.advanceAsync(0);
    expect(peerPosts()).to.have.length(1);
    // One sharing for the other 49 (and one after the first was delivered), not one each.
    expect(order.length, order.join()).to.be.at.most(3);
    release();
    await clock.advanceAsync(100);
    expect(new Set(peerPosts().map((p) => p.peer.address))).to.deep.equal(
      new Set(peers.map((p) => p.record.address)),
    );
  });

  it('drops a cluster status still waiting when its term ends: nothing more of an ended term goes out', async () => {
    const { clock, reporter, posted, release, setRecords, lead } = setup();
    lead();
    const a = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const b = alive('10.0.0.2:8080', 'b@10.0.0.2', 1);
    const { verdict: died } = confirmed(a.record, 1_000);
    setRecords([died.record, b.record]);
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    reporter.onJudgement(died); // its sharing holds the outbox
    await clock.advanceAsync(0);
    reporter.onRound(round(2, 1)); // a change status waits behind it
    reporter.stopLeading();
    setRecords([]); // the prober stops: its records are gone
    release();
    await clock.advanceAsync(0);
    const statuses = posted().filter((p): p is ClusterStatusPayload => 'peer_map' in p);
    expect(statuses.map((s) => [s.reason, s.peer_map.length, s.epoch])).to.deep.equal([
      ['election', 2, 3],
    ]);
  });

  it('never sends a cluster status showing a death before that peer_dead, and one after it', async () => {
    const { clock, reporter, posted, release, setRecords, lead } = setup({ holdShares: true });
    lead();
    const a = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const b = alive('10.0.0.2:8080', 'b@10.0.0.2', 1);
    setRecords([a.record, b.record]);
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    const { verdict: aDied } = confirmed(a.record, 1_000);
    setRecords([aDied.record, b.record]);
    reporter.onJudgement(aDied);
    await clock.advanceAsync(0); // its sharing under way: the outbox waits
    reporter.onRound(round(2, 1)); // a status waits behind it
    const { verdict: bDied } = confirmed(b.record, 1_000);
    setRecords([aDied.record, bDied.record]);
    reporter.onJudgement(bDied); // decided after that status, waiting behind it
    for (let i = 0; i < 4; i++) {
      release();
      await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    }
    const sent = posted();
    const deadSoFar = new Set<string>();
    for (const p of sent) {
      if (!('peer_map' in p)) {
        deadSoFar.add(p.peer.address);
        continue;
      }
      const shownDead = p.peer_map.filter((e) => !e.alive).map((e) => e.address);
      const early = shownDead.filter((address) => !deadSoFar.has(address));
      expect(early, `${p.reason} status shows dead before their peer_dead`).to.deep.equal([]);
    }
    const last = sent[sent.length - 1]!;
    expect('peer_map' in last && last.peer_map.every((e) => !e.alive), 'a status after both').to.be
      .true;
  });

  /** A leading reporter that has sent a's peer_dead once the followers knew of it. */
  async function deathShared() {
    const fx = setup();
    fx.lead();
    const died = peerDeath();
    expect(died.transition).to.equal('died');
    fx.setRecords([died.record]);
    fx.reporter.onJudgement(died);
    await fx.clock.advanceAsync(0);
    const sharedFirst = [...fx.order];
    const postedBeforeSharing = fx.posted();
    fx.release();
    await fx.clock.advanceAsync(0);
    return { ...fx, died, sharedFirst, postedBeforeSharing };
  }

  it('sends a peer_dead only after the verdicts were shared', async () => {
    const { posted, sharedFirst, postedBeforeSharing } = await deathShared();
    expect(sharedFirst).to.deep.equal(['share']);
    expect(postedBeforeSharing, 'held until the followers know').to.deep.equal([]);
    const dead = posted()[0] as PeerStatusPayload;
    expect(dead).to.deep.include({
      event: 'peer_dead',
      epoch: 3,
      coordinator: SELF.id,
      reason: 'refused',
    });
    expect(dead.peer).to.include({ address: '10.0.0.1:8080', alive: false });
  });

  it('sends the recovery of a dead peer under the same incident as its peer_dead', async () => {
    const { clock, reporter, posted, release, died } = await deathShared();
    const dead = posted()[0] as PeerStatusPayload;
    const back = answersAgain(died.record, 5000);
    expect(back.transition).to.equal('recovered');
    reporter.onJudgement(back);
    await clock.advanceAsync(0);
    release();
    await clock.advanceAsync(0);
    const recovered = posted()[1] as PeerStatusPayload;
    expect(recovered.event).to.equal('peer_recovered');
    expect(recovered.dedup_key.replace(':recovered', '')).to.equal(
      dead.dedup_key.replace(':dead', ''),
    );
  });

  it('sends no webhook for a suspicion, a cleared one, a peer never seen alive, or a verdict withheld for the sanity check', async () => {
    const { clock, reporter, posted, order, lead } = setup();
    lead();
    const never = confirmed(newRecord('10.0.0.1:8080', 0), 1);
    expect(never.verdict.transition).to.equal('never-alive');
    reporter.onJudgement(never.verdict);
    const up = alive('10.0.0.2:8080', 'b@10.0.0.2', 1);
    for (const why of ['sanity-check'] as const) {
      const { suspected, verdict } = confirmed(up.record, 2, { withhold: why });
      expect([suspected.transition, verdict.transition]).to.deep.equal(['suspected', 'withheld']);
      reporter.onJudgement(suspected);
      reporter.onJudgement(verdict);
    }
    const { suspected } = confirmed(up.record, 3);
    const cleared = answered(suspected.record, null, 500);
    expect(cleared.transition).to.equal('cleared');
    reporter.onJudgement(cleared);
    await clock.advanceAsync(10);
    expect(posted()).to.deep.equal([]);
    expect(order, 'nothing to share for them either').to.deep.equal([]);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it('sends path_broken with its witnesses, and path_restored for the same incident', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    const up = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const witnesses = ['b@10.0.0.2', 'c@10.0.0.3'];
    const { verdict: broken } = confirmed(up.record, 1_000, { reachedBy: witnesses });
    expect(broken.transition).to.equal('path-broken');
    reporter.onJudgement(broken);
    const restored = answersAgain(broken.record, 9e3);
    expect(restored.transition).to.equal('path-restored');
    reporter.onJudgement(restored);
    await clock.advanceAsync(0);
    const [b, r] = peerPosts();
    const path = { from: SELF.id, to: 'a@10.0.0.1', witnesses };
    expect(b).to.deep.include({ event: 'path_broken', path });
    expect(b?.peer).to.include({ alive: true, path_broken: true });
    expect(r).to.deep.include({ event: 'path_restored', path });
    expect(r?.peer).to.include({ alive: true, path_broken: false });
    expect(b?.dedup_key).to.equal(dedupKey('path_broken', '10.0.0.1:8080', 1_000, SELF.address));
    expect(r?.dedup_key).to.equal(dedupKey('path_restored', '10.0.0.1:8080', 1_000, SELF.address));
  });

  it('closes an alerted broken path with path_restored before the peer_dead of a peer that then dies', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    const up = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const witnesses = ['b@10.0.0.2', 'c@10.0.0.3'];
    const { verdict: broken } = confirmed(up.record, 1_000, { reachedBy: witnesses });
    reporter.onJudgement(broken);
    const { verdict: died } = confirmed(broken.record, 5_000);
    expect(died.transition).to.equal('died');
    expect(died.restoredPath?.sinceMs).to.equal(1_000);
    reporter.onJudgement(died);
    await clock.advanceAsync(0);
    const posts = peerPosts();
    expect(posts.map((p) => p.event)).to.deep.equal(['path_broken', 'path_restored', 'peer_dead']);
    const [b, r, d] = posts;
    const key = dedupKey('path_restored', '10.0.0.1:8080', 1_000, SELF.address);
    expect(key.endsWith(':path-restored')).to.be.true;
    expect(r?.dedup_key).to.equal(key);
    expect(r?.dedup_key.replace(':path-restored', '')).to.equal(
      b?.dedup_key.replace(':path-broken', ''),
    );
    expect(r?.path).to.deep.equal({ from: SELF.id, to: 'a@10.0.0.1', witnesses });
    expect(d?.dedup_key).to.equal(dedupKey('peer_dead', '10.0.0.1:8080', 6_000));
    expect(d, 'the peer_dead names no path').to.not.have.property('path');
  });

  it('sends no path_restored for a peer that dies without an alerted broken path', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    reporter.onJudgement(peerDeath());
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
  });

  it('warns once about a peer whose death stays withheld, again after another transition', () => {
    const { reporter, logger, lead } = setup();
    lead();
    const up = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const { suspected, verdict } = confirmed(up.record, 1_000, { withhold: 'self-suspect' });
    expect(verdict.transition).to.equal('withheld');
    const warned = () =>
      logger.at('warn').filter((r) => r.fields.event === 'verdict-withheld').length;
    const debugged = () =>
      logger.at('debug').filter((r) => r.fields.event === 'verdict-withheld').length;
    reporter.onJudgement(suspected);
    reporter.onJudgement(verdict);
    reporter.onJudgement(verdict);
    expect([warned(), debugged()]).to.deep.equal([1, 1]);
    // Another peer's is its own spell.
    const other = confirmed(alive('10.0.0.2:8080', 'b@10.0.0.2', 1).record, 1_000, {
      withhold: 'sanity-check',
    });
    reporter.onJudgement(other.verdict);
    expect([warned(), debugged()]).to.deep.equal([2, 1]);
    // It answers again, then fails again: a new spell, warned about.
    const cleared = answered(verdict.record, null, 3_000);
    expect(cleared.transition).to.equal('cleared');
    reporter.onJudgement(cleared);
    reporter.onJudgement(verdict);
    expect([warned(), debugged()]).to.deep.equal([3, 1]);
  });

  it('shares at most MAX_SHARED_UNDELIVERED undelivered events, the newest', () => {
    const { reporter, lead } = setup(); // shares held: nothing reaches the receiver
    lead();
    const decided: string[] = [];
    for (let i = 0; i < MAX_SHARED_UNDELIVERED + 7; i++) {
      const address = `10.1.${Math.floor(i / 200)}.${(i % 200) + 1}:8080`;
      const { verdict } = confirmed(alive(address, `p${i}@${address}`, 1).record, 1_000);
      reporter.onJudgement(verdict);
      decided.push(verdict.record.address);
    }
    const shared = reporter.undelivered();
    expect(shared).to.have.length(MAX_SHARED_UNDELIVERED);
    expect(shared.map((p) => p.peer.address)).to.deep.equal(decided.slice(-MAX_SHARED_UNDELIVERED));
  });

  it('resend delivers a payload it does not know, once', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    const other = deadAlertFrom({ id: 'other@10.0.0.8', address: '10.0.0.8:8080' });
    reporter.resend([other]);
    reporter.resend([structuredClone(other)]);
    await clock.advanceAsync(0);
    expect(peerPosts()).to.deep.equal([other]);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it('resend does not deliver again what this reporter already delivered', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    reporter.onJudgement(peerDeath());
    await clock.advanceAsync(0);
    const [delivered] = peerPosts();
    expect(delivered?.event).to.equal('peer_dead');
    expect(reporter.undelivered(), 'settled as delivered').to.deep.equal([]);
    // A coordinator this one supersedes hands the same event back.
    reporter.resend([structuredClone(delivered as PeerStatusPayload)]);
    await clock.advanceAsync(60_000);
    expect(peerPosts()).to.have.length(1);
  });

  it('resend delivers again what the receiver rejected here (not delivered, so not remembered)', async () => {
    let receiverUp = false;
    const { clock, reporter, peerPosts, lead } = setup({
      holdShares: false,
      answer: (call) => (call.url === PEER_URL && !receiverUp ? BAD_REQUEST : OK),
    });
    lead();
    reporter.onJudgement(peerDeath());
    await clock.advanceAsync(0);
    expect(peerPosts()).to.have.length(1);
    expect(reporter.undelivered(), 'settled as rejected').to.deep.equal([]);
    receiverUp = true;
    reporter.resend([structuredClone(peerPosts()[0] as PeerStatusPayload)]);
    await clock.advanceAsync(0);
    expect(peerPosts()).to.have.length(2);
  });

  it('resend does not deliver again what is still pending here', async () => {
    const { clock, poster, reporter, peerPosts, held } = await deathInFlight();
    reporter.resend(structuredClone(held));
    await clock.advanceAsync(0);
    poster.release(OK);
    await clock.advanceAsync(60_000);
    expect(peerPosts()).to.have.length(1);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it('resolves its own incident once when told twice (selfRecovered)', async () => {
    const { clock, reporter, peerPosts, lead } = setup({ holdShares: false });
    lead();
    reporter.selfRecovered(SELF_REPORTED_DEAD);
    reporter.selfRecovered(SELF_REPORTED_DEAD); // still pending
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_recovered']);
    reporter.selfRecovered(SELF_REPORTED_DEAD); // delivered
    await clock.advanceAsync(60_000);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_recovered']);
  });

  it('keeps an event undelivered from the moment it is decided until the receiver takes it', async () => {
    let receiverUp = false;
    const { clock, reporter, peerPosts, release, lead } = setup({
      answer: (call) => (call.url === PEER_URL && !receiverUp ? UNAVAILABLE : OK),
    });
    lead();
    reporter.onJudgement(peerDeath());
    const [decided] = reporter.undelivered();
    expect(decided?.event, 'undelivered while the followers are told').to.equal('peer_dead');
    await clock.advanceAsync(0);
    expect(reporter.undelivered()).to.deep.equal([decided]);
    release();
    await clock.advanceAsync(30_000);
    expect(peerPosts().length, 'the receiver is failing').to.be.at.least(3);
    expect(reporter.undelivered()).to.deep.equal([decided]);
    receiverUp = true;
    await clock.advanceAsync(60_000);
    expect(peerPosts().at(-1)).to.deep.equal(decided);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it('a successor given the undelivered events delivers the very same payloads, once', async () => {
    const clock = new FakeClock();
    const failing = setup({ clock, answer: () => UNAVAILABLE, holdShares: false });
    failing.lead();
    const { verdict: broken } = confirmed(alive('10.0.0.2:8080', 'b@10.0.0.2', 1).record, 1_000, {
      reachedBy: ['c@10.0.0.3'],
    });
    failing.reporter.onJudgement(peerDeath());
    failing.reporter.onJudgement(broken);
    await clock.advanceAsync(5_000);
    const handedOver = failing.reporter.undelivered();
    expect(handedOver.map((p) => p.event)).to.deep.equal(['peer_dead', 'path_broken']);
    failing.reporter.stopLeading();

    // The successor, another node with its own receiver connection, as sent in an announcement.
    const successorSelf = { id: 'next@10.0.0.8', address: '10.0.0.8:8080' };
    const successor = setup({ clock: new FakeClock(clock.now() + 10_000), self: successorSelf });
    const inherited = structuredClone(handedOver);
    successor.lead(inherited);
    expect(successor.reporter.undelivered(), 'tracked until delivered').to.deep.equal(inherited);
    // Delivered at once: its shares are held (never released), and it does not wait for them.
    await successor.clock.advanceAsync(0);
    expect(successor.peerPosts()).to.deep.equal(handedOver);
    expect(successor.reporter.undelivered()).to.deep.equal([]);
    await successor.clock.advanceAsync(60_000);
    expect(successor.peerPosts(), 'each delivered once').to.have.length(2);
  });

  it('skips inherited events it already holds undelivered', async () => {
    const { clock, poster, reporter, peerPosts, lead, held } = await deathInFlight();
    reporter.stopLeading();
    lead(structuredClone(held)); // leads again, handed back its own undelivered event
    await clock.advanceAsync(0);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(peerPosts()).to.have.length(1);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it("resolves this node's own incident when it leads after being reported dead", async () => {
    const { clock, reporter, peerPosts, release, lead } = setup();
    lead();
    reporter.selfRecovered(SELF_REPORTED_DEAD);
    await clock.advanceAsync(0);
    release();
    await clock.advanceAsync(0);
    const [p] = peerPosts();
    expect(p).to.deep.include({ event: 'peer_recovered', coordinator: SELF.id, epoch: 3 });
    expect(p?.peer).to.include({ address: SELF.address, id: SELF.id, alive: true });
    expect(p?.dedup_key).to.equal(dedupKey('peer_recovered', SELF.address, 1_234));
    // …resolving the dead alert its predecessor sent for it.
    expect(p?.dedup_key.replace(':recovered', '')).to.equal(
      dedupKey('peer_dead', SELF.address, 1_234).replace(':dead', ''),
    );
  });

  it('sends nothing for its own incident while not leading', async () => {
    const { clock, reporter, posted } = setup({ holdShares: false });
    reporter.selfRecovered(
      toView({ ...newRecord(SELF.address, 0), health: 'dead', alerted: true }),
    );
    await clock.advanceAsync(10);
    expect(posted()).to.deep.equal([]);
  });

  it("sends the cluster status after the first round ('election'), then only after rounds that changed something", async () => {
    const { clock, reporter, posted, setRecords, lead } = setup();
    lead();
    setRecords([alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record]);
    for (const r of [round(1), round(2), round(3, 1), round(4, 0, 1)]) {
      reporter.onRound(r);
      await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    }
    const reasons = posted().map((b) => (b as ClusterStatusPayload).reason);
    expect(reasons).to.deep.equal(['election', 'change', 'change']);
  });

  it('reports self-suspicion in the cluster status', async () => {
    const { clock, reporter, posted, lead, setSuspicion } = setup();
    lead();
    reporter.onRound(round(1));
    await clock.advanceAsync(0);
    setSuspicion({ suspect: true, unreachable: 3, silent: 3, considered: 4 });
    reporter.onRound(round(2, 3));
    await clock.advanceAsync(CLUSTER_STATUS_MIN_GAP_MS);
    const statuses = posted() as ClusterStatusPayload[];
    expect(statuses.map((s) => [s.self_suspect, s.unreachable_peers])).to.deep.equal([
      [false, 0],
      [true, 3],
    ]);
  });

  it('resends the cluster status every interval while leading, and stops when it stops leading', async () => {
    const { clock, reporter, posted, lead } = setup({ intervalMs: 10_000 });
    lead();
    await clock.advanceAsync(25_000);
    expect(posted().map((b) => (b as ClusterStatusPayload).reason)).to.deep.equal([
      'periodic',
      'periodic',
    ]);
    reporter.stopLeading();
    await clock.advanceAsync(30_000);
    expect(posted()).to.have.length(2);
  });

  it('logs an error when two nodes share an id', () => {
    const { reporter, logger, setRecords, lead } = setup();
    lead();
    const first = alive('127.0.0.1:8081', 'node@127.0.0.1', 1);
    const second = alive('127.0.0.1:8082', 'node@127.0.0.1', 1);
    setRecords([first.record, second.record]);
    reporter.onJudgement(second);
    const errors = logger.at('error').map((r) => r.fields.event);
    expect(errors).to.deep.equal(['duplicate-id']);
  });

  it('takes no two peers for twins by the placeholder id of peers alive without a probe answer', () => {
    const { reporter, logger, setRecords, lead } = setup();
    lead();
    // Alive because each answered an announcement: none has told its id (each 127.0.0.1@127.0.0.1).
    const judged = ['127.0.0.1:8081', '127.0.0.1:8082', '127.0.0.1:8083'].map((a) =>
      answered(newRecord(a, 0), null, 1),
    );
    expect(judged.map((j) => [j.transition, j.record.id])).to.deep.equal(
      Array(3).fill(['first-alive', '127.0.0.1@127.0.0.1']),
    );
    setRecords(judged.map((j) => j.record));
    for (const j of judged) reporter.onJudgement(j);
    expect(logger.at('error')).to.deep.equal([]);
    // A real twin among them is still found.
    const twin = alive('127.0.0.1:8084', 'node@127.0.0.1', 1);
    const other = alive('127.0.0.1:8085', 'node@127.0.0.1', 1);
    setRecords([...judged.map((j) => j.record), twin.record, other.record]);
    reporter.onJudgement(other);
    expect(logger.at('error').map((r) => r.fields.otherAddress)).to.deep.equal(['127.0.0.1:8084']);
  });

  it('takes no peer for the twin of one not answered yet that discovery names alike', () => {
    const { reporter, logger, setRecords, lead } = setup();
    lead();
    // A misnamed EndpointSlice: 127.0.0.1:8082 is listed as node sim-2, which 127.0.0.1:8081 is.
    const misnamed = newRecord('127.0.0.1:8082', 0, 'sim-2');
    const answering = alive('127.0.0.1:8081', 'sim-2@127.0.0.1', 1);
    setRecords([answering.record, misnamed]);
    reporter.onJudgement(answering);
    expect(logger.at('error')).to.deep.equal([]);
  });

  it('tells twins apart when they come alive one after the other, reading the records once a round', () => {
    const { reporter, logger, setRecords, lead, leadership } = setup();
    lead();
    const peers = Array.from({ length: 200 }, (_, i) =>
      alive(`127.0.0.1:${9000 + i}`, `node-${i}@127.0.0.1`, 1),
    );
    const twin = alive('127.0.0.1:8999', 'node-7@127.0.0.1', 1);
    // Every record still unknown as the round starts; each comes alive as its probe answers.
    const records = [...peers, twin].map((j) => newRecord(j.record.address, 0));
    setRecords(records);
    let reads = 0;
    const read = () => records;
    leadership.records = () => (reads++, read());
    for (const [i, j] of [...peers, twin].entries()) {
      records[i] = j.record;
      reporter.onJudgement(j);
    }
    expect(logger.at('error').map((r) => [r.fields.event, r.fields.otherAddress])).to.deep.equal([
      ['duplicate-id', '127.0.0.1:9007'],
    ]);
    expect(reads).to.equal(1);
    // The next round reads them again, and a node that restarted under another name is no twin.
    reporter.onRound(round(1));
    const readsBefore = reads;
    const renamed = alive('127.0.0.1:9007', 'node-x@127.0.0.1', 2);
    records[7] = renamed.record;
    reporter.onJudgement(renamed);
    reporter.onJudgement(alive('127.0.0.1:8998', 'node-7@127.0.0.1', 2));
    expect(logger.at('error')).to.have.length(2);
    expect(logger.at('error')[1]?.fields.otherAddress).to.equal('127.0.0.1:8999');
    expect(reads - readsBefore).to.equal(1);
  });
});
