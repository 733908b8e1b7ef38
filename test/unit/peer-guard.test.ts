// Peer messages over real sockets with a peer secret: the app refuses what is not signed before it
// reads the body, signs its answers, and the peer client signs its requests and checks the answers.
import { expect } from 'chai';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';
import { freePorts } from '../../src/demo/mesh.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
  PingResponse,
} from '../../src/wire/peer-messages.js';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import type { Refusal } from '../../src/metrics/peer-message-metrics.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const SECRET = 'k'.repeat(64);
const self = { id: 'worker-3@127.0.0.1', address: '127.0.0.1:8080' };
const peer = { id: 'worker-1@127.0.0.1', address: '127.0.0.1:8079' };
const schemas = loadSchemas();
const authWith = (secret: string) =>
  new PeerAuth({ secrets: () => [secret], now: () => Date.now(), maxSkewMs: 30_000 });

/** Writes `text` on a new connection; everything the server sends until it closes (3 s at most). */
function exchange(port: number, text: string): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  return new Promise<string>((resolve, reject) => {
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.write(text);
    setTimeout(() => socket.destroy(new Error('no answer within 3 s')), 3_000);
  });
}

class RecordingApi implements NodeApi {
  elections: ElectionRequest[] = [];
  announcements: Announcement[] = [];
  ping(): PingResponse {
    return {
      id: self.id,
      address: self.address,
      node_name: 'w3',
      role: 'coordinator',
      epoch: 4,
      coordinator: self,
    };
  }
  election(request: ElectionRequest): ElectionAnswer {
    this.elections.push(request);
    return { type: 'answer', from: self, epoch: 4, coordinator: self };
  }
  announcement(announcement: Announcement): AnnouncementReply {
    this.announcements.push(announcement);
    return { accepted: false, reason: 'outranked', epoch: 4, coordinator: self };
  }
  probe() {
    return Promise.resolve({ status: 403 as const, error: 'no' });
  }
  metrics() {
    return Promise.resolve({ contentType: 'text/plain', body: '' });
  }
}

