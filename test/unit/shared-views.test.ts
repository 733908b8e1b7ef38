// The verdicts as shared with successors: rebuilt when a verdict changes or the latencies are old.
import { expect } from 'chai';
import { SharedViews } from '../../src/prober/shared-views.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import { FakeClock } from '../support/fake-clock.js';

function setup(maxAgeMs: number) {
  const clock = new FakeClock();
  let version = 1;
  let records: PeerRecord[] = [1, 2, 3].map((n) => ({
    ...newRecord(`10.0.0.${n}:8080`, clock.now()),
    health: 'alive' as const,
    lastLatencyMs: n,
    lastProbeMs: clock.now(),
  }));
  let picked = 0;
  const shared = new SharedViews({
    clock,
    version: () => version,
    records: () => records,
    maxAgeMs: () => maxAgeMs,
    successorsOf: (rs) => {
      picked++;
      return rs.filter((r) => r.health !== 'dead').map((r) => r.address);
    },
  });
  return {
    clock,
    shared,
    picked: () => picked,
    change: (next: PeerRecord[]) => {
      records = next;
      version++;
    },
    records: () => records,
    retime: (next: PeerRecord[]) => (records = next), // latencies only: the version stays
  };
}

describe('SharedViews', () => {
  it('gives the same views while no verdict changed and they are fresh, new ones after a change', () => {
    const t = setup(5_000);
    const first = t.shared.views();
    expect(first.map((v) => v.latency_ms)).to.deep.equal([1, 2, 3]);
    t.retime(t.records().map((r) => ({ ...r, lastLatencyMs: 9 })));
    t.clock.advance(4_999);
    expect(t.shared.views()).to.equal(first);
    const dead = t.records().map((r, i) => (i === 1 ? { ...r, health: 'dead' as const } : r));
    t.change(dead);
    const second = t.shared.views();
    expect(second).to.not.equal(first);
    expect(second.map((v) => v.health)).to.deep.equal(['alive', 'dead', 'alive']);
    expect(second.map((v) => v.latency_ms)).to.deep.equal([9, 9, 9]);
  });

  it('rebuilds views whose latencies are maxAgeMs old, even with no verdict changed', () => {
    const t = setup(5_000);
    const first = t.shared.views();
    t.retime(t.records().map((r) => ({ ...r, lastLatencyMs: 7 })));
    t.clock.advance(5_000);
    const later = t.shared.views();
    expect(later).to.not.equal(first);
    expect(later.map((v) => v.latency_ms)).to.deep.equal([7, 7, 7]);
  });

  it('with maxAgeMs 0 (a small mesh), builds the views at every call', () => {
    const t = setup(0);
    const first = t.shared.views();
    expect(t.shared.views()).to.not.equal(first);
  });

  it('works the successors out again only when a verdict changed', () => {
    const t = setup(5_000);
    const all = ['10.0.0.1:8080', '10.0.0.2:8080', '10.0.0.3:8080'];
    expect(t.shared.successors()).to.deep.equal(all);
    t.clock.advance(60_000);
    t.shared.successors().pop(); // a caller's copy: changing it changes nothing here
    expect(t.shared.successors()).to.deep.equal(all);
    expect(t.picked()).to.equal(1);
    t.change(t.records().map((r, i) => (i === 0 ? { ...r, health: 'dead' as const } : r)));
    expect(t.shared.successors()).to.deep.equal(all.slice(1));
    expect(t.picked()).to.equal(2);
  });
});
