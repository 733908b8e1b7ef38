// A peer's health verdict: which probe results change it, and which changes page someone.
import { expect } from 'chai';
import {
  fromView,
  judge,
  newRecord,
  toView,
  type Health,
  type PeerRecord,
  type ProbeResult,
  type Transition,
} from '../../src/prober/verdict.js';

const ADDRESS = '10.0.0.7:8080';
const T0 = 1_700_000_000_000;
const success: ProbeResult = {
  ok: true,
  latencyMs: 3,
  id: 'worker-7@10.0.0.7',
  nodeName: 'worker-7',
};
const failure: ProbeResult = { ok: false, latencyMs: 1_000, failure: 'refused (ECONNREFUSED)' };

function record(health: Health, { alerted = false, sinceMs = T0 } = {}): PeerRecord {
  return { ...newRecord(ADDRESS, sinceMs), health, alerted };
}

describe('verdict: judge', () => {
  const NOW = T0 + 60_000;
  const cases: {
    name: string;
    before: PeerRecord;
    result: ProbeResult;
    withholdDeath?: boolean;
    health: Health;
    transition: Transition;
    alerted: boolean;
    incidentMs: number | null;
  }[] = [
    {
      name: 'unknown → alive: first seen alive, no alert',
      before: record('unknown'),
      result: success,
      health: 'alive',
      transition: 'first-alive',
      alerted: false,
      incidentMs: null,
    },
    {
      name: 'unknown → dead: never seen alive, no alert',
      before: record('unknown'),
      result: failure,
      health: 'dead',
      transition: 'never-alive',
      alerted: false,
      incidentMs: null,
    },
    {
      name: 'alive → dead: died, alerted, the incident starts now',
      before: record('alive'),
      result: failure,
      health: 'dead',
      transition: 'died',
      alerted: true,
      incidentMs: NOW,
    },
    {
      name: 'dead (alerted) → alive: recovered, resolving the incident that started at T0',
      before: record('dead', { alerted: true }),
      result: success,
      health: 'alive',
      transition: 'recovered',
      alerted: false,
      incidentMs: T0,
    },
    {
      name: 'dead (never alerted) → alive: first seen alive, nothing to resolve',
      before: record('dead', { alerted: false }),
      result: success,
      health: 'alive',
      transition: 'first-alive',
      alerted: false,
      incidentMs: null,
    },
    {
      name: 'alive → alive: no change',
      before: record('alive'),
      result: success,
      health: 'alive',
      transition: null,
      alerted: false,
      incidentMs: null,
    },
    {
      name: 'dead → dead: no change, no second alert',
      before: record('dead', { alerted: true }),
      result: failure,
      health: 'dead',
      transition: null,
      alerted: true,
      incidentMs: null,
    },
    {
      name: 'alive, failing, but this node cannot vouch for its network: withheld',
      before: record('alive'),
      result: failure,
      withholdDeath: true,
      health: 'alive',
      transition: 'withheld',
      alerted: false,
      incidentMs: null,
    },
    {
      name: 'unknown, failing, withheld: stays unknown',
      before: record('unknown'),
      result: failure,
      withholdDeath: true,
      health: 'unknown',
      transition: 'withheld',
      alerted: false,
      incidentMs: null,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const j = judge(c.before, c.result, NOW, { withholdDeath: c.withholdDeath ?? false });
      expect(j.transition).to.equal(c.transition);
      expect(j.record.health).to.equal(c.health);
      expect(j.record.alerted).to.equal(c.alerted);
      expect(j.incidentMs).to.equal(c.incidentMs);
      // `since` moves exactly when the health does.
      expect(j.record.sinceMs).to.equal(c.health === c.before.health ? c.before.sinceMs : NOW);
      expect(j.record.lastProbeMs).to.equal(NOW);
      expect(j.record.lastLatencyMs).to.equal(c.result.latencyMs);
    });
  }

  it('learns the id and node name from a successful probe, and forgets the last failure', () => {
    const before = { ...record('alive'), lastFailure: 'timeout' };
    expect(before.id).to.equal('unknown@10.0.0.7');
    const j = judge(before, success, T0 + 1, { withholdDeath: false });
    expect(j.record.id).to.equal('worker-7@10.0.0.7');
    expect(j.record.nodeName).to.equal('worker-7');
    expect(j.record.lastFailure).to.equal(null);
  });

  it('keeps the last failure of a failed probe, and what it had learnt', () => {
    const learnt = judge(record('unknown'), success, T0 + 1, { withholdDeath: false }).record;
    const j = judge(learnt, failure, T0 + 2, { withholdDeath: false });
    expect(j.record.lastFailure).to.equal(failure.failure);
    expect(j.record.id).to.equal('worker-7@10.0.0.7');
  });

  it('does not change the record it was given', () => {
    const before = record('alive');
    const copy = structuredClone(before);
    judge(before, failure, T0 + 1, { withholdDeath: false });
    expect(before).to.deep.equal(copy);
  });

  it('alerts once per dead spell over a whole alive → dead → alive → dead history', () => {
    let r = record('unknown');
    const transitions: Transition[] = [];
    const results = [success, failure, failure, failure, success, success, failure, success];
    results.forEach((result, i) => {
      const j = judge(r, result, T0 + i * 1_000, { withholdDeath: false });
      transitions.push(j.transition);
      r = j.record;
    });
    expect(transitions).to.deep.equal([
      'first-alive',
      'died',
      null,
      null,
      'recovered',
      null,
      'died',
      'recovered',
    ]);
  });
});

describe('verdict: records', () => {
  it('names a new peer unknown@<ip>, for IPv4 and IPv6', () => {
    expect(newRecord('10.0.0.7:8080', T0)).to.deep.include({
      id: 'unknown@10.0.0.7',
      nodeName: 'unknown',
      health: 'unknown',
      sinceMs: T0,
      alerted: false,
    });
    expect(newRecord('[fd00::7]:8080', T0).id).to.equal('unknown@fd00::7');
  });

  it('round-trips through the wire view that a successor inherits', () => {
    const r = judge(record('alive'), failure, T0 + 5, { withholdDeath: false }).record;
    const back = fromView(toView(r));
    expect(back).to.deep.include({
      address: r.address,
      id: r.id,
      nodeName: r.nodeName,
      health: 'dead',
      sinceMs: T0 + 5,
      alerted: true,
    });
  });
});
