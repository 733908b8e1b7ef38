// The operator's changes are refused when a browser page could have sent them: what a cross-site
// page, a DNS-rebinding page or a simple form POST carries, judged header by header, and over a
// real socket against the maintenance and test-alert routes as the node serves them.
import { request } from 'node:http';
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { browserSign, hostName } from '../../src/http/operator-guard.js';
import { maintenanceRouter } from '../../src/http/routes/maintenance.js';
import { testAlertRouter } from '../../src/http/routes/test-alert.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { MaintenanceBook } from '../../src/maintenance/windows.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const OWN = new Set(['localhost', '127.0.0.1', '::1', '10.1.2.3', 'knh-abcde']);
const JSON_TYPE = 'application/json';

describe('hostName', () => {
  const cases: [string, string | null][] = [
    ['localhost:8080', 'localhost'],
    ['LOCALHOST', 'localhost'],
    ['[::1]:8080', '::1'],
    ['10.1.2.3', '10.1.2.3'],
    ['localhost.:8080', 'localhost'],
    ['[]:80', null],
    [':80', null],
  ];
  for (const [host, name] of cases) {
    it(`${JSON.stringify(host)} → ${JSON.stringify(name)}`, () => {
      expect(hostName(host)).to.equal(name);
    });
  }
});

describe('browserSign', () => {
  const cases: [string, Parameters<typeof browserSign>[0], boolean, string | null][] = [
    ['curl through a port-forward', { host: 'localhost:8080', contentType: JSON_TYPE }, true, null],
    ['curl on another local port', { host: '127.0.0.1:18080', contentType: JSON_TYPE }, true, null],
    ['any loopback address', { host: '127.0.0.9:8080', contentType: JSON_TYPE }, true, null],
    [
      'IPv6 loopback',
      { host: '[::1]:8080', contentType: 'application/json; charset=utf-8' },
      true,
      null,
    ],
    [
      'a JSON media type',
      { host: 'localhost', contentType: 'application/merge-patch+json' },
      true,
      null,
    ],
    ['the pod by its IP', { host: '10.1.2.3:8080', contentType: JSON_TYPE }, true, null],
    ['a DELETE, which has no body', { host: 'localhost:8080' }, false, null],
    [
      'a page typed in by the user',
      { host: 'localhost:8080', fetchSite: 'none', contentType: JSON_TYPE },
      true,
      null,
    ],
    [
      "this node's own page",
      {
        host: 'localhost:8080',
        origin: 'http://localhost:8080',
        fetchSite: 'same-origin',
        contentType: JSON_TYPE,
      },
      true,
      null,
    ],
    ['no host (HTTP/1.0)', { contentType: JSON_TYPE }, true, null],
    ['a rebound name', { host: 'evil.example:8080', contentType: JSON_TYPE }, true, 'host'],
    ['an unreadable host', { host: '[', contentType: JSON_TYPE }, true, 'host'],
    [
      'a cross-site fetch',
      { host: 'localhost:8080', fetchSite: 'cross-site', contentType: JSON_TYPE },
      true,
      'fetch-site',
    ],
    [
      'another port of localhost',
      { host: 'localhost:8080', fetchSite: 'same-site', contentType: JSON_TYPE },
      true,
      'fetch-site',
    ],
    [
      'a cross-site DELETE',
      { host: 'localhost:8080', fetchSite: 'cross-site' },
      false,
      'fetch-site',
    ],
    [
      'the Origin of another site',
      { host: 'localhost:8080', origin: 'https://evil.example', contentType: JSON_TYPE },
      true,
      'origin',
    ],
    [
      'the Origin of another local port',
      { host: 'localhost:8080', origin: 'http://localhost:3000', contentType: JSON_TYPE },
      true,
      'origin',
    ],
    [
      'the Origin null (a sandboxed page)',
      { host: 'localhost:8080', origin: 'null', contentType: JSON_TYPE },
      true,
      'origin',
    ],
    [
      'a form post (text/plain)',
      { host: 'localhost:8080', contentType: 'text/plain' },
      true,
      'content-type',
    ],
    [
      'a form post (urlencoded)',
      { host: 'localhost:8080', contentType: 'application/x-www-form-urlencoded' },
      true,
      'content-type',
    ],
    ['a POST with no content type', { host: 'localhost:8080' }, true, 'content-type'],
    [
      'a type that only starts like JSON',
      { host: 'localhost', contentType: 'application/jsonx' },
      true,
      'content-type',
    ],
  ];
  for (const [what, headers, needsJson, why] of cases) {
    it(`${what}: ${why ?? 'taken'}`, () => {
      expect(browserSign(headers, OWN, needsJson)?.why ?? null).to.equal(why);
    });
  }
});

