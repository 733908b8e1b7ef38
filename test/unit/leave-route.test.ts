// POST /leave over a real socket: only the leaving node itself, and only a peer, changes anything.
import { expect } from 'chai';
import type { LeaveNotice } from '../../src/wire/peer-messages.js';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { leaveRouter } from '../../src/http/routes/leave.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const schemas = loadSchemas();
const noApi = new Proxy({} as NodeApi, {
  get: () => () => {
    throw new Error('POST /leave must not call the node API');
  },
});

describe('POST /leave', () => {
  let server: HttpServer;
  let heard: LeaveNotice[];
  let peers: string[];

  beforeEach(async () => {
    heard = [];
    peers = ['127.0.0.1:9001'];
    const app = buildApp({
      api: noApi,
      schemas,
      logger: new CapturingLogger(),
      routers: [
        leaveRouter({
          schemas,
          logger: new CapturingLogger(),
          onLeave: (notice) => {
            if (!peers.includes(notice.from.address)) return false;
            heard.push(notice);
            return true;
          },
        }),
      ],
    });
    server = await listen(app, '127.0.0.1', 0);
  });

  afterEach(() => server.close());

  const leave = (body: unknown) =>
    fetch(`http://127.0.0.1:${server.port}/leave`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('takes a leave from a peer sent from its own address', async () => {
    const notice = { from: { id: 'a@127.0.0.1', address: '127.0.0.1:9001' }, epoch: 3 };
    const res = await leave(notice);
    expect(res.status).to.equal(200);
    expect(heard).to.deep.equal([notice]);
  });

  it('refuses (403) a leave naming another address than the sender’s: no forged departures', async () => {
    peers.push('10.0.0.7:8080');
    const res = await leave({ from: { id: 'b@10.0.0.7', address: '10.0.0.7:8080' }, epoch: 3 });
    expect(res.status).to.equal(403);
    expect(((await res.json()) as { error: string }).error).to.include('must come from 10.0.0.7');
    expect(heard).to.deep.equal([]);
  });

  it('refuses (403) a leave from a node that is not a peer', async () => {
    const res = await leave({ from: { id: 'x@127.0.0.1', address: '127.0.0.1:9999' }, epoch: 1 });
    expect(res.status).to.equal(403);
    expect(heard).to.deep.equal([]);
  });

  it('rejects malformed bodies with 400 and changes nothing', async () => {
    for (const body of [
      '{"from":',
      { from: { id: 'a', address: 'not an address' }, epoch: 1 },
      { from: { id: 'a@127.0.0.1', address: '127.0.0.1:9001' }, epoch: -1 },
    ]) {
      const res = await leave(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    expect(heard).to.deep.equal([]);
  });
});
