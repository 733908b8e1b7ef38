// A follower's link going down and up every few seconds for a minute, on network-namespace hosts
// with default settings and a peer secret: one page, one peer_flapping, one final recovery; the
// cluster status is not resent on every flap. In the same minute, the path between the coordinator
// and another follower breaks and heals as often: the same three events about that path (needs
// root).
import { expect } from 'chai';
import { HostNetwork, type HostNode } from '../support/netns-hosts.js';
import {
  byRank,
  expectValidWebhooks,
  log,
  secs,
  useHostNetwork,
} from '../support/multi-host-fixture.js';
import { pollUntil, sleep } from '../support/poll.js';
import { defaultMs } from '../../src/config/settings.js';

/** Down long enough to be judged dead (a black hole takes about 3 s), then up: 7 s a cycle. */
const DOWN_MS = 4_000;
const UP_MS = 3_000;
const FLAPPING_MS = 60_000;

describe('a flapping link (6 network namespaces, root only)', function () {
  this.timeout(FLAPPING_MS + 120_000);
  const startHosts = useHostNetwork();

  before(async function () {
    const available = await HostNetwork.available();
    if (!available.ok) {
      console.log(`      skipping the flapping-link test: ${available.reason}`);
      this.skip();
    }
  });

  it('a follower cut off, and another cut from the coordinator, for 4 s of every 7 for a minute: at most 3 webhooks about each, the first within 5 s', async () => {
    // Six hosts: with two of its five peers out of reach, the coordinator still reaches most of
    // them, and judges rather than suspecting itself.
    const fx = await startHosts({ hosts: 6 });
    const lead = await fx.settled();
    const ranked = byRank(fx.hosts);
    const coordinator = ranked[0] as HostNode;
    const victim = ranked.at(-1) as HostNode;
    const pathVictim = ranked.at(-2) as HostNode;
    expect(lead.coordinator.address).to.equal(coordinator.address);
    const start = Date.now();
    let cycles = 0;
    while (Date.now() - start < FLAPPING_MS) {
      await Promise.all([
        fx.net.blackhole(victim.index),
        fx.net.partition([coordinator.index], [pathVictim.index]),
      ]);
      await sleep(DOWN_MS);
      await fx.net.heal();
      await sleep(UP_MS);
      cycles++;
    }
    const endedMs = Date.now();
    const about = () =>
      fx.peerStatuses(start).filter((w) => w.body.peer.address === victim.address);
    // Up for good: its recovery goes once it has been stable for FLAP_STABLE.
    const final = await pollUntil(
      `the final peer_recovered for ${victim.address}`,
      () => about().find((w) => w.body.event === 'peer_recovered'),
      { timeoutMs: defaultMs('FLAP_STABLE') + 20_000 },
    );
    await sleep(3_000);
    const got = about();
    log(
      `${cycles} cycles of ${DOWN_MS / 1000} s down, ${UP_MS / 1000} s up: ` +
        got.map((w) => `${w.body.event} at ${secs(start, w.receivedMs)}`).join(', ') +
        `; final recovery ${secs(endedMs, final.receivedMs)} after the last heal`,
    );
    expect(got.map((w) => w.body.event)).to.deep.equal([
      'peer_dead',
      'peer_flapping',
      'peer_recovered',
    ]);
    expect(got[0]!.receivedMs - start, 'the first page, ms after the first fault').to.be.at.most(
      5_000,
    );
    expect(new Set(got.map((w) => w.body.dedup_key.replace(/:[a-z-]+$/, ''))).size).to.equal(1);
    expect(got[1]!.body.reason).to.match(/went down and up \d+ times/);
    // CLUSTER_STATUS_URL: for each of the two, one change status for its first fault and one for
    // its final state; the rest of what it got in that time were periodic.
    const changes = fx
      .clusterStatuses(start)
      .filter(
        (w) =>
          w.body.reason === 'change' && w.body.coordinator_address === lead.coordinator.address,
      );
    log(`cluster statuses (change) since the first fault: ${changes.length}`);
    expect(changes.length).to.be.at.most(4);
    expect(fx.deadReports(start).map((w) => w.body.peer.address)).to.deep.equal([victim.address]);

    // The path from the coordinator: broken, flapping, restored once it has worked FLAP_STABLE.
    const path = fx.peerStatuses(start).filter((w) => w.body.peer.address === pathVictim.address);
    log(
      `the path ${coordinator.name} -> ${pathVictim.name}: ` +
        path.map((w) => `${w.body.event} at ${secs(start, w.receivedMs)}`).join(', '),
    );
    expect(path.map((w) => w.body.event)).to.deep.equal([
      'path_broken',
      'peer_flapping',
      'path_restored',
    ]);
    expect(path[0]!.receivedMs - start, 'the first, ms after the first fault').to.be.at.most(5_000);
    expect(new Set(path.map((w) => w.body.dedup_key.replace(/:[a-z-]+$/, ''))).size).to.equal(1);
    expect(path[1]!.body.path?.to).to.equal(path[0]!.body.path?.to);
    expect(path[1]!.body.reason).to.match(/broke and was restored \d+ times/);
    expectValidWebhooks(fx);
  });
});
