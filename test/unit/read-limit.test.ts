// Reads of the operator's views per client, over a real socket: a client polling far faster than
// the page or Prometheus does gets 429 for the excess, before any view is built; the pod's own
// loopback (a port-forward) never does; peers' messages are not counted.
import { expect } from 'chai';
import { request } from 'node:http';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

function get(port: number, localAddress: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, localAddress, path, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('read limit: /, /status and /metrics per client', () => {
  let server: HttpServer;
  let scrapes = 0;
  let pings = 0;

  before(async () => {
    const api = {
      ping: () => (
        pings++,
        {
          id: 'a@127.0.0.1',
          address: '127.0.0.1:1',
          node_name: 'a',
          role: 'follower',
          epoch: 1,
          coordinator: null,
        }
      ),
      metrics: () => (scrapes++, Promise.resolve({ contentType: 'text/plain', body: 'x 1\n' })),
    } as unknown as NodeApi;
    const app = buildApp({
      api,
      schemas: loadSchemas(),
      logger: new CapturingLogger(),
      metricsMaxAgeMs: 0,
      readRateLimit: { perSecond: 0.001, burst: 3 },
    });
    server = await listen(app, '127.0.0.1', 0, { rateLimit: null });
  });
  after(async () => server.close());

  it('answers a client its burst, then 429 without building the view', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await get(server.port, '127.0.0.2', '/metrics'));
    expect(statuses).to.deep.equal([200, 200, 200, 429, 429]);
    expect(scrapes).to.equal(3);
    expect(await get(server.port, '127.0.0.3', '/metrics'), 'another client').to.equal(200);
  });

  it("never limits the pod's own loopback (a port-forward), nor what is not a view", async () => {
    for (let i = 0; i < 6; i++)
      expect(await get(server.port, '127.0.0.1', '/metrics')).to.equal(200);
    for (let i = 0; i < 6; i++) expect(await get(server.port, '127.0.0.4', '/ping')).to.equal(200);
    expect(pings).to.equal(6);
  });
});
