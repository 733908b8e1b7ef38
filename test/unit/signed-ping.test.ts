// Signed liveness: with PEER_SECRET, a probe's challenge is answered signed by the real app, and the
// peer client tells apart an answer that proves the node from one that proves nothing (unsigned,
// another secret, another node's), while an older version that never signed is taken as before.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import {
  challenges,
  CHALLENGE_HEADER,
  provePing,
  readChallenge,
} from '../../src/auth/ping-signature.js';
import { AUTH_HEADER } from '../../src/auth/signature.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { PROTOCOL, SIGNED_PING_PROTOCOL } from '../../src/wire/protocol.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { pingResponse } from '../support/pings.js';
import { oneReasonEach } from '../../src/node/auth-findings.js';

const schemas = loadSchemas();
const authWith = (secret: string) =>
  new PeerAuth({ secrets: () => [secret], now: Date.now, maxSkewMs: 30_000 });

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A node's real app (buildApp) answering GET /ping as `address`, with `auth` or none. */
function appAnswering(address: () => string, auth: PeerAuth | null) {
  const api = { ping: () => pingResponse(address(), 'worker-2') } as unknown as NodeApi;
  return buildApp({ api, schemas, logger: new CapturingLogger(), auth });
}

describe('signed /ping', () => {
  const servers: HttpServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  async function serve(make: (address: () => string) => Handler): Promise<string> {
    let address = '';
    const server = await listen(
      make(() => address),
      '127.0.0.1',
      0,
    );
    servers.push(server);
    address = `127.0.0.1:${server.port}`;
    return address;
  }

  function prober(secret = 's3cret') {
    const auth = authWith(secret);
    const client = peerClient({ schemas, timeoutMs: 2_000, auth });
    const unproven = () =>
      auth.standing.view(Date.now()).unprovenBy.map((u) => `${u.address} ${u.reason}`);
    return { client, unproven };
  }

  it('a node with the same secret answers the challenge signed: the answer proves it', async () => {
    let challenge: string | undefined;
    let signature: string | undefined;
    const app = appAnswering(() => target, authWith('s3cret'));
    const target = await serve(() => (req, res) => {
      challenge = req.headers[CHALLENGE_HEADER] as string | undefined;
      res.on('finish', () => {
        signature = res.getHeader(AUTH_HEADER) as string | undefined;
      });
      app(req, res);
    });
    const { client, unproven } = prober();
    for (let i = 0; i < 3; i++) {
      const outcome = await client.ping(target);
      expect(outcome.ok, 'answered').to.equal(true);
      expect(readChallenge(challenge), 'a 32-hex challenge').to.equal(challenge);
      expect(signature).to.match(/^v1 sig=[0-9a-f]{64}$/);
    }
    expect(unproven()).to.deep.equal([]);
  });

  it('another secret, no secret, or another node naming itself: answered, and told as unproven', async () => {
    const other = appAnswering(() => otherSecret, authWith('another'));
    const otherSecret = await serve(() => other);
    const none = appAnswering(() => noSecret, null);
    const noSecret = await serve(() => none);
    // Signed with the secret, but the body names a node elsewhere: an answer relayed from it.
    const relayedApp = appAnswering(() => '10.0.0.7:8080', authWith('s3cret'));
    const relayed = await serve(() => relayedApp);
    const { client, unproven } = prober();
    for (const target of [otherSecret, noSecret, relayed]) {
      const outcome = await client.ping(target);
      // Never dead for it: a node out of sight answers (issue 33); its incident names it.
      expect(outcome.ok, target).to.equal(true);
    }
    expect(unproven().sort()).to.deep.equal(
      [
        `${otherSecret} ping-bad-signature`,
        `${noSecret} ping-unsigned`,
        `${relayed} ping-other-node`,
      ].sort(),
    );
  });

  it('an older version that never signed is taken as before; once a node has signed, it must go on', async () => {
    const auth = authWith('s3cret');
    let signs = false;
    // An older node's answer: no protocol header, no signature, unless told to sign.
    const target = await serve((address) => (req, res) => {
      const body = Buffer.from(JSON.stringify(pingResponse(address(), 'worker-4')));
      const challenge = readChallenge(req.headers[CHALLENGE_HEADER] as string | undefined);
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(signs && challenge ? { [AUTH_HEADER]: auth.signResponse(challenge, 200, body) } : {}),
      });
      res.end(body);
    });
    const { client, unproven } = prober();
    expect((await client.ping(target)).ok).to.equal(true);
    expect(unproven(), 'a rollout: the old version is not asked to sign').to.deep.equal([]);
    signs = true;
    expect((await client.ping(target)).ok).to.equal(true);
    expect(unproven()).to.deep.equal([]);
    signs = false; // something else answers for its address now, naming an old protocol
    expect((await client.ping(target)).ok).to.equal(true);
    expect(unproven()).to.deep.equal([`${target} ping-unsigned`]);
    // Listed anew (a new pod may take the address): it starts unknown again.
    client.keepOnly(new Set());
    expect((await client.ping(target)).ok).to.equal(true);
    expect(unproven()).to.deep.equal([]);
  });

  it('the app answers unsigned a probe with no challenge (an older prober), or without a secret', async () => {
    const app = appAnswering(() => target, authWith('s3cret'));
    const target = await serve(() => app);
    const plain = await fetch(`http://${target}/ping`);
    expect(plain.status).to.equal(200);
    expect(plain.headers.get(AUTH_HEADER)).to.equal(null);
    const bad = await fetch(`http://${target}/ping`, {
      headers: { [CHALLENGE_HEADER]: 'not-hex' },
    });
    expect(bad.status, 'a malformed challenge is no reason to fail a probe').to.equal(200);
    expect(bad.headers.get(AUTH_HEADER)).to.equal(null);
  });
});

