// /readyz and /healthz of real knh processes: static and Kubernetes discovery (the in-repo fake API
// server), a memory limit it is over, and a shutdown in progress.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { LocalMesh, type MeshNode } from '../../src/demo/mesh.js';
import type { HealthBody } from '../../src/http/routes/health.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { meshPorts } from '../support/mesh-ports.js';
import { pollUntil, sleep } from '../support/poll.js';

type Endpoint = '/readyz' | '/healthz';

interface Answer {
  status: number;
  body: HealthBody;
}

async function get(node: MeshNode, path: Endpoint): Promise<Answer | null> {
  try {
    const res = await fetch(`http://${node.address}${path}`, {
      signal: AbortSignal.timeout(3_000),
    });
    return { status: res.status, body: (await res.json()) as HealthBody };
  } catch {
    return null;
  }
}

/** Polls `path` until an answer satisfies `ok`; returns it. */
async function until(
  node: MeshNode,
  path: Endpoint,
  what: string,
  ok: (a: Answer) => boolean,
  timeoutMs = 20_000,
): Promise<Answer> {
  let last: Answer | null = null;
  return pollUntil(
    `${node.name} ${path}: ${what}`,
    async () => {
      last = await get(node, path);
      return last && ok(last) ? last : undefined;
    },
    { timeoutMs, everyMs: 100, describe: () => JSON.stringify(last) },
  );
}

const is200 = (a: Answer) => a.status === 200;
const failingExactly = (names: string[]) => (a: Answer) =>
  a.status === 503 && JSON.stringify(a.body.failing) === JSON.stringify(names);

/** A single node on 127.0.0.1 with these settings (static discovery of itself by default). */
async function soloMesh(env: Record<string, string> = {}): Promise<LocalMesh> {
  const mesh = new LocalMesh({ size: 1, ports: await meshPorts(1), env });
  await mesh.start();
  return mesh;
}

describe('health endpoints (real knh processes)', function () {
  this.timeout(90_000);
  let mesh: LocalMesh | null = null;

  afterEach(async () => {
    await mesh?.stop();
    mesh = null;
  });

  it('answers /readyz and /healthz 200 once a node runs, every check passing', async () => {
    mesh = await soloMesh();
    const node = mesh.node(1);
    const ready = await until(node, '/readyz', 'ready', is200);
    expect(ready.body.ok).to.equal(true);
    expect(ready.body.checks.map((c) => [c.name, c.ok])).to.deep.equal([
      ['discovery', true],
      ['self', true],
      ['listening', true],
      ['shutdown', true],
      ['peer-auth', true],
    ]);
    const alive = await until(node, '/healthz', 'alive', is200);
    expect(alive.body.checks.map((c) => [c.name, c.ok])).to.deep.equal([
      ['election', true],
      ['prober', true],
      ['event-loop', true],
      ['memory', true],
    ]);
    // Alone, it leads: both loops are running and beating.
    await until(node, '/healthz', 'both loops beating', (a) =>
      a.body.checks.slice(0, 2).every((c) => c.detail.startsWith('last ')),
    );
  });

  it('answers /healthz 503 naming memory when over MAX_MEMORY_USAGE, still ready', async () => {
    mesh = await soloMesh({ MAX_MEMORY_USAGE: '1' });
    const node = mesh.node(1);
    const sick = await until(node, '/healthz', 'failing memory only', failingExactly(['memory']));
    expect(sick.body.checks.find((c) => c.name === 'memory')?.detail).to.match(
      /^rss \d+\.\d MiB, limit 1 MiB \(MAX_MEMORY_USAGE\)$/,
    );
    await until(node, '/readyz', 'ready', is200);
  });

  it('is not ready once SIGTERM has arrived, while it still drains', async () => {
    // A webhook receiver that never answers keeps the stopping node draining (SHUTDOWN_GRACE_PERIOD).
    const hang: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve));
    const address = hang.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      mesh = await soloMesh({
        CLUSTER_STATUS_URL: `http://127.0.0.1:${port}/cluster`,
        SHUTDOWN_GRACE_PERIOD: '5',
        WEBHOOK_TIMEOUT: '30',
      });
      const node = mesh.node(1);
      await until(node, '/readyz', 'ready', is200);
      await mesh.waitForLog(1, (l) => l.event === 'leading', 15_000);
      await sleep(300); // the cluster status is in flight to the silent receiver
      node.process?.kill('SIGTERM');
      const stopping = await until(node, '/readyz', 'failing shutdown', (a) =>
        a.body.failing.includes('shutdown'),
      );
      expect(stopping.status).to.equal(503);
    } finally {
      hang.closeAllConnections();
      hang.close();
    }
  });
});

describe('health endpoints with Kubernetes discovery (fake API server, a real knh process)', function () {
  this.timeout(90_000);
  const NS = 'knh';
  const SERVICE = 'knh';
  let api: FakeKubeApi;
  let mesh: LocalMesh;
  let dir: string;

  const listSlice = (ips: string[]) =>
    api.upsert(
      NS,
      SERVICE,
      'knh-abcde',
      mesh.node(1).port,
      ips.map((ip, i) => ({ ip, nodeName: `worker-${i + 1}` })),
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knh-health-'));
    api = await new FakeKubeApi().start();
    mesh = new LocalMesh({
      size: 1,
      ports: await meshPorts(1),
      env: {
        DISCOVERY: 'kubernetes',
        KUBECONFIG: api.writeKubeconfig(join(dir, 'kubeconfig.json')),
        SERVICE_NAME: SERVICE,
        NAMESPACE: NS,
      },
    });
  });

  afterEach(async () => {
    await mesh.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is not ready before the first list, nor until listed itself, nor while the watch is down', async () => {
    // The API refuses every list until told otherwise: the node has no peer list yet.
    api.outage(503);
    await mesh.start();
    const node = mesh.node(1);
    await mesh.waitForLog(1, (l) => l.event === 'discovery-error', 15_000);
    const before = await until(node, '/readyz', 'not ready', (a) => a.status === 503);
    expect(before.body.failing).to.deep.equal(['discovery', 'self']);
    expect((await get(node, '/healthz'))?.status, 'waiting is not a liveness failure').to.equal(
      200,
    );

    // The first list arrives, without this pod in it.
    listSlice(['127.0.0.9']);
    api.outage(null);
    await until(node, '/readyz', 'synced but not listed', failingExactly(['self']));

    // Listed: ready.
    listSlice(['127.0.0.9', node.host]);
    const ready = await until(node, '/readyz', 'ready', is200);
    expect(ready.body.failing).to.deep.equal([]);

    // The server ends its watch streams (their timeout): re-watched at once, still ready.
    api.endWatches();
    for (let i = 0; i < 5; i++) {
      expect((await get(node, '/readyz'))?.status, 'no flap on a routine re-watch').to.equal(200);
      await sleep(100);
    }

    // The watch drops and the API stays down: not ready, until the watch is re-established.
    api.outage(503);
    await until(node, '/readyz', 'watch down', failingExactly(['discovery']));
    api.outage(null);
    await until(node, '/readyz', 'ready again', is200, 40_000);
  });
});
