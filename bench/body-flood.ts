// The body flood of issue 34, as a phase of the hostile-clients benchmark: from IPs that are not
// peers, every node gets 6 connections at a time each declaring a 4 MiB POST /coordinator and 32
// each declaring a 64 KiB POST /election, every one with a well-formed, fresh but bogus x-knh-auth
// header (signed with another secret) that passes the header check, their bodies never sent; each
// is opened again as soon as the node closes it. Meanwhile a follower is killed, then the
// coordinator. Counted: how soon the follower's death is reported, how soon a successor leads
// everywhere, false peer_dead, coordinators beyond the one successor, and signed peer requests the
// nodes turned away for want of room.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { PeerAuth } from '../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../src/auth/signature.js';
import type { LogLine, MeshNode } from '../src/demo/mesh.js';
import { targetOf } from '../test/support/hostile-clients.js';
import { pingNode, type LoopbackIpsMesh } from '../test/support/loopback-ips-mesh.js';
import type { HostileRow } from './hostile.js';

const LARGE = { path: '/coordinator', bytes: 4 * 1024 * 1024, connections: 6 };
const SMALL = { path: '/election', bytes: 64 * 1024, connections: 32 };
/** Flooding before the kill, for the nodes' budgets to be held as they would be. */
const BEFORE_KILL_MS = 3_000;
/** Flooding after each kill, for the report, the failover and anything false to show. */
const AFTER_KILL_MS = 15_000;
/** A node's crash reported within this, and its successor leading everywhere within the next. */
export const CRASH_TARGET_MS = 2_000;
export const FAILOVER_TARGET_MS = 2_500;

const bogus = new PeerAuth({
  secrets: () => ['not-the-mesh-secret'.repeat(4)],
  now: () => Date.now(),
  maxSkewMs: 30_000,
});

/** One connection declaring a body it never sends, opened again once closed, until `stop`. */
async function holdOpen(
  address: string,
  localAddress: string,
  { path, bytes }: { path: string; bytes: number },
  stopped: () => boolean,
): Promise<number> {
  const { host, port } = targetOf(address);
  let opened = 0;
  while (!stopped()) {
    const header = bogus.signRequest('POST', signedPath(address, path), Buffer.from('{}')).header;
    await new Promise<void>((resolve) => {
      const socket: Socket = connect({ host, port, localAddress }, () => {
        opened++;
        socket.write(
          `POST ${path} HTTP/1.1\r\nhost: ${address}\r\ncontent-type: application/json\r\n${AUTH_HEADER}: ${header}\r\ncontent-length: ${bytes}\r\n\r\n{`,
        );
      });
      const poll = setInterval(() => stopped() && socket.destroy(), 100);
      socket.on('data', () => undefined);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(poll);
        resolve();
      });
    });
    // Not faster than a real attacker keeping its connections: the rate limit is not the test.
    await sleep(50);
  }
  return opened;
}

function sumOf(text: string, pattern: RegExp): number {
  let sum = 0;
  for (const m of text.matchAll(pattern)) sum += Number(m[1]);
  return sum;
}

const BUSY_FROM_PEERS = /^knh_request_bodies_refused_total\{sender="peer",reason="busy"\} (\d+)/gm;

/** Time from now to the receiver getting `peer_dead` for `address` (null: not within `ms`). */
async function deadAfter(fx: LoopbackIpsMesh, address: string, since: number, ms: number) {
  return fx.receiver
    .waitFor((w) => {
      const b = w.body as { event?: string; peer?: { address?: string } };
      return w.path === '/peer' && b.event === 'peer_dead' && b.peer?.address === address;
    }, ms)
    .then(() => Date.now() - since)
    .catch(() => null);
}

