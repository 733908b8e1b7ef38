// Five hosts, each its own network namespace on a bridge: crashes, black holes, partitions, loss,
// one-way links and a throttled process, and what the receiver is told about them (needs root).
import { expect } from 'chai';
import { HostNetwork, type HostNode } from '../support/netns-hosts.js';
import {
  byRank,
  expectValidWebhooks,
  log,
  MultiHostFixture,
  secs,
  STEADY_MS,
  until,
  useHostNetwork,
  type HostLeadership,
} from '../support/multi-host-fixture.js';
import { sleep } from '../support/poll.js';
import { defaultMs } from '../../src/config/settings.js';

/** Bound on every detection this file waits for (the targets are far lower; see the printed times). */
const DETECT_MS = 15_000;
/** A recovery goes once the peer has stayed up for RECOVERY_HOLD. */
const RECOVERED_MS = DETECT_MS + defaultMs('RECOVERY_HOLD');
/**
 * How long after a fault the receiver is watched for alerts that must not come. An isolated node
 * first misses COORDINATOR_TIMEOUT (1.5 s) of heartbeats, elects itself (~1.5 s), then needs a full
 * probe with every retry timing out (~6 s) before it could condemn anyone: 15 s covers that twice.
 */
const WATCH_MS = 15_000;

/** "address by coordinator_address" for every peer_dead since `sinceMs`, for readable failures. */
function deadSummary(fx: MultiHostFixture, sinceMs: number): string[] {
  return fx
    .deadReports(sinceMs)
    .map((w) => `${w.body.peer.address} by ${w.body.coordinator_address}`);
}

