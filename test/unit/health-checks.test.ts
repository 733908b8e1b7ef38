// The pure readiness and liveness verdicts, over facts and an injected time.
import { expect } from 'chai';
import {
  DEFAULT_THRESHOLDS,
  liveness,
  readiness,
  stallAfterMs,
  type LivenessFacts,
  type ReadinessFacts,
  type Verdict,
} from '../../src/health/checks.js';

const NOW = Date.UTC(2025, 0, 1, 12);
const MIB = 1024 * 1024;

const ready: ReadinessFacts = {
  discoverySynced: true,
  selfAddress: '10.0.0.3:8080',
  selfListed: true,
  listening: true,
  stopping: false,
  unauthenticated: null,
};

/** A leading node whose loops just made progress, 50 MiB resident, no memory limit. */
const alive: LivenessFacts = {
  election: { active: true, lastProgressAt: NOW - 80, intervalMs: 100 },
  prober: { active: true, lastProgressAt: NOW - 900, intervalMs: 1_000 },
  eventLoop: { maxLagMs: 12, windowMs: 10_000 },
  memory: { rssBytes: 50 * MIB, limitMiB: null },
};

const failing = (v: Verdict) => v.checks.filter((c) => !c.ok).map((c) => c.name);
const check = (v: Verdict, name: string) => {
  const found = v.checks.find((c) => c.name === name);
  if (!found) throw new Error(`no check ${name} in ${JSON.stringify(v)}`);
  return found;
};

describe('health checks: readiness', () => {
  it('is ready when discovery is synced, self listed, listening and not stopping', () => {
    const v = readiness(ready);
    expect(v.ok).to.equal(true);
    expect(v.checks.map((c) => [c.name, c.ok])).to.deep.equal([
      ['discovery', true],
      ['self', true],
      ['listening', true],
      ['shutdown', true],
      ['peer-auth', true],
    ]);
  });

  const cases: { what: string; facts: Partial<ReadinessFacts>; failing: string[] }[] = [
    { what: 'discovery not synced', facts: { discoverySynced: false }, failing: ['discovery'] },
    { what: 'own address not listed', facts: { selfListed: false }, failing: ['self'] },
    { what: 'not listening yet', facts: { listening: false }, failing: ['listening'] },
    { what: 'shutting down', facts: { stopping: true }, failing: ['shutdown'] },
    {
      what: 'every peer refuses its signed messages',
      facts: { unauthenticated: 'every peer that answered refused (bad-signature ×3)' },
      failing: ['peer-auth'],
    },
    {
      what: 'a node just started (nothing yet)',
      facts: { discoverySynced: false, selfListed: false, listening: false },
      failing: ['discovery', 'self', 'listening'],
    },
  ];
  for (const c of cases) {
    it(`is not ready when ${c.what}, naming exactly the failing checks`, () => {
      const v = readiness({ ...ready, ...c.facts });
      expect(v.ok).to.equal(false);
      expect(failing(v)).to.deep.equal(c.failing);
      expect(v.checks, 'every check is listed').to.have.length(5);
    });
  }

  it('says why its peers refuse it', () => {
    const why = 'every peer that answered refused (bad-signature ×3): another PEER_SECRET';
    expect(check(readiness({ ...ready, unauthenticated: why }), 'peer-auth').detail).to.equal(why);
  });

  it('says which address it is waiting for', () => {
    expect(check(readiness({ ...ready, selfListed: false }), 'self').detail).to.include(
      '10.0.0.3:8080',
    );
  });
});

