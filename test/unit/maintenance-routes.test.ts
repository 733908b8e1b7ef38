// The maintenance API over a real socket: listing, opening and ending windows, what a bad request
// gets back, and that only a connection from inside the pod may change anything.
import { networkInterfaces } from 'node:os';
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { isLoopback } from '../../src/wire/node-ref.js';
import {
  maintenanceRouter,
  type MaintenanceRoutesOptions,
} from '../../src/http/routes/maintenance.js';
import { MAX_WINDOWS, MaintenanceBook } from '../../src/maintenance/windows.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { maintenanceWindow } from '../support/maintenance-window.js';

const T = Date.UTC(2025, 0, 1);
const MIN = 60_000;
const schemas = loadSchemas();

/** The node API is not under test here: any call to it is a mistake. */
const noApi = new Proxy({} as NodeApi, {
  get: () => () => {
    throw new Error('the maintenance routes must not call the node API');
  },
});

interface WireWindow {
  id: string;
  scope: string;
  nodes: string[];
  starts: string;
  until: string;
  reason: string;
}

describe('isLoopback', () => {
  const cases: [string | undefined, boolean][] = [
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['fd00::1', false],
    ['1127.0.0.1', false],
    ['', false],
    [undefined, false],
  ];
  for (const [remote, expected] of cases) {
    it(`${JSON.stringify(remote)} → ${expected}`, () => {
      expect(isLoopback(remote)).to.equal(expected);
    });
  }
});

