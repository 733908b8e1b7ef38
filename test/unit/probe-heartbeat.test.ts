// Heartbeats in probes over real sockets: a leading node's GET /ping carries its signed heartbeat,
// the follower's app takes only a good one (from its sender, signed, fresh) and answers the probe
// whatever it carries, and the prober learns who takes heartbeats from the answers.
import { expect } from 'chai';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER } from '../../src/auth/signature.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  PingResponse,
} from '../../src/wire/peer-messages.js';
import { freePorts } from '../../src/demo/mesh.js';
import { buildApp, type NodeApi } from '../../src/http/app.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import {
  formatHeartbeat,
  heartbeatHeaders,
  HEARTBEAT_HEADER,
  checkHeartbeat,
  type ProbeHeartbeat,
} from '../../src/auth/probe-heartbeat.js';
import { listen, type HttpServer } from '../../src/http/server.js';
import type { Refusal } from '../../src/metrics/peer-message-metrics.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const SECRET = 'h'.repeat(64);
const schemas = loadSchemas();
const authWith = (secret: string) =>
  new PeerAuth({ secrets: () => [secret], now: () => Date.now(), maxSkewMs: 30_000 });
const COORDINATOR = '127.0.0.1:8090';

function follower(
  id: string,
  takes: boolean,
): { api: NodeApi; beats: ProbeHeartbeat[]; taking: { now: boolean } } {
  const beats: ProbeHeartbeat[] = [];
  const taking = { now: true };
  const answer: PingResponse = {
    id,
    address: '127.0.0.1:1',
    node_name: id,
    role: 'follower',
    epoch: 3,
    coordinator: null,
  };
  const api: NodeApi = {
    ping: () => answer,
    election: (): ElectionAnswer | null => null,
    announcement: (_a: Announcement): AnnouncementReply | null => null,
    probe: () => Promise.resolve({ status: 403 as const, error: 'no' }),
    metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
    ...(takes ? { heartbeat: (b: ProbeHeartbeat) => (beats.push(b), taking.now) } : {}),
  };
  return { api, beats, taking };
}