describe('health checks: liveness', () => {
  it('is alive when loops progressed recently, the loop is not lagging, and memory is unbounded', () => {
    const v = liveness(alive, NOW);
    expect(v.ok).to.equal(true);
    expect(v.checks.map((c) => c.name)).to.deep.equal([
      'election',
      'prober',
      'event-loop',
      'memory',
    ]);
    expect(check(v, 'memory').detail).to.include('50.0 MiB').and.include('no limit');
  });

  it('stalls a loop after max(10 s, 10 intervals) without progress', () => {
    expect(
      stallAfterMs({ active: true, lastProgressAt: 0, intervalMs: 100 }, DEFAULT_THRESHOLDS),
    ).to.equal(10_000);
    expect(
      stallAfterMs({ active: true, lastProgressAt: 0, intervalMs: 15_000 }, DEFAULT_THRESHOLDS),
    ).to.equal(150_000);
  });

  const loopCases: { what: string; facts: Partial<LivenessFacts>; failing: string[] }[] = [
    {
      what: 'election exactly at its 10 s bound',
      facts: { election: { active: true, lastProgressAt: NOW - 10_000, intervalMs: 100 } },
      failing: [],
    },
    {
      what: 'election 1 ms past its 10 s bound',
      facts: { election: { active: true, lastProgressAt: NOW - 10_001, intervalMs: 100 } },
      failing: ['election'],
    },
    {
      what: 'election started but never ticked',
      facts: { election: { active: true, lastProgressAt: null, intervalMs: 100 } },
      failing: ['election'],
    },
    {
      what: 'election not started (waiting to be listed), last tick long ago',
      facts: { election: { active: false, lastProgressAt: NOW - 3_600_000, intervalMs: 100 } },
      failing: [],
    },
    {
      what: 'prober with 15 s rounds, 100 s since its last',
      facts: { prober: { active: true, lastProgressAt: NOW - 100_000, intervalMs: 15_000 } },
      failing: [],
    },
    {
      what: 'prober with 15 s rounds, 151 s since its last',
      facts: { prober: { active: true, lastProgressAt: NOW - 151_000, intervalMs: 15_000 } },
      failing: ['prober'],
    },
    {
      what: 'a follower (prober off) whose last round, as coordinator, was an hour ago',
      facts: { prober: { active: false, lastProgressAt: NOW - 3_600_000, intervalMs: 1_000 } },
      failing: [],
    },
    {
      what: 'event loop lagging 300 ms (a GC pause)',
      facts: { eventLoop: { maxLagMs: 300, windowMs: 10_000 } },
      failing: [],
    },
    {
      what: 'event loop lagging 2.5 s',
      facts: { eventLoop: { maxLagMs: 2_500, windowMs: 10_000 } },
      failing: ['event-loop'],
    },
    {
      what: 'rss under MAX_MEMORY_USAGE',
      facts: { memory: { rssBytes: 100 * MIB, limitMiB: 128 } },
      failing: [],
    },
    {
      what: 'rss over MAX_MEMORY_USAGE',
      facts: { memory: { rssBytes: 129 * MIB, limitMiB: 128 } },
      failing: ['memory'],
    },
    {
      what: 'everything wrong at once',
      facts: {
        election: { active: true, lastProgressAt: NOW - 60_000, intervalMs: 100 },
        prober: { active: true, lastProgressAt: NOW - 60_000, intervalMs: 1_000 },
        eventLoop: { maxLagMs: 9_000, windowMs: 10_000 },
        memory: { rssBytes: 2 * MIB, limitMiB: 1 },
      },
      failing: ['election', 'prober', 'event-loop', 'memory'],
    },
  ];
  for (const c of loopCases) {
    it(`${c.failing.length === 0 ? 'passes' : `fails ${c.failing.join(', ')}`}: ${c.what}`, () => {
      const v = liveness({ ...alive, ...c.facts }, NOW);
      expect(failing(v)).to.deep.equal(c.failing);
      expect(v.ok).to.equal(c.failing.length === 0);
    });
  }

  it('tells how long a stalled loop has been stuck, and the bound', () => {
    const v = liveness(
      { ...alive, election: { active: true, lastProgressAt: NOW - 12_300, intervalMs: 100 } },
      NOW,
    );
    expect(check(v, 'election').detail).to.equal('no tick for 12.3 s (stalled after 10 s)');
  });

  it('says why an idle loop passes', () => {
    const v = liveness({ ...alive, prober: { ...alive.prober, active: false } }, NOW);
    expect(check(v, 'prober')).to.deep.equal({
      name: 'prober',
      ok: true,
      detail: 'not leading: only the coordinator probes',
    });
  });

  it('names the memory limit and the rss when over it', () => {
    const v = liveness({ ...alive, memory: { rssBytes: 60.5 * MIB, limitMiB: 1 } }, NOW);
    expect(check(v, 'memory').detail).to.equal('rss 60.5 MiB, limit 1 MiB (MAX_MEMORY_USAGE)');
  });

  it('takes other thresholds when given', () => {
    const strict = { stallIntervals: 2, minStallMs: 0, maxEventLoopLagMs: 50 };
    const v = liveness({ ...alive, eventLoop: { maxLagMs: 60, windowMs: 1_000 } }, NOW, strict);
    // Prober: 900 ms since its last 1 s round is within 2 intervals; election: 80 ms within 200 ms.
    expect(failing(v)).to.deep.equal(['event-loop']);
  });
});
