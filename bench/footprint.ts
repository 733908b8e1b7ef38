// `npm run bench:footprint`: what a knh pod uses as deployed, to set the manifest's requests from.
// A mesh of real knh processes on loopback (each its own IP, as pods), finding each other in a
// Service's EndpointSlices through the real Kubernetes client (served by the in-repo API server),
// with daemonset.yaml's NODE_OPTIONS and pair probing at its default; after a warm-up, every
// process's RSS and CPU are sampled from /proc over a window. Prints the figures as markdown.
// BENCH_FOOTPRINT_SIZE (default 21: each node then probes 20 others, PAIR_PROBES' default),
// BENCH_FOOTPRINT_WARMUP_SECONDS (60), BENCH_FOOTPRINT_SECONDS (60).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FakeKubeApi } from '../test/support/fake-kube-api.js';
import { LoopbackIpsMesh, sampleOf } from '../test/support/loopback-ips-mesh.js';
import type { MeshNode } from '../src/demo/mesh.js';
import { manifestNodeOptions } from './manifest.js';
import { cpuMsOf, rssOf } from './proc-usage.js';

const NAMESPACE = 'knh';
const SERVICE = 'knh';

const numberFrom = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
  return value;
};

interface Usage {
  node: MeshNode;
  rssMaxMb: number;
  rssEndMb: number;
  cpuPercent: number;
}

const mb = (bytes: number) => bytes / 1_000_000;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0
    ? NaN
    : (s[Math.floor((s.length - 1) / 2)]! + s[Math.ceil((s.length - 1) / 2)]!) / 2;
};

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
  return nodes.map((node, i) => ({
    node,
    rssMaxMb: mb(rssMax[i]!),
    rssEndMb: mb(rssOf(pids[i]!) ?? 0),
    cpuPercent: ((cpuMsOf(pids[i]!) - cpuStart[i]!) / elapsedMs) * 100,
  }));
}

async function main(): Promise<void> {
  const size = numberFrom('BENCH_FOOTPRINT_SIZE', 21);
  const warmupS = numberFrom('BENCH_FOOTPRINT_WARMUP_SECONDS', 60);
  const windowS = numberFrom('BENCH_FOOTPRINT_SECONDS', 60);
  const nodeOptions = manifestNodeOptions();
  const api = await new FakeKubeApi().start();
  const dir = mkdtempSync(join(tmpdir(), 'knh-footprint-'));
  let fx: LoopbackIpsMesh | null = null;
  const loadStart = loadavg();
  try {
    fx = await LoopbackIpsMesh.start({
      size,
      env: {
        DISCOVERY: 'kubernetes',
        KUBECONFIG: api.writeKubeconfig(join(dir, 'kubeconfig')),
        NAMESPACE,
        SERVICE_NAME: SERVICE,
        PEERS: '',
        NODE_OPTIONS: nodeOptions,
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
    const followers = usage.filter((u) => u.node !== coordinator);
    const lead = usage.find((u) => u.node === coordinator)!;
    // Pair probing at work: the paths a follower probed lately, all working.
    const okPaths = sampleOf(await fx.metrics(followers[0]!.node), 'knh_paths{state="ok"}');
    const f = (xs: number[], digits = 0) =>
      `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)} (median ${median(xs).toFixed(digits)})`;
    console.log(
      [
        `Footprint: ${size} knh nodes on loopback IPs, DISCOVERY=kubernetes (in-repo API server), NODE_OPTIONS '${nodeOptions}', PAIR_PROBES default; settled ${settledS.toFixed(1)} s after spawn; sampled from ${warmupS} s after spawn for ${windowS} s. ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), Node ${process.version}; load average at start ${loadStart.map((l) => l.toFixed(2)).join(' / ')}, at end ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' / ')}.`,
        '',
        '| Process | RSS at most (1-s samples), MB | RSS at the end, MB | CPU, % of one core |',
        '| --- | --- | --- | --- |',
        `| Followers (${followers.length}) | ${f(followers.map((u) => u.rssMaxMb))} | ${f(followers.map((u) => u.rssEndMb))} | ${f(
          followers.map((u) => u.cpuPercent),
          1,
        )} |`,
        `| Coordinator of ${size - 1} peers | ${lead.rssMaxMb.toFixed(0)} | ${lead.rssEndMb.toFixed(0)} | ${lead.cpuPercent.toFixed(1)} |`,
        '',
        `A follower's paths probed lately and working (knh_paths{state="ok"}): ${okPaths}.`,
      ].join('\n'),
    );
  } finally {
    await fx?.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
