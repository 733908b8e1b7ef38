// The benchmark's procedures: each starts, crashes and restarts real nodes and times the webhooks.
import { compareRank } from '../src/wire/node-ref.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePorts, LocalMesh, type MeshNode } from '../src/demo/mesh.js';
import {
  allAlive,
  clusterStatusOf,
  peerStatusOf,
  waitForWebhook,
} from '../src/demo/received-webhooks.js';
import type { Receiver } from '../src/demo/webhook-sink.js';
import type { LivenessLedger } from './liveness-ledger.js';
import { defaultMs } from '../src/config/settings.js';

/** FLAP_WINDOW and a margin: how long a crashed node is spared before it is crashed again. */
const FLAP_SPACING_MS = defaultMs('FLAP_WINDOW') + 5_000;

export const NODES = 5;
/** A wait longer than KNH's worst time (19 s), so a slow run is measured rather than cut short. */
const WAIT_MS = 30_000;
/** Pause after each run so the next starts from a quiet mesh (one round interval). */
const SETTLE_MS = 1_000;

export interface BenchContext {
  receiver: Receiver;
  ledger: LivenessLedger;
  /** Node settings: only the webhook URLs. */
  env: Record<string, string>;
  repeat: number;
  progress(text: string): void;
  /** Every mesh started, so that an interrupted run can kill their processes. */
  meshes: LocalMesh[];
}

/** A running mesh and the coordinator it settled on. */
export interface Settled {
  mesh: LocalMesh;
  leader: MeshNode;
  /**
   * From spawning the processes to the first cluster status from the highest-ranked node listing
   * every peer alive (reason `election`, or `change` when peers still starting were not yet seen
   * in its first round).
   */
  ms: number | null;
  /** From spawning the processes to the last one logging `listening`. */
  startupMs: number;
}

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A wait that failed: shown in the progress, and a missing sample (null). */
function failed(ctx: BenchContext, err: unknown): null {
  ctx.progress(`  ${msg(err)}`);
  return null;
}

/**
 * Spawns a mesh; a mesh whose nodes did not all come up (a free port taken meanwhile by another
 * process, or start-up slower than LocalMesh's 10 s) is stopped and spawned again, up to 3 times.
 */
async function spawnMesh(ctx: BenchContext): Promise<{ mesh: LocalMesh; spawnedMs: number }> {
  for (let attempt = 1; ; attempt++) {
    const mesh = new LocalMesh({ size: NODES, ports: await freePorts(NODES), env: ctx.env });
    ctx.meshes.push(mesh);
    ctx.ledger.watch(mesh);
    mesh.on('stderr', (node: MeshNode, text: string) =>
      process.stderr.write(`${node.name}: ${text}`),
    );
    const spawnedMs = Date.now(); // start() spawns synchronously when given its ports
    try {
      await mesh.start();
      return { mesh, spawnedMs };
    } catch (err) {
      await mesh.stop();
      if (attempt === 3) throw err;
      ctx.progress(`  mesh did not start (${msg(err)}); spawning a fresh one`);
    }
  }
}

async function startMesh(ctx: BenchContext): Promise<Settled> {
  const { mesh, spawnedMs } = await spawnMesh(ctx);
  const startupMs = Date.now() - spawnedMs;
  const top = [...mesh.nodes].sort((a, b) => compareRank(b.address, a.address))[0]?.address;
  try {
    const { webhook, value } = await waitForWebhook(
      ctx.receiver,
      (w) => {
        const c = clusterStatusOf(w);
        return c &&
          c.reason !== 'periodic' &&
          c.coordinator_address === top &&
          allAlive(c, NODES - 1)
          ? c
          : null;
      },
      { timeoutMs: WAIT_MS, sinceMs: spawnedMs, what: 'a full cluster status from the top node' },
    );
    const leader = mesh.byAddress(value.coordinator_address) as MeshNode;
    return { mesh, leader, ms: webhook.receivedMs - spawnedMs, startupMs };
  } catch (err) {
    failed(ctx, err);
    return { mesh, leader: mesh.node(NODES), ms: null, startupMs };
  }
}

