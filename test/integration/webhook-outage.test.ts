// A receiver that is down when a peer dies still gets the alert once it is back (retries with backoff).
import { expect } from 'chai';
import type { Receiver } from '../../src/demo/webhook-sink.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { pollUntil, sleep } from '../support/poll.js';

interface Outage {
  begin(receiver: Receiver): Promise<void> | void;
  end(receiver: Receiver): Promise<void> | void;
}

/** Kills a peer during `outage`, with the coordinator seen retrying; the alert arrives after it. */
async function peerDiesDuringOutage(fx: MeshFixture, outage: Outage): Promise<void> {
  const { coordinator } = await fx.settled();
  const victim = lowestRanked(fx.nodes);
  const stem = `knh:${victim.address}:`;

  await outage.begin(fx.receiver);
  const before = fx.receiver.received.length;
  const outageStartedMs = Date.now();
  await fx.mesh.kill(victim.index);

  // The alert was tried and failed more than once: the outage was really in its way.
  const failures = () =>
    coordinator.logs.filter(
      (l) =>
        l.msg === 'webhook failed; will retry' &&
        typeof l.key === 'string' &&
        l.key.startsWith(stem),
    ).length;
  await pollUntil(
    `${coordinator.address} retrying the peer_dead webhook`,
    () => (failures() >= 3 ? true : undefined),
    { timeoutMs: 15_000, describe: () => `${failures()} failed attempts` },
  );
  await sleep(Math.max(0, 4_000 - (Date.now() - outageStartedMs)));
  expect(fx.receiver.received.length, 'nothing delivered during the outage').to.equal(before);
  await outage.end(fx.receiver);

  // Retries back off 0.5 s doubling: the next one comes at most ~8 s after the outage ends.
  const dead = await fx.waitForPeerStatus(
    `peer_dead for ${victim.address} after the outage`,
    (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    20_000,
  );
  expect(dead.errors).to.deep.equal([]);
  expect(dead.body.peer.alive).to.equal(false);
  expect(dead.body.coordinator_address).to.equal(coordinator.address);
  expect(dead.body.dedup_key.startsWith(stem)).to.equal(true);

  const status = await fx.waitForClusterStatus(
    `cluster status showing ${victim.address} dead after the outage`,
    (b) => b.peer_map.some((p) => p.address === victim.address && p.health === 'dead'),
    20_000,
  );
  expect(status.errors).to.deep.equal([]);
  expect(status.body.coordinator_address).to.equal(coordinator.address);

  await sleep(2_000);
  const copies = fx.peerStatuses();
  expect(copies.map((w) => w.body.peer.address)).to.satisfy((a: string[]) =>
    a.every((x) => x === victim.address),
  );
  expect(new Set(copies.map((w) => w.body.dedup_key))).to.deep.equal(
    new Set([dead.body.dedup_key]),
  );
}

describe('webhook receiver outage (5 real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();

  it('delivers a peer_dead that failed with 503 once the receiver answers again', async () => {
    const fx = await startMesh();
    await peerDiesDuringOutage(fx, {
      begin: (r) => r.outage(503),
      end: (r) => r.outage(null),
    });
  });

  it('delivers a peer_dead that its coordinator could not deliver before it died: the successor does', async () => {
    const fx = await startMesh();
    const first = await fx.settled();
    const [old, successor] = byRank(fx.nodes);
    const victim = lowestRanked(fx.nodes);
    if (!old || !successor) throw new Error('a mesh of at least 2 nodes');
    fx.receiver.outage(503);
    await fx.mesh.kill(victim.index);
    const tried = () =>
      old.logs.some(
        (l) =>
          l.msg === 'webhook failed; will retry' &&
          typeof l.key === 'string' &&
          l.key.startsWith(`knh:${victim.address}:`),
      );
    await pollUntil(`${old.address} trying the peer_dead webhook`, () => tried() || undefined, {
      timeoutMs: 15_000,
    });
    // Followers learn of the undelivered event from the announcements (every 0.5 s).
    await sleep(1_000);
    await fx.mesh.kill(old.index);
    await fx.waitForLeader({ epochAbove: first.epoch });
    fx.receiver.outage(null);

    const dead = await fx.waitForPeerStatus(
      `the old coordinator's peer_dead for ${victim.address}, delivered by ${successor.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      20_000,
    );
    expect(dead.errors).to.deep.equal([]);
    expect(dead.body.coordinator_address, 'decided by the old coordinator').to.equal(old.address);
    expect(dead.body.epoch).to.equal(first.epoch);
    await pollUntil(
      `${successor.address} logging that it delivered ${dead.body.dedup_key}`,
      () =>
        successor.logs.some(
          (l) => l.msg === 'webhook delivered' && l.key === dead.body.dedup_key,
        ) || undefined,
      { timeoutMs: 5_000 },
    );
    await fx.waitForPeerStatus(
      `peer_dead for the old coordinator from ${successor.address}`,
      (b) =>
        b.event === 'peer_dead' &&
        b.peer.address === old.address &&
        b.coordinator_address === successor.address,
    );
    await sleep(2_000);
    const victimReports = fx.deadReports(victim.address);
    expect(
      new Set(victimReports.map((w) => w.body.dedup_key)),
      'one incident, never decided again',
    ).to.deep.equal(new Set([dead.body.dedup_key]));
  });

  it('a coordinator that yields to a returning higher-ranked node hands it what it could not deliver, delivered once', async () => {
    const fx = await startMesh();
    const first = await fx.settled();
    const [top, successor] = byRank(fx.nodes);
    const victim = lowestRanked(fx.nodes);
    if (!top || !successor) throw new Error('a mesh of at least 2 nodes');
    await fx.mesh.kill(top.index);
    await fx.waitForPeerStatus(
      `peer_dead for ${top.address} from ${successor.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === top.address,
    );
    const second = await fx.waitForLeader({ epochAbove: first.epoch });
    expect(second.coordinator.address).to.equal(successor.address);
    fx.receiver.outage(503);
    await fx.mesh.kill(victim.index);
    const tried = () =>
      successor.logs.some(
        (l) =>
          l.msg === 'webhook failed; will retry' &&
          String(l.key).startsWith(`knh:${victim.address}:`),
      );
    await pollUntil(`${successor.address} trying the peer_dead`, () => tried() || undefined, {
      timeoutMs: 15_000,
    });
    // Back, TOP is refused as stale by peers naming SUCCESSOR, takes a newer term, and SUCCESSOR
    // yields, handing over the peer_dead it withdrew unsent: TOP's predecessor, so it is taken.
    const since = top.logs.length;
    await fx.restart(top.index);
    const back = await fx.waitForLeader({ epochAbove: second.epoch });
    expect(back.coordinator.address).to.equal(top.address);
    const taken = await pollUntil(
      `${top.address} taking ${successor.address}'s hand-over of the unsent peer_dead`,
      () =>
        top.logs
          .slice(since)
          .find(
            (l) =>
              l.event === 'handover-taken' &&
              l.from === successor.address &&
              Number(l.undelivered) >= 1,
          ),
      { timeoutMs: 15_000 },
    );
    expect(taken.from).to.equal(successor.address);
    fx.receiver.outage(null);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}, decided by ${successor.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      20_000,
    );
    expect(dead.body.coordinator_address).to.equal(successor.address);
    await sleep(3_000);
    expect(
      new Set(fx.deadReports(victim.address).map((w) => w.body.dedup_key)),
      'one incident',
    ).to.deep.equal(new Set([dead.body.dedup_key]));
    expect(top.logs.slice(since).filter((l) => l.event === 'handover-refused')).to.deep.equal([]);
  });

  it('still delivers what a coordinator decided when it is stopped (SIGTERM) with its receiver down', async () => {
    // Two nodes: when the coordinator leaves, nobody else would send it.
    const fx = await startMesh({ size: 2, env: { SHUTDOWN_GRACE_PERIOD: '20' } });
    const { coordinator } = await fx.settled();
    const victim = lowestRanked(fx.nodes);
    fx.receiver.outage(503);
    await fx.mesh.kill(victim.index);
    const tried = () =>
      coordinator.logs.some(
        (l) =>
          l.msg === 'webhook failed; will retry' &&
          String(l.key).startsWith(`knh:${victim.address}:`),
      );
    await pollUntil(`${coordinator.address} trying the peer_dead`, () => tried() || undefined, {
      timeoutMs: 15_000,
    });
    const process = coordinator.process;
    if (!process) throw new Error('the coordinator is not running');
    const exited = new Promise((resolve) => process.once('exit', resolve));
    process.kill('SIGTERM');
    await sleep(500);
    fx.receiver.outage(null);
    const dead = await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}, drained by the leaving coordinator`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      20_000,
    );
    expect(dead.body.coordinator_address).to.equal(coordinator.address);
    await exited;
  });

  it('delivers a peer_dead whose connections were refused once the receiver is back', async () => {
    const fx = await startMesh();
    await peerDiesDuringOutage(fx, {
      begin: (r) => r.goDown(),
      end: (r) => r.comeBack(),
    });
  });
});
