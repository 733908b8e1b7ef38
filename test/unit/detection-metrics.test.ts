// The detection metrics: what /metrics says about verdicts, peers by health and self-suspicion.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { DetectionMetrics } from '../../src/metrics/detection-metrics.js';
import type { SelfSuspicion } from '../../src/prober/rounds.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import type { Health } from '../../src/wire/peer-view.js';
import { sampleOf as sample } from '../support/metrics-text.js';

const peer = (i: number, health: Health): PeerRecord => ({
  ...newRecord(`10.0.0.${i}:8080`, 0),
  health,
});

/**
 * Detection metrics over verdicts the test sets (`world`): two peers alive, one suspect, no
 * self-suspicion; one suspicion and two deaths (and a non-transition) counted.
 */
function setup() {
  const world = {
    records: [peer(1, 'alive'), peer(2, 'alive'), peer(3, 'suspect')],
    suspicion: { suspect: false, unreachable: 1, silent: 1, considered: 3 } as SelfSuspicion | null,
  };
  const registry = new Registry();
  const metrics = new DetectionMetrics(registry, {
    records: () => world.records,
    selfSuspicion: () => world.suspicion,
    eventLoopLagMs: () => 250,
  });
  metrics.transition('suspected');
  metrics.transition('died');
  metrics.transition('died');
  metrics.transition(null);
  return { world, scrape: () => registry.metrics() };
}

describe('DetectionMetrics', () => {
  it('reports peers by health, self-suspicion and transitions', async () => {
    const { scrape } = setup();
    const body = await scrape();
    expect(sample(body, 'knh_peers{health="alive"}')).to.equal(2);
    expect(sample(body, 'knh_peers{health="suspect"}')).to.equal(1);
    expect(sample(body, 'knh_peers{health="dead"}')).to.equal(0);
    expect(sample(body, 'knh_self_suspect')).to.equal(0);
    expect(sample(body, 'knh_unreachable_peers')).to.equal(1);
    expect(sample(body, 'knh_event_loop_lag_seconds')).to.equal(0.25);
    expect(sample(body, 'knh_peer_transitions_total{transition="died"}')).to.equal(2);
    expect(sample(body, 'knh_peer_transitions_total{transition="suspected"}')).to.equal(1);
  });

  it('counts every kind of transition from 0, before the first happens', async () => {
    const registry = new Registry();
    new DetectionMetrics(registry, {
      records: () => [],
      selfSuspicion: () => null,
      eventLoopLagMs: () => 0,
    });
    const body = await registry.metrics();
    for (const t of ['died', 'recovered', 'suspected', 'cleared', 'withheld', 'path-broken']) {
      expect(sample(body, `knh_peer_transitions_total{transition="${t}"}`), t).to.equal(0);
    }
  });

  /** Scraped once as set up, then suspecting itself with every peer silent. */
  async function suspectingItself() {
    const fx = setup();
    await fx.scrape();
    fx.world.records = [peer(1, 'suspect'), peer(2, 'suspect'), peer(3, 'suspect')];
    fx.world.suspicion = { suspect: true, unreachable: 3, silent: 3, considered: 3 };
    return fx;
  }

  it('reports them as they are at scrape time', async () => {
    const { scrape } = await suspectingItself();
    const body = await scrape();
    expect(sample(body, 'knh_self_suspect')).to.equal(1);
    expect(sample(body, 'knh_unreachable_peers')).to.equal(3);
    expect(sample(body, 'knh_peers{health="alive"}')).to.equal(0);
  });

  it('reports no peers and no self-suspicion on a follower: it has no verdicts of its own', async () => {
    const { world, scrape } = await suspectingItself();
    await scrape();
    world.records = [];
    world.suspicion = null;
    const body = await scrape();
    expect(sample(body, 'knh_self_suspect')).to.equal(0);
    expect(sample(body, 'knh_peers{health="suspect"}')).to.equal(0);
  });
});
