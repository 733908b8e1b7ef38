// A node whose wall clock is minutes off (its host's NTP broken, its network fine), on real nodes
// with a peer secret: it takes part, as follower or as the top-ranked node, never two nodes say
// they lead, it is listed alive and never reported dead, and its peers know its offset.
import { expect } from 'chai';
import type { MeshNode } from '../../src/demo/mesh.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { listsEveryPeerAlive } from '../support/agreement.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { ping, useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { pollUntil, sleep } from '../support/poll.js';
import { wrongWallClock } from '../support/wrong-wall-clock.js';

async function status(node: MeshNode): Promise<NodeStatus> {
  const res = await fetch(`http://${node.address}/status`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as NodeStatus;
}

/** Every 200 ms for `ms`: the nodes whose /ping says they lead, where more than one did. */
async function doubleClaims(fx: MeshFixture, ms: number): Promise<string[][]> {
  const doubled: string[][] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const pings = await Promise.all(fx.running().map(ping));
    const claims = pings.filter((p) => p?.role === 'coordinator').map((p) => p?.address ?? '');
    if (claims.length > 1) doubled.push(claims);
    await sleep(200);
  }
  return doubled;
}

describe('a node whose clock is 2 min ahead (real nodes, a peer secret)', function () {
  this.timeout(120_000);
  const startMesh = useMeshFixture();

  for (const which of ['a follower', 'the top-ranked node'] as const) {
    it(`takes part as ${which}: one coordinator, listed alive, never reported dead`, async () => {
      const fx = await startMesh({ size: 4 });
      await fx.settled();
      const skewed = which === 'a follower' ? lowestRanked(fx.nodes) : byRank(fx.nodes)[0]!;
      // It leaves in order (never reported dead), and comes back with its clock 120 s ahead.
      await fx.mesh.kill(skewed.index, 'SIGTERM');
      const since = Date.now();
      fx.mesh.startNode(skewed.index, wrongWallClock('+120s'));
      await fx.mesh.waitForLog(skewed.index, (l) => l.event === 'listening', 30_000, true);

      expect(
        await doubleClaims(fx, 10_000),
        'samples where two nodes said they lead',
      ).to.deep.equal([]);
      const lead = await fx.waitForLeader();
      expect(lead.coordinator.address, 'the highest-ranked leads, skewed or not').to.equal(
        byRank(fx.nodes)[0]!.address,
      );
      await pollUntil(
        'a cluster status since its return listing every peer alive',
        () =>
          fx
            .clusterStatuses()
            .find(
              (w) =>
                w.receivedMs > since &&
                listsEveryPeerAlive(w.body, lead.coordinator.address, lead.epoch, 3),
            ),
        { timeoutMs: 20_000 },
      );
      expect(fx.deadReports(skewed.address), 'peer_dead about it').to.deep.equal([]);

      // Its peers know how far off it is, and it knows how far off they are.
      const other =
        fx.nodes.find((n) => n !== skewed && n.address === lead.coordinator.address) ??
        fx.nodes.find((n) => n !== skewed)!;
      const seen = await pollUntil(
        `${other.name} knowing ${skewed.name}'s offset`,
        async () =>
          (await status(other)).authentication?.clock_offsets.find(
            (o) => o.address === skewed.address,
          ),
        { timeoutMs: 15_000 },
      );
      expect(seen.offset_ms).to.be.within(118_000, 122_000);
      const own = await status(skewed);
      expect(own.authentication?.unauthenticated).to.equal(null);
      expect(own.authentication?.clock_offsets.length).to.be.at.least(1);
      expect(own.authentication?.clock_offsets.every((o) => o.offset_ms < -118_000)).to.equal(true);
      expect(own.ready, 'it is ready').to.equal(true);
    });
  }
});
