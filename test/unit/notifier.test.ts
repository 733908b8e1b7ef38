// The notifier: only schema-valid payloads leave knh, each to its receiver's one ordered queue.
import { expect } from 'chai';
import { Notifier } from '../../src/delivery/notifier.js';
import { clusterStatusPayload } from '../../src/alerts/payloads.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import { newRecord } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import {
  BAD_REQUEST,
  FakePoster,
  OK,
  UNAVAILABLE,
  type Answer,
  type PostCall,
} from '../support/fake-poster.js';
import type { DeliveryOutcome } from '../../src/alerts/event-sink.js';
import { testQueue } from '../support/test-notifier.js';
import { deadPayload } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const PEER_URL = 'http://alerts.example/peer';
const CLUSTER_URL = 'http://alerts.example/cluster';
const T0 = Date.UTC(2025, 4, 1);
const coordinator = { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' };
const schemas = loadSchemas();

/** The peer_dead of worker-<n>, alive at T0, its probes failing from T0 + 1, dead 1 s later. */
const deadAlert = (n = 5): PeerStatusPayload =>
  deadPayload(upRecord(`worker-${n}`, `10.0.0.${n}`, T0), T0 + 1_001, { coordinator, epoch: 2 });

function clusterStatus(): ClusterStatusPayload {
  return clusterStatusPayload({
    startGraceMs: 0,
    records: [newRecord('10.0.0.5:8080', T0)],
    coordinator,
    epoch: 2,
    reason: 'election',
    sanity: 'not-configured',
    selfSuspicion: { suspect: false, unreachable: 0 },
    now: T0,
  });
}

function setup(
  urls: { peer: string | null; cluster: string | null },
  answer: (call: PostCall, index: number) => Answer = () => OK,
  retryForMs = 60_000,
  maxInFlight = 1,
) {
  const clock = new FakeClock(T0);
  const logger = new CapturingLogger();
  const poster = new FakePoster(clock, answer);
  const queuesMade: string[] = [];
  const notifier = new Notifier({
    schemas,
    peerStatusUrl: urls.peer,
    clusterStatusUrl: urls.cluster,
    logger,
    makeQueue: (url) => {
      queuesMade.push(url);
      return testQueue(url, poster, clock, logger, { retryForMs, maxInFlight });
    },
  });
  return { clock, logger, poster, notifier, queuesMade };
}

describe('Notifier', () => {
  it('posts a valid peer status to PEER_STATUS_URL and a cluster status to CLUSTER_STATUS_URL', async () => {
    const { clock, poster, notifier } = setup({ peer: PEER_URL, cluster: CLUSTER_URL });
    const alert = deadAlert();
    const status = clusterStatus();
    expect(notifier.peerStatus(alert)).to.be.true;
    expect(notifier.clusterStatus(status)).to.be.true;
    await clock.advanceAsync(0);
    expect(poster.calls.map((c) => [c.url, c.body])).to.deep.equal([
      [PEER_URL, alert],
      [CLUSTER_URL, status],
    ]);
  });

  it("posts different peers' events together, one peer's in order, and a cluster status after them", async () => {
    const url = PEER_URL; // both kinds to one receiver: one queue
    const { clock, poster, notifier } = setup({ peer: url, cluster: url }, () => 'hang', 60_000, 8);
    // worker-5's alert, and then another about worker-5 (sent again, say, by a successor).
    const [a1, b, a2] = [deadAlert(5), deadAlert(6), { ...deadAlert(5), epoch: 3 }];
    const status = clusterStatus();
    for (const p of [a1, b, a2]) expect(notifier.peerStatus(p)).to.be.true;
    notifier.clusterStatus(status);
    const bodies = () => poster.calls.map((c) => c.body);
    expect(bodies(), "worker-5's second event waits for its first").to.deep.equal([a1, b]);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(bodies()).to.deep.equal([a1, b, a2]);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(bodies(), 'the cluster status waits for every event before it').to.have.length(3);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(bodies()).to.deep.equal([a1, b, a2, status]);
  });

  it('does not post a payload that fails its schema, and logs it at error level', async () => {
    const { clock, poster, notifier, logger } = setup({ peer: PEER_URL, cluster: CLUSTER_URL });
    const broken: PeerStatusPayload = { ...deadAlert(), epoch: 0 };
    const alsoBroken = {
      ...clusterStatus(),
      sanity_check: 'maybe',
    } as unknown as ClusterStatusPayload;
    expect(notifier.peerStatus(broken)).to.be.false;
    expect(notifier.clusterStatus(alsoBroken)).to.be.false;
    await clock.advanceAsync(60_000);
    expect(poster.calls).to.deep.equal([]);
    const errors = logger.at('error');
    expect(errors).to.have.length(2);
    expect(errors[0]?.fields).to.deep.include({ kind: 'peer-status', key: broken.dedup_key });
    expect(errors[0]?.fields.errors).to.be.an('array').that.is.not.empty;
    expect(errors[1]?.fields).to.deep.include({ kind: 'cluster-status' });
  });

  it('shares one queue, in order, when both kinds go to the same URL', async () => {
    const { clock, poster, notifier, queuesMade } = setup(
      { peer: PEER_URL, cluster: PEER_URL },
      (_, i) => (i === 0 ? 'hang' : OK),
    );
    const status = clusterStatus();
    const alert = deadAlert();
    notifier.clusterStatus(status);
    notifier.peerStatus(alert);
    notifier.clusterStatus({ ...status, reason: 'change' });
    expect(queuesMade).to.deep.equal([PEER_URL]);
    expect(notifier.pending).to.equal(3);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(poster.calls.map((c) => (c.body as { event: string }).event)).to.deep.equal([
      'cluster_status',
      'peer_dead',
      'cluster_status',
    ]);
    expect(notifier.pending).to.equal(0);
  });

  it('sends nothing, quietly, for a kind without a URL', async () => {
    const { clock, poster, notifier, logger, queuesMade } = setup({ peer: null, cluster: null });
    expect(notifier.peerStatus(deadAlert())).to.be.false;
    expect(notifier.clusterStatus(clusterStatus())).to.be.false;
    await clock.advanceAsync(0);
    expect(poster.calls).to.deep.equal([]);
    expect(queuesMade).to.deep.equal([]);
    expect(logger.at('error')).to.deep.equal([]);
  });

  it('logs at error level what is still undelivered when a drain times out', async () => {
    const { clock, notifier, logger } = setup(
      { peer: PEER_URL, cluster: CLUSTER_URL },
      () => 'hang',
    );
    notifier.peerStatus(deadAlert());
    notifier.clusterStatus(clusterStatus());
    const drained = notifier.drain(2_000);
    await clock.advanceAsync(2_000);
    await drained;
    expect(logger.at('error').map((r) => r.fields.pending)).to.deep.equal([2]);
  });

  it('tells the caller how a peer status ended: delivered, only once the receiver took it', async () => {
    const { clock, poster, notifier } = setup({ peer: PEER_URL, cluster: CLUSTER_URL }, (_, i) =>
      i < 2 ? UNAVAILABLE : OK,
    );
    const outcomes: DeliveryOutcome[] = [];
    expect(notifier.peerStatus(deadAlert(), (o) => outcomes.push(o))).to.be.true;
    await clock.advanceAsync(0);
    expect(poster.calls).to.have.length(1);
    expect(outcomes, 'not settled while the receiver fails').to.deep.equal([]);
    await clock.advanceAsync(10_000);
    expect(poster.calls).to.have.length(3);
    expect(outcomes).to.deep.equal(['delivered']);
  });

  it('tells the caller when a peer status was rejected or given up', async () => {
    const rejected = setup({ peer: PEER_URL, cluster: null }, () => BAD_REQUEST);
    const outcomes: DeliveryOutcome[] = [];
    rejected.notifier.peerStatus(deadAlert(), (o) => outcomes.push(o));
    await rejected.clock.advanceAsync(0);
    expect(outcomes).to.deep.equal(['rejected']);

    const failing = setup({ peer: PEER_URL, cluster: null }, () => UNAVAILABLE, 5_000);
    failing.notifier.peerStatus(deadAlert(), (o) => outcomes.push(o));
    await failing.clock.advanceAsync(3_000);
    expect(outcomes).to.deep.equal(['rejected']);
    await failing.clock.advanceAsync(10_000);
    expect(outcomes).to.deep.equal(['rejected', 'given-up']);
  });

  it('never settles an event it did not queue (no URL, or an invalid payload)', async () => {
    const { clock, notifier } = setup({ peer: null, cluster: null });
    const outcomes: DeliveryOutcome[] = [];
    expect(notifier.peerStatus(deadAlert(), (o) => outcomes.push(o))).to.be.false;
    const invalid = setup({ peer: PEER_URL, cluster: null });
    expect(invalid.notifier.peerStatus({ ...deadAlert(), epoch: 0 }, (o) => outcomes.push(o))).to.be
      .false;
    await clock.advanceAsync(60_000);
    await invalid.clock.advanceAsync(60_000);
    expect(outcomes).to.deep.equal([]);
  });
});
