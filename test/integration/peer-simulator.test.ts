// A real knh coordinator leading 300 simulated peers (test/support/peer-simulator.ts): it probes and
// heartbeats every one of them, reports a crashed and a black-holed one dead and no other; and the
// simulated peers refuse what a real node refuses. The tests run in order on one mesh. As in the
// scale bench, everything is on 127.0.0.1 (no connection bound to a source IP): the peers on ports
// below the ephemeral range, the coordinator on one above it, so it outranks them all.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';
import { LocalMesh } from '../../src/demo/mesh.js';
import { Receiver, type ReceivedWebhook } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { peerPost, signer } from '../support/peer-post.js';
import {
  coordinatorPort,
  PeerSimulator,
  SIMULATED_IP,
  simulatedAddress,
} from '../support/peer-simulator.js';
import { pollUntil, sleep } from '../support/poll.js';

const PEERS = 300;
const COORDINATOR_IP = SIMULATED_IP;

/** POSTs `body` from `localAddress` (not the default 127.0.0.1), with the given auth header. */
function postFrom(
  localAddress: string,
  address: string,
  path: string,
  body: string,
  authHeader: string,
): Promise<number> {
  const [host, port] = address.split(':');
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host,
        port: Number(port),
        path,
        method: 'POST',
        localAddress,
        agent: false,
        timeout: 5_000,
        headers: { 'content-type': 'application/json', [AUTH_HEADER]: authHeader },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.once('timeout', () => req.destroy(new Error(`no answer from ${address} within 5 s`)));
    req.once('error', reject);
    req.end(body);
  });
}

const deadAddresses = (received: readonly ReceivedWebhook[]) =>
  received.flatMap((w) => {
    const b = w.body as Partial<PeerStatusPayload>;
    return w.path === '/peer' && b.event === 'peer_dead' && b.peer ? [b.peer.address] : [];
  });

describe('a real coordinator and 300 simulated peers', function () {
  this.timeout(60_000);
  const secret = randomBytes(32).toString('hex');
  let receiver: Receiver;
  let sim: PeerSimulator;
  let mesh: LocalMesh;
  let coordinator: string;
  let crashed: string;
  let holed: string;

  before(async () => {
    receiver = await new Receiver({ schemas: loadSchemas() }).start();
    const port = await coordinatorPort();
    coordinator = `${COORDINATOR_IP}:${port}`;
    sim = await PeerSimulator.start({ count: PEERS, secret, others: [coordinator] });
    crashed = simulatedAddress(100, sim.firstPort);
    holed = simulatedAddress(200, sim.firstPort);
    mesh = new LocalMesh({
      size: 1,
      hosts: [COORDINATOR_IP],
      ports: [port],
      peerSecret: secret,
      env: {
        PEERS: [coordinator, ...sim.addresses].join(','),
        PEER_STATUS_URL: receiver.url('/peer'),
        CLUSTER_STATUS_URL: receiver.url('/cluster'),
      },
    });
    await mesh.start();
  });

  after(async () => {
    const bounded = (p: Promise<unknown> | undefined) =>
      Promise.race([p?.catch(() => undefined), sleep(10_000)]);
    await bounded(mesh?.stop());
    await bounded(sim?.stop());
    await bounded(receiver?.close());
  });

  it('probes every peer, and every peer hears its heartbeats and follows it', async () => {
    const stats = await pollUntil(
      'every simulated peer pinged and heartbeated within 1.5 s',
      () => {
        const s = sim.stats(1_500);
        return s.neverPinged === 0 && s.heardWithin === PEERS ? s : undefined;
      },
      { timeoutMs: 30_000, describe: () => JSON.stringify(sim.stats(1_500)) },
    );
    expect(stats.coordinators).to.deep.equal({ [coordinator]: PEERS });
    expect(stats.refused, 'nothing the coordinator sent was refused').to.deep.equal({});
    await receiver.waitFor((w) => {
      const b = w.body as { peer_map?: { alive: boolean }[] };
      return (
        w.path === '/cluster' && b.peer_map?.length === PEERS && b.peer_map.every((p) => p.alive)
      );
    }, 20_000);
  });

  it('reports a crashed peer dead', async () => {
    await sim.die(crashed);
    await receiver.waitFor((w) => deadAddresses([w]).includes(crashed), 15_000);
  });

  it('reports a black-holed peer dead', async () => {
    sim.blackhole(holed);
    await receiver.waitFor((w) => deadAddresses([w]).includes(holed), 15_000);
  });

  it('reports no other peer dead, and the others keep hearing their heartbeats', async () => {
    await sleep(2_000);
    expect(deadAddresses(receiver.received).sort()).to.deep.equal([crashed, holed].sort());
    // Polled: on a busy machine one heartbeat may come late, and the next one counts.
    await pollUntil(
      'every live peer heartbeated within 1.5 s',
      () => (sim.stats(1_500).heardWithin === PEERS - 2 ? true : undefined),
      { timeoutMs: 10_000, describe: () => JSON.stringify(sim.stats(1_500)) },
    );
  });

  it('refuses an unsigned announcement (401), and a signed one not sent from its IP (403)', async () => {
    const target = simulatedAddress(7, sim.firstPort);
    const body = JSON.stringify({
      from: { id: `node-1@${COORDINATOR_IP}`, address: coordinator },
      epoch: 9_000_000,
      peers: [],
    });
    const unsigned = await peerPost(target, '/coordinator', body);
    expect(unsigned.status).to.equal(401);
    // Signed with the mesh's secret, but sent from 127.0.0.2, not from the coordinator's IP.
    const { header } = signer(secret).signRequest(
      'POST',
      signedPath(target, '/coordinator'),
      Buffer.from(body),
    );
    expect(await postFrom('127.0.0.2', target, '/coordinator', body, header)).to.equal(403);
    const followed = sim.stats(1_500);
    expect(followed.epochs.max, 'no epoch taken from a refused message').to.be.below(9_000_000);
    expect(followed.refused).to.include({ '401 missing': 1, '403 wrong-address': 1 });
  });
});