describe('peer messages with a peer secret (real sockets)', () => {
  let server: HttpServer;
  let api: RecordingApi;
  let refused: Refusal[];
  const auth = authWith(SECRET);
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  const post = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(url(path), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
  const signed = (path: string, body: string) => ({
    [AUTH_HEADER]: authWith(SECRET).signRequest('POST', path, Buffer.from(body)).header,
  });

  before(async () => {
    api = new RecordingApi();
    const app = buildApp({
      api,
      schemas,
      logger: new CapturingLogger(),
      auth,
      isPeer: (address) => address === peer.address,
      onRefused: (reason) => refused.push(reason),
    });
    server = await listen(app, '127.0.0.1', 0);
  });
  beforeEach(() => {
    api.elections = [];
    api.announcements = [];
    refused = [];
  });
  after(() => server.close());

  it('refuses unsigned messages with 401 whatever their body, and calls nothing', async () => {
    for (const body of ['not json{', JSON.stringify({ from: peer, epoch: 1 }), '']) {
      for (const path of ['/election', '/coordinator', '/leave', '/probe']) {
        const res = await post(path, body);
        expect(res.status, `${path} ${body}`).to.equal(401);
        expect(((await res.json()) as { error: string }).error).to.include('PEER_SECRET');
      }
    }
    expect(api.elections).to.deep.equal([]);
    expect(api.announcements).to.deep.equal([]);
    expect(refused).to.have.length(12);
    expect(refused.every((r) => r === 'missing')).to.equal(true);
  });

  it('answers a signed message, signing the answer for that request', async () => {
    const body = JSON.stringify({ from: peer, epoch: 2 });
    const { header, nonce } = auth.signRequest('POST', '/election', Buffer.from(body));
    const res = await post('/election', body, { [AUTH_HEADER]: header });
    expect(res.status).to.equal(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(
      auth.verifyResponse(nonce, 200, res.headers.get(AUTH_HEADER) ?? undefined, bytes),
    ).to.equal(true);
    expect(api.elections).to.deep.equal([{ from: peer, epoch: 2 }]);
  });

  it('checks a signed body against its schema (400), then the sender (403 for a stranger)', async () => {
    const garbage = '{"from":7}';
    expect((await post('/election', garbage, signed('/election', garbage))).status).to.equal(400);
    const stranger = JSON.stringify({
      from: { id: 'x@127.0.0.1', address: '127.0.0.1:1' },
      epoch: 9,
      peers: [],
    });
    const res = await post('/coordinator', stranger, signed('/coordinator', stranger));
    expect(res.status).to.equal(403);
    expect(api.announcements).to.deep.equal([]);
    expect(refused).to.deep.equal(['stranger']);
  });

  it('refuses compressed bodies (415): no decompression for anyone', async () => {
    const body = gzipSync(JSON.stringify({ from: peer, epoch: 2 }));
    const sig = auth.signRequest('POST', '/election', body).header;
    const res = await post('/election', body, { 'content-encoding': 'gzip', [AUTH_HEADER]: sig });
    expect(res.status).to.equal(415);
    const status = await fetch(url('/maintenance'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body,
    });
    expect(status.status).to.equal(415);
  });

  it('refuses a relayed probe naming another sender than the connection (403), like the others', async () => {
    const body = JSON.stringify({
      from: { id: 'w2@10.0.0.2', address: '10.0.0.2:8080' },
      target: peer.address,
      timeout_ms: 100,
    });
    const res = await post('/probe', body, signed('/probe', body));
    expect(res.status).to.equal(403);
    expect(refused).to.deep.equal(['wrong-address']);
  });

  it('takes 64 KiB at most except on /coordinator (4 MiB), and refuses an announced larger body before reading it', async () => {
    const big = JSON.stringify({ from: peer, epoch: 2, pad: 'x'.repeat(70 * 1024) });
    expect((await post('/election', big, signed('/election', big))).status).to.equal(413);
    const views = Array.from({ length: 800 }, (_, i) => ({
      id: `node-${i}@10.1.${i >> 8}.${i & 255}`,
      address: `10.1.${i >> 8}.${i & 255}:8080`,
      node_name: `node-${i}`,
      health: 'alive',
      since: 1_795_000_000_000,
      alerted: false,
    }));
    const announcement = JSON.stringify({ from: peer, epoch: 2, peers: views });
    expect(announcement.length).to.be.above(64 * 1024);
    const res = await post('/coordinator', announcement, signed('/coordinator', announcement));
    expect(res.status, (await res.text()).slice(0, 500)).to.equal(200);
    // A body failing everywhere gets a short answer: the first 10 errors and a count.
    const broken = announcement.replaceAll('"alerted":false', '"alerted":"no"');
    const refusal = await post('/coordinator', broken, signed('/coordinator', broken));
    expect(refusal.status).to.equal(400);
    const { details } = (await refusal.json()) as { details: string[] };
    expect(details).to.have.length(11);
    expect(details[10]).to.equal('… and 790 more');

    // Headers announcing 100 MiB, then nothing: answered at once, connection closed.
    const started = Date.now();
    const answer = await exchange(
      server.port,
      'POST /election HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 104857600\r\n\r\n',
    );
    expect(answer).to.match(/^HTTP\/1\.1 413/);
    expect(answer.toLowerCase()).to.include('connection: close');
    expect(Date.now() - started).to.be.below(2_000);
  });

  it('reads no body on GET: a garbage body on /ping changes nothing', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/ping',
          method: 'GET',
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end('not json{');
    });
    expect(status).to.equal(200);
  });

  it('refuses an unsigned announcement from its headers alone, before its 4 MiB body is sent', async () => {
    const answer = await exchange(
      server.port,
      'POST /coordinator HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 4000000\r\n\r\n{',
    );
    expect(answer).to.match(/^HTTP\/1\.1 401/);
    expect(answer.toLowerCase()).to.include('connection: close');
  });

  it('reads at most its body budget at once: a body beyond it waits for none, 503', async () => {
    const tight = await listen(
      buildApp({
        api: new RecordingApi(),
        schemas,
        logger: new CapturingLogger(),
        auth,
        bodyBudgetBytes: 100_000,
      }),
      '127.0.0.1',
      0,
    );
    const held = connect(tight.port, '127.0.0.1');
    try {
      const body = JSON.stringify({ from: peer, epoch: 1, peers: [] }).padEnd(80_000, ' ');
      const header = auth.signRequest('POST', '/coordinator', Buffer.from(body)).header;
      // The first holds 80,000 bytes of the budget: its body comes slowly (a part, then nothing).
      held.write(
        `POST /coordinator HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${AUTH_HEADER}: ${header}\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 100)}`,
      );
      await new Promise((r) => setTimeout(r, 200));
      const second = JSON.stringify({ from: peer, epoch: 2, peers: [] }).padEnd(50_000, ' ');
      const res = await fetch(`http://127.0.0.1:${tight.port}/coordinator`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [AUTH_HEADER]: auth.signRequest('POST', '/coordinator', Buffer.from(second)).header,
        },
        body: second,
      });
      expect(res.status).to.equal(503);
      held.destroy();
      await new Promise((r) => setTimeout(r, 200));
      const third = JSON.stringify({ from: peer, epoch: 3, peers: [] });
      const ok = await fetch(`http://127.0.0.1:${tight.port}/coordinator`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [AUTH_HEADER]: auth.signRequest('POST', '/coordinator', Buffer.from(third)).header,
        },
        body: third,
      });
      expect(ok.status, 'the budget is freed when the held request goes').to.equal(200);
    } finally {
      held.destroy();
      await tight.close();
    }
  });

  it('leaves /ping open for probes', async () => {
    expect((await fetch(url('/ping'))).status).to.equal(200);
  });

  /** Runs `use` against a node that knows its own address, as main.ts builds it. */
  async function withNodeAt(use: (address: string) => Promise<void>): Promise<void> {
    const [port] = await freePorts(1);
    const address = `127.0.0.1:${port}`;
    const node = await listen(
      buildApp({
        api: new RecordingApi(),
        schemas,
        logger: new CapturingLogger(),
        auth,
        selfAddress: address,
      }),
      '127.0.0.1',
      port ?? 0,
    );
    try {
      await use(address);
    } finally {
      await node.close();
    }
  }
  const request: ElectionRequest = { from: peer, epoch: 3 };

  it('the peer client signs for the node it calls, which takes the message', async () => {
    await withNodeAt(async (address) => {
      const good = peerClient({ schemas, timeoutMs: 2_000, auth: authWith(SECRET) });
      const outcome = await good.sendElection(address, request);
      expect(outcome.ok, JSON.stringify(outcome)).to.equal(true);
    });
  });

  it('a node refuses a message signed with another secret', async () => {
    await withNodeAt(async (address) => {
      const other = peerClient({ schemas, timeoutMs: 2_000, auth: authWith('z'.repeat(64)) });
      expect(await other.sendElection(address, request)).to.deep.include({
        ok: false,
        reason: 'http-status',
      });
    });
  });

  it('a node refuses a message signed for another node', async () => {
    await withNodeAt(async (address) => {
      // Signed for another node (the one the message was captured on its way to): refused.
      const body = JSON.stringify(request);
      const header = auth.signRequest(
        'POST',
        signedPath('127.0.0.9:8080', '/election'),
        Buffer.from(body),
      ).header;
      const misdirected = await fetch(`http://${address}/election`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [AUTH_HEADER]: header },
        body,
      });
      expect(misdirected.status).to.equal(401);
    });
  });

  it('the peer client refuses an answer not signed with its secret', async () => {
    // A node without the secret answers unsigned: a client with a secret must not believe it.
    const open = await listen(
      buildApp({ api: new RecordingApi(), schemas, logger: new CapturingLogger() }),
      '127.0.0.1',
      0,
    );
    try {
      const client = peerClient({ schemas, timeoutMs: 2_000, auth: authWith(SECRET) });
      const outcome = await client.announce(`127.0.0.1:${open.port}`, {
        from: peer,
        epoch: 5,
        peers: [],
      });
      expect(outcome).to.deep.include({ ok: false, reason: 'bad-response' });
      if (!outcome.ok) expect(outcome.detail).to.include('not signed');
    } finally {
      await open.close();
    }
  });
});
