// The bully election across real processes: who leads at start-up, and who takes over on a crash.
import { expect } from 'chai';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { highestRanked } from '../support/expected-rank.js';
import { ping, useMeshFixture } from '../support/mesh-fixture.js';

describe('election (5 real nodes)', function () {
  this.timeout(60_000);
  const startMesh = useMeshFixture();

  it('converges on the highest-ranked node, which reports every peer alive', async () => {
    const fx = await startMesh();
    const expected = highestRanked(fx.nodes);

    const { coordinator, epoch } = await fx.waitForLeader({ timeoutMs: 15_000 });

    expect(coordinator.address).to.equal(expected.address);
    const pings = await Promise.all(fx.nodes.map(ping));
    expect(pings.filter((p) => p?.role === 'coordinator').map((p) => p?.address)).to.deep.equal([
      expected.address,
    ]);
    expect(new Set(pings.map((p) => p?.epoch))).to.deep.equal(new Set([epoch]));
    for (const p of pings) expect(p?.coordinator?.address).to.equal(expected.address);

    // The election status goes out once the first probes have answered: a node still starting
    // then shows as unknown, and a `change` status follows when it answers.
    const status = await fx.waitForClusterStatus(
      `a cluster status from ${expected.address} (election, or the change after it) with every peer alive`,
      (b) =>
        b.coordinator_address === expected.address &&
        b.reason !== 'periodic' &&
        b.peer_map.length === fx.nodes.length - 1 &&
        b.peer_map.every((p) => p.alive),
    );
    const election = fx
      .clusterStatuses()
      .find((w) => w.body.coordinator_address === expected.address && w.body.epoch === epoch);
    expect(election?.body.reason, 'its first status in this term').to.equal('election');
    expect(status.errors, "knh's own schema").to.deep.equal([]);
    expect(
      referenceErrors('knh-cluster-status', status.body),
      'KNH reference schema',
    ).to.deep.equal([]);
    expect(status.body.epoch).to.equal(epoch);
    const others = fx.nodes.filter((n) => n !== expected).map((n) => n.address);
    expect(status.body.peer_map.map((p) => p.address)).to.have.members(others);
    for (const peer of status.body.peer_map) {
      expect(peer.alive, `${peer.address} alive in the election status`).to.equal(true);
    }
  });

  it('replaces a killed coordinator with the next-highest node, which reports the old one dead', async () => {
    const fx = await startMesh();
    const first = await fx.settled();
    const old = first.coordinator;

    await fx.mesh.kill(old.index);
    const survivors = fx.running();
    const successor = highestRanked(survivors);
    expect(survivors).to.have.length(4);

    const second = await fx.waitForLeader({
      among: survivors,
      epochAbove: first.epoch,
      timeoutMs: 15_000,
    });
    expect(second.coordinator.address).to.equal(successor.address);
    expect(second.epoch).to.be.greaterThan(first.epoch);

    const dead = await fx.waitForPeerStatus(
      `peer_dead for the old coordinator ${old.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === old.address,
    );
    expect(dead.errors).to.deep.equal([]);
    expect(dead.body.peer.alive).to.equal(false);
    expect(dead.body.coordinator_address).to.equal(successor.address);
    expect(dead.body.epoch).to.equal(second.epoch);

    const status = await fx.waitForClusterStatus(
      `cluster status from ${successor.address} showing ${old.address} dead`,
      (b) =>
        b.coordinator_address === successor.address &&
        b.peer_map.some((p) => p.address === old.address && p.health === 'dead'),
    );
    expect(status.errors).to.deep.equal([]);
    expect(status.body.epoch).to.equal(second.epoch);
    const alive = status.body.peer_map.filter((p) => p.alive).map((p) => p.address);
    expect(alive).to.have.members(survivors.filter((n) => n !== successor).map((n) => n.address));
    // Only the old coordinator died: nobody else was reported dead.
    const deadAddresses = fx
      .peerStatuses()
      .filter((w) => w.body.event === 'peer_dead')
      .map((w) => w.body.peer.address);
    expect(new Set(deadAddresses)).to.deep.equal(new Set([old.address]));
  });
});
