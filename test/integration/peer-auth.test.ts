// Peer authentication on real nodes: without the mesh's secret nobody can announce a coordinator,
// replay a captured message, or lead from the highest rank; without a secret, strangers are refused.
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import type { MeshNode } from '../../src/demo/mesh.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { ping, useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { peerPost, signedPost, signer } from '../support/peer-post.js';
import { pollUntil, sleep } from '../support/poll.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';

const ref = (node: MeshNode) => ({ id: `${node.name}@${node.host}`, address: node.address });

/** A body claiming `node` is coordinator of a far newer epoch: KNH's one-request takeover. */
const takeover = (node: MeshNode) =>
  JSON.stringify({ from: ref(node), epoch: 9_000_000, peers: [] });

async function metric(node: MeshNode, line: RegExp): Promise<number> {
  const res = await fetch(`http://${node.address}/metrics`, { signal: AbortSignal.timeout(5_000) });
  const m = line.exec(await res.text());
  return m ? Number(m[1]) : NaN;
}

/** Every running node still follows `coordinator` in `epoch`. */
async function expectUnchanged(fx: MeshFixture, coordinator: MeshNode, epoch: number) {
  for (const node of fx.nodes) {
    const answer = await ping(node);
    expect(answer?.coordinator?.address, `${node.name}'s coordinator`).to.equal(
      coordinator.address,
    );
    expect(answer?.epoch, `${node.name}'s epoch`).to.equal(epoch);
  }
}

