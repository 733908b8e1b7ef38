// A peer's health verdict as pure transitions over evidence: answers, failed attempts, confirmations.
import { expect } from 'chai';
import {
  answered,
  attemptFailed,
  confirm,
  fromView,
  newRecord,
  selfSuspect,
  toView,
  type Answer,
  type Confirmation,
  type PeerRecord,
  type Transition,
} from '../../src/prober/verdict.js';
import type { Health } from '../../src/wire/peer-view.js';
import { loadSchemas } from '../../src/wire/schemas.js';

const ADDRESS = '10.0.0.7:8080';
const T0 = 1_700_000_000_000;
const schemas = loadSchemas();
const UNHEALTHY = 1_000;
const pong: Answer = { latencyMs: 3, id: 'worker-7@10.0.0.7', nodeName: 'worker-7' };
const refused = {
  latencyMs: 1,
  detail: 'refused (ECONNREFUSED) after 1 attempt',
  evidence: 'refusal' as const,
};
const timedOut = {
  latencyMs: 1000,
  detail: 'timeout (1000 ms) after 1 attempt',
  evidence: 'silence' as const,
};
const dead: Confirmation = { reachedBy: [], unhealthyMs: UNHEALTHY, withhold: null };
const viaRelays = (...reachedBy: string[]): Confirmation => ({ ...dead, reachedBy });

function record(
  health: Health,
  { alerted = false, sinceMs = T0, unreachableSinceMs = null as number | null } = {},
): PeerRecord {
  return { ...newRecord(ADDRESS, sinceMs), health, alerted, unreachableSinceMs };
}

/** A peer seen alive at T0 whose probe started failing at `failedAt` (refused, by default). */
function failing(
  failedAt = T0 + 10_000,
  health: Health = 'alive',
  failure: typeof refused | typeof timedOut = refused,
): PeerRecord {
  return attemptFailed(record(health), failure, failedAt, failedAt + 1).record;
}

describe('verdict: answered', () => {
  const NOW = T0 + 60_000;
  const cases: {
    name: string;
    before: PeerRecord;
    health: Health;
    transition: Transition;
    alerted: boolean;
    incidentMs: number | null;
    sinceMs: number;
  }[] = [
    {
      name: 'unknown → alive: first seen alive, no alert',
      before: record('unknown'),
      health: 'alive',
      transition: 'first-alive',
      alerted: false,
      incidentMs: null,
      sinceMs: NOW,
    },
    {
      name: 'suspect → alive: cleared, keeping the alive spell it was in',
      before: record('suspect', { unreachableSinceMs: T0 + 5 }),
      health: 'alive',
      transition: 'cleared',
      alerted: false,
      incidentMs: null,
      sinceMs: T0,
    },
    {
      name: 'dead (alerted) → alive: recovered, resolving the incident that started at T0',
      before: record('dead', { alerted: true }),
      health: 'alive',
      transition: 'recovered',
      alerted: false,
      incidentMs: T0,
      sinceMs: NOW,
    },
    {
      name: 'dead (never alerted) → alive: first seen alive, nothing to resolve',
      before: record('dead'),
      health: 'alive',
      transition: 'first-alive',
      alerted: false,
      incidentMs: null,
      sinceMs: NOW,
    },
    {
      name: 'alive → alive: no change',
      before: record('alive'),
      health: 'alive',
      transition: null,
      alerted: false,
      incidentMs: null,
      sinceMs: T0,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const j = answered(c.before, pong, NOW);
      expect(j.transition).to.equal(c.transition);
      expect(j.record.health).to.equal(c.health);
      expect(j.record.alerted).to.equal(c.alerted);
      expect(j.incidentMs).to.equal(c.incidentMs);
      expect(j.record.sinceMs).to.equal(c.sinceMs);
      expect(j.record.unreachableSinceMs).to.equal(null);
      expect(j.record.lastProbeMs).to.equal(NOW);
      expect(j.record.lastLatencyMs).to.equal(pong.latencyMs);
    });
  }

  it('learns the id and node name from the answer, and forgets the last failure', () => {
    const before = failing();
    expect(before.id).to.equal('10.0.0.7@10.0.0.7');
    expect(before.lastFailure).to.equal(refused.detail);
    const j = answered(before, pong, T0 + 20_000);
    expect(j.record).to.deep.include({
      id: 'worker-7@10.0.0.7',
      nodeName: 'worker-7',
      lastFailure: null,
      unreachableSinceMs: null,
    });
  });

  it('clears a suspicion on evidence of life without an answer body (another request answered)', () => {
    const learnt = answered(record('alive'), pong, T0 + 1).record;
    const suspect = attemptFailed(learnt, refused, T0 + 2, T0 + 3).record;
    const j = answered(suspect, null, T0 + 500);
    expect(j.transition).to.equal('cleared');
    expect(j.record).to.deep.include({
      health: 'alive',
      id: 'worker-7@10.0.0.7',
      unreachableSinceMs: null,
      lastProbeMs: T0 + 3,
    });
  });
});

