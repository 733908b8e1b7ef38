// The Kubernetes client as the build leaves it: one bundle of the classes knh uses, not an import
// of the whole @kubernetes/client-node package (some 2,500 modules, about 70 MB of a node's RSS).
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { DiscoveryV1Api, KubeConfig, makeInformer } from '../../src/discovery/kube-client.js';

const built = readFileSync(new URL('../../src/discovery/kube-client.js', import.meta.url), 'utf8');

describe('the Kubernetes client bundle (npm run build)', () => {
  it('imports nothing from @kubernetes/client-node at run time: the classes are in the bundle', () => {
    expect(built).to.not.match(/from\s*["']@kubernetes\/client-node/);
    expect(built).to.not.match(/import\(\s*["']@kubernetes\/client-node/);
    expect(built).to.match(/\bKubeConfig\s*=\s*class\b/);
  });

  it('gives working classes: a kubeconfig is read, and an API client and an informer made from it', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    expect(kc.getCurrentCluster()?.server).to.equal('https://10.0.0.1:6443');
    expect(kc.makeApiClient(DiscoveryV1Api)).to.be.an.instanceOf(DiscoveryV1Api);
    const informer = makeInformer(kc, '/apis/discovery.k8s.io/v1/endpointslices', () =>
      Promise.reject(new Error('not listed in this test')),
    );
    expect(informer.list()).to.deep.equal([]);
  });
});
