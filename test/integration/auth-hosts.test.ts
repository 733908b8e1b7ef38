// Authentication faults on network-namespace hosts, default settings and a peer secret: a node
// restarted with another secret, and the top-ranked node restarted with its clock 2 min ahead.
// Never two coordinators; the first named within 10 s, the second simply taking part; neither
// reported dead while it answers (needs root).
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { HostNetwork, type HostNode } from '../support/netns-hosts.js';
import {
  byRank,
  expectValidWebhooks,
  log,
  secs,
  useHostNetwork,
  type MultiHostFixture,
} from '../support/multi-host-fixture.js';
import { listsEveryPeerAlive } from '../support/agreement.js';
import { pollUntil } from '../support/poll.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { wrongWallClock } from '../support/wrong-wall-clock.js';

/** peer_dead about `host` whose dead spell began after `sinceMs` (one before is its crash's). */
const deadSince = (fx: MultiHostFixture, host: HostNode, sinceMs: number) =>
  fx
    .deadReports()
    .filter(
      (w) =>
        w.body.peer.address === host.address &&
        Number(w.body.dedup_key.split(':').at(-2)) >= sinceMs,
    );

describe('authentication faults (5 network namespaces, root only)', function () {
  this.timeout(120_000);
  const startHosts = useHostNetwork();

  before(async function () {
    const available = await HostNetwork.available();
    if (!available.ok) {
      console.log(`      skipping the authentication-fault tests: ${available.reason}`);
      this.skip();
    }
  });

  it('a follower restarted with another secret: named within 10 s, never dead, never leading; over when it has the secret again', async () => {
    const fx = await startHosts({ hosts: 5 });
    await fx.settled();
    const odd = byRank(fx.hosts).at(-1) as HostNode;
    const back = await fx.net.restart(odd.index, { PEER_SECRET: randomBytes(32).toString('hex') });
    const [claims, event] = await Promise.all([
      fx.doubleClaims(8_000),
      fx.waitForPeerStatus(
        `peer_unauthenticated naming ${odd.name}`,
        (b) => b.event === 'peer_unauthenticated' && b.peer.address === odd.address,
        { sinceMs: back },
      ),
    ]);
    log(`another secret on ${odd.name} → peer_unauthenticated in ${secs(back, event.receivedMs)}`);
    expect(claims, 'samples with two coordinators').to.deep.equal([]);
    expect(event.receivedMs - back).to.be.at.most(10_000);
    expect(referenceErrors('knh-peer-status', event.body), 'KNH-valid').to.deep.equal([]);
    expect(event.body.reason).to.match(/another PEER_SECRET/);
    const fixed = await fx.net.restart(odd.index);
    const end = await fx.waitForPeerStatus(
      `peer_authenticated for ${odd.name}`,
      (b) => b.event === 'peer_authenticated' && b.peer.address === odd.address,
      { sinceMs: fixed, timeoutMs: 20_000 },
    );
    log(`its secret back → peer_authenticated in ${secs(fixed, end.receivedMs)}`);
    expect(deadSince(fx, odd, back + 1_000), 'peer_dead while it answered').to.deep.equal([]);
    expectValidWebhooks(fx);
  });

  it('the top-ranked node restarted with its clock 2 min ahead: one coordinator, alive, never dead', async () => {
    const fx = await startHosts({ hosts: 5 });
    await fx.settled();
    const top = byRank(fx.hosts)[0] as HostNode;
    const back = await fx.net.restart(top.index, wrongWallClock('+120s'));
    const claims = await fx.doubleClaims(10_000);
    expect(claims, 'samples with two coordinators').to.deep.equal([]);
    const lead = await fx.waitForLeader();
    expect(lead.coordinator.address, 'the top-ranked leads, its clock off or not').to.equal(
      top.address,
    );
    const status = await pollUntil(
      'a cluster status since its return listing every peer alive',
      () =>
        fx
          .clusterStatuses(back)
          .find((w) => listsEveryPeerAlive(w.body, top.address, lead.epoch, fx.hosts.length - 1)),
      { timeoutMs: 20_000 },
    );
    log(`top with its clock +120 s → leads, every peer alive, in ${secs(back, status.receivedMs)}`);
    expect(deadSince(fx, top, back + 1_000), 'peer_dead while it answered').to.deep.equal([]);
    expect(
      fx.peerStatuses(back).filter((w) => w.body.event === 'peer_unauthenticated'),
      'it takes part: not out of sight',
    ).to.deep.equal([]);
    expectValidWebhooks(fx);
  });
});
