// The detection metrics: what /metrics says about verdicts, peers by health and self-suspicion.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { DetectionMetrics } from '../../src/metrics/detection-metrics.js';
import type { SelfSuspicion } from '../../src/prober/rounds.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import type { Health } from '../../src/wire/peer-view.js';

const peer = (i: number, health: Health): PeerRecord => ({
  ...newRecord(`10.0.0.${i}:8080`, 0),
  health,
});

/** The value of one sample line, e.g. `knh_peers{health="dead"}`; undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('DetectionMetrics', () => {
  it('reports peers by health, self-suspicion and transitions as they are at scrape time', async () => {
    let records: PeerRecord[] = [peer(1, 'alive'), peer(2, 'alive'), peer(3, 'suspect')];
    let suspicion: SelfSuspicion | null = {
      suspect: false,
      unreachable: 1,
      silent: 1,
      considered: 3,
    };
    const registry = new Registry();
    const metrics = new DetectionMetrics(registry, {
      records: () => records,
      selfSuspicion: () => suspicion,
    });
    metrics.transition('suspected');
    metrics.transition('died');
    metrics.transition('died');
    metrics.transition(null);

    let body = await registry.metrics();
    expect(sample(body, 'knh_peers{health="alive"}')).to.equal(2);
    expect(sample(body, 'knh_peers{health="suspect"}')).to.equal(1);
    expect(sample(body, 'knh_peers{health="dead"}')).to.equal(0);
    expect(sample(body, 'knh_self_suspect')).to.equal(0);
    expect(sample(body, 'knh_unreachable_peers')).to.equal(1);
    expect(sample(body, 'knh_peer_transitions_total{transition="died"}')).to.equal(2);
    expect(sample(body, 'knh_peer_transitions_total{transition="suspected"}')).to.equal(1);

    records = [peer(1, 'suspect'), peer(2, 'suspect'), peer(3, 'suspect')];
    suspicion = { suspect: true, unreachable: 3, silent: 3, considered: 3 };
    body = await registry.metrics();
    expect(sample(body, 'knh_self_suspect')).to.equal(1);
    expect(sample(body, 'knh_unreachable_peers')).to.equal(3);
    expect(sample(body, 'knh_peers{health="alive"}')).to.equal(0);

    // A follower: no verdicts of its own.
    records = [];
    suspicion = null;
    body = await registry.metrics();
    expect(sample(body, 'knh_self_suspect')).to.equal(0);
    expect(sample(body, 'knh_peers{health="suspect"}')).to.equal(0);
  });
});