describe('provePing', () => {
  const auth = authWith('s3cret');
  const body = Buffer.from('{"a":1}');
  const challenge = 'ab'.repeat(16);
  const signed = auth.signResponse(challenge, 200, body);
  const base = {
    auth,
    challenge,
    target: '10.0.0.2:8080',
    named: '10.0.0.2:8080',
    body,
    protocol: SIGNED_PING_PROTOCOL,
    signedBefore: false,
  };
  const cases: [string, Partial<Parameters<typeof provePing>[0]>, string][] = [
    ['signed for this challenge', { authHeader: signed }, 'verified'],
    [
      'signed for another challenge',
      { authHeader: signed, challenge: 'cd'.repeat(16) },
      'bad-signature',
    ],
    [
      'signed over other bytes',
      { authHeader: signed, body: Buffer.from('{"a":2}') },
      'bad-signature',
    ],
    ['unsigned, of a signing protocol', { authHeader: undefined }, 'unsigned'],
    ['unsigned, of an older protocol', { authHeader: undefined, protocol: 4 }, 'not-expected'],
    [
      'unsigned, older protocol, signed before',
      { authHeader: undefined, protocol: 1, signedBefore: true },
      'unsigned',
    ],
    ['naming another node', { authHeader: signed, named: '10.0.0.9:8080' }, 'other-node'],
    [
      'naming itself in another spelling',
      { authHeader: signed, target: '[::ffff:a00:2]:8080', named: '[::ffff:10.0.0.2]:8080' },
      'verified',
    ],
  ];
  for (const [what, over, proof] of cases) {
    it(`${what}: ${proof}`, () => {
      expect(provePing({ ...base, authHeader: undefined, ...over })).to.equal(proof);
    });
  }

  it('challenges are 32 hex, and none repeats', () => {
    const next = challenges();
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const c = next();
      expect(readChallenge(c)).to.equal(c);
      seen.add(c);
    }
    expect(seen.size).to.equal(2_000);
  });

  it('this version names a protocol that signs (its peers then expect it to)', () => {
    expect(PROTOCOL).to.be.at.least(SIGNED_PING_PROTOCOL);
  });
});

describe('oneReasonEach (a node out of sight both ways)', () => {
  const A = '10.0.0.7:8080';
  const B = '10.0.0.8:8080';
  it("names what the node says of the coordinator's messages, since the earlier sign of either", () => {
    expect(
      oneReasonEach(
        [{ address: A, reason: 'bad-signature', sinceMs: 2_000 }],
        [
          { address: A, reason: 'ping-bad-signature', sinceMs: 1_000 },
          { address: B, reason: 'ping-unsigned', sinceMs: 1_500 },
        ],
      ),
    ).to.deep.equal([
      { address: A, reason: 'bad-signature', sinceMs: 1_000 },
      { address: B, reason: 'ping-unsigned', sinceMs: 1_500 },
    ]);
    expect(
      oneReasonEach(
        [{ address: A, reason: 'unsigned', sinceMs: 500 }],
        [{ address: A, reason: 'ping-unsigned', sinceMs: 1_000 }],
      ),
    ).to.deep.equal([{ address: A, reason: 'unsigned', sinceMs: 500 }]);
  });
});
