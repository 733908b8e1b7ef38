// The read views answered ahead of the app (views.ts), over a real socket: exactly a GET or HEAD
// of a view's path is taken, with the headers an answer from the app would carry; everything else
// reaches the app untouched, and a view that cannot be built is a 500, the server going on.
import { expect } from 'chai';
import { request, type RequestListener } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { listen, type HttpServer } from '../../src/http/server.js';
import { Snapshot } from '../../src/http/snapshot.js';
import { withViews } from '../../src/http/views.js';
import { CapturingLogger } from '../support/capturing-logger.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function ask(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the read views, ahead of the app (withViews)', () => {
  let server: HttpServer;
  let logger: CapturingLogger;
  /** What the app behind the views was asked. */
  const reachedApp: string[] = [];
  let body = '';
  let failing = false;

  before(async () => {
    logger = new CapturingLogger();
    const snapshot = new Snapshot({
      now: () => 0,
      maxAgeMs: 0,
      build: () =>
        failing
          ? Promise.reject(new Error('cannot assemble'))
          : Promise.resolve({ status: 200, contentType: 'application/json', body }),
    });
    const app: RequestListener = (req, res) => {
      reachedApp.push(`${req.method} ${req.url}`);
      res.writeHead(404, { 'content-type': 'text/plain' }).end('app');
    };
    const served = withViews(
      [{ path: '/status', snapshot, headers: { 'cache-control': 'no-cache' } }],
      app,
      { logger, readRateLimit: null, headers: { 'x-knh-protocol': '5' } },
    );
    server = await listen(served, '127.0.0.1', 0, { rateLimit: null });
  });
  after(async () => server.close());
  beforeEach(() => {
    reachedApp.length = 0;
    // Above snapshot.ts's GZIP_FROM_BYTES: kept gzipped too.
    body = JSON.stringify({ peers: Array.from({ length: 2_000 }, (_, i) => ({ n: i })) });
    failing = false;
    logger.records.length = 0;
  });

  it('answers GET with the view, its headers and the common ones, gzipped when taken', async () => {
    const plain = await ask(server.port, 'GET', '/status');
    expect(plain.status).to.equal(200);
    expect(plain.body.toString()).to.equal(body);
    expect(plain.headers['content-length']).to.equal(String(Buffer.byteLength(body)));
    expect(plain.headers['cache-control']).to.equal('no-cache');
    expect(plain.headers['x-knh-protocol']).to.equal('5');
    expect(plain.headers.etag).to.match(/^"[\w-]+"$/);
    const zipped = await ask(server.port, 'GET', '/status', { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers['content-length']).to.equal(String(zipped.body.length));
    expect(gunzipSync(zipped.body).toString()).to.equal(body);
    expect(reachedApp).to.deep.equal([]);
  });

  it('answers HEAD with the headers alone, and a query string reads the same view', async () => {
    const head = await ask(server.port, 'HEAD', '/status');
    expect(head.status).to.equal(200);
    expect(head.headers['content-length']).to.equal(String(Buffer.byteLength(body)));
    expect(head.body.length).to.equal(0);
    const withQuery = await ask(server.port, 'GET', '/status?pretty=1');
    expect(withQuery.body.toString()).to.equal(body);
    expect(reachedApp).to.deep.equal([]);
  });

  it('answers 304 with no body to a client holding the ETag', async () => {
    const first = await ask(server.port, 'GET', '/status');
    const again = await ask(server.port, 'GET', '/status', {
      'if-none-match': String(first.headers.etag),
    });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
    expect(again.headers['x-knh-protocol']).to.equal('5');
  });

  it('leaves every other method and path to the app', async () => {
    for (const [method, path] of [
      ['POST', '/status'],
      ['DELETE', '/status'],
      ['GET', '/status/'],
      ['GET', '/statusx'],
      ['GET', '/'],
    ] as const) {
      const a = await ask(server.port, method, path);
      expect(a.body.toString(), `${method} ${path}`).to.equal('app');
    }
    expect(reachedApp).to.deep.equal([
      'POST /status',
      'DELETE /status',
      'GET /status/',
      'GET /statusx',
      'GET /',
    ]);
  });

  it('answers 500 when the view cannot be built, logs why, and serves the next read', async () => {
    failing = true;
    const failed = await ask(server.port, 'GET', '/status');
    expect(failed.status).to.equal(500);
    expect(JSON.parse(failed.body.toString())).to.deep.equal({ error: 'internal error' });
    expect(logger.records.some((r) => r.level === 'error')).to.equal(true);
    failing = false;
    expect((await ask(server.port, 'GET', '/status')).status).to.equal(200);
  });
});
