// A peer crashes, comes back, or crashes before its coordinator does: what the receiver is told.
import { expect } from 'chai';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { sleep } from '../support/poll.js';
import { defaultMs } from '../../src/config/settings.js';

/** Long enough for the coordinator to run a few more probe rounds (ELECTION_COOLDOWN_PERIOD 1 s). */
const A_FEW_ROUNDS_MS = 3_000;

describe('peer failures (5 real nodes)', function () {
  this.timeout(60_000);
  const startMesh = useMeshFixture();

  it('reports a SIGKILLed peer dead, in KNH shape, then a cluster status showing it dead', async () => {
    const fx = await startMesh();
    const { coordinator, epoch } = await fx.settled();
    const victim = lowestRanked(fx.nodes);

    await fx.mesh.kill(victim.index);

    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    );
    expect(referenceErrors('knh-peer-status', dead.body), 'KNH reference schema').to.deep.equal([]);
    expect(dead.errors, "knh's own schema").to.deep.equal([]);
    expect(dead.body.peer.alive).to.equal(false);
    expect(dead.body.peer.node_name).to.equal(victim.name);
    expect(dead.body.peer.id).to.equal(`${victim.name}@127.0.0.1`);
    expect(dead.body.coordinator_address).to.equal(coordinator.address);
    expect(dead.body.coordinator).to.equal(`${coordinator.name}@127.0.0.1`);
    expect(dead.body.epoch).to.equal(epoch);

    const change = await fx.waitForClusterStatus(
      `cluster status (change) showing ${victim.address} dead`,
      (b) =>
        b.reason === 'change' &&
        b.peer_map.some((p) => p.address === victim.address && p.health === 'dead'),
    );
    expect(change.errors, "knh's own schema").to.deep.equal([]);
    expect(
      referenceErrors('knh-cluster-status', change.body),
      'KNH reference schema',
    ).to.deep.equal([]);
    expect(change.body.coordinator_address).to.equal(coordinator.address);
    expect(Date.parse(change.body.timestamp)).to.be.at.least(Date.parse(dead.body.timestamp));
    for (const peer of change.body.peer_map) {
      expect(peer.alive, `${peer.address} alive in the change status`).to.equal(
        peer.address !== victim.address,
      );
    }

    await sleep(A_FEW_ROUNDS_MS);
    const deadReports = fx.peerStatuses().filter((w) => w.body.event === 'peer_dead');
    expect(deadReports.map((w) => w.body.peer.address)).to.deep.equal([victim.address]);
  });

  it('reports a restarted peer recovered, with the dead alert’s incident stem', async () => {
    const fx = await startMesh();
    const { coordinator } = await fx.settled();
    const victim = lowestRanked(fx.nodes);

    await fx.mesh.kill(victim.index);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    );
    await fx.restart(victim.index);

    const recovered = await fx.waitForPeerStatus(
      `peer_recovered for ${victim.address}`,
      (b) => b.event === 'peer_recovered' && b.peer.address === victim.address,
      // It goes once the peer has stayed up for RECOVERY_HOLD.
      15_000 + defaultMs('RECOVERY_HOLD'),
    );
    expect(recovered.errors).to.deep.equal([]);
    expect(recovered.body.peer.alive).to.equal(true);
    expect(recovered.body.coordinator_address).to.equal(coordinator.address);
    const stem = `knh:${victim.address}:`;
    expect(dead.body.dedup_key).to.match(/^knh:127\.0\.0\.1:\d+:\d+:dead$/);
    expect(dead.body.dedup_key.startsWith(stem)).to.equal(true);
    expect(recovered.body.dedup_key).to.equal(dead.body.dedup_key.replace(/:dead$/, ':recovered'));

    const status = await fx.waitForClusterStatus(
      `a cluster status after the recovery showing ${victim.address} alive`,
      (b) =>
        Date.parse(b.timestamp) >= Date.parse(recovered.body.timestamp) &&
        b.peer_map.some((p) => p.address === victim.address),
    );
    expect(status.errors).to.deep.equal([]);
    for (const peer of status.body.peer_map) {
      expect(peer.alive, `${peer.address} alive after the recovery`).to.equal(true);
    }
    // The restarted node follows the same leader as everyone else.
    const lead = await fx.waitForLeader();
    expect(lead.coordinator.address).to.equal(coordinator.address);
  });

  it('a restarted coordinator takes over from the verdicts and resolves its own incident', async () => {
    const fx = await startMesh();
    const first = await fx.settled();
    const [top, successor] = byRank(fx.nodes);
    const victim = lowestRanked(fx.nodes);
    if (!top || !successor) throw new Error('a mesh of at least 2 nodes');
    await fx.mesh.kill(victim.index);
    const victimDead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    );
    await fx.mesh.kill(top.index);
    const topDead = await fx.waitForPeerStatus(
      `peer_dead for the coordinator ${top.address} from ${successor.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === top.address,
    );
    await sleep(1_000); // the successor's announcements carry the verdicts
    await fx.restart(top.index);
    const back = await fx.waitForLeader({ epochAbove: first.epoch + 1 });
    expect(back.coordinator.address).to.equal(top.address);
    const recovered = await fx.waitForPeerStatus(
      `peer_recovered for ${top.address}, resolving its own incident`,
      (b) => b.event === 'peer_recovered' && b.peer.address === top.address,
    );
    expect(recovered.body.dedup_key).to.equal(
      topDead.body.dedup_key.replace(/:dead$/, ':recovered'),
    );
    await sleep(A_FEW_ROUNDS_MS);
    expect(
      new Set(fx.deadReports(victim.address).map((w) => w.body.dedup_key)),
      'the restarted coordinator inherited the dead verdict on the victim',
    ).to.deep.equal(new Set([victimDead.body.dedup_key]));
  });

  it('does not report a dead peer again when the coordinator fails right after alerting', async () => {
    // What a user sees when the coordinator and a peer fail together (a zone outage): the verdict
    // must survive the coordinator even if it dies the moment its alert is out.
    await deadPeerThenFailover(await startMesh(), { announcedForMs: 0 });
  });

  it('does not report a dead peer again once the verdict has been announced', async () => {
    // Followers learn verdicts from the coordinator's announcements (HEARTBEAT_INTERVAL 0.5 s):
    // a few of them before the coordinator goes.
    await deadPeerThenFailover(await startMesh(), { announcedForMs: 1_500 });
  });
});

/**
 * Kills the lowest-ranked peer, waits for its peer_dead, waits `announcedForMs`, kills the
 * coordinator, and checks that the successor carries the verdict on instead of alerting again.
 */
async function deadPeerThenFailover(
  fx: MeshFixture,
  { announcedForMs }: { announcedForMs: number },
): Promise<void> {
  const first = await fx.settled();
  const [old, successor] = byRank(fx.nodes);
  const victim = lowestRanked(fx.nodes);
  if (!old || !successor) throw new Error('a mesh of at least 2 nodes');
  expect(first.coordinator.address).to.equal(old.address);

  await fx.mesh.kill(victim.index);
  const dead = await fx.waitForPeerStatus(
    `peer_dead for ${victim.address}`,
    (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
  );
  if (announcedForMs > 0) await sleep(announcedForMs);
  await fx.mesh.kill(old.index);

  const second = await fx.waitForLeader({ epochAbove: first.epoch });
  expect(second.coordinator.address).to.equal(successor.address);
  await fx.waitForPeerStatus(
    `peer_dead for the old coordinator ${old.address} from ${successor.address}`,
    (b) =>
      b.event === 'peer_dead' &&
      b.peer.address === old.address &&
      b.coordinator_address === successor.address,
  );
  const status = await fx.waitForClusterStatus(
    `a cluster status from ${successor.address}`,
    (b) => b.coordinator_address === successor.address && b.epoch === second.epoch,
  );

  await sleep(A_FEW_ROUNDS_MS);
  const reports = fx.deadReports(victim.address).map((w) => w.body);
  // The successor never decides the death again. Delivery is at least once: when the coordinator
  // dies in the instant after a delivery, before its followers heard of it, the successor delivers
  // that very payload again (same dedup key, same deciding coordinator and epoch).
  expect(
    new Set(reports.map((b) => `${b.dedup_key} from ${b.coordinator_address}`)),
    `peer_dead webhooks for ${victim.address}`,
  ).to.deep.equal(new Set([`${dead.body.dedup_key} from ${old.address}`]));
  for (const b of reports) expect(b, 'a repeat is the same payload').to.deep.equal(dead.body);
  if (announcedForMs > 0) {
    expect(reports, 'once the followers heard of the delivery, it is not repeated').to.have.length(
      1,
    );
  }
  const inherited = status.body.peer_map.find((p) => p.address === victim.address);
  expect(inherited?.alive, `${victim.address} in the successor's status`).to.equal(false);
  expect(inherited?.since, 'the dead spell carried over').to.equal(dead.body.peer.since);
}
