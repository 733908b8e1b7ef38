// The fake API server speaks the list/watch protocol the way the real client library expects:
// checked with @kubernetes/client-node's own Watch and generated API client.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscoveryV1Api, KubeConfig, Watch } from '@kubernetes/client-node';
import { expect } from 'chai';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { pollUntil } from '../support/poll.js';

const PATH = '/apis/discovery.k8s.io/v1/namespaces/knh/endpointslices';
const SELECTOR = 'kubernetes.io/service-name=knh';

interface Seen {
  type: string;
  rv: string;
  code?: number;
}

describe('the fake Kubernetes API (test support), through the real client library', function () {
  this.timeout(20_000);
  let api: FakeKubeApi;
  let kc: KubeConfig;
  let dir: string;

  beforeEach(async () => {
    api = await new FakeKubeApi().start();
    dir = mkdtempSync(join(tmpdir(), 'knh-fake-api-'));
    kc = new KubeConfig();
    kc.loadFromFile(api.writeKubeconfig(join(dir, 'kubeconfig.json')));
  });

  afterEach(async () => {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Opens a real watch; returns what it saw and how it ended. */
  async function watch(params: Record<string, string | boolean>) {
    const seen: Seen[] = [];
    let ended: { err: unknown } | null = null;
    const controller = await new Watch(kc).watch(
      PATH,
      { labelSelector: SELECTOR, ...params },
      (type: string, obj: { metadata?: { resourceVersion?: string }; code?: number }) =>
        seen.push({ type, rv: obj.metadata?.resourceVersion ?? '', code: obj.code }),
      (err: unknown) => (ended = { err }),
    );
    return { seen, ended: () => ended, stop: () => controller.abort() };
  }

  it('lists only the namespace and label asked for, with a resourceVersion, and wants the token', async () => {
    api.upsert('knh', 'knh', 'a', 8080, [{ ip: '10.0.0.1', nodeName: 'n1' }]);
    api.upsert('knh', 'other', 'b', 8080, [{ ip: '10.0.0.2', nodeName: 'n2' }]);
    api.upsert('elsewhere', 'knh', 'c', 8080, [{ ip: '10.0.0.3', nodeName: 'n3' }]);
    const list = await kc
      .makeApiClient(DiscoveryV1Api)
      .listNamespacedEndpointSlice({ namespace: 'knh', labelSelector: SELECTOR });
    expect(list.items.map((s) => s.metadata?.name)).to.deep.equal(['a']);
    expect(Number(list.metadata?.resourceVersion)).to.be.greaterThan(0);
    expect(list.items[0]?.endpoints[0]?.addresses).to.deep.equal(['10.0.0.1']);
    const anonymous = await fetch(`${api.url}${PATH}`);
    expect(anonymous.status).to.equal(401);
  });

  it('streams events after a resourceVersion in order, and bookmarks only when asked', async () => {
    api.upsert('knh', 'knh', 'a', 8080, [{ ip: '10.0.0.1', nodeName: 'n1' }]);
    const from =
      (
        await kc
          .makeApiClient(DiscoveryV1Api)
          .listNamespacedEndpointSlice({ namespace: 'knh', labelSelector: SELECTOR })
      ).metadata?.resourceVersion ?? '';
    const withBookmarks = await watch({ resourceVersion: from, allowWatchBookmarks: true });
    const without = await watch({ resourceVersion: from });
    api.upsert('knh', 'knh', 'a', 8080, [{ ip: '10.0.0.9', nodeName: 'n1' }]);
    api.upsert('knh', 'knh', 'b', 8080, [{ ip: '10.0.0.2', nodeName: 'n2' }]);
    api.remove('knh', 'a');
    api.bookmark();
    await pollUntil('four events', () => (withBookmarks.seen.length >= 4 ? true : undefined), {
      timeoutMs: 5_000,
    });
    expect(withBookmarks.seen.map((e) => e.type)).to.deep.equal([
      'MODIFIED',
      'ADDED',
      'DELETED',
      'BOOKMARK',
    ]);
    const rvs = withBookmarks.seen.map((e) => Number(e.rv));
    expect(rvs).to.deep.equal([...rvs].sort((a, b) => a - b));
    await pollUntil('three events', () => (without.seen.length >= 3 ? true : undefined), {
      timeoutMs: 5_000,
    });
    expect(without.seen.map((e) => e.type)).to.deep.equal(['MODIFIED', 'ADDED', 'DELETED']);
    withBookmarks.stop();
    without.stop();
  });

  it('answers a watch from a compacted resourceVersion with ERROR 410 and ends the stream', async () => {
    api.upsert('knh', 'knh', 'a', 8080, [{ ip: '10.0.0.1', nodeName: 'n1' }]);
    api.upsert('knh', 'knh', 'a', 8080, [{ ip: '10.0.0.2', nodeName: 'n1' }]);
    api.compact();
    const w = await watch({ resourceVersion: '101' });
    await pollUntil('the end of the stream', () => w.ended() ?? undefined, { timeoutMs: 5_000 });
    expect(w.seen).to.deep.equal([{ type: 'ERROR', rv: '', code: 410 }]);
  });

  it('ends a watch with an error when the connection drops, and cleanly when the server ends it', async () => {
    const dropped = await watch({ resourceVersion: '0' });
    api.dropConnections();
    const drop = await pollUntil('the dropped stream to end', () => dropped.ended() ?? undefined, {
      timeoutMs: 5_000,
    });
    expect(drop.err, 'a reset is an error').to.not.equal(null);
    const ended = await watch({ resourceVersion: '0' });
    await pollUntil('the watch to open', () => (api.openWatches > 0 ? true : undefined), {
      timeoutMs: 5_000,
    });
    api.endWatches();
    const end = await pollUntil('the ended stream to end', () => ended.ended() ?? undefined, {
      timeoutMs: 5_000,
    });
    expect(end.err, 'a clean end is no error').to.equal(null);
  });
});
