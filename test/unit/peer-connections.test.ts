// Connections to peers kept open between requests, against a real server that counts them: one
// per peer reused, a second one only while two requests overlap, idle ones closed, failed ones
// never reused.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { expect } from 'chai';
import { PeerConnections } from '../../src/peer-client/connections.js';
import { exchange, type PeerRequest } from '../../src/peer-client/exchange.js';
import { pollUntil } from '../support/poll.js';

const IDLE_MS = 300;

interface Peer {
  server: Server;
  port: number;
  sockets: Socket[];
  /** How each request is answered; default a 200 with `{}` at once. */
  answer: (res: ServerResponse) => void;
}

async function startPeer(): Promise<Peer> {
  const peer: Peer = {
    server: createServer((_req, res) => peer.answer(res)),
    port: 0,
    sockets: [],
    answer: (res) => res.end('{}'),
  };
  peer.server.on('connection', (socket: Socket) => peer.sockets.push(socket));
  await new Promise<void>((resolve) => peer.server.listen(0, '127.0.0.1', resolve));
  peer.port = (peer.server.address() as { port: number }).port;
  return peer;
}

/** Waits for `holds` (polling), failing the test with `what` if it does not within `timeoutMs`. */
const waitFor = (what: string, holds: () => boolean, timeoutMs = 2_000) =>
  pollUntil(what, () => (holds() ? true : undefined), { timeoutMs, everyMs: 20 });

const open = (peer: Peer) => peer.sockets.filter((s) => !s.destroyed).length;

const request = (peer: Peer, timeoutMs = 2_000): PeerRequest => ({
  key: `127.0.0.1:${peer.port}`,
  host: '127.0.0.1',
  port: peer.port,
  method: 'GET',
  path: '/ping',
  headers: {},
  timeoutMs,
  maxBodyBytes: 1024,
});

const get = (connections: PeerConnections, peer: Peer, timeoutMs = 2_000) =>
  exchange(connections, request(peer, timeoutMs));