export async function bodyFloodPhase(
  fx: LoopbackIpsMesh,
  coordinator: MeshNode,
  progress: (text: string) => void,
): Promise<{ rows: HostileRow[]; note: string }> {
  const follower = [...fx.nodes]
    .filter((n) => n !== coordinator)
    .sort((a, b) => (a.address < b.address ? -1 : 1))[0]!;
  const killed = new Set([follower.address, coordinator.address]);
  const survivors = fx.nodes.filter((n) => !killed.has(n.address));
  const busyOf = async (nodes: MeshNode[]) =>
    (await Promise.all(nodes.map((n) => fx.metrics(n).catch(() => '')))).reduce(
      (sum, t) => sum + sumOf(t, BUSY_FROM_PEERS),
      0,
    );
  const busyBefore = await busyOf(fx.nodes);
  const deadBefore = fx.deadReports().length;
  let stop = false;
  const attackers = fx.nodes.flatMap((node, i) => [
    ...Array.from({ length: LARGE.connections }, () =>
      holdOpen(node.address, `${fx.prefix}${150 + i}`, LARGE, () => stop),
    ),
    ...Array.from({ length: SMALL.connections }, () =>
      holdOpen(node.address, `${fx.prefix}${160 + i}`, SMALL, () => stop),
    ),
  ]);
  await sleep(BEFORE_KILL_MS);
  // A follower crashes: the coordinator reports it, under the flood.
  const followerKilledAt = Date.now();
  await fx.mesh.kill(follower.index);
  const crashMs = await deadAfter(fx, follower.address, followerKilledAt, AFTER_KILL_MS);
  progress(`hostile: body flood: ${follower.name} killed, reported after ${crashMs ?? '—'} ms`);
  // Then the coordinator: who leads, and when each survivor followed whom, from their own logs.
  const leading = new Set<string>();
  const changes: { node: string; to: string; atMs: number }[] = [];
  const onLog = (n: MeshNode, l: LogLine) => {
    if (killed.has(n.address)) return;
    if (l.event === 'leading') leading.add(n.address);
    const to = l.coordinatorAddress;
    if (l.event === 'coordinator-changed' && typeof to === 'string') {
      changes.push({ node: n.address, to, atMs: Date.now() });
    }
  };
  fx.mesh.on('log', onLog);
  const killedAt = Date.now();
  await fx.mesh.kill(coordinator.index);
  const reportedMs = await deadAfter(fx, coordinator.address, killedAt, AFTER_KILL_MS);
  await sleep(Math.max(0, killedAt + AFTER_KILL_MS - Date.now()));
  fx.mesh.off('log', onLog);
  stop = true;
  const opened = (await Promise.all(attackers)).reduce((a, b) => a + b, 0);
  const busy = (await busyOf(survivors)) - busyBefore;
  // The successor all survivors follow now; each followed it from its last change to it (the
  // successor logs its own change too).
  const pings = await Promise.all(survivors.map((n) => pingNode(n)));
  const successor = pings[0]?.coordinator?.address;
  const agreed =
    successor !== undefined && pings.every((p) => p?.coordinator?.address === successor);
  const followedAt = survivors.map(
    (n) => changes.filter((c) => c.node === n.address && c.to === successor).at(-1)?.atMs,
  );
  const failover =
    agreed && followedAt.every((t) => t !== undefined) ? Math.max(...followedAt) - killedAt : null;
  const falseDead = fx
    .deadReports()
    .slice(deadBefore)
    .filter((d) => !killed.has(d.peer.address)).length;
  const extra = Math.max(0, leading.size - 1);
  const note = `${opened} connections opened by the flood`;
  progress(
    `hostile: body flood: coordinator ${coordinator.name} killed: every survivor following a successor after ${failover ?? '—'} ms, its peer_dead after ${reportedMs ?? '—'} ms; ${note}`,
  );
  return {
    note,
    rows: [
      {
        name: 'Body flood: signed peer requests answered 503 (`knh_request_bodies_refused_total{sender="peer",reason="busy"}`, the survivors)',
        target: 0,
        value: busy,
        note,
      },
      {
        name: 'Body flood: a crashed follower reported `peer_dead` (ms)',
        target: CRASH_TARGET_MS,
        value: crashMs ?? Infinity,
      },
      {
        name: 'Body flood: the coordinator crashed next, every survivor following one successor (ms)',
        target: FAILOVER_TARGET_MS,
        value: failover ?? Infinity,
        note: `its peer_dead after ${reportedMs ?? '—'} ms`,
      },
      { name: 'Body flood: false `peer_dead`', target: 0, value: falseDead },
      { name: 'Body flood: coordinators beyond the one successor', target: 0, value: extra },
    ],
  };
}