describe('maintenance routes', () => {
  const servers: HttpServer[] = [];
  let now: number;
  let book: MaintenanceBook;
  let changed: number;
  let remotes: (string | undefined)[];

  /** Serves the router on the node's real app; returns helpers bound to its port. */
  async function serve(
    options: Partial<MaintenanceRoutesOptions> = {},
    host = '127.0.0.1',
    dialHost = host,
  ) {
    const app = buildApp({
      api: noApi,
      schemas,
      logger: new CapturingLogger(),
      routers: [
        maintenanceRouter({
          book,
          schemas,
          logger: new CapturingLogger(),
          now: () => now,
          onChanged: () => changed++,
          ...options,
        }),
      ],
    });
    const server = await listen(app, host, 0);
    servers.push(server);
    const url = (path: string) => `http://${dialHost}:${server.port}${path}`;
    return {
      list: async () => {
        const res = await fetch(url('/maintenance'));
        expect(res.status).to.equal(200);
        expect(res.headers.get('cache-control')).to.equal('no-store');
        return ((await res.json()) as { windows: WireWindow[] }).windows;
      },
      open: (body: unknown) =>
        fetch(url('/maintenance'), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      end: (id: string) => fetch(url(`/maintenance/${id}`), { method: 'DELETE' }),
    };
  }

  beforeEach(() => {
    now = T;
    book = new MaintenanceBook();
    changed = 0;
    remotes = [];
  });

  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('lists no windows at first', async () => {
    const api = await serve();
    expect(await api.list()).to.deep.equal([]);
  });

  it('opens a window for the whole mesh: 201 with the window, listed, shared at once', async () => {
    const api = await serve();
    const res = await api.open({ duration: '30m', reason: 'kernel upgrade' });
    expect(res.status).to.equal(201);
    const { window } = (await res.json()) as { window: WireWindow };
    expect(window).to.deep.include({
      scope: 'mesh',
      nodes: [],
      starts: new Date(T).toISOString(),
      until: new Date(T + 30 * MIN).toISOString(),
      reason: 'kernel upgrade',
    });
    expect(await api.list()).to.deep.equal([window]);
    expect(changed, 'onChanged, so it is announced now').to.equal(1);
    // What the book holds is what announcements carry: it must pass their schema.
    const [held] = book.all();
    expect(held?.id).to.equal(window.id);
    expect(schemas.check('maintenance-window', held)).to.deep.equal({ ok: true });
  });

  it('opens a window for named nodes, each named once', async () => {
    const api = await serve();
    const res = await api.open({
      nodes: ['node-a', 'node-b@10.0.0.2', 'node-a'],
      duration: '90s',
      reason: 'drain',
    });
    expect(res.status).to.equal(201);
    const { window } = (await res.json()) as { window: WireWindow };
    expect(window).to.deep.include({ scope: 'nodes', nodes: ['node-a', 'node-b@10.0.0.2'] });
    expect(book.all()[0]).to.deep.include({ until: T + 90_000, cancelled: false });
  });

  describe('naming nodes the node knows', () => {
    const KNOWN = [
      { address: '10.0.0.1:8080', id: 'node-a@10.0.0.1', nodeName: 'node-a' },
      { address: '10.0.0.2:8080', id: 'node-b@10.0.0.2', nodeName: 'node-b' },
    ];
    const knownNodes = () => KNOWN;

    it('opens a window naming known nodes by name, id or address', async () => {
      const api = await serve({ knownNodes });
      const nodes = ['node-a', 'node-b@10.0.0.2', '10.0.0.2:8080'];
      const res = await api.open({ nodes, duration: '1h', reason: 'drain' });
      expect(res.status).to.equal(201);
      expect(((await res.json()) as { window: WireWindow }).window.nodes).to.deep.equal(nodes);
    });

    it('refuses a window naming unknown nodes: 400 naming them and the known ones, nothing opened', async () => {
      const api = await serve({ knownNodes });
      const res = await api.open({
        nodes: ['node-a', 'nod-b', '10.0.0.9:8080'],
        duration: '1h',
        reason: 'typo',
      });
      expect(res.status).to.equal(400);
      const answer = (await res.json()) as { error: string; details: string[] };
      expect(answer.details).to.deep.equal(['nod-b', '10.0.0.9:8080']);
      expect(answer.error).to.equal(
        'unknown nodes "nod-b", "10.0.0.9:8080": not the name, id (name@ip) or address (ip:port) of a node this one knows, so the window would pause nothing about them; known nodes: node-a, node-b',
      );
      expect(schemas.check('error-response', answer)).to.deep.equal({ ok: true });
      expect(book.all()).to.deep.equal([]);
      expect(changed).to.equal(0);
    });

    it('still opens a window for the whole mesh, naming no node', async () => {
      const api = await serve({ knownNodes: () => [] });
      expect((await api.open({ duration: '1h', reason: 'CNI upgrade' })).status).to.equal(201);
    });
  });

  it('gives each window its own id', async () => {
    const api = await serve();
    await api.open({ duration: '1m', reason: 'one' });
    await api.open({ duration: '1m', reason: 'two' });
    const listed = await api.list();
    expect(new Set(listed.map((w) => w.id)).size).to.equal(2);
  });

  const badBodies: [string, unknown][] = [
    ['no reason', { duration: '30m' }],
    ['no duration', { reason: 'x' }],
    ['an empty reason', { duration: '30m', reason: '' }],
    ['a number for a duration', { duration: 1800, reason: 'x' }],
    ['an empty node list', { nodes: [], duration: '30m', reason: 'x' }],
    ['an unknown field', { duration: '30m', reason: 'x', scope: 'mesh' }],
    ['not an object', ['30m']],
  ];
  for (const [what, body] of badBodies) {
    it(`refuses a body with ${what}: 400 with details, nothing opened`, async () => {
      const api = await serve();
      const res = await api.open(body);
      expect(res.status).to.equal(400);
      const answer = (await res.json()) as { error: string; details: string[] };
      expect(answer.error).to.match(/maintenance-request/);
      expect(answer.details).to.be.an('array').that.is.not.empty;
      expect(book.all()).to.deep.equal([]);
      expect(changed).to.equal(0);
    });
  }

  const badDurations = ['0.5', '999ms', '0', '169h', '604801', 'soon', '30 minutes', '-5m'];
  for (const duration of badDurations) {
    it(`refuses the duration ${JSON.stringify(duration)}: 400, nothing opened`, async () => {
      const api = await serve();
      const res = await api.open({ duration, reason: 'x' });
      expect(res.status).to.equal(400);
      const answer = (await res.json()) as { error: string };
      expect(answer.error).to.include(JSON.stringify(duration));
      expect(book.all()).to.deep.equal([]);
      expect(changed).to.equal(0);
    });
  }

  for (const [duration, ms] of [
    ['1', 1_000],
    ['1000ms', 1_000],
    ['168h', 7 * 24 * 60 * MIN],
    ['604800', 7 * 24 * 60 * MIN],
  ] as const) {
    it(`accepts the duration ${JSON.stringify(duration)} (a bound)`, async () => {
      const api = await serve();
      expect((await api.open({ duration, reason: 'x' })).status).to.equal(201);
      expect(book.all()[0]?.until).to.equal(T + ms);
    });
  }

  it('ends a window: 200 with it, no longer listed, kept cancelled so the end spreads', async () => {
    const api = await serve();
    const opened = (await (await api.open({ duration: '1h', reason: 'x' })).json()) as {
      window: WireWindow;
    };
    const id = opened.window.id;
    now += MIN;
    const res = await api.end(id);
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { window: WireWindow }).window).to.deep.equal(opened.window);
    expect(await api.list()).to.deep.equal([]);
    expect(book.all()).to.have.length(1);
    expect(book.all()[0]).to.deep.include({ id, cancelled: true });
    expect(changed).to.equal(2);
    expect((await api.end(id)).status, 'already ended').to.equal(404);
    expect(changed).to.equal(2);
  });

  it('answers 404 for an unknown id and for a window already over', async () => {
    const api = await serve();
    const unknown = await api.end('nope');
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as { error: string }).error).to.include('nope');
    for (const bad of ['x'.repeat(65), '%3Cscript%3E', 'a%20b']) {
      const res = await api.end(bad);
      expect(res.status, bad).to.equal(400);
      expect(await res.text()).not.to.include('script');
    }
    const opened = (await (await api.open({ duration: '10s', reason: 'x' })).json()) as {
      window: WireWindow;
    };
    now += 10_000;
    expect(await api.list(), 'over').to.deep.equal([]);
    expect((await api.end(opened.window.id)).status).to.equal(404);
  });

  it('lists only windows in force (not cancelled ones, nor ones heard that start later)', async () => {
    const api = await serve();
    book.merge(
      [
        maintenanceWindow('now', T),
        maintenanceWindow('cancelled', T, { cancelled: true }),
        maintenanceWindow('later', T + MIN),
      ],
      T,
    );
    expect((await api.list()).map((x) => x.id)).to.deep.equal(['now']);
    now = T + MIN;
    expect((await api.list()).map((x) => x.id).sort()).to.deep.equal(['later', 'now']);
  });

  it('makes room by dropping windows ended early (DELETE), never running ones; 409 when all run', async () => {
    const api = await serve();
    const held = (cancelled: boolean) =>
      Array.from({ length: MAX_WINDOWS }, (_, i) => ({
        id: `${cancelled ? 'old' : 'run'}${i}`,
        scope: 'nodes' as const,
        nodes: [`n${i}`],
        starts: T,
        until: T + 7 * 24 * 60 * MIN,
        reason: 'x',
        cancelled,
      }));
    // Ended early but kept until their end, so that every node hears of the end: room to spare.
    book.merge(held(true), T);
    const res = await api.open({ duration: '30m', reason: 'fits' });
    expect(res.status).to.equal(201);
    expect((await api.list()).map((w) => w.reason)).to.deep.equal(['fits']);

    // Full of running windows: a new one would push one out, so it is refused.
    book = new MaintenanceBook();
    const full = await serve();
    book.merge(held(false), T);
    changed = 0;
    const refused = await full.open({ duration: '30m', reason: 'x' });
    expect(refused.status).to.equal(409);
    expect(((await refused.json()) as { error: string }).error).to.include(String(MAX_WINDOWS));
    expect(await full.list()).to.have.length(MAX_WINDOWS);
    expect(changed).to.equal(0);
  });

  it('refuses changes with 403 when mayChange says no, and still lets anyone read', async () => {
    const api = await serve({
      mayChange: (remote) => {
        remotes.push(remote);
        return false;
      },
    });
    book.merge([maintenanceWindow('w1', T, { until: T + MIN })], T);
    const opened = await api.open({ duration: '30m', reason: 'x' });
    expect(opened.status).to.equal(403);
    expect(((await opened.json()) as { error: string }).error).to.match(/port-forward|exec/);
    expect((await api.end('w1')).status).to.equal(403);
    expect(book.all().map((x) => [x.id, x.cancelled])).to.deep.equal([['w1', false]]);
    expect(changed).to.equal(0);
    expect((await api.list()).map((x) => x.id)).to.deep.equal(['w1']);
    // It is asked about the connection's own address.
    expect(remotes).to.have.length(2);
    for (const r of remotes) expect(isLoopback(r), String(r)).to.be.true;
  });

  it('refuses a malformed body before looking at it when the caller may not change anything', async () => {
    const api = await serve({ mayChange: () => false });
    expect((await api.open({ nope: true })).status).to.equal(403);
  });

  it('by default refuses changes from a connection that is not from loopback', async function () {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    if (!external) this.skip();
    const api = await serve({}, '0.0.0.0', external);
    expect((await api.open({ duration: '30m', reason: 'x' })).status).to.equal(403);
    expect((await api.end('any')).status).to.equal(403);
    expect(book.all()).to.deep.equal([]);
  });
});
