// GET /status and GET / over a real socket, mounted in the node's app: the JSON contract and the page.
import { createHash } from 'node:crypto';
import { Script } from 'node:vm';
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { PAGE_SCRIPT, PAGE_STYLE } from '../../src/status/page.js';
import { statusViews } from '../../src/http/routes/status.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { maintenanceWindow, nodeStatus, statusEvent, statusPeer } from '../support/node-status.js';

const schemas = loadSchemas();
const now = new Date('2026-03-01T12:00:00.000Z');

/** A follower that has not heard from any coordinator yet: every nullable field null. */
const newcomer: NodeStatus = nodeStatus(
  { now, peerCount: 0 },
  {
    role: 'follower',
    epoch: 0,
    coordinator: null,
    ready: false,
    view: { source: 'none', as_of: null },
    self_suspect: null,
    events: [],
  },
);

/** A follower showing its coordinator's view during a maintenance window, on a dry run. */
const inMaintenance: NodeStatus = nodeStatus(
  { now },
  {
    role: 'follower',
    coordinator: { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' },
    dry_run: true,
    view: { source: 'coordinator', as_of: now.toISOString() },
    self_suspect: null,
    peers: [
      statusPeer(2, now, { state: 'dead', alerted: true, in_maintenance: true }),
      statusPeer(3, now, { state: 'unknown', since: null, last_probe: null, latency_ms: null }),
      statusPeer(4, now, { state: 'left', path_broken: true }),
      statusPeer(5, now, { state: 'suspect', address: '[fd00::5]:8080' }),
    ],
    events: [
      statusEvent(now, 5, {
        kind: 'peer_dead',
        peer: 'worker-2@10.0.0.2',
        text: 'worker-2@10.0.0.2 is dead',
        suppressed: true,
      }),
    ],
    maintenance: [maintenanceWindow(now, { scope: 'nodes', nodes: ['worker-2'] })],
  },
);

/** NodeApi is not what these routes use: any call to it is a mistake of the test. */
const unusedApi = new Proxy({} as NodeApi, {
  get: (_t, name) => () => {
    throw new Error(`NodeApi.${String(name)} called`);
  },
});

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');

describe('status routes', () => {
  let server: HttpServer;
  let current: NodeStatus | Error;
  let logger: CapturingLogger;
  /** The router's clock: a snapshot is served for a second of it. */
  let t = 0;
  let builds = 0;
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;

  before(async () => {
    logger = new CapturingLogger();
    const status = () => {
      builds++;
      if (current instanceof Error) throw current;
      return current;
    };
    const app = buildApp({
      api: unusedApi,
      schemas,
      logger,
      views: statusViews({ status, schemas, logger, now: () => t }),
    });
    server = await listen(app, '127.0.0.1', 0);
  });

  beforeEach(() => {
    // Each test's first request builds anew.
    t += 60_000;
    builds = 0;
    current = nodeStatus({ now });
    logger.records.length = 0;
  });

  after(async () => {
    await server.close();
  });

  for (const [what, status] of [
    ["a coordinator's own view", nodeStatus({ now })],
    ['a newcomer that knows nothing yet', newcomer],
    ['a follower during maintenance and a dry run', inMaintenance],
  ] as const) {
    it(`GET /status answers ${what} as JSON matching the status schema`, async () => {
      current = status;
      const res = await fetch(url('/status'));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(res.headers.get('cache-control')).to.equal('no-cache');
      const body: unknown = await res.json();
      expect(schemas.check('status', body)).to.deep.equal({ ok: true });
      expect(body).to.deep.equal(status);
    });
  }

  it('builds /status at most once a second however often it is asked, and then anew', async () => {
    const first = await (await fetch(url('/status'))).json();
    current = { ...nodeStatus({ now }), epoch: 99 };
    t += 999;
    const bodies = await Promise.all(
      Array.from({ length: 20 }, async () => (await fetch(url('/status'))).json()),
    );
    expect(builds, 'one build for 21 requests within a second').to.equal(1);
    for (const b of bodies) expect(b).to.deep.equal(first);
    t += 1;
    const fresh = (await (await fetch(url('/status'))).json()) as { epoch: number };
    expect(builds).to.equal(2);
    expect(fresh.epoch).to.equal(99);
  });

  it('answers 304 without a body to a client holding the current ETag, 200 once it changed', async () => {
    const res = await fetch(url('/status'));
    const etag = res.headers.get('etag');
    expect(etag).to.match(/^"[A-Za-z0-9_-]+"$/);
    t += 5_000;
    const same = await fetch(url('/status'), { headers: { 'if-none-match': etag! } });
    expect(same.status, 'rebuilt, but unchanged').to.equal(304);
    expect(await same.text()).to.equal('');
    current = { ...nodeStatus({ now }), epoch: 77 };
    t += 5_000;
    const changed = await fetch(url('/status'), { headers: { 'if-none-match': etag! } });
    expect(changed.status).to.equal(200);
    expect(changed.headers.get('etag')).to.not.equal(etag);
    expect(((await changed.json()) as { epoch: number }).epoch).to.equal(77);
  });

  it('the status schema rejects what NodeStatus does not allow', () => {
    const good = nodeStatus({ now });
    const peer = good.peers[0];
    const bad: Record<string, unknown> = {
      'an unknown field': { ...good, extra: 1 },
      'a missing field': { ...good, maintenance: undefined },
      'an unknown peer state': { ...good, peers: [{ ...peer, state: 'gone' }] },
      'an unknown field of a peer': { ...good, peers: [{ ...peer, rtt: 1 }] },
      'a non-canonical peer address': { ...good, peers: [{ ...peer, address: '10.0.0.01:8080' }] },
      'a negative latency': { ...good, peers: [{ ...peer, latency_ms: -1 }] },
      'a time that is not ISO': { ...good, now: 'yesterday' },
      'an unknown view source': { ...good, view: { source: 'gossip', as_of: null } },
      'a maintenance window without an end': {
        ...good,
        maintenance: [{ ...maintenanceWindow(now), until: null }],
      },
      'more than 100 events': { ...good, events: new Array(101).fill(statusEvent(now, 1)) },
    };
    for (const [what, value] of Object.entries(bad)) {
      expect(schemas.check('status', JSON.parse(JSON.stringify(value))).ok, what).to.equal(false);
    }
  });

  it('GET /status answers 500 naming the errors when the status breaks its schema', async () => {
    current = { ...nodeStatus({ now }), epoch: -1 };
    const res = await fetch(url('/status'));
    expect(res.status).to.equal(500);
    const body = (await res.json()) as { error: string; details: string[] };
    expect(body.error).to.equal('status does not match its schema');
    expect(body.details.join()).to.include('/epoch');
    expect(logger.at('error')).to.have.length(1);
  });

  it('GET /status answers 500 when assembling the status throws', async () => {
    current = new Error('boom: a bug in the status');
    const res = await fetch(url('/status'));
    expect(res.status).to.equal(500);
    expect(await res.json()).to.deep.equal({ error: 'internal error' });
  });

  it('GET / serves the page as HTML under a strict Content-Security-Policy', async () => {
    const res = await fetch(url('/'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    const csp = (res.headers.get('content-security-policy') ?? '').split(/;\s*/);
    expect(csp).to.include.members([
      "default-src 'none'",
      `script-src 'sha256-${sha256(PAGE_SCRIPT)}'`,
      `style-src 'sha256-${sha256(PAGE_STYLE)}'`,
      "connect-src 'self'",
      "frame-ancestors 'none'",
    ]);
    expect(csp.join(';')).to.not.include('unsafe');
    const html = await res.text();
    expect(html).to.match(/^<!doctype html>/i);
    expect(html).to.include(`<script>${PAGE_SCRIPT}</script>`);
    expect(html).to.include(`<style>${PAGE_STYLE}</style>`);
    // No external assets: nothing is loaded from another origin, and only `status` is fetched.
    expect(html).to.not.match(/\b(?:src|href)=["']?(?:https?:)?\/\//i);
    expect(html).to.not.match(/https?:\/\//i);
    expect(PAGE_SCRIPT).to.not.include('innerHTML');
  });

  it('GET / carries a summary of the status in the HTML itself, for a reader without JavaScript', async () => {
    current = nodeStatus(
      { now },
      {
        peers: [statusPeer(1, now), statusPeer(2, now, { state: 'dead', last_failure: 'refused' })],
      },
    );
    const html = await (await fetch(url('/'))).text();
    const summary = /<section id="summary"[^]*?<\/section>/.exec(html)?.[0] ?? '';
    expect(summary).to.include('data-summary="role">coordinator<');
    expect(summary).to.include('<li data-peer="10.0.0.2:8080" data-state="dead">');
    // The live view stays hidden until the script has polled /status and replaces the summary.
    expect(html).to.include('<div id="live" class="live" hidden>');
  });

  it('GET / and GET /status share one build a second, however often the page is loaded', async () => {
    await fetch(url('/status'));
    t += 500;
    for (let i = 0; i < 10; i++) expect((await fetch(url('/'))).status).to.equal(200);
    expect(builds, 'the page summarises the status /status serves').to.equal(1);
    current = nodeStatus({ now }, { epoch: 42 });
    t += 1_000; // both stale: one build of the status serves both again
    const html = await (await fetch(url('/'))).text();
    expect(html).to.include('data-summary="epoch">42<');
    await fetch(url('/status'));
    expect(builds).to.equal(2);
  });

  it('GET / still serves the page when the status cannot be built, saying so', async () => {
    current = new Error('boom: a bug in the status');
    const res = await fetch(url('/'));
    expect(res.status).to.equal(200);
    expect(await res.text()).to.include('data-summary="unavailable"');
  });

  it("the page's script is valid JavaScript", () => {
    expect(() => new Script(PAGE_SCRIPT)).to.not.throw();
  });

  it('leaves other paths to the app (404)', async () => {
    const res = await fetch(url('/statuses'));
    expect(res.status).to.equal(404);
  });
});