/** Waits until each of `nodes` has logged following `leader` since `sinceMs`. */
async function follow(
  mesh: LocalMesh,
  nodes: readonly MeshNode[],
  leader: MeshNode,
  sinceMs: number,
): Promise<void> {
  await Promise.all(
    nodes.map((n) =>
      mesh.waitForLog(
        n.index,
        (l) =>
          l.event === 'coordinator-changed' &&
          l.coordinatorAddress === leader.address &&
          Date.parse(l.time) >= sinceMs,
        WAIT_MS,
      ),
    ),
  );
}

/** Fresh mesh per run: spawn → first full cluster status. Leaves the last mesh running. */
export async function measureElection(ctx: BenchContext) {
  const samples: (number | null)[] = [];
  const startup: number[] = [];
  for (let run = 1; ; run++) {
    const settled = await startMesh(ctx);
    samples.push(settled.ms);
    startup.push(settled.startupMs);
    ctx.progress(
      `election run ${run}/${ctx.repeat}: ${settled.ms ?? 'timed out'} ms (all listening after ${settled.startupMs} ms), coordinator ${settled.leader.name}`,
    );
    if (run === ctx.repeat) {
      await sleep(SETTLE_MS);
      return { samples, startup, last: settled };
    }
    await settled.mesh.stop();
    await sleep(SETTLE_MS);
  }
}

/** Kills a different non-coordinator each run; times its peer_dead, then its restart's peer_recovered. */
export async function measurePeerCrash(ctx: BenchContext, { mesh, leader }: Settled) {
  const dead: (number | null)[] = [];
  const recovered: (number | null)[] = [];
  const report = (err: unknown) => failed(ctx, err);
  const victims = mesh.nodes.filter((n) => n !== leader);
  // A node killed again within FLAP_WINDOW of its last crash is flapping (damped: one page, its
  // recovery held FLAP_STABLE): each run's victim has had a minute since, so runs are independent.
  const lastKilled = new Map<string, number>();
  for (let run = 1; run <= ctx.repeat; run++) {
    const victim = victims[(run - 1) % victims.length] as MeshNode;
    const since = lastKilled.get(victim.address);
    if (since !== undefined) await sleep(Math.max(0, since + FLAP_SPACING_MS - Date.now()));
    const peerStatus = (event: 'peer_dead' | 'peer_recovered', sinceMs: number) =>
      waitForWebhook(
        ctx.receiver,
        (w) => {
          const p = peerStatusOf(w);
          return p?.event === event && p.peer.address === victim.address ? p : null;
        },
        { timeoutMs: WAIT_MS, sinceMs, what: `${event} for ${victim.name}` },
      ).then(({ webhook }) => webhook.receivedMs - sinceMs, report);
    const killedMs = Date.now();
    lastKilled.set(victim.address, killedMs);
    ctx.ledger.down(victim.address, killedMs);
    await mesh.kill(victim.index);
    const d = await peerStatus('peer_dead', killedMs);
    const restartedMs = Date.now();
    await mesh.restart(victim.index);
    // With no dead alert there is nothing to recover from; then only wait for it to rejoin.
    const r = d === null ? null : await peerStatus('peer_recovered', restartedMs);
    dead.push(d);
    recovered.push(r);
    ctx.progress(
      `peer crash run ${run}/${ctx.repeat} (${victim.name}): peer_dead ${d ?? 'timed out'} ms, peer_recovered ${r ?? '—'} ms after restart`,
    );
    await follow(mesh, [victim], leader, restartedMs).catch(report);
    await sleep(SETTLE_MS);
  }
  return { dead, recovered };
}

