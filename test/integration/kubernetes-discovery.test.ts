// DISCOVERY=kubernetes end to end: real knh processes (the real @kubernetes/client-node inside)
// on 127.0.0.2-6 behind one port, discovering each other through the in-repo fake API server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { BUILD } from '../../src/build-info.js';
import type { ClusterStatusPayload } from '../../src/wire/webhooks.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { LocalMesh, type MeshNode } from '../../src/demo/mesh.js';
import { Receiver } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { FakeKubeApi, type FakeEndpoint } from '../support/fake-kube-api.js';
import { pollUntil, sleep } from '../support/poll.js';

const NS = 'knh';
const SERVICE = 'knh';
const SLICE = 'knh-7xk2p';
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
const PATH = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;

async function ping(node: MeshNode): Promise<PingResponse | null> {
  try {
    const res = await fetch(`http://${node.address}/ping`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? ((await res.json()) as PingResponse) : null;
  } catch {
    return null;
  }
}

describe('kubernetes discovery (real client library, fake API server, real knh processes)', function () {
  this.timeout(90_000);
  let api: FakeKubeApi;
  let receiver: Receiver;
  let mesh: LocalMesh;
  let dir: string;

  /** Lists these nodes (1-based) in the Service's slice; per-node overrides for conditions. */
  const list = (indices: number[], overrides: Record<number, Partial<FakeEndpoint>> = {}) =>
    api.upsert(
      NS,
      SERVICE,
      SLICE,
      mesh.node(1).port,
      indices.map((i) => ({ ip: mesh.node(i).host, nodeName: `worker-${i}`, ...overrides[i] })),
    );

  const clusterStatuses = () =>
    receiver.received
      .filter((w) => w.kind === 'cluster-status')
      .map((w) => w.body as ClusterStatusPayload);
  const deadReports = (node: MeshNode) =>
    receiver.received.filter(
      (w) =>
        w.kind === 'peer-status' &&
        (w.body as { event: string; peer: { address: string } }).event === 'peer_dead' &&
        (w.body as { peer: { address: string } }).peer.address === node.address,
    );

  /** Waits for a cluster status from `leader` whose peer map is exactly `peers`, all alive. */
  const statusListing = (leader: MeshNode, peers: MeshNode[], timeoutMs = 15_000) =>
    pollUntil(
      `a cluster status from ${leader.address} listing ${peers.map((p) => p.address).join(', ')} alive`,
      () =>
        clusterStatuses().find(
          (s) =>
            s.coordinator_address === leader.address &&
            s.peer_map.length === peers.length &&
            peers.every((p) => s.peer_map.some((m) => m.address === p.address && m.alive)),
        ),
      {
        timeoutMs,
        describe: () =>
          JSON.stringify(
            clusterStatuses()
              .at(-1)
              ?.peer_map.map((p) => [p.address, p.health]),
          ),
      },
    );

  /** Polls until every node in `among` follows `leader`. */
  const agreeOn = (leader: MeshNode, among: MeshNode[], timeoutMs = 15_000) =>
    pollUntil(
      `${among.map((n) => n.index).join(',')} following ${leader.address}`,
      async () => {
        const pings = await Promise.all(among.map(ping));
        return pings.every((p) => p?.coordinator?.address === leader.address) ? pings : undefined;
      },
      { timeoutMs },
    );

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knh-k8s-'));
    api = await new FakeKubeApi().start();
    receiver = await new Receiver({ schemas: loadSchemas() }).start();
    mesh = new LocalMesh({
      size: HOSTS.length,
      hosts: HOSTS,
      env: {
        DISCOVERY: 'kubernetes',
        KUBECONFIG: api.writeKubeconfig(join(dir, 'kubeconfig.json')),
        SERVICE_NAME: SERVICE,
        NAMESPACE: NS,
        PEER_STATUS_URL: receiver.url('/peer'),
        CLUSTER_STATUS_URL: receiver.url('/cluster'),
      },
    });
  });

  afterEach(async () => {
    await mesh.stop();
    await receiver.close();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the mesh with nodes 1-5 listed and waits until node 5 (the highest IP) reports all alive. */
  async function settled(): Promise<void> {
    await api.comeBack();
    await mesh.start();
    list([1, 2, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
  }

  it('waits until its own address is listed, then takes part; lists and watches its namespace only', async () => {
    await mesh.start();
    list([1, 2, 3, 4]);
    await mesh.waitForLog(5, (l) => l.event === 'waiting-for-self', 15_000);
    await agreeOn(
      mesh.node(4),
      [1, 2, 3].map((i) => mesh.node(i)),
    );
    const waiting = await ping(mesh.node(5));
    expect(waiting, 'an unlisted node does not take part').to.deep.include({
      role: 'follower',
      epoch: 0,
      coordinator: null,
    });

    list([1, 2, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
    await agreeOn(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
    expect(receiver.received.filter((w) => w.kind === 'peer-status')).to.deep.equal([]);
    expect(api.requests.length).to.be.greaterThan(0);
    for (const r of api.requests) {
      expect(r.path, 'namespaced EndpointSlices only').to.equal(PATH);
      expect(r.query.labelSelector).to.equal(`kubernetes.io/service-name=${SERVICE}`);
      // The list and the watch alike name knh and its version to the API server (the node's
      // bundle knows its revision; this test's unbundled build does not).
      expect(r.userAgent, `${r.method} ${JSON.stringify(r.query)}`).to.match(
        new RegExp(`^knh/${BUILD.version.replace(/\./g, '\\.')} \\(revision [^)]+\\)$`),
      );
    }
    const watches = (r: (typeof api.requests)[number]) =>
      ['true', '1'].includes(r.query.watch ?? '');
    expect(api.requests.some(watches), 'a watch').to.equal(true);
    expect(
      api.requests.some((r) => !watches(r)),
      'a list',
    ).to.equal(true);
  });

  it('says why it is still waiting once 30 s have passed unlisted', async () => {
    await mesh.start();
    list([1, 2, 3, 4]);
    const line = await mesh.waitForLog(
      5,
      (l) => l.event === 'waiting-for-self' && l.level === 40,
      45_000,
    );
    expect(line.msg).to.include('127.0.0.6').and.to.include('publishes not-ready addresses');
  });

  it('removes a deleted pod quietly, reports a listed pod that stops answering, and adds a new one', async () => {
    await settled();
    // Deleted: Kubernetes drops the endpoint, then the process dies.
    list([1, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 3, 4].map((i) => mesh.node(i)),
    );
    await mesh.kill(2);
    // Still listed, but crashed: that is what gets reported.
    await mesh.kill(1);
    await pollUntil(
      'a dead-peer alert for the crashed, listed node 1',
      () => deadReports(mesh.node(1))[0],
      { timeoutMs: 15_000 },
    );
    await sleep(3_000);
    expect(deadReports(mesh.node(2)), 'no alert for a pod Kubernetes removed').to.deep.equal([]);
    // A new pod appears (node 2 comes back) and is probed alive.
    mesh.startNode(2);
    list([1, 2, 3, 4, 5]);
    await pollUntil(
      'a cluster status with node 2 alive again',
      () =>
        clusterStatuses().find(
          (s) =>
            s.peer_map.some((p) => p.address === mesh.node(2).address && p.alive) &&
            s.timestamp > new Date(Date.now() - 10_000).toISOString(),
        ),
      { timeoutMs: 15_000 },
    );
  });

  it('treats a terminating endpoint as leaving: removed, never reported', async () => {
    await settled();
    list([1, 2, 3, 4, 5], { 3: { terminating: true, ready: false } });
    await statusListing(
      mesh.node(5),
      [1, 2, 4].map((i) => mesh.node(i)),
    );
    await mesh.kill(3);
    await sleep(4_000);
    expect(deadReports(mesh.node(3))).to.deep.equal([]);
  });

  it('lets a terminating coordinator step out at once, and its successor lead, with no alert', async () => {
    await settled();
    list([1, 2, 3, 4, 5], { 5: { terminating: true, ready: false } });
    await mesh.waitForLog(5, (l) => l.event === 'left-endpoints', 10_000);
    // Node 5 keeps answering (preStop) but no longer leads; node 4 takes over without waiting for silence.
    await statusListing(
      mesh.node(4),
      [1, 2, 3].map((i) => mesh.node(i)),
    );
    const five = await ping(mesh.node(5));
    expect(five?.role, 'the leaving node does not lead').to.not.equal('coordinator');
    await mesh.kill(5);
    await sleep(3_000);
    expect(deadReports(mesh.node(5))).to.deep.equal([]);
  });

  it('keeps a not-ready endpoint as a peer, so a node that was alive and stops answering is reported', async () => {
    await settled();
    list([1, 2, 3, 4, 5], { 2: { ready: false } });
    await sleep(1_500);
    await mesh.kill(2);
    await pollUntil('a dead-peer alert for not-ready node 2', () => deadReports(mesh.node(2))[0], {
      timeoutMs: 15_000,
    });
  });

  it('keeps its peers through an API outage (refused, then 503) without alerting, and resumes watching', async () => {
    await settled();
    const before = receiver.received.length;
    await api.goDown();
    await sleep(4_000);
    await api.comeBack();
    api.outage(503);
    await sleep(4_000);
    api.outage(null);
    expect(
      receiver.received.slice(before).filter((w) => w.kind === 'peer-status'),
      'nothing alerted',
    ).to.deep.equal([]);
    for (const node of mesh.nodes) {
      const removals = node.logs.filter(
        (l) => l.event === 'peers-changed' && Array.isArray(l.removed) && l.removed.length > 0,
      );
      expect(removals, `${node.name} forgot no peer`).to.deep.equal([]);
      expect(
        node.logs.some((l) => l.event === 'discovery-error'),
        `${node.name} saw the outage`,
      ).to.equal(true);
    }
    await agreeOn(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
    // The watch is back: a change made now reaches the nodes.
    list([2, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [2, 3, 4].map((i) => mesh.node(i)),
      40_000,
    );
  });

  it('relists after 410 Gone, whether the watch resumes from a compacted version or expires live', async () => {
    await settled();
    // Resumed from a compacted resourceVersion: changes missed while away come from the relist.
    await api.goDown();
    list([2, 3, 4, 5]);
    api.compact();
    const listsBefore = api.requests.filter((r) => r.query.watch !== 'true').length;
    await api.comeBack();
    await statusListing(
      mesh.node(5),
      [2, 3, 4].map((i) => mesh.node(i)),
      40_000,
    );
    expect(
      api.requests.filter((r) => r.query.watch !== 'true').length,
      'relisted',
    ).to.be.greaterThan(listsBefore);

    // Expired while connected: ERROR 410 on the open stream.
    list([1, 2, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
    api.compact();
    api.expireWatches();
    list([1, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 3, 4].map((i) => mesh.node(i)),
    );
    expect(receiver.received.filter((w) => w.kind === 'peer-status')).to.deep.equal([]);
  });

  it('survives dropped and cleanly ended watch streams without missing a change', async () => {
    await settled();
    api.dropConnections();
    list([1, 2, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 2, 4].map((i) => mesh.node(i)),
      40_000,
    );
    api.endWatches();
    list([1, 2, 3, 4, 5]);
    await statusListing(
      mesh.node(5),
      [1, 2, 3, 4].map((i) => mesh.node(i)),
    );
  });
});