describe('verdict: attemptFailed', () => {
  it('makes a live peer suspect, never dead, from the start of the failed attempt', () => {
    const j = attemptFailed(record('alive'), refused, T0 + 100, T0 + 1_100);
    expect(j.transition).to.equal('suspected');
    expect(j.incidentMs).to.equal(null);
    expect(j.record).to.deep.include({
      health: 'suspect',
      sinceMs: T0,
      alerted: false,
      unreachableSinceMs: T0 + 100,
      lastProbeMs: T0 + 1_100,
      lastFailure: refused.detail,
    });
  });

  it('keeps the latency of the last answer and when it came: a failed attempt has no latency', () => {
    const seen = answered(record('unknown'), pong, T0).record;
    expect(seen).to.deep.include({ lastLatencyMs: pong.latencyMs, lastSeenMs: T0 });
    const down = attemptFailed(seen, timedOut, T0 + 1_000, T0 + 2_000).record;
    expect(down).to.deep.include({
      lastLatencyMs: pong.latencyMs,
      lastSeenMs: T0,
      lastFailure: timedOut.detail,
    });
  });

  it('keeps the start of the first failed attempt across further failures, without a new transition', () => {
    const first = attemptFailed(record('alive'), refused, T0 + 100, T0 + 101).record;
    const again = attemptFailed(first, { latencyMs: 9, detail: 'timeout' }, T0 + 700, T0 + 900);
    expect(again.transition).to.equal(null);
    expect(again.record).to.deep.include({
      health: 'suspect',
      unreachableSinceMs: T0 + 100,
      lastFailure: 'timeout',
      lastProbeMs: T0 + 900,
    });
  });

  for (const health of ['unknown', 'dead'] as const) {
    it(`leaves a ${health} peer ${health}, with no transition, but notes when it became unreachable`, () => {
      const j = attemptFailed(record(health), refused, T0 + 5, T0 + 6);
      expect(j.transition).to.equal(null);
      expect(j.record.health).to.equal(health);
      expect(j.record.unreachableSinceMs).to.equal(T0 + 5);
    });
  }

  it('does not make a peer with a known broken path suspect again', () => {
    const broken = confirm(failing(T0 + 100), viaRelays('r@10.0.0.2'), T0 + 2_000).record;
    expect(broken.brokenPath).to.not.equal(null);
    const j = attemptFailed(broken, refused, T0 + 3_000, T0 + 3_001);
    expect(j.transition).to.equal(null);
    expect(j.record.health).to.equal('alive');
  });
});

