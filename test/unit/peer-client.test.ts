// The peer client against real local servers: every failure becomes a value with its phase.
import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import type { Announcement, ElectionAnswer } from '../../src/wire/peer-messages.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { pingResponse } from '../support/pings.js';
import { PROTOCOL } from '../../src/wire/protocol.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const TIMEOUT_MS = 300;
// Real sockets: bounds are generous, only the order of magnitude is checked.
const SLACK_MS = 2_000;

const schemas = loadSchemas();
const client = peerClient({ schemas, timeoutMs: TIMEOUT_MS });

const pong = pingResponse('127.0.0.1:8080', 'worker-2', {
  epoch: 3,
  coordinator: { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' },
});

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = await listen(() => undefined, '127.0.0.1', 0);
  await server.close();
  return server.port;
}

describe('peer client', () => {
  let server: HttpServer;
  let handler: Handler;
  let address: string;

  before(async () => {
    server = await listen(
      (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
      },
      '127.0.0.1',
      0,
    );
    address = `127.0.0.1:${server.port}`;
  });

  after(async () => {
    await server.close();
  });

  it('returns a valid ping answer as a success', async () => {
    let path = '';
    handler = (req, res) => {
      path = `${req.method} ${req.url}`;
      json(res, 200, pong);
    };
    const outcome = await client.ping(address);
    expect(path).to.equal('GET /ping');
    expect(outcome.ok).to.be.true;
    if (!outcome.ok) return;
    expect(outcome.value).to.deep.equal(pong);
    expect(outcome.latencyMs).to.be.within(0, TIMEOUT_MS + SLACK_MS);
  });

  it("names its peer protocol in every request, and remembers each peer's from its answers", async () => {
    const protocols: (string | undefined)[] = [];
    let answerWith: string | null = '2';
    const ours = String(PROTOCOL);
    handler = (req, res) => {
      protocols.push(req.headers['x-knh-protocol'] as string | undefined);
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(answerWith ? { 'x-knh-protocol': answerWith } : {}),
      });
      res.end(JSON.stringify(pong));
    };
    const own = peerClient({ schemas, timeoutMs: TIMEOUT_MS });
    expect(own.protocolOf(address), 'before any answer: the safe guess').to.equal(1);
    await own.ping(address);
    expect(own.protocolOf(address)).to.equal(2);
    answerWith = null; // the peer was replaced by a node of f6578aa
    await own.ping(address);
    expect(own.protocolOf(address)).to.equal(1);
    expect(protocols).to.deep.equal([ours, ours]);
    own.closeIdle();
  });

  it('POSTs election requests and announcements as JSON and validates the answers', async () => {
    const seen: { path: string; type: string | undefined; body: unknown }[] = [];
    const peer = { id: pong.id, address: pong.address };
    const answer: ElectionAnswer = { type: 'answer', from: peer, epoch: 3, coordinator: null };
    handler = (req, res, body) => {
      seen.push({ path: req.url ?? '', type: req.headers['content-type'], body: JSON.parse(body) });
      if (req.url === '/election') json(res, 200, answer);
      else json(res, 200, { accepted: true, epoch: 3, coordinator: pong.coordinator });
    };
    const from = { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' };
    const election = await client.sendElection(address, { from, epoch: 2 });
    const announcement: Announcement = { from, epoch: 3, peers: [] };
    const announced = await client.announce(address, announcement);
    expect(election).to.deep.include({ ok: true, value: answer });
    expect(announced).to.deep.include({ ok: true });
    expect(seen).to.deep.equal([
      { path: '/election', type: 'application/json', body: { from, epoch: 2 } },
      { path: '/coordinator', type: 'application/json', body: announcement },
    ]);
  });

  it("reports a closed port as 'refused' in the connect phase", async () => {
    const outcome = await client.ping(`127.0.0.1:${await closedPort()}`);
    expect(outcome).to.deep.include({ ok: false, reason: 'refused', phase: 'connect' });
  });

  it("reports a peer that accepts but never answers as 'timeout' in the send phase", async () => {
    handler = () => undefined; // never answers
    const started = performance.now();
    const outcome = await client.ping(address);
    const elapsed = performance.now() - started;
    expect(outcome).to.deep.include({ ok: false, reason: 'timeout', phase: 'send' });
    expect(elapsed).to.be.within(TIMEOUT_MS * 0.8, TIMEOUT_MS + SLACK_MS);
  });

  it('takes an answer that came while this process was too busy to read it, rather than timing out, and keeps its connection usable', async function () {
    this.timeout(20_000);
    // The peer is another process, answering after 100 ms; this one blocks its event loop from
    // 50 ms to past the request's timeout: the answer waits in the socket when the timer fires.
    const peer = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:http').createServer((q, r) => setTimeout(() => { r.writeHead(200, { 'content-type': 'application/json' }); r.end(process.argv[1]); }, 100));
         s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
        JSON.stringify(pong),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const port = await new Promise<string>((resolve, reject) => {
        peer.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()));
        peer.once('exit', () => reject(new Error('the peer process exited')));
      });
      const target = `127.0.0.1:${port}`;
      expect((await client.ping(target)).ok, 'a first ping, opening the connection').to.be.true;
      const pending = client.ping(target);
      await new Promise((resolve) => setTimeout(resolve, 50)); // the request is on the wire
      // Busy in the check phase (setImmediate): the loop's next turn starts with its timers, the
      // request's timer among them, before the poll phase reads the answer that came meanwhile.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          const until = performance.now() + 2 * TIMEOUT_MS;
          while (performance.now() < until);
          resolve();
        }),
      );
      const outcome = await pending;
      expect(outcome.ok, JSON.stringify(outcome)).to.be.true;
      // Sent at once, on the connection that answer freed: the timed-out check of the first
      // request, still due, must leave it alone.
      const next = await client.ping(target);
      expect(next.ok, `the next ping: ${JSON.stringify(next)}`).to.be.true;
    } finally {
      peer.kill('SIGKILL');
    }
  });

  it("reports a 500 as 'http-status' in the send phase", async () => {
    handler = (_req, res) => json(res, 500, { error: 'internal error' });
    const outcome = await client.ping(address);
    expect(outcome).to.deep.include({ ok: false, reason: 'http-status', phase: 'send' });
    if (!outcome.ok) expect(outcome.detail).to.include('500');
  });

  it("reports an answer that is not JSON, or fails its schema, as 'bad-response'", async () => {
    const withoutRole = { ...pong, role: undefined }; // JSON leaves it out
    const answers: [string, unknown][] = [
      ['not JSON', '<html>hello</html>'],
      ['truncated JSON', '{"id": "worker-2@'],
      ['missing role', withoutRole],
      ['wrong type', { ...pong, epoch: 'three' }],
    ];
    for (const [what, body] of answers) {
      handler = (_req, res) => json(res, 200, body);
      const outcome = await client.ping(address);
      expect(outcome, what).to.deep.include({ ok: false, reason: 'bad-response', phase: 'send' });
    }
  });

  it("reports a connection dropped before the answer as 'reset' in the send phase", async () => {
    handler = (req) => req.socket.destroy();
    const outcome = await client.ping(address);
    expect(outcome).to.deep.include({ ok: false, reason: 'reset', phase: 'send' });
  });

  it("stops at once when aborted, as 'aborted'", async () => {
    handler = () => undefined;
    const controller = new AbortController();
    const pinging = client.ping(address, controller.signal);
    // Well before the timeout; were it ignored, the outcome would be 'timeout'.
    setTimeout(() => controller.abort(new Error('stopped leading')), 20);
    expect(await pinging).to.deep.include({ ok: false, reason: 'aborted' });
  });

  it('reports an address that is not ip:port as unreachable, never throwing', async () => {
    const outcome = await client.ping('node-a:8080');
    expect(outcome).to.deep.include({ ok: false, reason: 'unreachable', phase: 'connect' });
  });

  it('rejects, rather than throws, a request it cannot send (a header that would break the framing)', async () => {
    // A heartbeat naming a coordinator with a line break in it: no such request goes out.
    const bad = peerClient({
      schemas,
      timeoutMs: TIMEOUT_MS,
      heartbeat: () => ({ epoch: 1, from: '127.0.0.1:1\r\nx-evil: 1' }),
    });
    let requests = 0;
    handler = (_req, res) => {
      requests++;
      json(res, 200, pong);
    };
    let pending: Promise<unknown> | null = null;
    expect(() => (pending = bad.ping(address))).not.to.throw();
    const err = await pending!.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(TypeError);
    expect(String(err)).to.match(/invalid request header/);
    expect(requests).to.equal(0);
  });
});
