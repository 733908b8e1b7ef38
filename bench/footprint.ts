// `npm run bench:footprint`: what a knh pod uses as deployed, to set the manifest's requests from.
// Meshes of real knh processes on loopback (each its own IP, as pods), finding each other in a
// Service's EndpointSlices through the real Kubernetes client (served by the in-repo API server),
// on the image's Node with its ENTRYPOINT's flags and daemonset.yaml's NODE_OPTIONS, pair probing
// at its default; after a warm-up, every process's RSS and CPU are sampled from /proc over a
// window. Prints the figures as markdown, a table a mesh.
// BENCH_FOOTPRINT_SIZES (default 5,30: at 30 each node probes 20 others, PAIR_PROBES' default),
// BENCH_FOOTPRINT_WARMUP_SECONDS (60), BENCH_FOOTPRINT_SECONDS (60).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeKubeApi } from '../test/support/fake-kube-api.js';
import { LoopbackIpsMesh, sampleOf } from '../test/support/loopback-ips-mesh.js';
import type { MeshNode } from '../src/demo/mesh.js';
import { onImageNode } from './image-node.js';
import { asDeployed, deployedText, type Deployed } from './manifest.js';
import { machineFacts, median } from './report.js';
import { cpuMsOf, memoryOf, rssOf } from './proc-usage.js';

const NAMESPACE = 'knh';
const SERVICE = 'knh';

const numberFrom = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

const sizesFrom = (name: string, fallback: number[]) => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const sizes = raw.split(',').map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 2)) {
    throw new Error(`${name} must be a comma-separated list of mesh sizes, each 2 or more`);
  }
  return sizes;
};

interface Usage {
  node: MeshNode;
  rssMaxMb: number;
  rssEndMb: number;
  anonEndMb: number;
  fileEndMb: number;
  cpuPercent: number;
}

const mb = (bytes: number) => bytes / 1_000_000;

/** Samples every node's RSS each second over `seconds`, and its CPU over the whole window. */
async function sample(nodes: MeshNode[], seconds: number): Promise<Usage[]> {
  const pids = nodes.map((n) => {
    const pid = n.process?.pid;
    if (pid === undefined) throw new Error(`${n.name} is not running`);
    return pid;
  });
  const rssMax = pids.map(() => 0);
  const cpuStart = pids.map(cpuMsOf);
  const started = performance.now();
  for (let s = 0; s < seconds; s++) {
    pids.forEach((pid, i) => (rssMax[i] = Math.max(rssMax[i]!, rssOf(pid) ?? 0)));
    await sleep(1_000);
  }
  const elapsedMs = performance.now() - started;
  return nodes.map((node, i) => {
    const cpuPercent = ((cpuMsOf(pids[i]!) - cpuStart[i]!) / elapsedMs) * 100;
    const end = memoryOf(pids[i]!) ?? { rss: 0, anon: 0, file: 0 };
    return {
      node,
      rssMaxMb: mb(rssMax[i]!),
      rssEndMb: mb(end.rss),
      anonEndMb: mb(end.anon),
      fileEndMb: mb(end.file),
      cpuPercent,
    };
  });
}

interface MeshRun {
  size: number;
  settledS: number;
  usage: Usage[];
  coordinator: MeshNode;
  okPaths: number | undefined;
}

/** One mesh of `size` nodes, as deployed: started, settled, warmed up, sampled, stopped. */
async function runMesh(
  size: number,
  warmupS: number,
  windowS: number,
  deployed: Deployed,
): Promise<MeshRun> {
  const api = await new FakeKubeApi().start();
  const dir = mkdtempSync(join(tmpdir(), 'knh-footprint-'));
  let fx: LoopbackIpsMesh | null = null;
  try {
    fx = await LoopbackIpsMesh.start({
      size,
      nodeArgs: deployed.nodeArgs,
      env: {
        DISCOVERY: 'kubernetes',
        KUBECONFIG: api.writeKubeconfig(join(dir, 'kubeconfig')),
        NAMESPACE,
        SERVICE_NAME: SERVICE,
        PEERS: '',
        ...deployed.env,
      },
    });
    const spawnedMs = Date.now();
    // One slice, as a Service of fewer than 100 pods has; the nodes wait until they see themselves.
    api.upsert(
      NAMESPACE,
      SERVICE,
      `${SERVICE}-0`,
      fx.nodes[0]!.port,
      fx.nodes.map((n) => ({ ip: n.host, nodeName: n.name })),
    );
    const { coordinator } = await fx.settled(120_000);
    const settledS = (Date.now() - spawnedMs) / 1000;
    await sleep(Math.max(0, warmupS * 1000 - (Date.now() - spawnedMs)));
    const usage = await sample(fx.nodes, windowS);
    // Pair probing at work: the paths a follower probed lately, all working.
    const follower = usage.find((u) => u.node !== coordinator)!.node;
    const okPaths = sampleOf(await fx.metrics(follower), 'knh_paths{state="ok"}');
    return { size, settledS, usage, coordinator, okPaths };
  } finally {
    await fx?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(run: MeshRun, warmupS: number, windowS: number): string {
  const followers = run.usage.filter((u) => u.node !== run.coordinator);
  const lead = run.usage.find((u) => u.node === run.coordinator)!;
  const f = (xs: number[], digits = 0) =>
    `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)} (median ${median(xs).toFixed(digits)})`;
  const row = (name: string, us: Usage[]) =>
    `| ${name} | ${f(us.map((u) => u.rssMaxMb))} | ${f(us.map((u) => u.rssEndMb))} | ${f(us.map((u) => u.anonEndMb))} | ${f(us.map((u) => u.fileEndMb))} | ${f(
      us.map((u) => u.cpuPercent),
      1,
    )} |`;
  return [
    `### ${run.size} nodes`,
    '',
    `Settled ${run.settledS.toFixed(1)} s after the spawn; sampled from ${warmupS} s after the spawn for ${windowS} s. A follower's paths probed lately and working (knh_paths{state="ok"}): ${run.okPaths}.`,
    '',
    '| Process | RSS at most (1-s samples), MB | RSS at the end, MB | of it anonymous, MB | of it file-backed, MB | CPU, % of one core |',
    '| --- | --- | --- | --- | --- | --- |',
    row(`Followers (${followers.length})`, followers),
    row(`Coordinator of ${run.size - 1} peers`, [lead]),
  ].join('\n');
}

async function main(): Promise<void> {
  if (onImageNode()) return;
  const sizes = sizesFrom('BENCH_FOOTPRINT_SIZES', [5, 30]);
  const warmupS = numberFrom('BENCH_FOOTPRINT_WARMUP_SECONDS', 60);
  const windowS = numberFrom('BENCH_FOOTPRINT_SECONDS', 60);
  const deployed = asDeployed();
  const start = machineFacts();
  const runs: MeshRun[] = [];
  for (const size of sizes) runs.push(await runMesh(size, warmupS, windowS, deployed));
  console.log(
    [
      `Footprint: knh nodes on loopback IPs, DISCOVERY=kubernetes (in-repo API server), Node ${process.version} (the image's line) with ${deployedText(deployed)}, PAIR_PROBES default. ${start.nproc} CPUs (${start.cpu}); load average at start ${start.load}, at end ${machineFacts().load}. File-backed memory is mostly the node binary's pages, shared by every process of the image on a host, and dropped first under memory pressure.`,
      '',
      ...runs.map((r) => report(r, warmupS, windowS) + '\n'),
    ].join('\n'),
  );
}

await main();