describe('verdict: confirm', () => {
  const SINCE = T0 + 10_000;
  const AFTER = SINCE + UNHEALTHY;

  it('decides nothing before the peer has been unreachable for the unhealthy duration', () => {
    const suspect = failing(SINCE);
    for (const c of [
      dead,
      viaRelays('r@10.0.0.2'),
      { ...dead, withhold: 'sanity-check' } as const,
    ]) {
      const j = confirm(suspect, c, AFTER - 1);
      expect(j.transition).to.equal(null);
      expect(j.record).to.deep.equal(suspect);
    }
  });

  it('decides nothing for a peer that answered meanwhile', () => {
    const cleared = answered(failing(SINCE), pong, SINCE + 10).record;
    const j = confirm(cleared, dead, AFTER + 5_000);
    expect(j.transition).to.equal(null);
    expect(j.record.health).to.equal('alive');
  });

  it('suspect → dead: died, alerted, the incident starting at the verdict', () => {
    const j = confirm(failing(SINCE), dead, AFTER);
    expect(j.transition).to.equal('died');
    expect(j.incidentMs).to.equal(AFTER);
    expect(j.record).to.deep.include({ health: 'dead', alerted: true, sinceMs: AFTER });
    expect(j.record.lastFailure).to.equal(refused.detail);
  });

  it('alive but unreachable for long enough → dead too', () => {
    const j = confirm(record('alive', { unreachableSinceMs: SINCE }), dead, AFTER + 300);
    expect(j.transition).to.equal('died');
    expect(j.record).to.deep.include({ health: 'dead', alerted: true });
  });

  it('unknown → dead: never seen alive, no alert, dead since it was listed', () => {
    const j = confirm(failing(SINCE, 'unknown'), dead, AFTER);
    expect(j.transition).to.equal('never-alive');
    expect(j.incidentMs).to.equal(null);
    expect(j.record).to.deep.include({ health: 'dead', alerted: false, sinceMs: T0 });
  });

  it('dead → dead: no change, no second alert', () => {
    const deadRecord = confirm(failing(SINCE), dead, AFTER).record;
    const stillFailing = attemptFailed(deadRecord, refused, AFTER + 1_000, AFTER + 1_001).record;
    const j = confirm(stillFailing, dead, AFTER + 5_000);
    expect(j.transition).to.equal(null);
    expect(j.record).to.deep.include({ health: 'dead', alerted: true, sinceMs: AFTER });
  });

  for (const why of ['sanity-check', 'self-suspect'] as const) {
    it(`withholds the verdict (${why}) without changing the health, and says why`, () => {
      for (const health of ['alive', 'unknown'] as const) {
        const before = failing(SINCE, health);
        const j = confirm(before, { ...dead, withhold: why }, AFTER);
        expect(j.transition, health).to.equal('withheld');
        expect(j.withheld, health).to.equal(why);
        expect(j.incidentMs, health).to.equal(null);
        expect(j.record.health, health).to.equal(before.health);
        expect(j.record.alerted, health).to.equal(false);
      }
    });
  }

  it('a peer relays reach is alive with a broken path, not dead: path-broken, once', () => {
    const j = confirm(failing(SINCE), viaRelays('r1@10.0.0.2', 'r2@10.0.0.3'), AFTER);
    expect(j.transition).to.equal('path-broken');
    expect(j.incidentMs).to.equal(SINCE);
    expect(j.record).to.deep.include({ health: 'alive', alerted: false, sinceMs: T0 });
    expect(j.record.brokenPath).to.deep.include({
      sinceMs: SINCE,
      witnesses: ['r1@10.0.0.2', 'r2@10.0.0.3'],
    });
    // Relays still reach it at later confirmations: no second event.
    const failedAgain = attemptFailed(j.record, refused, AFTER + 1_000, AFTER + 1_001).record;
    const again = confirm(failedAgain, viaRelays('r1@10.0.0.2', 'r2@10.0.0.3'), AFTER + 2_000);
    expect(again.transition).to.equal(null);
    expect(again.record.health).to.equal('alive');
    expect(again.record.brokenPath?.sinceMs).to.equal(SINCE);
  });

  it('a path-broken peer that answers again: path-restored, naming the path that was broken', () => {
    const broken = confirm(failing(SINCE), viaRelays('r1@10.0.0.2'), AFTER);
    const j = answered(broken.record, pong, AFTER + 3_000);
    expect(j.transition).to.equal('path-restored');
    expect(j.incidentMs).to.equal(SINCE);
    expect(j.restoredPath).to.deep.include({ sinceMs: SINCE, witnesses: ['r1@10.0.0.2'] });
    expect(j.record).to.deep.include({ health: 'alive', brokenPath: null, sinceMs: T0 });
    expect(answered(j.record, pong, AFTER + 4_000).transition).to.equal(null);
  });

  it('relays are not withheld: they prove the peer is up whatever this node suffers', () => {
    const j = confirm(
      failing(SINCE),
      { ...viaRelays('r1@10.0.0.2'), withhold: 'self-suspect' },
      AFTER,
    );
    expect(j.transition).to.equal('path-broken');
  });

  it('a dead peer that relays reach again is recovered (resolving the dead alert)', () => {
    const deadRecord = confirm(failing(SINCE), dead, AFTER).record;
    const failedAgain = attemptFailed(deadRecord, refused, AFTER + 1_000, AFTER + 1_001).record;
    const j = confirm(failedAgain, viaRelays('r1@10.0.0.2'), AFTER + 3_000);
    expect(j.transition).to.equal('recovered');
    expect(j.incidentMs).to.equal(AFTER);
    expect(j.record).to.deep.include({ health: 'alive', alerted: false });
    expect(j.record.brokenPath).to.not.equal(null);
  });

  it('a path-broken peer confirmed dead (no relay reaches it): died, closing that path incident', () => {
    const broken = confirm(failing(SINCE), viaRelays('r1@10.0.0.2'), AFTER).record;
    expect(broken.brokenPath).to.deep.include({ sinceMs: SINCE, alerted: true });
    const failedAgain = attemptFailed(broken, refused, AFTER + 1_000, AFTER + 1_001).record;
    const j = confirm(failedAgain, dead, AFTER + 3_000);
    expect(j.transition).to.equal('died');
    expect(j.incidentMs).to.equal(AFTER + 3_000);
    expect(j.restoredPath).to.deep.equal(broken.brokenPath);
    expect(j.record).to.deep.include({
      health: 'dead',
      alerted: true,
      sinceMs: AFTER + 3_000,
      brokenPath: null,
    });
  });

  it('a peer that dies without an alerted broken path closes no path incident', () => {
    const j = confirm(failing(SINCE), dead, AFTER);
    expect(j.transition).to.equal('died');
    expect(j).to.not.have.property('restoredPath');
  });

  it('overloaded: neither dead nor a broken path, though relays reach it; a dead peer they reach recovers', () => {
    const overloaded = { ...dead, withhold: 'overloaded' } as const;
    for (const c of [overloaded, { ...overloaded, reachedBy: ['r1@10.0.0.2'] }]) {
      const j = confirm(failing(SINCE), c, AFTER);
      expect(j).to.deep.include({ transition: 'withheld', withheld: 'overloaded' });
      expect(j.record).to.deep.include({ health: 'suspect', alerted: false, brokenPath: null });
    }
    const deadRecord = confirm(failing(SINCE), dead, AFTER).record;
    const failedAgain = attemptFailed(deadRecord, refused, AFTER + 1_000, AFTER + 1_001).record;
    const back = confirm(failedAgain, { ...overloaded, reachedBy: ['r1@10.0.0.2'] }, AFTER + 3_000);
    expect(back.transition).to.equal('recovered');
  });

  it('a withheld verdict keeps the broken path the record had', () => {
    const broken = confirm(failing(SINCE), viaRelays('r1@10.0.0.2'), AFTER).record;
    const failedAgain = attemptFailed(broken, refused, AFTER + 1_000, AFTER + 1_001).record;
    const j = confirm(failedAgain, { ...dead, withhold: 'self-suspect' }, AFTER + 3_000);
    expect(j.transition).to.equal('withheld');
    expect(j.record.brokenPath).to.deep.equal(broken.brokenPath);
    expect(j.record).to.deep.include({ health: 'alive', alerted: false });
    expect(j).to.not.have.property('restoredPath');
  });

  it('does not change the records it is given', () => {
    const before = failing(SINCE);
    const copy = structuredClone(before);
    confirm(before, dead, AFTER);
    confirm(before, viaRelays('r@10.0.0.2'), AFTER);
    attemptFailed(before, refused, AFTER, AFTER);
    answered(before, pong, AFTER);
    expect(before).to.deep.equal(copy);
  });

  it('alerts once per dead spell over a whole alive → dead → alive → dead history', () => {
    let r = record('unknown');
    const transitions: Transition[] = [];
    const apply = (j: { record: PeerRecord; transition: Transition }) => {
      r = j.record;
      if (j.transition) transitions.push(j.transition);
    };
    let t = T0;
    const fail = (confirmAfter: number) => {
      apply(attemptFailed(r, refused, t, t + 1));
      apply(confirm(r, dead, t + confirmAfter));
      t += 1_000;
    };
    const answer = () => {
      apply(answered(r, pong, t));
      t += 1_000;
    };
    answer(); // first-alive
    fail(200); // suspected, too early to decide
    answer(); // cleared
    fail(UNHEALTHY); // suspected, died
    fail(UNHEALTHY); // dead stays dead
    answer(); // recovered
    answer();
    fail(UNHEALTHY); // suspected, died
    answer(); // recovered
    expect(transitions).to.deep.equal([
      'first-alive',
      'suspected',
      'cleared',
      'suspected',
      'died',
      'recovered',
      'suspected',
      'died',
      'recovered',
    ]);
  });
});

