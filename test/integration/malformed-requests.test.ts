// Garbage on the election endpoints gets a 401 unsigned, a 400 signed, and does not disturb the
// node or the mesh.
import { expect } from 'chai';
import type { MeshNode } from '../../src/demo/mesh.js';
import { lowestRanked } from '../support/expected-rank.js';
import { ping, useMeshFixture } from '../support/mesh-fixture.js';
import { peerPost, signedPost, signer } from '../support/peer-post.js';
import { sleep } from '../support/poll.js';

const BAD_BODIES: [what: string, body: string][] = [
  ['not JSON', 'this is not json{'],
  ['truncated JSON', '{"from":{"id":"x","address":"127.0.0.1:1"},"epo'],
  ['empty body', ''],
  ['a JSON array', '[1,2,3]'],
  ['a JSON string', '"hello"'],
  ['an object of the wrong shape', '{"hello":"world"}'],
  ['right keys, wrong types', '{"from":{"id":5,"address":"nowhere"},"epoch":"high","peers":7}'],
  ['a negative epoch', '{"from":{"id":"x@127.0.0.1","address":"127.0.0.1:1"},"epoch":-1}'],
];

describe('malformed requests (5 real nodes)', function () {
  this.timeout(60_000);
  const startMesh = useMeshFixture();

  it('answers 401 unsigned and 400 signed on /election and /coordinator, and keeps the node and the mesh running', async () => {
    const fx = await startMesh();
    const before = await fx.settled();
    const targets: MeshNode[] = [lowestRanked(fx.nodes), before.coordinator];
    const auth = signer(fx.mesh.peerSecret ?? '');

    for (const node of targets) {
      for (const path of ['/election', '/coordinator']) {
        for (const [what, body] of BAD_BODIES) {
          const unsigned = await peerPost(node.address, path, body);
          expect(unsigned.status, `unsigned ${what} to ${node.name} ${path}`).to.equal(401);
          const signed = await signedPost(auth, node.address, path, body);
          expect(signed.status, `signed ${what} to ${node.name} ${path}`).to.equal(400);
        }
      }
    }

    await sleep(3_000);
    for (const node of targets) {
      expect(fx.mesh.isRunning(node.index), `${node.name} still running`).to.equal(true);
      const answer = await ping(node);
      expect(answer?.address, `${node.name} answers /ping`).to.equal(node.address);
    }
    const after = await fx.waitForLeader();
    expect(after.coordinator.address).to.equal(before.coordinator.address);
    expect(after.epoch, 'no election was triggered').to.equal(before.epoch);
    expect(fx.peerStatuses().filter((w) => w.body.event === 'peer_dead')).to.deep.equal([]);
  });
});
