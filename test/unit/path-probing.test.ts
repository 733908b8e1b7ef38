// Pair probing as a node runs it starts in steps: no probe until the election names a coordinator
// (this node leading, or following one), and none again while a new election is under way.
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import type { ElectionView } from '../../src/node/path-findings.js';
import { PathProbing } from '../../src/node/path-probing.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { HOST, STATIC } from '../support/config-env.js';
import { FakeClock } from '../support/fake-clock.js';
import { answer, pingResponse } from '../support/pings.js';

const SELF = { id: 'node-1@10.0.0.1', address: '10.0.0.1:8080' };
const PEERS = ['10.0.0.2:8080', '10.0.0.3:8080'];
const LEADER = { id: 'node-3@10.0.0.3', address: '10.0.0.3:8080' };

function probing() {
  const loaded = loadConfig({ ...STATIC, POD_IP: '10.0.0.1' }, HOST);
  if (!loaded.ok) throw new Error(loaded.errors.join('\n'));
  const clock = new FakeClock();
  const pings: string[] = [];
  let election: ElectionView = { role: 'candidate', epoch: 0, coordinator: null };
  const paths = new PathProbing({
    config: loaded.config,
    self: SELF,
    clock,
    logger: new CapturingLogger(),
    transport: {
      ping: (to) => {
        pings.push(to);
        return Promise.resolve(answer(pingResponse(to, 'n')));
      },
      echo: () => Promise.resolve(answer(undefined)),
      reportPaths: () => Promise.resolve(answer({ accepted: true, resync: false })),
      pullPaths: () => Promise.reject(new Error('not asked in this test')),
    },
    protocolOf: () => 3,
    election: () => election,
    present: () => PEERS,
    reporter: { onFinding: () => undefined },
    verdictOf: () => undefined,
  });
  return {
    paths,
    clock,
    pings,
    elect: (e: ElectionView) => (election = e),
  };
}

describe('PathProbing: start-up in steps', () => {
  it('probes no path until a coordinator is known, then every peer each round', async () => {
    const t = probing();
    t.paths.start();
    try {
      await t.clock.advanceAsync(3_000);
      expect(t.pings, 'while electing').to.deep.equal([]);
      t.elect({ role: 'follower', epoch: 1, coordinator: LEADER });
      await t.clock.advanceAsync(2_000);
      expect(new Set(t.pings)).to.deep.equal(new Set(PEERS));
      expect(t.pings.length).to.be.within(2 * PEERS.length, 3 * PEERS.length);
    } finally {
      t.paths.stop();
    }
  });

  it('probes while leading itself, and stops while a new election is under way', async () => {
    const t = probing();
    t.elect({ role: 'coordinator', epoch: 1, coordinator: SELF });
    t.paths.start();
    try {
      await t.clock.advanceAsync(1_500);
      expect(t.pings.length).to.be.at.least(PEERS.length);
      t.elect({ role: 'candidate', epoch: 1, coordinator: null });
      await t.clock.advanceAsync(1_000); // a round under way when the election began ends
      const before = t.pings.length;
      await t.clock.advanceAsync(5_000);
      expect(t.pings.length, 'no probe while electing').to.equal(before);
    } finally {
      t.paths.stop();
    }
  });
});