describe('multi-host faults (5 network namespaces, root only)', function () {
  this.timeout(60_000);
  const startHosts = useHostNetwork();
  let fx: MultiHostFixture;
  let lead: HostLeadership;
  /** Hosts from the highest bully rank down: [0] leads, [1] succeeds it. */
  let ranked: HostNode[];

  before(async function () {
    const available = await HostNetwork.available();
    if (!available.ok) {
      console.log(`      skipping the multi-host tests: ${available.reason}`);
      this.skip();
    }
  });

  beforeEach(async function () {
    const startedMs = Date.now();
    fx = await startHosts({ hosts: 5 });
    lead = await fx.settled();
    ranked = byRank(fx.hosts);
    expect(lead.coordinator.address).to.equal(ranked[0]?.address);
    log(
      `settled on ${lead.coordinator.address} epoch ${lead.epoch} after ${secs(startedMs, Date.now())}`,
    );
    await sleep(STEADY_MS);
  });

  it('reports a crashed peer dead, and nothing else', async () => {
    const victim = ranked.at(-1) as HostNode;
    const at = await fx.net.kill(victim.index);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(`crashed ${victim.name} → peer_dead in ${secs(at, dead.receivedMs)}`);
    expect(dead.body.coordinator_address).to.equal(lead.coordinator.address);
    await until(at, 5_000);
    expect(deadSummary(fx, 0)).to.deep.equal([`${victim.address} by ${lead.coordinator.address}`]);
    expectValidWebhooks(fx);
  });

  it('reports a black-holed peer dead, and nothing else', async () => {
    const victim = ranked.at(-1) as HostNode;
    const at = await fx.net.blackhole(victim.index);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(`black-holed ${victim.name} → peer_dead in ${secs(at, dead.receivedMs)}`);
    await until(at, WATCH_MS);
    expect(deadSummary(fx, 0), 'the only peer_dead').to.deep.equal([
      `${victim.address} by ${lead.coordinator.address}`,
    ]);
    expectValidWebhooks(fx);
  });

  it('a coordinator stopped in order (SIGTERM): its successor leads at once, and nobody reports it dead', async () => {
    const [old, next] = ranked as [HostNode, HostNode];
    const at = await fx.net.stop(old.index);
    const status = await fx.waitForClusterStatus(
      `cluster_status from ${next.address} above epoch ${lead.epoch}`,
      (b) => b.coordinator_address === next.address && b.epoch > lead.epoch,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `stopped coordinator ${old.name} → ${next.name}'s cluster_status in ${secs(at, status.receivedMs)}`,
    );
    await until(at, 6_000);
    expect(deadSummary(fx, at), 'peer_dead since the stop').to.deep.equal([]);
    expectValidWebhooks(fx);
  });

  it('fails over from a crashed coordinator, whose successor reports it dead', async () => {
    const [old, next] = ranked as [HostNode, HostNode];
    const at = await fx.net.kill(old.index);
    const status = await fx.waitForClusterStatus(
      `cluster_status from ${next.address} above epoch ${lead.epoch}`,
      (b) => b.coordinator_address === next.address && b.epoch > lead.epoch,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `crashed coordinator ${old.name} → ${next.name}'s cluster_status in ${secs(at, status.receivedMs)} (epoch ${status.body.epoch})`,
    );
    const dead = await fx.waitForPeerStatus(
      `peer_dead for the old coordinator ${old.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === old.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `… and its peer_dead in ${secs(at, dead.receivedMs)} (by ${dead.body.coordinator_address})`,
    );
    expect(dead.body.coordinator_address).to.equal(next.address);
    await until(at, 8_000);
    expect(deadSummary(fx, 0)).to.deep.equal([`${old.address} by ${next.address}`]);
    // Restarted, it takes over again (it outranks everyone) and resolves its own incident.
    const healedMs = await fx.net.restart(old.index);
    const recovered = await fx.waitForPeerStatus(
      `peer_recovered for ${old.address} after its restart`,
      (b) => b.event === 'peer_recovered' && b.peer.address === old.address,
      { sinceMs: healedMs, timeoutMs: DETECT_MS },
    );
    expect(recovered.body.dedup_key).to.equal(dead.body.dedup_key.replace(/:dead$/, ':recovered'));
    const again = await fx.waitForLeader({ timeoutMs: 20_000 });
    expect(again.coordinator.address).to.equal(old.address);
    expect(fx.deadReports(healedMs), 'no peer_dead after its restart').to.deep.equal([]);
    expectValidWebhooks(fx);
  });

  it('fails over from a black-holed coordinator, which itself reports nobody dead', async () => {
    const [old, next] = ranked as [HostNode, HostNode];
    const at = await fx.net.blackhole(old.index);
    const status = await fx.waitForClusterStatus(
      `cluster_status from ${next.address} above epoch ${lead.epoch}`,
      (b) => b.coordinator_address === next.address && b.epoch > lead.epoch,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `black-holed coordinator ${old.name} → ${next.name}'s cluster_status in ${secs(at, status.receivedMs)}`,
    );
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${old.address} from ${next.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === old.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `… and its peer_dead in ${secs(at, dead.receivedMs)} (by ${dead.body.coordinator_address})`,
    );
    await until(at, WATCH_MS);
    const fromIsolated = deadSummary(fx, 0).filter((s) => s.endsWith(`by ${old.address}`));
    expect(fromIsolated, `peer_dead sent by the isolated ${old.address}`).to.deep.equal([]);
    expect(deadSummary(fx, 0)).to.deep.equal([`${old.address} by ${next.address}`]);
    // Back on the network, it takes over again (it outranks everyone) and resolves its incident.
    const healedMs = await fx.net.heal();
    const recovered = await fx.waitForPeerStatus(
      `peer_recovered for ${old.address} after the heal`,
      (b) => b.event === 'peer_recovered' && b.peer.address === old.address,
      { sinceMs: healedMs, timeoutMs: RECOVERED_MS },
    );
    expect(recovered.body.dedup_key).to.equal(dead.body.dedup_key.replace(/:dead$/, ':recovered'));
    const again = await fx.waitForLeader({ timeoutMs: 20_000 });
    expect(again.coordinator.address).to.equal(old.address);
    expect(fx.deadReports(healedMs), 'no peer_dead after the heal').to.deep.equal([]);
    expectValidWebhooks(fx);
  });

  it('partition 3 | 2: the 3-side reports the 2, the 2-side reports nobody dead but says it cannot judge; heals to one coordinator', async () => {
    const two = ranked.slice(0, 2);
    const three = ranked.slice(2);
    const third = three[0] as HostNode;
    const at = await fx.net.partition(
      three.map((h) => h.index),
      two.map((h) => h.index),
    );
    const status = await fx.waitForClusterStatus(
      `cluster_status from ${third.address} (leader of the 3-side)`,
      (b) => b.coordinator_address === third.address && b.epoch > lead.epoch,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `partition → 3-side coordinator ${third.name}'s cluster_status in ${secs(at, status.receivedMs)}`,
    );
    for (const gone of two) {
      const dead = await fx.waitForPeerStatus(
        `peer_dead for ${gone.address} from ${third.address}`,
        (b) =>
          b.event === 'peer_dead' &&
          b.peer.address === gone.address &&
          b.coordinator_address === third.address,
        { sinceMs: at, timeoutMs: DETECT_MS },
      );
      log(`… peer_dead for ${gone.name} in ${secs(at, dead.receivedMs)}`);
    }
    const top = two[0] as HostNode;
    const isolated = await fx.waitForClusterStatus(
      `a cluster_status from ${top.address} (2-side) saying it suspects itself`,
      (b) => b.coordinator_address === top.address && b.self_suspect && b.unreachable_peers === 3,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(`… 2-side coordinator ${top.name} says self_suspect in ${secs(at, isolated.receivedMs)}`);
    // It cannot tell this partition from three failed nodes: it says so, naming them, no peer_dead.
    const cannot = await fx.waitForPeerStatus(
      `cannot_judge from ${top.address} naming the 3-side`,
      (b) => b.event === 'cannot_judge' && b.coordinator_address === top.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    expect(cannot.body.judgement?.unreachable.map((p) => p.address).sort()).to.deep.equal(
      three.map((h) => h.address).sort(),
    );
    log(`… 2-side coordinator ${top.name} says it cannot judge in ${secs(at, cannot.receivedMs)}`);
    await until(at, WATCH_MS);
    const during = deadSummary(fx, 0);
    log(`peer_dead during the partition: ${during.join('; ') || 'none'}`);

    // Heal before judging the partition, so that a wrong 2-side still shows whether it converges.
    const healedMs = await fx.net.heal();
    const again = await fx.waitForLeader({ timeoutMs: 20_000 });
    log(
      `healed → all 5 follow ${again.coordinator.name} (epoch ${again.epoch}) after ${secs(healedMs, Date.now())}`,
    );
    const twoAddresses = two.map((h) => h.address);
    const fromTwoSide = during.filter((s) => twoAddresses.some((a) => s.endsWith(`by ${a}`)));
    expect(fromTwoSide, 'peer_dead sent by the 2-side').to.deep.equal([]);
    expect([...during].sort()).to.deep.equal(
      twoAddresses.map((a) => `${a} by ${third.address}`).sort(),
    );
    expect(again.coordinator.address).to.equal(lead.coordinator.address);
    // The incidents the 3-side opened are resolved by the healed mesh's coordinator.
    for (const gone of two) {
      const dead = fx
        .deadReports(at)
        .find(
          (w) =>
            w.body.peer.address === gone.address && w.body.coordinator_address === third.address,
        );
      const recovered = await fx.waitForPeerStatus(
        `peer_recovered for ${gone.address} after the heal`,
        (b) => b.event === 'peer_recovered' && b.peer.address === gone.address,
        { sinceMs: healedMs, timeoutMs: RECOVERED_MS },
      );
      expect(recovered.body.dedup_key).to.equal(
        dead?.body.dedup_key.replace(/:dead$/, ':recovered'),
      );
      log(
        `… ${gone.name}'s incident resolved ${secs(healedMs, recovered.receivedMs)} after the heal`,
      );
    }
    await fx.waitForPeerStatus(
      `can_judge resolving ${top.address}'s cannot_judge`,
      (b) => b.dedup_key === cannot.body.dedup_key.replace(/:cannot-judge$/, ':can-judge'),
      { sinceMs: healedMs, timeoutMs: DETECT_MS },
    );
    expectValidWebhooks(fx);
  });

  it('reports a broken path between the coordinator and one peer as path_broken, not peer_dead', async () => {
    const coordinator = ranked[0] as HostNode;
    const victim = ranked.at(-1) as HostNode;
    const at = await fx.net.partition([coordinator.index], [victim.index]);
    const broken = await fx.waitForPeerStatus(
      `path_broken ${coordinator.address} -> ${victim.address}`,
      (b) => b.event === 'path_broken' && b.peer.address === victim.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(
      `path ${coordinator.name} -> ${victim.name} cut → path_broken in ${secs(at, broken.receivedMs)}`,
    );
    expect(broken.body.coordinator_address).to.equal(coordinator.address);
    expect(broken.body.peer.alive).to.equal(true);
    expect(broken.body.path?.witnesses.length, 'relays that reached it').to.be.greaterThan(0);
    await until(at, WATCH_MS);
    expect(deadSummary(fx, at), 'a broken path is not a dead peer').to.deep.equal([]);
    const healedMs = await fx.net.heal();
    // Restored once it has worked for RECOVERY_HOLD (flap damping).
    const hold = defaultMs('RECOVERY_HOLD');
    const restored = await fx.waitForPeerStatus(
      `path_restored ${coordinator.address} -> ${victim.address}`,
      (b) => b.event === 'path_restored' && b.peer.address === victim.address,
      { sinceMs: healedMs, timeoutMs: DETECT_MS + hold },
    );
    log(`healed → path_restored in ${secs(healedMs, restored.receivedMs)}`);
    expect(restored.receivedMs - healedMs, 'held for RECOVERY_HOLD').to.be.at.least(hold);
    expect(restored.body.dedup_key).to.equal(
      broken.body.dedup_key.replace(/:path-broken$/, ':path-restored'),
    );
    expect(fx.peerStatuses(at).filter((w) => w.body.event === 'path_broken')).to.have.length(1);
    expectValidWebhooks(fx);
  });

  it('20% packet loss on every host for 60 s: no peer_dead', async function () {
    this.timeout(120_000);
    const at = await fx.net.loss(0.2);
    await sleep(60_000);
    const healedMs = await fx.net.heal();
    await sleep(3_000);
    const statuses = fx.clusterStatuses(at);
    const terms = new Set(statuses.map((w) => `${w.body.coordinator_address}#${w.body.epoch}`));
    log(
      `60 s at 20% loss: ${fx.deadReports(at).length} peer_dead; ${fx.logCount('election-started', at)} elections held, ${fx.logCount('coordinator-changed', at)} coordinator-changed log lines; ${terms.size} coordinator terms in ${statuses.length} cluster_status: ${[...terms].join(' ')}`,
    );
    log(`(healed at +${secs(at, healedMs)})`);
    expect(deadSummary(fx, at)).to.deep.equal([]);
    expectValidWebhooks(fx);
  });

  it('reports a host that can send but not receive dead, and nothing else', async () => {
    const victim = ranked.at(-1) as HostNode;
    const at = await fx.net.oneWay(victim.index);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      { sinceMs: at, timeoutMs: DETECT_MS },
    );
    log(`one-way ${victim.name} → peer_dead in ${secs(at, dead.receivedMs)}`);
    await until(at, WATCH_MS);
    expect(deadSummary(fx, 0)).to.deep.equal([`${victim.address} by ${lead.coordinator.address}`]);
    expectValidWebhooks(fx);
  });

  it('a slow but alive peer (stopped 400 ms of every 1000 ms for 20 s): no peer_dead', async () => {
    const victim = ranked.at(-1) as HostNode;
    const at = fx.net.slow(victim.index, 400, 1_000);
    await sleep(20_000);
    await fx.net.heal();
    await sleep(2_000);
    log(
      `slow ${victim.name} for 20 s: ${fx.deadReports(at).length} peer_dead, ${fx.logCount('election-started', at)} elections held`,
    );
    expect(deadSummary(fx, 0)).to.deep.equal([]);
    expectValidWebhooks(fx);
  });
});
