// The listening server's bounds on hostile clients: slow headers, slow bodies, too many
// connections in all or from one IP; and keep-alive for well-behaved clients, intact.
import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { DEFAULT_LIMITS, listen, type HttpServer } from '../../src/http/server.js';

const HOST = '127.0.0.1';

/** Opens a raw TCP connection; resolves once connected. */
/** A connection from `localAddress` (default 127.0.0.2: 127.0.0.1, the pod itself, is exempt). */
function open(port: number, localAddress = '127.0.0.2'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port, localAddress });
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Resolves with ms from now until the server closes `socket` (and what it sent), or null. */
function closedWithin(
  socket: Socket,
  ms: number,
): Promise<{ afterMs: number; answer: string } | null> {
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve({ afterMs: 0, answer });
    const timer = setTimeout(() => resolve(null), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ afterMs: Date.now() - started, answer });
    });
  });
}

function get(port: number, agent: Agent): Promise<{ status: number; socketPort: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port, path: '/', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, socketPort: req.socket?.localPort ?? -1 }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('listen: bounds on slow and numerous clients', function () {
  this.timeout(10_000);
  let server: HttpServer | null = null;
  const sockets: Socket[] = [];

  const start = (limits: Parameters<typeof listen>[3]) =>
    listen(
      (req, res) => {
        // Reads the whole body, then answers: a slow body holds the request open.
        req.resume();
        req.on('end', () => res.end('ok'));
      },
      HOST,
      0,
      limits,
    ).then((s) => (server = s));

  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await server?.close();
    server = null;
  });

  it('defaults: headers within 5 s, the request within 10 s, checked every second', () => {
    expect(DEFAULT_LIMITS).to.deep.equal({
      keepAliveTimeoutMs: 5_000,
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 10_000,
      checkIntervalMs: 1_000,
      maxConnections: 16_384,
      maxConnectionsPerIp: 64,
      rateLimit: { perSecond: 100, burst: 200 },
    });
  });

  it('answers 408 and closes a connection whose headers trickle in (slowloris)', async () => {
    const s = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 });
    const socket = await open(s.port);
    sockets.push(socket);
    const closed = closedWithin(socket, 2_000);
    const header = 'GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ';
    let i = 0;
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write(header[i++ % header.length] ?? 'a');
    }, 20);
    try {
      const result = await closed;
      expect(result, 'closed').to.not.equal(null);
      expect(result?.afterMs).to.be.within(250, 1_500);
      expect(result?.answer).to.match(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
    }
  });

  it('closes a connection that sends nothing within the headers timeout', async () => {
    const s = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 });
    const socket = await open(s.port);
    sockets.push(socket);
    const result = await closedWithin(socket, 2_000);
    expect(result?.afterMs).to.be.within(250, 1_500);
  });

  it('answers 408 and closes a request whose body trickles in past the request timeout', async () => {
    const s = await start({ headersTimeoutMs: 300, requestTimeoutMs: 600, checkIntervalMs: 100 });
    const socket = await open(s.port);
    sockets.push(socket);
    const closed = closedWithin(socket, 2_000);
    socket.write('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n');
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('x');
    }, 20);
    try {
      const result = await closed;
      expect(result?.afterMs).to.be.within(550, 1_800);
      expect(result?.answer).to.match(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
    }
  });

  it('closes connections from one IP beyond its cap at once, and lets others in', async () => {
    const s = await start({ maxConnectionsPerIp: 5 });
    for (let i = 0; i < 5; i++) sockets.push(await open(s.port));
    const extra = await open(s.port);
    sockets.push(extra);
    const result = await closedWithin(extra, 1_000);
    expect(result, 'the 6th connection from 127.0.0.2 is closed').to.not.equal(null);
    expect(result?.afterMs).to.be.below(500);
    // The first five are still served.
    const first = sockets[0] as Socket;
    const answered = new Promise<string>((resolve) =>
      first.once('data', (c: Buffer) => resolve(c.toString('latin1'))),
    );
    first.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await answered).to.match(/^HTTP\/1\.1 200 /);
    // A slot freed is a slot for the next one.
    first.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const next = await open(s.port);
    sockets.push(next);
    expect(await closedWithin(next, 300), 'admitted once one closed').to.equal(null);
    // The pod itself (127.0.0.1: port-forwards, exec) is never capped.
    const own = [];
    for (let i = 0; i < 7; i++) own.push(await open(s.port, '127.0.0.1'));
    sockets.push(...own);
    for (const socket of own) expect(await closedWithin(socket, 100)).to.equal(null);
  });

  it('closes connections beyond maxConnections at once', async () => {
    const s = await start({ maxConnections: 3, maxConnectionsPerIp: 0 });
    for (let i = 0; i < 3; i++) sockets.push(await open(s.port));
    const extra = await open(s.port);
    sockets.push(extra);
    const result = await closedWithin(extra, 1_000);
    expect(result?.afterMs).to.be.below(500);
  });

  it("answers 429 and closes the connection past an IP's rate, other IPs and 127.0.0.1 unaffected", async () => {
    const s = await start({ rateLimit: { perSecond: 1, burst: 3 } });
    const from = (localAddress: string) =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const req = request(
          { host: '127.0.0.1', port: s.port, path: '/', localAddress, agent: false },
          (res) => {
            res.resume();
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection });
          },
        );
        req.on('error', reject);
        req.end();
      });
    const flood = [];
    for (let i = 0; i < 5; i++) flood.push(await from('127.0.0.2'));
    expect(flood.map((r) => r.status)).to.deep.equal([200, 200, 200, 429, 429]);
    expect(flood[3]?.connection).to.equal('close');
    expect((await from('127.0.0.3')).status, 'another IP').to.equal(200);
    for (let i = 0; i < 5; i++) expect((await from('127.0.0.1')).status, 'loopback').to.equal(200);
  });

  it('keeps a well-behaved client on one keep-alive connection across requests', async () => {
    const s = await start({});
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const a = await get(s.port, agent);
      const b = await get(s.port, agent);
      expect([a.status, b.status]).to.deep.equal([200, 200]);
      expect(b.socketPort, 'the same socket').to.equal(a.socketPort);
    } finally {
      agent.destroy();
    }
  });
});

describe('RateLimiter', () => {
  it('lets an IP make `burst` requests at once, then `perSecond`, each IP on its own', () => {
    const limiter = new RateLimiter({ perSecond: 10, burst: 3 });
    const at = (ip: string, ms: number, n: number) =>
      Array.from({ length: n }, () => limiter.take(ip, ms));
    expect(at('10.0.0.1', 0, 4)).to.deep.equal([true, true, true, false]);
    expect(at('10.0.0.2', 0, 1)).to.deep.equal([true]);
    expect(at('10.0.0.1', 99, 1)).to.deep.equal([false]);
    expect(at('10.0.0.1', 100, 2)).to.deep.equal([true, false]);
    expect(at('10.0.0.1', 10_000, 4)).to.deep.equal([true, true, true, false]);
  });

  it('stays bounded however many addresses it sees', () => {
    const limiter = new RateLimiter({ perSecond: 1, burst: 1 });
    for (let i = 0; i < 25_000; i++) limiter.take(`fd00::${i.toString(16)}`, i);
    expect(limiter.tracked).to.be.at.most(10_000);
  });
});
