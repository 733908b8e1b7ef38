// Garbage on the election endpoints gets a 401 unsigned, a 400 signed, and does not disturb the
// node or the mesh. A JSON body is read in any Unicode charset and refused in any other, as the
// shipped bundle does it (its body decoder keeps the Unicode codecs only: scripts/bundle.ts).
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

  it('reads a JSON body in UTF-16 as in UTF-8, and answers 415 to a code page', async () => {
    const fx = await startMesh();
    await fx.settled();
    const node = lowestRanked(fx.nodes);
    // Well-formed JSON that is no maintenance request (nothing opens): the schema's answer names
    // what it read.
    const json = JSON.stringify({ reason: 'caf\u00e9', duration: ['soon'] });
    const post = async (charset: string, body: Buffer) => {
      const res = await fetch(`http://${node.address}/maintenance`, {
        method: 'POST',
        headers: { 'content-type': `application/json; charset=${charset}` },
        body,
        signal: AbortSignal.timeout(5_000),
      });
      return { status: res.status, body: await res.text() };
    };
    const utf8 = await post('utf-8', Buffer.from(json, 'utf8'));
    expect(utf8.status).to.equal(400);
    expect(utf8.body).to.match(/duration/);
    expect(await post('utf-16le', Buffer.from(json, 'utf16le'))).to.deep.equal(utf8);
    const codePage = await post('iso-8859-1', Buffer.from(json, 'latin1'));
    expect(codePage.status).to.equal(415);
    expect(codePage.body).to.match(/unsupported charset/i);
    expect((await ping(node))?.address, 'still answers /ping').to.equal(node.address);
  });
});
