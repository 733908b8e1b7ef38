// The reporter: which verdicts and rounds become webhooks, in what order, and when.
import { expect } from 'chai';
import { Notifier } from '../../src/alerts/notifier.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/alerts/payloads.js';
import { Reporter } from '../../src/alerts/reporter.js';
import { WebhookQueue } from '../../src/alerts/webhook-queue.js';
import type { RoundReport } from '../../src/prober/rounds.js';
import { judge, newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { FakePoster } from '../support/fake-poster.js';

const SELF = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const schemas = loadSchemas();

function setup({ intervalMs = 60_000 } = {}) {
  const clock = new FakeClock();
  const logger = new CapturingLogger();
  const poster = new FakePoster(clock);
  const order: string[] = [];
  const notifier = new Notifier({
    schemas,
    peerStatusUrl: 'http://receiver/peer',
    clusterStatusUrl: 'http://receiver/cluster',
    logger,
    makeQueue: (url) =>
      new WebhookQueue({
        url,
        poster,
        clock,
        logger,
        timeoutMs: 1000,
        retryForMs: 60_000,
        maxSize: 100,
      }),
  });
  let releaseShare: () => void = () => undefined;
  const reporter = new Reporter({
    notifier,
    clock,
    logger,
    self: SELF,
    clusterStatusIntervalMs: intervalMs,
    shareVerdicts: () => {
      order.push('share');
      return new Promise((resolve) => (releaseShare = resolve));
    },
  });
  let records: PeerRecord[] = [];
  reporter.startLeading({ epoch: () => 3, records: () => records, sanity: () => 'not-configured' });
  const posted = () => poster.calls.map((c) => c.body as PeerStatusPayload | ClusterStatusPayload);
  return {
    clock,
    logger,
    reporter,
    order,
    posted,
    setRecords: (r: PeerRecord[]) => (records = r),
    release: () => releaseShare(),
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

const alive = (address: string, id: string, now: number) =>
  judge(
    newRecord(address, 0),
    { ok: true, latencyMs: 1, id, nodeName: id.split('@')[0] ?? '' },
    now,
    {
      withholdDeath: false,
    },
  );

describe('Reporter', () => {
  it('sends a peer_dead only after the verdicts were shared, then a recovery with the same incident', async () => {
    const { clock, reporter, order, posted, release, setRecords } = setup();
    const up = alive('10.0.0.1:8080', 'a@10.0.0.1', 1);
    const died = judge(up.record, { ok: false, latencyMs: 1, failure: 'refused' }, 1000, {
      withholdDeath: false,
    });
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

    const back = judge(
      died.record,
      { ok: true, latencyMs: 1, id: 'a@10.0.0.1', nodeName: 'a' },
      5000,
      { withholdDeath: false },
    );
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

  it('sends no webhook for a peer never seen alive, or for a verdict withheld by the sanity check', async () => {
    const { clock, reporter, posted } = setup();
    const never = judge(
      newRecord('10.0.0.1:8080', 0),
      { ok: false, latencyMs: 1, failure: 'refused' },
      1,
      { withholdDeath: false },
    );
    expect(never.transition).to.equal('never-alive');
    reporter.onJudgement(never);
    const up = alive('10.0.0.2:8080', 'b@10.0.0.2', 1);
    const withheld = judge(up.record, { ok: false, latencyMs: 1, failure: 'refused' }, 2, {
      withholdDeath: true,
    });
    reporter.onJudgement(withheld);
    await clock.advanceAsync(10);
    expect(posted()).to.deep.equal([]);
  });

  it("sends the cluster status after the first round ('election'), then only after rounds that changed something", async () => {
    const { clock, reporter, posted, setRecords } = setup();
    setRecords([alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record]);
    reporter.onRound(round(1));
    reporter.onRound(round(2));
    reporter.onRound(round(3, 1));
    reporter.onRound(round(4, 0, 1));
    await clock.advanceAsync(0);
    const reasons = posted().map((b) => (b as ClusterStatusPayload).reason);
    expect(reasons).to.deep.equal(['election', 'change', 'change']);
  });

  it('resends the cluster status every interval while leading, and stops when it stops leading', async () => {
    const { clock, reporter, posted } = setup({ intervalMs: 10_000 });
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
    const { reporter, logger, setRecords } = setup();
    const first = alive('127.0.0.1:8081', 'node@127.0.0.1', 1);
    const second = alive('127.0.0.1:8082', 'node@127.0.0.1', 1);
    setRecords([first.record, second.record]);
    reporter.onJudgement(second);
    const errors = logger.at('error').map((r) => r.fields.event);
    expect(errors).to.deep.equal(['duplicate-id']);
  });
});
