// The peer client against peers whose clocks are minutes off, or that hold another secret: a
// message refused as expired is sent once more in the peer's time (read from its answer's Date)
// and taken; the next is stamped right at once; a refusal for another secret is neither retried
// nor an answer, and the node knows that its peers cannot authenticate it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { describeAuthFailure, PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, REFUSED_HEADER } from '../../src/auth/signature.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import type { ElectionAnswer } from '../../src/wire/peer-messages.js';
import { loadSchemas } from '../../src/wire/schemas.js';

const schemas = loadSchemas();
const SECRET = 'a'.repeat(64);
const SKEW_MS = 30_000;
const from = { id: 'worker-1@127.0.0.1', address: '127.0.0.1:1' };

/**
 * A peer checking signatures as knh's peer guard does, with its wall clock `aheadMs` off and its
 * own secret; `namesReason: false` answers a 401 as versions before x-knh-refused did.
 */
async function peer(aheadMs: number, secret: string | null = SECRET, namesReason = true) {
  const clock = () => Date.now() + aheadMs;
  const auth =
    secret === null
      ? null
      : new PeerAuth({ secrets: () => [secret], now: clock, maxSkewMs: SKEW_MS });
  const seen: string[] = [];
  let address = '';
  const server: HttpServer = await listen(
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        // Node's own Date header reads the real clock: this peer's is its skewed one.
        res.setHeader('date', new Date(clock()).toUTCString());
        const answer: ElectionAnswer = { type: 'answer', from, epoch: 1, coordinator: null };
        const bytes = Buffer.from(JSON.stringify(answer));
        if (!auth) {
          // No secret: it checks nothing, and signs nothing.
          seen.push('taken unchecked');
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(bytes);
          return;
        }
        const verdict = auth.verifyRequest(
          req.method ?? '',
          `${address}${req.url}`,
          req.headers[AUTH_HEADER] as string | undefined,
          body,
        );
        seen.push(verdict.ok ? 'taken' : verdict.failure);
        if (!verdict.ok) {
          if (namesReason) res.setHeader(REFUSED_HEADER, verdict.failure);
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: describeAuthFailure(verdict.failure) }));
          return;
        }
        res.writeHead(200, {
          'content-type': 'application/json',
          [AUTH_HEADER]: auth.signResponse(verdict.nonce, 200, bytes),
        });
        res.end(bytes);
      });
    },
    '127.0.0.1',
    0,
  );
  address = `127.0.0.1:${server.port}`;
  return { server, address, seen };
}

function ownClient() {
  const auth = new PeerAuth({ secrets: () => [SECRET], now: Date.now, maxSkewMs: SKEW_MS });
  return { auth, client: peerClient({ schemas, timeoutMs: 2_000, auth }) };
}

describe('peer client: peers with clocks far off, or another secret', () => {
  const servers: HttpServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  for (const [what, namesReason] of [
    ['naming the reason (x-knh-refused)', true],
    ['in the words of versions before that header', false],
  ] as const) {
    it(`takes part with a peer whose clock is 2 min ahead, its refusal ${what}`, async () => {
      const p = await peer(120_000, SECRET, namesReason);
      servers.push(p.server);
      const { auth, client } = ownClient();
      const first = await client.sendElection(p.address, { from, epoch: 1 });
      expect(first.ok, JSON.stringify(first)).to.equal(true);
      expect(p.seen, 'refused as expired once, then taken in its time').to.deep.equal([
        'expired',
        'taken',
      ]);
      const offset = auth.standing.offsetOf(p.address);
      expect(offset, 'its offset, from its Date').to.be.within(118_000, 122_000);
      const second = await client.sendElection(p.address, { from, epoch: 1 });
      expect(second.ok).to.equal(true);
      expect(p.seen, 'stamped right at once').to.deep.equal(['expired', 'taken', 'taken']);
      const view = auth.standing.view(Date.now());
      expect(view.offsets.map((o) => o.address)).to.deep.equal([p.address]);
      expect(view.offsets[0]?.offsetMs).to.be.within(118_000, 122_000);
      expect(view.refusedBy).to.deep.equal([]);
      expect(auth.standing.unauthenticated(Date.now())).to.equal(null);
    });
  }

  it('takes part with a peer whose clock is 10 min behind', async () => {
    const p = await peer(-600_000);
    servers.push(p.server);
    const { auth, client } = ownClient();
    expect((await client.sendElection(p.address, { from, epoch: 1 })).ok).to.equal(true);
    expect(auth.standing.offsetOf(p.address)).to.be.within(-602_000, -598_000);
  });

  it('does not retry a refusal for another secret, which is not an answer, and knows its peers refuse it', async () => {
    const p = await peer(0, 'b'.repeat(64));
    servers.push(p.server);
    const { auth, client } = ownClient();
    const outcome = await client.sendElection(p.address, { from, epoch: 1 });
    expect(outcome).to.deep.include({ ok: false, reason: 'http-status' });
    expect(!outcome.ok && outcome.authRefused).to.equal('bad-signature');
    expect(p.seen, 'sent once').to.deep.equal(['bad-signature']);
    const why = auth.standing.unauthenticated(Date.now());
    expect(why).to.match(/bad-signature ×1/);
    expect(why).to.include('another PEER_SECRET');
    // One peer that takes its messages: it can prove itself after all.
    const good = await peer(0);
    servers.push(good.server);
    expect((await client.sendElection(good.address, { from, epoch: 1 })).ok).to.equal(true);
    expect(auth.standing.unauthenticated(Date.now())).to.equal(null);
    expect(auth.standing.view(Date.now()).refusedBy.map((r) => r.reason)).to.deep.equal([
      'bad-signature',
    ]);
  });

  it('believes no unsigned answer from a peer with no secret, and knows it has none; not a refusal', async () => {
    const p = await peer(0, null);
    servers.push(p.server);
    const { auth, client } = ownClient();
    const outcome = await client.sendElection(p.address, { from, epoch: 1 });
    expect(outcome).to.deep.include({ ok: false, reason: 'bad-response' });
    expect(p.seen).to.deep.equal(['taken unchecked']);
    const view = auth.standing.view(Date.now());
    expect(view.unsignedBy.map((u) => u.address)).to.deep.equal([p.address]);
    expect(view.refusedBy).to.deep.equal([]);
    // It took this node's message: this node can still prove itself (and lead such peers).
    expect(auth.standing.unauthenticated(Date.now())).to.equal(null);
  });

  it('does not retry an expired refusal when the Date shows no offset (nothing to correct)', async () => {
    // A message stamped 2 min ago (held up on its way, say) to a peer whose clock agrees with
    // this node's: sent again, it would be refused the same.
    const p = await peer(0);
    servers.push(p.server);
    const auth = new PeerAuth({
      secrets: () => [SECRET],
      now: () => Date.now() - 120_000,
      maxSkewMs: SKEW_MS,
    });
    const client = peerClient({ schemas, timeoutMs: 2_000, auth, now: Date.now });
    const outcome = await client.sendElection(p.address, { from, epoch: 1 });
    expect(!outcome.ok && outcome.authRefused).to.equal('expired');
    expect(p.seen).to.deep.equal(['expired']);
  });
});
