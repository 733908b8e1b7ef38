// What an operator does to a running mesh: stops nodes in order (SIGTERM), pauses alerting for
// maintenance, runs it dry. Real node processes on loopback, a real receiver.
import { expect } from 'chai';
import type { MeshNode } from '../../src/demo/mesh.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { pollUntil, sleep } from '../support/poll.js';

/** Long enough for a crashed peer to be reported several times over (defaults: ~1–2 s). */
const LONGER_THAN_DETECTION_MS = 5_000;

async function statusOf(node: MeshNode): Promise<NodeStatus | undefined> {
  try {
    const res = await fetch(`http://${node.address}/status`, {
      signal: AbortSignal.timeout(2_000),
    });
    return res.ok ? ((await res.json()) as NodeStatus) : undefined;
  } catch {
    return undefined;
  }
}

/** Sends `signal` to node `index` and resolves with its exit code (or signal name). */
function stopWith(
  fx: MeshFixture,
  index: number,
  signal: NodeJS.Signals,
): Promise<number | string> {
  const child = fx.mesh.node(index).process;
  if (!child) throw new Error(`node ${index} is not running`);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, sig) => resolve(code ?? `signal ${sig}`)),
  );
  child.kill(signal);
  return exited;
}

async function openWindow(
  node: MeshNode,
  body: { nodes?: string[]; duration: string; reason: string },
): Promise<{ id: string; until: string }> {
  const res = await fetch(`http://${node.address}/maintenance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).to.equal(201);
  return ((await res.json()) as { window: { id: string; until: string } }).window;
}

describe('operations: SIGTERM hand-over, maintenance, dry run (real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();

  it('a coordinator stopped with SIGTERM hands over at once, exits 0 and is not reported dead', async () => {
    // A follower that merely stopped hearing it would wait COORDINATOR_TIMEOUT (20 s here).
    const fx = await startMesh({
      size: 4,
      env: { COORDINATOR_TIMEOUT: '20', ELECTION_TIMEOUT: '5' },
    });
    const { coordinator, epoch } = await fx.settled();
    const successor = byRank(fx.nodes.filter((n) => n !== coordinator))[0] as MeshNode;

    const sent = Date.now();
    const code = await stopWith(fx, coordinator.index, 'SIGTERM');
    const status = await fx.waitForClusterStatus(
      `an election status from ${successor.address}`,
      (b) => b.coordinator_address === successor.address && b.epoch > epoch,
      10_000,
    );
    expect(code, 'exit code').to.equal(0);
    expect(status.receivedMs - sent, 'ms from SIGTERM to the successor reporting').to.be.below(
      5_000,
    );
    expect(
      status.body.peer_map.map((p) => p.address),
      'the departed node is not in the new coordinator peer map',
    ).not.to.include(coordinator.address);

    await sleep(LONGER_THAN_DETECTION_MS);
    expect(fx.deadReports(coordinator.address), 'peer_dead about the departed node').to.have.length(
      0,
    );
    const seen = await statusOf(successor);
    expect(seen?.peers.find((p) => p.address === coordinator.address)?.state).to.equal('left');
  });

  it('a follower stopped with SIGTERM is not reported dead; restarted, it is probed again', async () => {
    const fx = await startMesh({ size: 4 });
    const { coordinator } = await fx.settled();
    const victim = lowestRanked(fx.nodes);

    expect(await stopWith(fx, victim.index, 'SIGTERM'), 'exit code').to.equal(0);
    await pollUntil(
      `${coordinator.address} showing ${victim.address} as left`,
      async () =>
        (await statusOf(coordinator))?.peers.find((p) => p.address === victim.address)?.state ===
          'left' || undefined,
      { timeoutMs: 5_000 },
    );
    await sleep(LONGER_THAN_DETECTION_MS);
    expect(fx.deadReports(victim.address), 'peer_dead about the departed node').to.have.length(0);

    // Back: it takes part again, so a crash of it now is reported.
    fx.mesh.startNode(victim.index);
    await pollUntil(
      `${coordinator.address} seeing ${victim.address} alive again`,
      async () =>
        (await statusOf(coordinator))?.peers.find((p) => p.address === victim.address)?.state ===
          'alive' || undefined,
      { timeoutMs: 20_000 },
    );
    await fx.mesh.kill(victim.index);
    await fx.waitForPeerStatus(
      `peer_dead for ${victim.address} after its restart and crash`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    );
  });

  it('DRY_RUN=true: a dead peer is decided and logged with its payload, but nothing is sent', async () => {
    const fx = await startMesh({ size: 3, env: { DRY_RUN: 'true' } });
    const { coordinator } = await fx.waitForLeader();
    const victim = lowestRanked(fx.nodes);
    await pollUntil(
      'the coordinator judging every peer alive',
      async () => {
        const s = await statusOf(coordinator);
        return s?.view.source === 'own' && s.peers.every((p) => p.state === 'alive')
          ? true
          : undefined;
      },
      { timeoutMs: 15_000 },
    );
    await fx.mesh.kill(victim.index);
    const line = await fx.mesh.waitForLog(
      coordinator.index,
      (l) =>
        l.event === 'dry-run-webhook' &&
        (l.payload as { event?: string } | undefined)?.event === 'peer_dead',
      15_000,
    );
    expect((line.payload as { peer: { address: string } }).peer.address).to.equal(victim.address);
    const status = await statusOf(coordinator);
    expect(status?.dry_run).to.equal(true);
    expect(fx.receiver.received, 'webhooks received in a dry run').to.have.length(0);
  });

  it('maintenance: a window opened on a follower holds the alert across a coordinator change, and a node still dead at its end is reported then', async () => {
    const fx = await startMesh({ size: 4 });
    const { coordinator } = await fx.settled();
    const [, successor, , victim] = byRank(fx.nodes) as [MeshNode, MeshNode, MeshNode, MeshNode];
    const opener = victim === successor ? coordinator : successor;
    // A window must name a node the pod knows (else 400): a follower learns its peers' names from
    // the coordinator's announced view, a moment after the election settles.
    await pollUntil(
      `${opener.address} naming ${victim.name}`,
      async () =>
        (await statusOf(opener))?.peers.some((p) => p.node_name === victim.name) || undefined,
      { timeoutMs: 10_000 },
    );
    const window = await openWindow(opener, {
      nodes: [victim.name],
      duration: '12s',
      reason: 'kernel upgrade',
    });
    await pollUntil(
      `${coordinator.address} knowing window ${window.id}`,
      async () =>
        (await statusOf(coordinator))?.maintenance.some((w) => w.id === window.id) || undefined,
      { timeoutMs: 5_000 },
    );

    await fx.mesh.kill(victim.index);
    const held = await pollUntil(
      `${coordinator.address} showing a held peer_dead for ${victim.address}`,
      async () => {
        const s = await statusOf(coordinator);
        const peer = s?.peers.find((p) => p.address === victim.address);
        const event = s?.events.find((e) => e.kind === 'peer_dead' && e.suppressed);
        return peer?.state === 'dead' && peer.in_maintenance && event ? s : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(held.maintenance.map((w) => w.reason)).to.deep.equal(['kernel upgrade']);
    expect(fx.deadReports(victim.address), 'peer_dead during the window').to.have.length(0);

    // The coordinator crashes: its successor knows the window and holds the alert as well.
    await fx.mesh.kill(coordinator.index);
    await fx.waitForLeader({ among: fx.running(), timeoutMs: 15_000 });
    // The followers may not have heard the victim dead before the crash (it died a heartbeat
    // before): the successor then judges it again, suspect first, dead a probe later.
    const successorStatus = await pollUntil(
      `${successor.address} leading with the window, ${victim.address} dead`,
      async () => {
        const s = await statusOf(successor);
        const victimState = s?.peers.find((p) => p.address === victim.address)?.state;
        return s?.view.source === 'own' &&
          s.maintenance.some((w) => w.id === window.id) &&
          victimState === 'dead'
          ? s
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(
      successorStatus.peers.find((p) => p.address === victim.address)?.in_maintenance,
    ).to.equal(true);
    const until = Date.parse(window.until);
    expect(fx.deadReports(victim.address), 'peer_dead before the window ends').to.have.length(0);

    const report = await fx.waitForPeerStatus(
      `the held peer_dead for ${victim.address} once the window is over`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
      until - Date.now() + 10_000,
    );
    expect(report.receivedMs, 'sent after the window ended').to.be.at.least(until);
  });
});