describe('peer connections', function () {
  this.timeout(20_000);
  let peer: Peer;
  let connections: PeerConnections;

  beforeEach(async () => {
    peer = await startPeer();
    connections = new PeerConnections(IDLE_MS);
  });

  afterEach(async () => {
    connections.closeIdle();
    peer.server.closeAllConnections();
    await new Promise((resolve) => peer.server.close(resolve));
  });

  it('reuses one connection for requests one after another', async () => {
    for (let i = 0; i < 5; i++) expect((await get(connections, peer)).ok).to.be.true;
    expect(peer.sockets).to.have.length(1);
    expect(connections.idleCount).to.equal(1);
  });

  it('opens a second connection only while two requests overlap, and keeps one', async () => {
    const results = await Promise.all([get(connections, peer), get(connections, peer)]);
    expect(results.map((r) => r.ok)).to.deep.equal([true, true]);
    expect(peer.sockets).to.have.length(2);
    await waitFor('the second one closed', () => open(peer) === 1, 2_000);
    expect((await get(connections, peer)).ok).to.be.true;
    expect(peer.sockets, 'the kept one reused').to.have.length(2);
  });

  it('leaves the kept connection alone for a request aborted before it began', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    const stopped = new AbortController();
    stopped.abort();
    const outcome = await exchange(connections, { ...request(peer), signal: stopped.signal });
    expect(outcome).to.deep.include({ ok: false, reason: 'aborted', phase: 'connect' });
    expect(connections.idleCount).to.equal(1);
    expect((await get(connections, peer)).ok).to.be.true;
    expect(peer.sockets, 'reused').to.have.length(1);
  });

  it('closes a connection left idle', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    await waitFor('closed once idle', () => open(peer) === 0, IDLE_MS + 2_000);
    expect(connections.idleCount).to.equal(0);
    expect((await get(connections, peer)).ok, 'a new one after').to.be.true;
  });

  it('opens a new connection when the peer closed the kept one, without failing the request', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    peer.sockets[0]!.destroy();
    await waitFor('forgotten', () => connections.idleCount === 0, 2_000);
    expect((await get(connections, peer)).ok).to.be.true;
    expect(peer.sockets).to.have.length(2);
  });

  it('sends a GET again on a new connection when the kept one is closed as the request arrives', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    // The peer's server closing an idle connection just as the next request comes on it.
    let requests = 0;
    peer.answer = (res) => (++requests === 1 ? res.socket?.destroy() : res.end('{}'));
    const answer = await get(connections, peer);
    expect(answer.ok, JSON.stringify(answer)).to.be.true;
    expect(requests).to.equal(2);
    expect(peer.sockets).to.have.length(2);
  });

  it('does not send a POST twice: a kept connection closed as it arrives fails it', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    let requests = 0;
    peer.answer = (res) => (++requests === 1 ? res.socket?.destroy() : res.end('{}'));
    const post = { ...request(peer), method: 'POST' as const, body: Buffer.from('{}') };
    const answer = await exchange(connections, post);
    expect(answer).to.deep.include({ ok: false, reason: 'reset', phase: 'send' });
    expect(requests).to.equal(1);
  });

  it('does not reuse a connection idle longer than its idle time, though a busy loop kept its timer from firing', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    expect(connections.idleCount).to.equal(1);
    const until = performance.now() + IDLE_MS + 50;
    while (performance.now() < until); // the event loop blocked: no timer runs
    const answer = await get(connections, peer);
    expect(answer.ok).to.be.true;
    expect(peer.sockets).to.have.length(2);
  });

  it('never reuses a connection whose request failed, or that the server says it closes', async () => {
    peer.answer = () => undefined; // never answers
    const timedOut = await get(connections, peer, 200);
    expect(timedOut).to.deep.include({ ok: false, reason: 'timeout', phase: 'send' });
    await waitFor('destroyed', () => open(peer) === 0, 2_000);
    peer.answer = (res) => {
      res.setHeader('connection', 'close');
      res.end('{}');
    };
    expect((await get(connections, peer)).ok).to.be.true;
    expect(connections.idleCount).to.equal(0);
    await waitFor('closed after its answer', () => open(peer) === 0, 2_000);
  });

  it('closes a kept connection on which bytes come that no request asked for', async () => {
    expect((await get(connections, peer)).ok).to.be.true;
    peer.sockets[0]!.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}');
    await waitFor('closed', () => open(peer) === 0, 2_000);
    expect(connections.idleCount).to.equal(0);
  });

  it('sends the method, path, host and headers, and a body with its length', async () => {
    let seen: unknown = null;
    peer.server.removeAllListeners('request');
    peer.server.on('request', (req, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen = {
          line: `${req.method} ${req.url}`,
          host: req.headers.host,
          custom: req.headers['x-knh-test'],
          length: req.headers['content-length'],
          body: Buffer.concat(chunks).toString(),
        };
        res.end('{}');
      });
    });
    const key = `127.0.0.1:${peer.port}`;
    const outcome = await exchange(connections, {
      key,
      host: '127.0.0.1',
      port: peer.port,
      method: 'POST',
      path: '/coordinator',
      headers: { 'x-knh-test': 'yes' },
      body: Buffer.from('{"a":1}'),
      timeoutMs: 2_000,
      maxBodyBytes: 1024,
    });
    expect(outcome.ok).to.be.true;
    expect(seen).to.deep.equal({
      line: 'POST /coordinator',
      host: key,
      custom: 'yes',
      length: '7',
      body: '{"a":1}',
    });
  });

  it('refuses a header value that would smuggle in another header', () => {
    const key = `127.0.0.1:${peer.port}`;
    expect(() =>
      exchange(connections, {
        key,
        host: '127.0.0.1',
        port: peer.port,
        method: 'GET',
        path: '/ping',
        headers: { 'x-knh-test': 'a\r\nx-injected: 1' },
        timeoutMs: 2_000,
        maxBodyBytes: 1024,
      }),
    ).to.throw(/invalid request header/);
  });
});