describe('peer authentication (real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();

  it('refuses (401) announcements that are unsigned, signed with another secret, malformed or stale, and nothing changes', async () => {
    const fx = await startMesh({ size: 4 });
    const { coordinator, epoch } = await fx.settled();
    const impostor = lowestRanked(fx.nodes);
    const body = takeover(impostor);
    const stranger = signer(randomBytes(32).toString('hex'));
    const stale = new PeerAuth({
      secrets: () => [fx.mesh.peerSecret ?? ''],
      now: () => Date.now() - 120_000,
      maxSkewMs: 30_000,
    });

    for (const node of fx.nodes.filter((n) => n !== impostor)) {
      const attempts: [string, string | undefined][] = [
        ['unsigned', undefined],
        [
          'another secret',
          stranger.signRequest('POST', `${node.address}/coordinator`, Buffer.from(body)).header,
        ],
        ['a malformed header', 'v1 ts=1,nonce=zz,sig=00'],
        [
          'a stale timestamp',
          stale.signRequest('POST', `${node.address}/coordinator`, Buffer.from(body)).header,
        ],
      ];
      for (const [what, header] of attempts) {
        const answer = await peerPost(node.address, '/coordinator', body, header);
        expect(answer.status, `${what} to ${node.name}`).to.equal(401);
        expect(answer.body, what).to.match(/"error"/);
      }
      // KNH's own hole: GET /coordinator?id=… set the coordinator on every node.
      const knh = await fetch(`http://${node.address}/coordinator?id=zzz`);
      expect(knh.status).to.equal(404);
    }

    await sleep(2_000);
    await expectUnchanged(fx, coordinator, epoch);
    const refused = await metric(
      coordinator,
      /^knh_peer_messages_refused_total\{reason="bad-signature"\} (\d+)/m,
    );
    expect(refused, 'bad signatures counted').to.be.at.least(1);
    expect(await metric(coordinator, /^knh_peer_auth_enabled (\d+)/m)).to.equal(1);
    expect(fx.peerStatuses().filter((w) => w.body.event === 'peer_dead')).to.deep.equal([]);
  });

  it('takes a signed message once, signs its answer, and refuses it replayed, altered or sent to another route', async () => {
    const fx = await startMesh({ size: 3 });
    const { coordinator, epoch } = await fx.settled();
    const asker = lowestRanked(fx.nodes);
    const auth = signer(fx.mesh.peerSecret ?? '');
    const body = JSON.stringify({ from: ref(asker), epoch });

    const first = await signedPost(auth, coordinator.address, '/election', body);
    expect(first.status, first.body).to.equal(200);
    expect(
      auth.verifyResponse(first.nonce, 200, first.auth ?? undefined, Buffer.from(first.body)),
      'the answer is signed for this request',
    ).to.equal(true);
    expect(
      signer(randomBytes(32).toString('hex')).verifyResponse(
        first.nonce,
        200,
        first.auth ?? undefined,
        Buffer.from(first.body),
      ),
      'and only with the secret',
    ).to.equal(false);

    const replayed = await peerPost(coordinator.address, '/election', body, first.header);
    expect(replayed.status).to.equal(401);
    expect(replayed.body).to.include('already received');

    const fresh = auth.signRequest('POST', `${coordinator.address}/election`, Buffer.from(body));
    const altered = body.replace(`"epoch":${epoch}`, `"epoch":${epoch + 1000}`);
    const tampered = await peerPost(coordinator.address, '/election', altered, fresh.header);
    expect(tampered.status).to.equal(401);
    expect(tampered.body).to.include('does not match');

    const elsewhere = await peerPost(coordinator.address, '/coordinator', body, fresh.header);
    expect(elsewhere.status, 'a signature is for one route').to.equal(401);
    // Nor for another node: a message captured on its way to one is refused by the others.
    const other = fx.nodes.find((n) => n !== coordinator && n !== asker) as MeshNode;
    const forOther = auth.signRequest('POST', `${other.address}/election`, Buffer.from(body));
    const misdirected = await peerPost(coordinator.address, '/election', body, forOther.header);
    expect(misdirected.status, 'a signature is for one node').to.equal(401);
    expect((await peerPost(other.address, '/election', body, forOther.header)).status).to.equal(
      200,
    );

    await sleep(1_000);
    await expectUnchanged(fx, coordinator, epoch);
  });

  it('does not let a node with another secret lead, even from the highest rank', async () => {
    const fx = await startMesh({ size: 4 });
    await fx.settled();
    const [top, second] = byRank(fx.nodes) as [MeshNode, MeshNode];
    // The top node comes back holding a secret of its own: an impostor on a peer's address.
    await fx.mesh.kill(top.index);
    const successor = await pollUntil(
      `${second.name} taking over`,
      async () => {
        const answer = await ping(second);
        return answer?.coordinator?.address === second.address ? answer : undefined;
      },
      { timeoutMs: 20_000 },
    );
    fx.mesh.startNode(top.index, { PEER_SECRET: randomBytes(32).toString('hex') });
    await fx.mesh.waitForLog(top.index, (l) => l.event === 'listening', 30_000, true);
    // Several heartbeats and election rounds of the impostor: never does it say it leads.
    const claims: string[][] = [];
    for (const until = Date.now() + 5_000; Date.now() < until; await sleep(200)) {
      const pings = await Promise.all(fx.nodes.map(ping));
      claims.push(pings.filter((p) => p?.role === 'coordinator').map((p) => p?.address ?? ''));
    }
    expect(
      claims.filter((c) => c.length !== 1),
      'samples without one coordinator',
    ).to.deep.equal([]);
    expect(fx.mesh.isRunning(top.index), 'the impostor runs').to.equal(true);
    // It says why, where an operator looks: readiness, /status, its metrics and its log.
    const readyz = await fetch(`http://${top.address}/readyz`);
    expect(readyz.status, 'the impostor is not ready').to.equal(503);
    const verdict = (await readyz.json()) as { failing: string[]; checks: { detail: string }[] };
    expect(verdict.failing).to.deep.equal(['peer-auth']);
    expect(JSON.stringify(verdict.checks)).to.include('another PEER_SECRET');
    const own = (await (await fetch(`http://${top.address}/status`)).json()) as NodeStatus;
    expect(own.role).to.equal('candidate');
    expect(own.authentication?.unauthenticated).to.match(/bad-signature ×3/);
    expect(
      await metric(top, /^knh_peers_refusing_this_node\{reason="bad-signature"\} (\d+)/m),
    ).to.equal(3);
    expect(top.logs.some((l) => l.event === 'peers-refuse-this-node' && l.level === 40)).to.equal(
      true,
    );

    for (const node of fx.nodes.filter((n) => n !== top)) {
      const answer = await ping(node);
      expect(answer?.coordinator?.address, `${node.name} follows`).to.equal(second.address);
      expect(answer?.epoch, `${node.name}: no elections since`).to.equal(successor.epoch);
    }
    const refused = await metric(
      second,
      /^knh_peer_messages_refused_total\{reason="bad-signature"\} (\d+)/m,
    );
    expect(refused, "the impostor's messages were refused").to.be.at.least(1);
  });

  // Another secret (a rotation gone half-way): the node refuses the coordinator's messages. No
  // secret (empty is unset): it checks nothing and signs nothing, so it takes them unchecked and
  // answers them unsigned.
  const OUT_OF_SIGHT = [
    { which: 'a follower holding another secret', top: false, secret: 'another' },
    { which: 'the top-ranked node holding another secret', top: true, secret: 'another' },
    { which: 'a follower started without the secret', top: false, secret: 'none' },
  ] as const;
  for (const { which, top, secret } of OUT_OF_SIGHT) {
    it(`reports ${which} out of sight within 10 s, never dead, and its end`, async () => {
      const fx = await startMesh({ size: 4 });
      await fx.settled();
      const odd = top ? byRank(fx.nodes)[0]! : lowestRanked(fx.nodes);
      // It crashes (its peer_dead is due), and comes back with its own secret or none. (A node
      // that left in order and comes back on the same address is out of the mesh until it speaks
      // in it: with a new pod IP, as a DaemonSet's rollout gives, it is listed anew instead.)
      await fx.mesh.kill(odd.index);
      await fx.waitForPeerStatus(
        `peer_dead for ${odd.name}`,
        (b) => b.event === 'peer_dead' && b.peer.address === odd.address,
      );
      const lead = await fx.waitForLeader({ among: fx.running() });
      const back = Date.now();
      fx.mesh.startNode(odd.index, {
        PEER_SECRET: secret === 'none' ? '' : randomBytes(32).toString('hex'),
      });
      const event = await fx.waitForPeerStatus(
        `peer_unauthenticated naming ${odd.name}`,
        (b) => b.event === 'peer_unauthenticated' && b.peer.address === odd.address,
      );
      const afterMs = event.receivedMs - back;
      console.log(
        `      ${which}: peer_unauthenticated ${(afterMs / 1000).toFixed(2)} s after its start`,
      );
      expect(afterMs, 'within 10 s of its start').to.be.at.most(10_000);
      expect(event.errors, "knh's own schema").to.deep.equal([]);
      expect(referenceErrors('knh-peer-status', event.body), 'KNH-valid').to.deep.equal([]);
      expect(event.body.peer.node_name).to.equal(odd.name);
      expect(event.body.peer.alive).to.equal(true);
      expect(event.body.severity).to.equal('warning');
      expect(event.body.coordinator_address).to.equal(lead.coordinator.address);
      if (secret === 'another') {
        expect(event.body.reason).to.match(
          /refuses this coordinator's signed messages \(bad-signature\): it holds another PEER_SECRET/,
        );
        expect(event.body.auth?.refusal).to.equal('bad-signature');
      } else {
        expect(event.body.reason).to.match(
          /answers this coordinator's signed messages unsigned: it has no PEER_SECRET set/,
        );
        expect(event.body.auth?.refusal).to.equal('unsigned');
      }
      await sleep(3_000);
      // Back with the mesh's secret: its incident ends, under the same key.
      await fx.mesh.kill(odd.index, 'SIGTERM');
      fx.mesh.startNode(odd.index);
      const end = await fx.waitForPeerStatus(
        `peer_authenticated for ${odd.name}`,
        (b) => b.event === 'peer_authenticated' && b.peer.address === odd.address,
        20_000,
      );
      expect(end.body.dedup_key).to.equal(
        event.body.dedup_key.replace(/:unauthenticated$/, ':authenticated'),
      );
      expect(end.errors).to.deep.equal([]);
      expect(
        fx
          .peerStatuses()
          .filter((w) => w.receivedMs >= back && w.body.event === 'peer_dead')
          .map((w) => w.body.peer.address),
        'peer_dead since it came back',
      ).to.deep.equal([]);
      expect(
        fx.peerStatuses().filter((w) => w.body.event === 'peer_unauthenticated'),
        'one incident',
      ).to.have.length(1);
    });
  }

  it('names a dead follower out of sight while something else answers its probes unsigned, and dead once nothing does', async () => {
    const fx = await startMesh({ size: 4 });
    const { coordinator } = await fx.settled();
    const odd = lowestRanked(fx.nodes);
    // Its pod dies and something without the secret takes its address at once, answering
    // /ping as a knh node would, unsigned and naming an old protocol (so, before, it stayed alive).
    await fx.mesh.kill(odd.index);
    const body = JSON.stringify({
      id: `${odd.name}@${odd.host}`,
      address: odd.address,
      node_name: odd.name,
      role: 'follower',
      epoch: 1,
      coordinator: null,
    });
    const impostor = createServer((req, res) => {
      if (req.url === '/ping') res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      else res.writeHead(404).end();
    });
    const took = Date.now();
    await new Promise<void>((resolve) => impostor.listen(odd.port, odd.host, resolve));
    try {
      const event = await fx.waitForPeerStatus(
        `peer_unauthenticated naming ${odd.name}`,
        (b) => b.event === 'peer_unauthenticated' && b.peer.address === odd.address,
      );
      console.log(
        `      impostor: peer_unauthenticated ${((event.receivedMs - took) / 1000).toFixed(2)} s after it took the address`,
      );
      expect(event.body.auth?.refusal).to.equal('ping-unsigned');
      expect(event.body.reason).to.match(/something else answers for its address/);
      expect(event.errors, "knh's own schema").to.deep.equal([]);
      expect(referenceErrors('knh-peer-status', event.body), 'KNH-valid').to.deep.equal([]);
      expect(
        await metric(coordinator, /^knh_peers_answering_unproven\{reason="ping-unsigned"\} (\d+)/m),
      ).to.equal(1);
    } finally {
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
      impostor.closeAllConnections();
    }
    // Nothing answers for it any more: it is reported dead, and its incident closed as such.
    await fx.waitForPeerStatus(
      `peer_dead for ${odd.name}`,
      (b) => b.event === 'peer_dead' && b.peer.address === odd.address,
    );
    const end = await fx.waitForPeerStatus(
      `peer_authenticated for ${odd.name}`,
      (b) => b.event === 'peer_authenticated' && b.peer.address === odd.address,
    );
    expect(end.body.reason).to.match(/no longer answers/);
  });

  it('without a secret: warns at start-up, refuses (403) announcements from an address that is not a peer, and answers its election messages without acting', async () => {
    const fx = await startMesh({ size: 3, peerSecret: null });
    const { coordinator, epoch } = await fx.settled();
    for (const node of fx.nodes) {
      expect(
        node.logs.some((l) => l.event === 'peer-auth-off' && l.level === 40),
        `${node.name} warned`,
      ).to.equal(true);
    }
    const outsider: MeshNode = {
      ...lowestRanked(fx.nodes),
      name: 'outsider',
      address: '127.0.0.1:1',
    };
    const answer = await peerPost(coordinator.address, '/coordinator', takeover(outsider));
    expect(answer.status, answer.body).to.equal(403);
    expect(answer.body).to.include('not a discovered peer');
    const election = await peerPost(
      coordinator.address,
      '/election',
      JSON.stringify({ from: ref(outsider), epoch: 9_000_000 }),
    );
    expect(election.status, 'a node not discovered yet is answered').to.equal(200);
    expect(JSON.parse(election.body)).to.deep.include({ type: 'answer', epoch });
    expect(await metric(coordinator, /^knh_peer_auth_enabled (\d+)/m)).to.equal(0);
    await sleep(1_000);
    await expectUnchanged(fx, coordinator, epoch);
  });
});
