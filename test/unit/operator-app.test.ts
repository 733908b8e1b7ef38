// The operator's own listener (OPERATOR_LISTEN) over a real socket: its views and changes keep the
// guards they have on the peer port (changes not from a browser page, reads limited per client,
// small bodies), it answers no peer message; and the peer port, once they moved, says where to.
import { request } from 'node:http';
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { buildOperatorApp } from '../../src/http/operator-app.js';
import { maintenanceRouter } from '../../src/http/routes/maintenance.js';
import { movedViewsRouter } from '../../src/http/routes/moved-views.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { MaintenanceBook } from '../../src/maintenance/windows.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const schemas = loadSchemas();

interface Answer {
  status: number;
  body: string;
}

/** One request from `localAddress` (a loopback address stands for a client of its own). */
function send(
  port: number,
  method: string,
  path: string,
  {
    localAddress = '127.0.0.1',
    headers = {},
    body,
  }: {
    localAddress?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, localAddress, headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_HEADERS = { 'content-type': 'application/json', host: 'localhost' };
const WINDOW = JSON.stringify({ duration: '30m', reason: 'CNI upgrade' });

describe('the operator listener (buildOperatorApp)', () => {
  let server: HttpServer;
  let book: MaintenanceBook;
  let scrapes: number;

  beforeEach(async () => {
    book = new MaintenanceBook();
    scrapes = 0;
    const logger = new CapturingLogger();
    const app = buildOperatorApp({
      logger,
      metrics: () => (
        scrapes++,
        Promise.resolve({ contentType: 'text/plain', body: 'knh_up 1\n' })
      ),
      routers: [maintenanceRouter({ book, schemas, logger, now: () => Date.now() })],
      metricsMaxAgeMs: 0,
      readRateLimit: { perSecond: 0.001, burst: 2 },
      bodyLimitBytes: 1024,
    });
    server = await listen(app, '127.0.0.1', 0, { rateLimit: null });
  });
  afterEach(async () => server.close());

  it('serves /metrics and the routers given, and no peer message', async () => {
    const metrics = await send(server.port, 'GET', '/metrics');
    expect(metrics).to.deep.equal({ status: 200, body: 'knh_up 1\n' });
    expect((await send(server.port, 'GET', '/maintenance')).status).to.equal(200);
    for (const [method, path] of [
      ['GET', '/ping'],
      ['POST', '/election'],
      ['POST', '/coordinator'],
      ['POST', '/leave'],
      ['POST', '/probe'],
    ] as const) {
      const res = await send(server.port, method, path, { headers: JSON_HEADERS, body: '{}' });
      expect(res.status, `${method} ${path}`).to.equal(404);
    }
  });

  it('takes a change as curl sends it from loopback; refuses a browser page’s, opening nothing', async () => {
    const page = await send(server.port, 'POST', '/maintenance', {
      headers: { 'content-type': 'text/plain', origin: 'https://evil.example', host: 'localhost' },
      body: WINDOW,
    });
    expect(page.status).to.be.oneOf([403, 415]);
    expect(book.all()).to.deep.equal([]);
    const curl = await send(server.port, 'POST', '/maintenance', {
      headers: JSON_HEADERS,
      body: WINDOW,
    });
    expect(curl.status).to.equal(201);
    expect(book.all()).to.have.length(1);
  });

  it('limits reads per client, the pod’s own loopback excepted, before building the view', async () => {
    const other = [];
    for (let i = 0; i < 4; i++) {
      other.push(
        (await send(server.port, 'GET', '/metrics', { localAddress: '127.0.0.2' })).status,
      );
    }
    expect(other).to.deep.equal([200, 200, 429, 429]);
    expect(scrapes).to.equal(2);
    for (let i = 0; i < 4; i++)
      expect((await send(server.port, 'GET', '/metrics')).status).to.equal(200);
  });

  it('refuses a body over its limit before reading it', async () => {
    const res = await send(server.port, 'POST', '/maintenance', {
      headers: JSON_HEADERS,
      body: JSON.stringify({ duration: '30m', reason: 'x'.repeat(2048) }),
    });
    expect(res.status).to.equal(413);
    expect(book.all()).to.deep.equal([]);
  });
});

describe('the peer port once the views moved (movedViewsRouter)', () => {
  let server: HttpServer;

  before(async () => {
    const api = {
      ping: () => ({
        id: 'a@127.0.0.1',
        address: '127.0.0.1:1',
        node_name: 'a',
        role: 'follower',
        epoch: 1,
        coordinator: null,
      }),
    } as unknown as NodeApi;
    const app = buildApp({
      api,
      schemas,
      logger: new CapturingLogger(),
      routers: [movedViewsRouter('127.0.0.1:9090 (loopback only)')],
    });
    server = await listen(app, '127.0.0.1', 0);
  });
  after(async () => server.close());

  it('answers every operator route 404, saying where it went', async () => {
    const routes = [
      ['GET', '/'],
      ['GET', '/status'],
      ['GET', '/metrics'],
      ['GET', '/maintenance'],
      ['POST', '/maintenance'],
      ['DELETE', '/maintenance/abc'],
      ['POST', '/test-alert'],
    ] as const;
    for (const [method, path] of routes) {
      const res = await send(server.port, method, path, { headers: JSON_HEADERS, body: '{}' });
      expect(res.status, `${method} ${path}`).to.equal(404);
      const { error } = JSON.parse(res.body) as { error: string };
      expect(error).to.include(`${method} ${path}`);
      expect(error).to.include('OPERATOR_LISTEN');
      expect(error).to.include('127.0.0.1:9090 (loopback only)');
    }
  });

  it('still answers the peers', async () => {
    expect((await send(server.port, 'GET', '/ping')).status).to.equal(200);
    const other = await send(server.port, 'GET', '/nothing');
    expect(JSON.parse(other.body)).to.deep.equal({ error: 'no route for GET /nothing' });
  });
});