describe('heartbeats in probes (real sockets)', () => {
  let server: HttpServer;
  let older: HttpServer;
  let beats: ProbeHeartbeat[];
  let taking: { now: boolean };
  let refused: Refusal[];
  let address: string;

  before(async () => {
    const f = follower('w1', true);
    beats = f.beats;
    taking = f.taking;
    // The signature is for the follower's own address.
    const [port] = await freePorts(1);
    address = `127.0.0.1:${port!}`;
    server = await listen(
      buildApp({
        api: f.api,
        schemas,
        logger: new CapturingLogger(),
        auth: authWith(SECRET),
        selfAddress: address,
        onRefused: (r) => refused.push(r),
      }),
      '127.0.0.1',
      port!,
    );
    const o = follower('w0', false);
    older = await listen(
      buildApp({ api: o.api, schemas, logger: new CapturingLogger(), auth: authWith(SECRET) }),
      '127.0.0.1',
      0,
    );
  });
  beforeEach(() => {
    beats.length = 0;
    refused = [];
    taking.now = true;
  });
  after(async () => {
    await server.close();
    await older.close();
  });

  const prober = (heartbeat: ProbeHeartbeat | null, onHeartbeatRefused?: (a: string) => void) =>
    peerClient({
      schemas,
      timeoutMs: 2_000,
      auth: authWith(SECRET),
      heartbeat: () => heartbeat,
      ...(onHeartbeatRefused ? { onHeartbeatRefused } : {}),
    });

  it('a leading node heartbeats with its probes, and learns which peers take them', async () => {
    const client = prober({ epoch: 7, from: COORDINATOR });
    const olderAddress = `127.0.0.1:${older.port}`;
    expect(client.takesHeartbeats(address)).to.equal(false);
    for (let i = 0; i < 3; i++) expect((await client.ping(address)).ok).to.equal(true);
    expect((await client.ping(olderAddress)).ok).to.equal(true);
    expect(beats).to.deep.equal(Array(3).fill({ epoch: 7, from: COORDINATOR }));
    expect(client.takesHeartbeats(address)).to.equal(true);
    expect(client.takesHeartbeats(olderAddress)).to.equal(false);
    // A node that is not leading probes (as a relay) without one.
    expect((await prober(null).ping(address)).ok).to.equal(true);
    expect(beats).to.have.length(3);
  });

  it('asks for an announcement once a peer stops taking the heartbeats (another coordinator, a window to tell)', async () => {
    const refusedBy: string[] = [];
    const client = prober({ epoch: 7, from: COORDINATOR }, (a) => refusedBy.push(a));
    expect((await client.ping(address)).ok).to.equal(true);
    expect(client.takesHeartbeats(address)).to.equal(true);
    taking.now = false;
    for (let i = 0; i < 3; i++) expect((await client.ping(address)).ok).to.equal(true);
    expect(client.takesHeartbeats(address)).to.equal(false);
    expect(refusedBy, 'once, on the change').to.deep.equal([address]);
    taking.now = true;
    await client.ping(address);
    expect(client.takesHeartbeats(address)).to.equal(true);
    client.keepOnly(new Set());
    expect(client.takesHeartbeats(address), 'forgotten once unlisted').to.equal(false);
  });

  it('answers every probe, and takes no heartbeat that is forged, replayed, unsigned or from elsewhere', async () => {
    const value = formatHeartbeat({ epoch: 7, from: COORDINATOR });
    const good = heartbeatHeaders({ epoch: 7, from: COORDINATOR }, address, authWith(SECRET));
    const cases: Record<string, Record<string, string>> = {
      'another secret': heartbeatHeaders(
        { epoch: 7, from: COORDINATOR },
        address,
        authWith('x'.repeat(64)),
      ),
      'signed for another node': heartbeatHeaders(
        { epoch: 7, from: COORDINATOR },
        '127.0.0.1:1',
        authWith(SECRET),
      ),
      'another epoch than signed': {
        ...good,
        [HEARTBEAT_HEADER]: formatHeartbeat({ epoch: 8, from: COORDINATOR }),
      },
      unsigned: { [HEARTBEAT_HEADER]: value },
      malformed: { [HEARTBEAT_HEADER]: 'v1 epoch=7' },
      'from another IP': heartbeatHeaders(
        { epoch: 7, from: '10.1.2.3:8080' },
        address,
        authWith(SECRET),
      ),
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await fetch(`http://${address}/ping`, { headers });
      expect(res.status, name).to.equal(200);
      expect(((await res.json()) as PingResponse).id, name).to.equal('w1');
    }
    expect(beats).to.deep.equal([]);
    expect(refused).to.deep.equal([
      'bad-signature',
      'bad-signature',
      'bad-signature',
      'missing',
      'wrong-address',
    ]);
  });

  it('takes a good heartbeat once: the same headers again are a replay', async () => {
    const good = heartbeatHeaders({ epoch: 7, from: COORDINATOR }, address, authWith(SECRET));
    await fetch(`http://${address}/ping`, { headers: good });
    await fetch(`http://${address}/ping`, { headers: good });
    expect(beats).to.have.length(1);
    expect(refused.at(-1)).to.equal('replayed');
  });

  it('takes only the exact form, with a real address', () => {
    // Unsigned (no secret), from any IP: the form alone decides.
    const check = (value: string) =>
      checkHeartbeat(value, undefined, {
        remote: '127.0.0.1',
        auth: null,
        selfAddress: undefined,
        senderCheck: () => true,
      });
    expect(check('v1 epoch=12,from=10.0.0.7:8080')).to.deep.equal({
      ok: true,
      heartbeat: { epoch: 12, from: '10.0.0.7:8080' },
    });
    const v6 = check('v1 epoch=1,from=[fd00::7]:8080');
    expect(v6.ok && v6.heartbeat.from).to.equal('[fd00::7]:8080');
    for (const bad of [
      '',
      'v1 epoch=-1,from=10.0.0.7:8080',
      'v1 epoch=1,from=host:80',
      'v2 epoch=1,from=10.0.0.7:1',
    ]) {
      expect(check(bad), bad).to.deep.equal({ ok: false, why: 'malformed-heartbeat' });
    }
    expect(AUTH_HEADER).to.not.equal(HEARTBEAT_HEADER);
  });
});
