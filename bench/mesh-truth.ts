// `npm run bench:truth`: whether a mesh tells the truth when CPU is short (issue 32). BENCH_TRUTH_SIZE
// (default 30) knh processes spawned at once on this machine (2 cores: far fewer cores than
// nodes), each on its own loopback IP, default settings, on the image's Node with its ENTRYPOINT's
// flags and daemonset.yaml's NODE_OPTIONS. From the webhooks they send: how long until a cluster
// status lists every node alive, and whether start-up told any lie meanwhile (a starting node
// listed `alive: false`, a `peer_dead`, one epoch posted by two coordinators); then a follower is
// crashed (SIGKILL) and its peer_dead timed. Slower is allowed, lies are not. BENCH_TRUTH_RUNS
// (default 2) meshes, one after the other.
import { setTimeout as sleep } from 'node:timers/promises';
import { allAlive, clusterStatusOf, peerStatusOf } from '../src/demo/received-webhooks.js';
import type { ReceivedWebhook } from '../src/demo/webhook-sink.js';
import { LoopbackIpsMesh } from '../test/support/loopback-ips-mesh.js';
import { positiveInt } from './entry.js';
import { onImageNode } from './image-node.js';
import { asDeployed, deployedText, type Deployed } from './manifest.js';
import { machineFacts } from './report.js';

/** The targets. */
const FULL_STATUS_TARGET_MS = 15_000;
const CRASH_TARGET_MS = 3_000;
/** How long a run waits for the first full cluster status, and for the crash's peer_dead. */
const FULL_STATUS_WAIT_MS = 90_000;
const CRASH_WAIT_MS = 30_000;
/** After the first full status, the mesh is left alone this long before the crash (lies count). */
const QUIET_MS = 15_000;

interface TruthRun {
  fullStatusMs: number | null;
  aliveFalse: number;
  peerDead: number;
  splitEpochs: number;
  crashMs: number | null;
}

/** The start-up's lies among the webhooks received before `untilMs`. */
function lies(received: readonly ReceivedWebhook[], untilMs: number) {
  let aliveFalse = 0;
  let peerDead = 0;
  const coordinatorsOf = new Map<number, Set<string>>();
  for (const w of received) {
    if (w.receivedMs >= untilMs) continue;
    const status = clusterStatusOf(w);
    if (status) {
      aliveFalse += status.peer_map.filter((p) => !p.alive).length;
      const set = coordinatorsOf.get(status.epoch) ?? new Set<string>();
      set.add(status.coordinator_address);
      coordinatorsOf.set(status.epoch, set);
    }
    if (peerStatusOf(w)?.event === 'peer_dead') peerDead++;
  }
  const splitEpochs = [...coordinatorsOf.values()].filter((s) => s.size > 1).length;
  return { aliveFalse, peerDead, splitEpochs };
}

async function run(size: number, deployed: Deployed): Promise<TruthRun> {
  const spawnedMs = Date.now();
  const fx = await LoopbackIpsMesh.start({ size, ...deployed });
  try {
    const peers = size - 1;
    const full = await fx.receiver
      .waitFor((w) => {
        const s = clusterStatusOf(w);
        return s !== null && allAlive(s, peers);
      }, FULL_STATUS_WAIT_MS)
      .catch(() => null);
    const fullStatusMs = full ? full.receivedMs - spawnedMs : null;
    if (full) await sleep(QUIET_MS);
    const crashAtMs = Date.now();
    const told = lies(fx.receiver.received, crashAtMs);
    let crashMs: number | null = null;
    if (full) {
      const coordinator = (full.body as { coordinator_address: string }).coordinator_address;
      const victim = fx.nodes.find((n) => n.address !== coordinator)!;
      victim.process?.kill('SIGKILL');
      const dead = await fx.receiver
        .waitFor((w) => {
          const p = peerStatusOf(w);
          return p?.event === 'peer_dead' && p.peer.address === victim.address;
        }, CRASH_WAIT_MS)
        .catch(() => null);
      crashMs = dead ? dead.receivedMs - crashAtMs : null;
    }
    return { fullStatusMs, ...told, crashMs };
  } finally {
    await fx.stop();
  }
}

async function main(): Promise<void> {
  if (onImageNode()) return;
  const size = positiveInt('BENCH_TRUTH_SIZE', 30);
  if (size < 2) throw new Error('BENCH_TRUTH_SIZE: a mesh of 2 nodes at least (one is crashed)');
  const runs = positiveInt('BENCH_TRUTH_RUNS', 2);
  const deployed = asDeployed();
  const start = machineFacts();
  const results: TruthRun[] = [];
  for (let i = 0; i < runs; i++) {
    results.push(await run(size, deployed));
    await sleep(5_000); // the last mesh's sockets and CPU settle
  }
  const s = (ms: number | null) => (ms === null ? 'none' : `${(ms / 1000).toFixed(1)} s`);
  const each = <T>(f: (r: TruthRun) => T) => results.map(f).join(', ');
  const verdict = (ok: boolean) => (ok ? 'PASS' : '**FAIL**');
  const fullOk = results.every(
    (r) => r.fullStatusMs !== null && r.fullStatusMs <= FULL_STATUS_TARGET_MS,
  );
  const crashOk = results.every((r) => r.crashMs !== null && r.crashMs <= CRASH_TARGET_MS);
  console.log(
    [
      `Truth when CPU is short: ${size} knh nodes spawned at once on ${start.nproc} CPUs (${start.cpu}), loopback IPs, static discovery, default settings; Node ${process.version} (the image's line) with ${deployedText(deployed)}. ${runs} runs; load average at start ${start.load}, at end ${machineFacts().load}. Lies are counted in every webhook from the spawn until ${QUIET_MS / 1000} s after the first full cluster status.`,
      '',
      '| Measurement | Target | Runs |',
      '| --- | --- | --- |',
      `| First cluster status listing every node alive, after the spawn | ≤ ${FULL_STATUS_TARGET_MS / 1000} s | ${verdict(fullOk)}: ${each((r) => s(r.fullStatusMs))} |`,
      `| \`alive: false\` entries in cluster statuses (nodes starting) | 0 | ${verdict(results.every((r) => r.aliveFalse === 0))}: ${each((r) => r.aliveFalse)} |`,
      `| \`peer_dead\` webhooks | 0 | ${verdict(results.every((r) => r.peerDead === 0))}: ${each((r) => r.peerDead)} |`,
      `| Epochs posted by two coordinators | 0 | ${verdict(results.every((r) => r.splitEpochs === 0))}: ${each((r) => r.splitEpochs)} |`,
      `| A follower crashed (SIGKILL) → its \`peer_dead\` | ≤ ${CRASH_TARGET_MS / 1000} s | ${verdict(crashOk)}: ${each((r) => s(r.crashMs))} |`,
    ].join('\n'),
  );
}

await main();