describe('verdict: selfSuspect', () => {
  const alive = () => answered(record('unknown'), pong, T0).record;
  const suspect = () => failing(T0 + 10, 'alive', timedOut);
  const refusing = () => failing(T0 + 10, 'alive', refused);
  const broken = () => confirm(suspect(), viaRelays('r@10.0.0.2'), T0 + 10 + UNHEALTHY).record;
  const deadAlerted = () => confirm(suspect(), dead, T0 + 10 + UNHEALTHY).record;
  const neverAlive = () => confirm(failing(T0 + 10, 'unknown'), dead, T0 + 10 + UNHEALTHY).record;

  const cases: [string, PeerRecord[], Omit<ReturnType<typeof selfSuspect>, 'silent'>, number?][] = [
    ['no peers', [], { suspect: false, unreachable: 0, considered: 0 }],
    [
      'one peer, silent: nobody can tell',
      [suspect()],
      { suspect: false, unreachable: 1, considered: 1 },
    ],
    ['2 of 2 silent', [suspect(), suspect()], { suspect: true, unreachable: 2, considered: 2 }],
    [
      'peers already dead are left out: earlier deaths do not silence the next one',
      [alive(), suspect(), deadAlerted(), deadAlerted()],
      { suspect: false, unreachable: 1, considered: 2 },
    ],
    [
      '1 of 2 silent: not most',
      [alive(), suspect()],
      { suspect: false, unreachable: 1, considered: 2 },
    ],
    [
      '2 of 4 silent: not most',
      [alive(), alive(), suspect(), suspect()],
      { suspect: false, unreachable: 2, considered: 4 },
    ],
    [
      '3 of 4 silent',
      [alive(), suspect(), suspect(), suspect()],
      { suspect: true, unreachable: 3, considered: 4 },
    ],
    [
      '3 of 4 refusing: their hosts answered, so this node is not at fault',
      [alive(), refusing(), refusing(), refusing()],
      { suspect: false, unreachable: 3, considered: 4 },
      0,
    ],
    [
      '2 silent and 1 refusing of 4: not most silent',
      [alive(), suspect(), suspect(), refusing()],
      { suspect: false, unreachable: 3, considered: 4 },
      2,
    ],
    [
      'a broken path reached through silence counts as silent',
      [alive(), broken(), suspect()],
      { suspect: true, unreachable: 2, considered: 3 },
    ],
    [
      'unknown and never-alive peers are not considered',
      [alive(), suspect(), record('unknown'), neverAlive(), neverAlive()],
      { suspect: false, unreachable: 1, considered: 2 },
    ],
  ];
  for (const [name, records, expected, silent = expected.unreachable] of cases) {
    it(name, () => {
      expect(selfSuspect(records)).to.deep.equal({ ...expected, silent });
    });
  }
});

