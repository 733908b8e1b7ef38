// GET /readyz and /healthz over a real socket: the health manager's facts, as the kubelet sees them.
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { ElectionDriver } from '../../src/election/driver.js';
import { EventLoopLag } from '../../src/health/event-loop-lag.js';
import { HealthManager, type HealthManagerOptions } from '../../src/health/health-manager.js';
import { healthRoutes, type HealthBody } from '../../src/http/routes/health.js';
import { ProbeRounds } from '../../src/prober/rounds.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { TestDelegate } from '../support/test-delegate.js';

const MIB = 1024 * 1024;
const SELF = { id: 'worker-3@127.0.0.1', address: '127.0.0.1:8080' };

/** The node API is not under test here: any call to it is a mistake. */
const noApi = new Proxy({} as NodeApi, {
  get: () => () => {
    throw new Error('the health routes must not call the node API');
  },
});

/** What the node's parts would report; tests change these fields. */
class Facts {
  synced = true;
  listed = true;
  election = { started: true, lastTickAt: null as number | null };
  prober = { running: false, lastRoundAt: null as number | null };
  rss = 40 * MIB;
}

describe('health routes', () => {
  const servers: HttpServer[] = [];
  const managers: HealthManager[] = [];
  let clock: FakeClock;
  let facts: Facts;
  let logger: CapturingLogger;

  /** Serves a health manager over the node's real app; returns a GET helper for it. */
  async function serve(options: Partial<HealthManagerOptions> = {}) {
    const health = new HealthManager({
      clock,
      logger,
      selfAddress: SELF.address,
      discoverySynced: () => facts.synced,
      selfListed: () => facts.listed,
      election: facts.election,
      prober: facts.prober,
      roundIntervalMs: 1_000,
      maxMemoryMiB: null,
      rssBytes: () => facts.rss,
      ...options,
    });
    managers.push(health);
    const app = buildApp({
      api: noApi,
      schemas: loadSchemas(),
      logger,
      routers: [healthRoutes(health)],
    });
    const server = await listen(app, '127.0.0.1', 0);
    servers.push(server);
    const get = async (path: '/readyz' | '/healthz') => {
      const res = await fetch(`http://127.0.0.1:${server.port}${path}`);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      return { status: res.status, body: (await res.json()) as HealthBody };
    };
    return { health, get };
  }

  type Get = Awaited<ReturnType<typeof serve>>['get'];

  /**
   * /healthz before and during a 600 ms block of the event loop (as a runaway computation would):
   * 200, then 503 naming the event loop. Returns that answer's body.
   */
  async function blockTheLoop(get: Get): Promise<HealthBody> {
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect((await get('/healthz')).status, 'not lagging yet').to.equal(200);
    const until = performance.now() + 600;
    while (performance.now() < until) {
      // Blocks the event loop.
    }
    const { status, body } = await get('/healthz');
    expect(status).to.equal(503);
    expect(body.failing).to.deep.equal(['event-loop']);
    return body;
  }

  beforeEach(() => {
    clock = new FakeClock();
    facts = new Facts();
    facts.election.lastTickAt = clock.now();
    logger = new CapturingLogger();
  });

  afterEach(async () => {
    for (const m of managers.splice(0)) m.stop();
    for (const s of servers.splice(0)) await s.close();
  });

  describe('GET /readyz', () => {
    it('answers 503 until the server is marked listening, then 200 with every check', async () => {
      const { health, get } = await serve();
      const before = await get('/readyz');
      expect(before.status).to.equal(503);
      expect(before.body.failing).to.deep.equal(['listening']);

      health.markListening();
      const after = await get('/readyz');
      expect(after.status).to.equal(200);
      expect(after.body).to.deep.equal({
        ok: true,
        failing: [],
        checks: [
          { name: 'discovery', ok: true, detail: 'peer list synced' },
          { name: 'self', ok: true, detail: '127.0.0.1:8080 is among the peers' },
          { name: 'listening', ok: true, detail: 'HTTP server listening' },
          { name: 'shutdown', ok: true, detail: 'running' },
          { name: 'peer-auth', ok: true, detail: "no peer refuses this node's signed messages" },
        ],
      });
    });

    it('names each failing check: discovery not synced and own address not listed', async () => {
      const { health, get } = await serve();
      health.markListening();
      facts.synced = false;
      facts.listed = false;
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.ok).to.equal(false);
      expect(body.failing).to.deep.equal(['discovery', 'self']);
      expect(body.checks.find((c) => c.name === 'self')?.detail).to.include('127.0.0.1:8080');

      facts.synced = true;
      expect((await get('/readyz')).body.failing).to.deep.equal(['self']);
      facts.listed = true;
      expect((await get('/readyz')).status).to.equal(200);
    });

    it('stays 503 once shutdown has begun, whatever else holds; liveness is unaffected', async () => {
      const { health, get } = await serve();
      health.markListening();
      expect((await get('/readyz')).status).to.equal(200);
      health.markStopping();
      const { status, body } = await get('/readyz');
      expect(status).to.equal(503);
      expect(body.failing).to.deep.equal(['shutdown']);
      expect((await get('/healthz')).status).to.equal(200);
    });

    it('logs a change of failing checks once, not on every probe', async () => {
      const { health, get } = await serve();
      health.markListening();
      facts.synced = false;
      await get('/readyz');
      await get('/readyz');
      facts.synced = true;
      await get('/readyz');
      await get('/readyz');
      const changes = logger.records.filter((r) => r.fields.event === 'readiness-changed');
      expect(changes.map((r) => r.fields.failing)).to.deep.equal([['discovery'], []]);
    });
  });

  describe('GET /healthz', () => {
    it('answers 200 with every check and its state', async () => {
      const { get } = await serve();
      clock.advance(50);
      const { status, body } = await get('/healthz');
      expect(status).to.equal(200);
      expect(body.failing).to.deep.equal([]);
      expect(body.checks.map((c) => [c.name, c.ok])).to.deep.equal([
        ['election', true],
        ['prober', true],
        ['event-loop', true],
        ['memory', true],
      ]);
      expect(body.checks[0]?.detail).to.equal('last tick 0.05 s ago (stalled after 10 s)');
      expect(body.checks[1]?.detail).to.equal('not leading: only the coordinator probes');
    });

    it('answers 503 naming the election once it has not ticked for more than 10 s', async () => {
      const { get } = await serve();
      clock.advance(10_000);
      expect((await get('/healthz')).status).to.equal(200);
      clock.advance(1);
      const { status, body } = await get('/healthz');
      expect(status).to.equal(503);
      expect(body.failing).to.deep.equal(['election']);
      // It ticks again: alive again.
      facts.election.lastTickAt = clock.now();
      expect((await get('/healthz')).status).to.equal(200);
    });

    it('holds a leading prober to max(10 s, 10 rounds): 15 s rounds may be 150 s apart', async () => {
      const { get } = await serve({ roundIntervalMs: 15_000 });
      facts.prober.running = true;
      facts.prober.lastRoundAt = clock.now();
      clock.advance(150_000);
      facts.election.lastTickAt = clock.now();
      expect((await get('/healthz')).status).to.equal(200);
      clock.advance(1);
      facts.election.lastTickAt = clock.now();
      const { status, body } = await get('/healthz');
      expect(status).to.equal(503);
      expect(body.failing).to.deep.equal(['prober']);
    });

    it('answers 503 naming memory when rss exceeds MAX_MEMORY_USAGE', async () => {
      const { get } = await serve({ maxMemoryMiB: 64 });
      facts.rss = 63 * MIB;
      expect((await get('/healthz')).status).to.equal(200);
      facts.rss = 65 * MIB;
      const { status, body } = await get('/healthz');
      expect(status).to.equal(503);
      expect(body.failing).to.deep.equal(['memory']);
      expect(body.checks.find((c) => c.name === 'memory')?.detail).to.equal(
        'rss 65.0 MiB, limit 64 MiB (MAX_MEMORY_USAGE)',
      );
    });

    it("reads the process's own rss by default", async () => {
      const { get } = await serve({ rssBytes: undefined, maxMemoryMiB: 1 });
      const { status, body } = await get('/healthz');
      expect(status, 'no Node process fits in 1 MiB').to.equal(503);
      expect(body.failing).to.deep.equal(['memory']);
    });

    it('answers 503 naming the event loop after it was blocked, and 200 once the window has passed', async () => {
      const { health, get } = await serve({
        eventLoop: { sampleMs: 20, windowMs: 600 },
        thresholds: { stallIntervals: 10, minStallMs: 10_000, maxEventLoopLagMs: 300 },
      });
      health.start();
      await blockTheLoop(get);
      await new Promise((resolve) => setTimeout(resolve, 900));
      expect((await get('/healthz')).status, 'the stall has left the window').to.equal(200);
    });

    it("reads a lag meter it is given (the prober's) over its own window, and leaves it running", async () => {
      const lag = new EventLoopLag({ sampleMs: 20, windowMs: 5_000 });
      lag.start();
      try {
        const { health, get } = await serve({
          lag,
          eventLoop: { windowMs: 600 },
          thresholds: { stallIntervals: 10, minStallMs: 10_000, maxEventLoopLagMs: 300 },
        });
        health.start();
        const body = await blockTheLoop(get);
        expect(body.checks.find((c) => c.name === 'event-loop')?.detail).to.include('0.6 s');
        await new Promise((resolve) => setTimeout(resolve, 900));
        expect((await get('/healthz')).status, 'the stall has left its 600 ms window').to.equal(
          200,
        );
        expect(lag.maxLagMs(), "still in the meter's own 5 s window").to.be.above(300);
        health.stop();
        await new Promise((resolve) => setTimeout(resolve, 60));
        expect(lag.maxLagMs(), 'still running after the manager stopped').to.be.above(300);
      } finally {
        lag.stop();
      }
    });
  });

  it('follows the real election driver and probe rounds: ticks and rounds are its heartbeats', async () => {
    const quiet = new CapturingLogger();
    const rounds = new ProbeRounds({
      self: SELF,
      transport: {
        ping: () => Promise.reject(new Error('no peers to ping')),
        probeVia: () => Promise.reject(new Error('no peers to probe')),
      },
      sanity: null,
      clock,
      logger: quiet,
      policy: {
        connectMaxRetries: 1,
        connectCooldownMs: 100,
        sendMaxRetries: 1,
        sendCooldownMs: 100,
        probeTimeoutMs: 500,
        unhealthyMs: 1_000,
        indirectProbes: 0,
      },
      intervalMs: 1_000,
      onJudgement: () => undefined,
      onRound: () => undefined,
    });
    const election = new ElectionDriver({
      self: SELF,
      timing: {
        heartbeatIntervalMs: 200,
        coordinatorTimeoutMs: 600,
        electionTimeoutMs: 400,
        answerTimeoutMs: 600,
      },
      transport: {
        sendElection: () => Promise.reject(new Error('no peers to elect')),
        announce: () => Promise.reject(new Error('no peers to announce to')),
      },
      clock,
      logger: quiet,
      delegate: new TestDelegate(SELF),
      onCoordinatorChanged: () => undefined,
      onLeading: () => rounds.start([]),
    });
    const { get } = await serve({ election, prober: rounds, roundIntervalMs: 1_000 });
    expect(election.lastTickAt, 'never started').to.equal(null);
    expect((await get('/healthz')).body.checks[0]?.detail).to.include('not taking part');

    election.start();
    await clock.advanceAsync(30_000);
    expect(rounds.running, 'alone, it leads').to.equal(true);
    expect(clock.now() - (election.lastTickAt ?? 0)).to.be.at.most(100);
    expect(clock.now() - (rounds.lastRoundAt ?? 0)).to.be.at.most(1_000);
    const { status, body } = await get('/healthz');
    expect(status).to.equal(200);
    expect(body.checks.map((c) => c.detail).slice(0, 2)).to.satisfy((d: string[]) =>
      d.every((x) => x.startsWith('last ')),
    );

    rounds.stop();
    election.stop();
    await clock.advanceAsync(60_000);
    const idle = await get('/healthz');
    expect(idle.status, 'a stopped loop is idle, not stalled').to.equal(200);
    expect(idle.body.checks.slice(0, 2).map((c) => c.detail)).to.deep.equal([
      'not taking part (not listed among the endpoints yet, or stopping)',
      'not leading: only the coordinator probes',
    ]);
  });
});
