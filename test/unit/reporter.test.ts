// The reporter: which verdicts and rounds become webhooks, in what order, and when; which events
// are still undelivered (shared with followers), and how a successor delivers them.
import { expect } from 'chai';
import { Notifier } from '../../src/alerts/notifier.js';
import {
  dedupKey,
  type ClusterStatusPayload,
  type PeerStatusPayload,
} from '../../src/alerts/payloads.js';
import { Reporter, type Leadership } from '../../src/alerts/reporter.js';
import { WebhookQueue } from '../../src/alerts/webhook-queue.js';
import type { RoundReport, SelfSuspicion } from '../../src/prober/rounds.js';
import {
  answered,
  attemptFailed,
  confirm,
  newRecord,
  toView,
  type Judgement,
  type PeerRecord,
  type Withhold,
} from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { FakePoster, OK, UNAVAILABLE, type Answer, type PostCall } from '../support/fake-poster.js';

const SELF = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const PEER_URL = 'http://receiver/peer';
const CLUSTER_URL = 'http://receiver/cluster';
const UNHEALTHY = 1_000;
const schemas = loadSchemas();

interface SetupOptions {
  intervalMs?: number;
  /** Hold each share until released (default), or resolve at once. */
  holdShares?: boolean;
  answer?: (call: PostCall, index: number) => Answer;
  clock?: FakeClock;
  poster?: FakePoster;
  self?: typeof SELF;
}

function setup({
  intervalMs = 60_000,
  holdShares = true,
  answer,
  clock = new FakeClock(),
  poster = new FakePoster(clock, answer),
  self = SELF,
}: SetupOptions = {}) {
  const logger = new CapturingLogger();
  const order: string[] = [];
  const notifier = new Notifier({
    schemas,
    peerStatusUrl: PEER_URL,
    clusterStatusUrl: CLUSTER_URL,
    logger,
    makeQueue: (url) =>
      new WebhookQueue({
        url,
        poster,
        clock,
        logger,
        timeoutMs: 1000,
        retryForMs: 600_000,
        maxSize: 100,
      }),
  });
  const shares: (() => void)[] = [];
  const reporter = new Reporter({
    notifier,
    clock,
    logger,
    self,
    clusterStatusIntervalMs: intervalMs,
    shareVerdicts: () => {
      order.push('share');
      if (!holdShares) return Promise.resolve();
      return new Promise((resolve) => shares.push(resolve));
    },
  });
  let records: PeerRecord[] = [];
  let suspicion: SelfSuspicion = { suspect: false, unreachable: 0, considered: 0 };
  const leadership: Leadership = {
    epoch: () => 3,
    records: () => records,
    sanity: () => 'not-configured',
    selfSuspicion: () => suspicion,
  };
  const posted = () => poster.calls.map((c) => c.body as PeerStatusPayload | ClusterStatusPayload);
  const peerPosts = () =>
    poster.calls.filter((c) => c.url === PEER_URL).map((c) => c.body as PeerStatusPayload);
  return {
    clock,
    logger,
    poster,
    reporter,
    leadership,
    order,
    posted,
    peerPosts,
    lead: (inherited: PeerStatusPayload[] = []) => reporter.startLeading(leadership, inherited),
    setRecords: (r: PeerRecord[]) => (records = r),
    setSuspicion: (s: SelfSuspicion) => (suspicion = s),
    /** Releases every share waiting so far. */
    release: () => shares.splice(0).forEach((resolve) => resolve()),
  };
}

const round = (n: number, changed = 0, membership = 0): RoundReport => ({
  round: n,
  probed: 1,
  changed,
  membership,
  durationMs: 1,
  sanity: 'not-configured',
});

const refused = { latencyMs: 1, detail: 'refused' };

const alive = (address: string, id: string, now: number) =>
  answered(newRecord(address, 0), { latencyMs: 1, id, nodeName: id.split('@')[0] ?? '' }, now);

