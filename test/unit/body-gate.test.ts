// Bodies by sender, over real sockets: a stranger (an IP no discovered peer has) sends small
// bodies only and reads from a small budget of its own, so a flood of bogus large bodies, each
// with a fresh signature header that passes the header check, cannot stop a peer's signed messages.
import { expect } from 'chai';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER } from '../../src/auth/signature.js';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const PEER_IP = '127.0.0.1';
const STRANGER_IP = '127.0.0.2';
const self = { id: 'w3@127.0.0.1', address: '127.0.0.1:8080' };
const peer = { id: 'w1@127.0.0.1', address: '127.0.0.1:8079' };
const auth = new PeerAuth({
  secrets: () => ['k'.repeat(64)],
  now: () => Date.now(),
  maxSkewMs: 30_000,
});
const SMALL = 64 * 1024;

const api = {
  ping: () => ({
    id: self.id,
    address: self.address,
    node_name: 'w3',
    role: 'follower',
    epoch: 1,
    coordinator: null,
  }),
  election: () => ({ type: 'answer', from: self, epoch: 4, coordinator: self }),
  announcement: () => ({ accepted: true, epoch: 4, coordinator: peer }),
  probe: () => Promise.resolve({ status: 403 as const, error: 'no' }),
  metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
} as unknown as NodeApi;

/**
 * Headers of a POST declaring `length` bytes, sent from `localAddress`; the body never comes. A
 * chunked one declares no length, and sends only its first chunk.
 */
function hold(
  port: number,
  localAddress: string,
  path: string,
  length: number | 'chunked',
): Promise<Socket> {
  const header = auth.signRequest('POST', path, Buffer.from('another body')).header;
  const framing =
    length === 'chunked'
      ? 'transfer-encoding: chunked\r\n\r\n1\r\n{\r\n'
      : `content-length: ${length}\r\n\r\n{`;
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${AUTH_HEADER}: ${header}\r\n${framing}`,
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

/** The answer to a POST of `body` from `localAddress`, signed; its status and whether it closed. */
function post(
  port: number,
  localAddress: string,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method: 'POST',
        path,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': String(bytes.length),
          [AUTH_HEADER]: auth.signRequest('POST', path, bytes).header,
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, closed: res.headers.connection === 'close' }),
        );
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

const announcement = (pad: number) =>
  JSON.stringify({ from: peer, epoch: 4, peers: [] }).padEnd(pad, ' ');

describe('body gate: large bodies from peers only, a budget of their own for strangers', () => {
  let server: HttpServer;
  const held: Socket[] = [];
  // The gate judges a body by its headers as the app takes the request in, before a byte of the
  // body is read: a test knows a held body is counted once this many requests were taken in.
  let takenIn = 0;
  const waiting: (() => void)[] = [];
  const tookIn = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (takenIn >= n ? resolve() : void waiting.push(check));
      check();
    });

  beforeEach(async () => {
    takenIn = 0;
    const app = buildApp({
      api,
      schemas: loadSchemas(),
      logger: new CapturingLogger(),
      auth,
      smallBodyLimitBytes: SMALL,
      bodyBudgetBytes: 2 * 1024 * 1024,
      strangerBodyBudgetBytes: 4 * SMALL,
      isPeerIp: (ip) => ip === PEER_IP,
    });
    server = await listen(
      (req, res) => {
        app(req, res);
        takenIn++;
        for (const check of waiting.splice(0)) check();
      },
      '127.0.0.1',
      0,
    );
  });
  afterEach(async () => {
    for (const s of held.splice(0)) s.destroy();
    await server.close();
  });

  it("refuses a stranger's large body by its headers (403, closed), a peer's is taken", async () => {
    const body = announcement(200_000);
    const stranger = await post(server.port, STRANGER_IP, '/coordinator', body);
    expect(stranger).to.deep.equal({ status: 403, closed: true });
    const fromPeer = await post(server.port, PEER_IP, '/coordinator', body);
    expect(fromPeer.status).to.equal(200);
  });

  it("takes a stranger's small body (an election from a pod not discovered yet)", async () => {
    const election = JSON.stringify({
      from: { id: 'new@127.0.0.2', address: '127.0.0.2:8080' },
      epoch: 1,
    });
    expect((await post(server.port, STRANGER_IP, '/election', election)).status).to.equal(200);
  });

  it("a stranger flood that fills strangers' budget: they get 503, a peer's signed messages 200", async () => {
    for (let i = 0; i < 4; i++)
      held.push(await hold(server.port, STRANGER_IP, '/coordinator', SMALL));
    await tookIn(4);
    const more = await post(
      server.port,
      STRANGER_IP,
      '/election',
      JSON.stringify({ from: peer, epoch: 1 }).padEnd(1_000, ' '),
    );
    expect(more.status, "strangers' budget is full").to.equal(503);
    const big = await post(server.port, PEER_IP, '/coordinator', announcement(1_500_000));
    expect(big.status, "a peer's 1.5 MB announcement").to.equal(200);
    const election = await post(
      server.port,
      PEER_IP,
      '/election',
      JSON.stringify({ from: peer, epoch: 5 }),
    );
    expect(election.status).to.equal(200);
  });

  it('counts a chunked body, which declares no length, as the most its sender may send', async () => {
    // Four strangers' chunked bodies, each up to the small limit, fill strangers' budget.
    for (let i = 0; i < 4; i++)
      held.push(await hold(server.port, STRANGER_IP, '/election', 'chunked'));
    await tookIn(4);
    // The stranger's own election, taken (200) were its budget not full.
    const election = JSON.stringify({
      from: { id: 'new@127.0.0.2', address: '127.0.0.2:8080' },
      epoch: 1,
    });
    const more = await post(server.port, STRANGER_IP, '/election', election);
    expect(more, "strangers' budget is full").to.deep.equal({ status: 503, closed: true });
  });

  it('a peer still reads from a budget: past it, 503 (nothing read)', async () => {
    held.push(await hold(server.port, PEER_IP, '/coordinator', 1_500_000));
    await tookIn(1);
    const big = await post(server.port, PEER_IP, '/coordinator', announcement(1_000_000));
    expect(big).to.deep.equal({ status: 503, closed: true });
  });
});