/**
 * Kills the coordinator (SIGKILL: a crash; SIGTERM: an orderly stop, which hands over); times a
 * successor's cluster status, then the restarted one's takeover. With SIGTERM, also counts the
 * peer_dead webhooks about the stopped coordinator (there should be none).
 */
export async function measureCoordinatorCrash(
  ctx: BenchContext,
  { mesh, leader }: Settled,
  signal: 'SIGKILL' | 'SIGTERM' = 'SIGKILL',
) {
  const takeover: (number | null)[] = [];
  let deadReports = 0;
  const back: (number | null)[] = [];
  const report = (err: unknown) => failed(ctx, err);
  const clusterStatusFrom = (pred: (address: string) => boolean, sinceMs: number, what: string) =>
    waitForWebhook(
      ctx.receiver,
      (w) => {
        const c = clusterStatusOf(w);
        return c && mesh.byAddress(c.coordinator_address) && pred(c.coordinator_address) ? c : null;
      },
      { timeoutMs: WAIT_MS, sinceMs, what },
    ).then(
      ({ webhook, value }) => ({ ms: webhook.receivedMs - sinceMs, by: value.coordinator_address }),
      report,
    );
  for (let run = 1; run <= ctx.repeat; run++) {
    const killedMs = Date.now();
    ctx.ledger.down(leader.address, killedMs);
    await mesh.kill(leader.index, signal);
    const next = await clusterStatusFrom((a) => a !== leader.address, killedMs, 'a successor');
    if (signal === 'SIGTERM') {
      // Long enough for a crash to be reported (about 1–2 s): an orderly stop must not be.
      await sleep(5_000);
      deadReports += ctx.receiver.received.filter((w) => {
        const p = peerStatusOf(w);
        return (
          w.receivedMs >= killedMs && p?.event === 'peer_dead' && p.peer.address === leader.address
        );
      }).length;
    }
    const restartedMs = Date.now();
    await mesh.restart(leader.index);
    const again = await clusterStatusFrom(
      (a) => a === leader.address,
      restartedMs,
      `${leader.name} again`,
    );
    takeover.push(next?.ms ?? null);
    back.push(again?.ms ?? null);
    const successor = next ? (mesh.byAddress(next.by)?.name ?? next.by) : 'none';
    ctx.progress(
      `coordinator ${signal} run ${run}/${ctx.repeat} (${leader.name}): ${successor} reported after ${next?.ms ?? 'timed out'} ms; ${leader.name} back after ${again?.ms ?? 'timed out'} ms`,
    );
    const others = mesh.nodes.filter((n) => n !== leader);
    await follow(mesh, others, leader, restartedMs).catch(report);
    await sleep(SETTLE_MS);
  }
  return { takeover, back, deadReports };
}

/** Nothing is killed: every peer_dead in the window is for a live peer. */
export async function steadyRun(ctx: BenchContext, { mesh }: Settled, seconds: number) {
  const startMs = Date.now();
  let coordinatorChanges = 0;
  const onLog = (_n: MeshNode, l: { event?: string }) => {
    if (l.event === 'coordinator-changed') coordinatorChanges++;
  };
  mesh.on('log', onLog);
  const step = Math.min(60, seconds);
  for (let done = 0; done < seconds; done += step) {
    await sleep(Math.min(step, seconds - done) * 1000);
    const dead = ctx.receiver.received.filter(
      (w) => w.receivedMs >= startMs && peerStatusOf(w)?.event === 'peer_dead',
    ).length;
    ctx.progress(
      `steady run: ${Math.min(done + step, seconds)}/${seconds} s, ${dead} peer_dead, ${coordinatorChanges} coordinator changes`,
    );
  }
  mesh.off('log', onLog);
  const window = ctx.receiver.received.filter((w) => w.receivedMs >= startMs);
  return {
    peerDead: window.filter((w) => peerStatusOf(w)?.event === 'peer_dead').length,
    coordinatorChanges,
    clusterStatuses: window.filter((w) => clusterStatusOf(w) !== null).length,
  };
}