describe('operator changes over a real socket', () => {
  const schemas = loadSchemas();
  let server: HttpServer;
  let book: MaintenanceBook;
  let tests: number;

  /** A raw request: fetch would not let a test set Host, nor send what a browser sends. */
  function send(
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; body: { error?: string } }> {
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: server.port, method, path, headers },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error?: string } }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  beforeEach(async () => {
    book = new MaintenanceBook();
    tests = 0;
    const logger = new CapturingLogger();
    const app = buildApp({
      api: {} as NodeApi,
      schemas,
      logger,
      routers: [
        maintenanceRouter({ book, schemas, logger, now: () => Date.now() }),
        testAlertRouter({ logger, send: () => (tests++, ['slack']) }),
      ],
    });
    server = await listen(app, '127.0.0.1', 0);
  });
  afterEach(async () => server.close());

  const window = JSON.stringify({ duration: '168h', reason: 'silence every page' });

  it('refuses the cross-site text/plain POST /maintenance a page can send: 4xx, no window', async () => {
    const res = await send(
      'POST',
      '/maintenance',
      {
        host: 'localhost:8080',
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain',
      },
      window,
    );
    expect(res.status).to.equal(403);
    // The curl that works, to the port the client reached (a port-forward's local one).
    expect(res.body.error).to.include(
      "curl -XPOST localhost:8080/maintenance -H 'content-type: application/json'",
    );
    expect(book.all()).to.deep.equal([]);
  });

  it('refuses the same POST without the headers a browser adds, for its content type (415)', async () => {
    const res = await send(
      'POST',
      '/maintenance',
      { host: 'localhost:18080', 'content-type': 'text/plain' },
      window,
    );
    expect(res.status).to.equal(415);
    expect(res.body.error).to.include('application/json');
    expect(res.body.error).to.include('curl -XPOST localhost:18080/maintenance ');
    expect(book.all()).to.deep.equal([]);
  });

  it('refuses a rebound name in Host (403), nothing opened', async () => {
    const res = await send(
      'POST',
      '/maintenance',
      { host: 'evil.example:8080', 'content-type': JSON_TYPE },
      window,
    );
    expect(res.status).to.equal(403);
    // Not the rebound name's port: the listener's own.
    expect(res.body.error).to.include(`curl -XPOST localhost:${server.port}/maintenance `);
    expect(book.all()).to.deep.equal([]);
  });

  it("takes the docs' curl: JSON through a port-forward to localhost (201), and ends it (200)", async () => {
    const opened = await send(
      'POST',
      '/maintenance',
      { host: 'localhost:8080', 'content-type': JSON_TYPE },
      window,
    );
    expect(opened.status).to.equal(201);
    const id = (opened.body as { window: { id: string } }).window.id;
    expect(book.all().map((w) => w.id)).to.deep.equal([id]);
    const crossSite = await send('DELETE', `/maintenance/${id}`, {
      host: 'localhost:8080',
      origin: 'https://evil.example',
    });
    expect(crossSite.status, 'a cross-site DELETE').to.equal(403);
    expect(crossSite.body.error).to.include(`curl -XDELETE localhost:8080/maintenance/${id}`);
    expect(book.all()[0]?.cancelled).to.equal(false);
    const ended = await send('DELETE', `/maintenance/${id}`, { host: 'localhost:8080' });
    expect(ended.status).to.equal(200);
    expect(book.all()[0]?.cancelled).to.equal(true);
  });

  it('refuses a cross-site POST /test-alert, sending nothing; sends for the curl', async () => {
    const forged = await send('POST', '/test-alert', {
      host: 'localhost:8080',
      origin: 'https://evil.example',
      'content-type': 'text/plain',
    });
    expect(forged.status).to.equal(403);
    expect(tests).to.equal(0);
    const noType = await send('POST', '/test-alert', { host: 'localhost:8080' });
    expect(noType.status, 'a bodiless POST a page can send').to.equal(415);
    expect(tests).to.equal(0);
    const ok = await send('POST', '/test-alert', {
      host: 'localhost:8080',
      'content-type': JSON_TYPE,
    });
    expect(ok.status).to.equal(202);
    expect(tests).to.equal(1);
  });
});