/** The confirmation of a peer whose probes have failed since `failedAt`, at failedAt + 1 s. */
function confirmed(
  record: PeerRecord,
  failedAt: number,
  { reachedBy = [] as string[], withhold = null as Withhold } = {},
): { suspected: Judgement; verdict: Judgement } {
  const suspected = attemptFailed(record, refused, failedAt, failedAt + 1);
  const verdict = confirm(
    suspected.record,
    { reachedBy, unhealthyMs: UNHEALTHY, withhold },
    failedAt + UNHEALTHY,
  );
  return { suspected, verdict };
}

describe('Reporter', () => {
  it('sends a peer_dead only after the verdicts were shared, then a recovery with the same incident', async () => {
    const { clock, reporter, order, posted, release, setRecords, lead } = setup();
    lead();
    const up = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const { verdict: died } = confirmed(up.record, 1_000);
    expect(died.transition).to.equal('died');
    setRecords([died.record]);
    reporter.onJudgement(died);
    await clock.advanceAsync(0);
    expect(order).to.deep.equal(['share']);
    expect(posted(), 'held until the followers know').to.deep.equal([]);
    release();
    await clock.advanceAsync(0);
    const dead = posted()[0] as PeerStatusPayload;
    expect(dead).to.deep.include({
      event: 'peer_dead',
      epoch: 3,
      coordinator: SELF.id,
      reason: 'refused',
    });
    expect(dead.peer).to.include({ address: '10.0.0.1:8080', alive: false });

    const back = answered(died.record, { latencyMs: 1, id: 'a@10.0.0.1', nodeName: 'a' }, 5000);
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

  it('sends no webhook for a suspicion, a cleared one, a peer never seen alive, or a withheld verdict', async () => {
    const { clock, reporter, posted, order, lead } = setup();
    lead();
    const never = confirmed(newRecord('10.0.0.1:8080', 0), 1);
    expect(never.verdict.transition).to.equal('never-alive');
    reporter.onJudgement(never.verdict);
    const up = alive('10.0.0.2:8080', 'b@10.0.0.2', 1);
    for (const why of ['sanity-check', 'self-suspect'] as const) {
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
    const restored = answered(
      broken.record,
      { latencyMs: 1, id: 'a@10.0.0.1', nodeName: 'a' },
      9e3,
    );
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

  it('keeps an event undelivered from the moment it is decided until the receiver takes it', async () => {
    let receiverUp = false;
    const { clock, reporter, peerPosts, release, lead } = setup({
      answer: (call) => (call.url === PEER_URL && !receiverUp ? UNAVAILABLE : OK),
    });
    lead();
    const { verdict: died } = confirmed(alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record, 1_000);
    reporter.onJudgement(died);
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
    const { verdict: died } = confirmed(alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record, 1_000);
    const { verdict: broken } = confirmed(alive('10.0.0.2:8080', 'b@10.0.0.2', 1).record, 1_000, {
      reachedBy: ['c@10.0.0.3'],
    });
    failing.reporter.onJudgement(died);
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
    const { clock, poster, reporter, peerPosts, lead } = setup({
      holdShares: false,
      answer: (call) => (call.url === PEER_URL ? 'hang' : OK),
    });
    lead();
    const { verdict: died } = confirmed(alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record, 1_000);
    reporter.onJudgement(died);
    await clock.advanceAsync(0);
    const held = reporter.undelivered();
    expect(held).to.have.length(1);
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
    const view = {
      id: SELF.id,
      address: SELF.address,
      node_name: 'lead',
      health: 'dead' as const,
      since: 1_234,
      alerted: true,
    };
    reporter.selfRecovered(view);
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
    reporter.onRound(round(1));
    reporter.onRound(round(2));
    reporter.onRound(round(3, 1));
    reporter.onRound(round(4, 0, 1));
    await clock.advanceAsync(0);
    const reasons = posted().map((b) => (b as ClusterStatusPayload).reason);
    expect(reasons).to.deep.equal(['election', 'change', 'change']);
  });

  it('reports self-suspicion in the cluster status', async () => {
    const { clock, reporter, posted, lead, setSuspicion } = setup();
    lead();
    reporter.onRound(round(1));
    setSuspicion({ suspect: true, unreachable: 3, considered: 4 });
    reporter.onRound(round(2, 3));
    await clock.advanceAsync(0);
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
});