describe('verdict: records', () => {
  it('names a new peer by its IP until it answers, for IPv4 and IPv6', () => {
    expect(newRecord('10.0.0.7:8080', T0)).to.deep.include({
      id: '10.0.0.7@10.0.0.7',
      nodeName: '10.0.0.7',
      health: 'unknown',
      sinceMs: T0,
      alerted: false,
      unreachableSinceMs: null,
      brokenPath: null,
    });
    expect(newRecord('[fd00::7]:8080', T0).id).to.equal('fd00::7@fd00::7');
  });

  it("names a new peer by its node as discovery knows it (an EndpointSlice's nodeName)", () => {
    expect(newRecord('10.0.0.7:8080', T0, 'worker-7')).to.deep.include({
      id: 'worker-7@10.0.0.7',
      nodeName: 'worker-7',
      health: 'unknown',
    });
  });

  it('round-trips through the wire view that a successor inherits', () => {
    const learnt = answered(record('unknown'), pong, T0).record;
    const r = confirm(
      attemptFailed(learnt, refused, T0 + 5, T0 + 6).record,
      dead,
      T0 + 5_000,
    ).record;
    const view = toView(r);
    expect(view).to.deep.equal({
      id: 'worker-7@10.0.0.7',
      address: ADDRESS,
      node_name: 'worker-7',
      health: 'dead',
      since: T0 + 5_000,
      alerted: true,
      // For followers' status pages: the last probe, the last answered one's latency, and while
      // it does not answer when it last did and why its last probe failed.
      last_probe: r.lastProbeMs,
      latency_ms: pong.latencyMs,
      last_seen: T0,
      last_failure: refused.detail,
    });
    expect(schemas.check('peer-view', view)).to.deep.equal({ ok: true });
    // Once it answers again, neither: its last probe is its last answer.
    const back = toView(answered(r, pong, T0 + 9_000).record);
    expect(back).to.not.have.any.keys('last_seen', 'last_failure');
    expect(fromView(view)).to.deep.include({
      address: r.address,
      id: r.id,
      nodeName: r.nodeName,
      health: 'dead',
      sinceMs: T0 + 5_000,
      alerted: true,
      unreachableSinceMs: null,
      brokenPath: null,
    });
  });

  it('does not inherit a suspicion: a suspect peer in a view starts alive, keeping its since', () => {
    const view = toView(failing(T0 + 100));
    expect(view.health).to.equal('suspect');
    const back = fromView(view);
    expect(back).to.deep.include({ health: 'alive', sinceMs: T0, unreachableSinceMs: null });
    // …so that the successor's own failed probe starts its own confirmation.
    expect(attemptFailed(back, refused, T0 + 2_000, T0 + 2_001).transition).to.equal('suspected');
  });
});
