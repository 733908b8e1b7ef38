// docs/deploying.md's "Operator port" patches, rendered with the kit: the operator views on a port
// of their own that Prometheus alone reaches (the PodMonitor and `knh-prometheus` follow it, the
// mesh's policy and the kubelet's probes stay on the peer port), or on loopback with no rule at
// all. Each value set is one knh loads. Renderings need kubectl (no cluster): skipped without it.
import { join } from 'node:path';
import { expect } from 'chai';
import { BASE_DIR } from '../../scripts/manifest.js';
import { loadConfig } from '../../src/config/load.js';
import { isLoopback } from '../../src/wire/node-ref.js';
import { parseObjects, schemaErrors, type KubeObject } from '../support/kube-objects.js';
import { docPatches, kustomizeUnavailable, kustomizeWith } from '../support/kustomize.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const BASE = join(ROOT, BASE_DIR);
const COMPONENTS = join(ROOT, 'deploy/kustomize/components');
const KIT = [join(COMPONENTS, 'network-policy'), join(COMPONENTS, 'monitoring')];

interface Port {
  name?: string;
  containerPort: number;
}
interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  ports?: Port[];
  env: { name: string; value?: string }[];
  readinessProbe: Probe;
  livenessProbe: Probe;
}
interface Policy {
  spec: { ingress: { from: unknown[]; ports: { port: string | number; protocol: string }[] }[] };
}
interface PodMonitor {
  spec: { podMetricsEndpoints: { port: string; path: string }[] };
}

const one = <T>(objects: KubeObject[], kind: string, name?: string): T => {
  const found = objects.filter((o) => o.kind === kind && (!name || o.metadata.name === name));
  expect(found, `one ${kind} ${name ?? ''}`).to.have.length(1);
  return found[0] as unknown as T;
};
const containerOf = (objects: KubeObject[]) =>
  one<{ spec: { template: { spec: { containers: Container[] } } } }>(objects, 'DaemonSet').spec
    .template.spec.containers[0] as Container;
const envValue = (c: Container, name: string) => c.env.find((v) => v.name === name)?.value;

/**
 * The Config knh loads from the container's plain values, with what the downward API would give;
 * not the peer secret's file, which only the pod has.
 */
function configOf(c: Container) {
  const plain = c.env.filter((v) => v.value !== undefined && v.name !== 'PEER_SECRET_FILE');
  const env = Object.fromEntries(plain.map((v) => [v.name, v.value]));
  const loaded = loadConfig(
    {
      ...env,
      NODE_NAME: 'worker-1',
      POD_IP: '10.244.1.7',
      POD_NAME: 'knh-abcde',
      NAMESPACE: 'knh',
    },
    { hostname: 'worker-1' },
  );
  if (!loaded.ok) expect.fail(loaded.errors.join('\n'));
  return loaded.config;
}

describe('docs/deploying.md: the operator port, rendered with the kit', function () {
  let port: unknown[] = [];
  let loopback: unknown[] = [];
  before(function () {
    const why = kustomizeUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    [port = [], loopback = []] = docPatches('### Operator port');
  });

  it('shows two patches: a port, and loopback', () => {
    const shown = docPatches('### Operator port');
    expect(shown).to.have.length(2);
    for (const patches of shown) expect(patches).to.be.an('array').that.is.not.empty;
  });

  it('a port: declared and named, the views there, Prometheus pointed at it and only at it', () => {
    const plain = parseObjects(kustomizeWith(BASE, KIT), 'the kit');
    const objects = parseObjects(kustomizeWith(BASE, KIT, { patches: port }), 'the port patch');
    expect(schemaErrors(objects)).to.deep.equal([]);
    const c = containerOf(objects);
    const config = configOf(c);
    const views = config.operatorListener;
    expect(views, 'OPERATOR_LISTEN set').to.not.equal(null);
    expect(views?.port).to.not.equal(config.port);
    const declared = c.ports?.find((p) => p.containerPort === views?.port);
    expect(declared?.name, 'the views’ port, declared and named').to.be.a('string');
    const peerPort = c.ports?.find((p) => p.containerPort === config.port)?.name;
    expect(peerPort, 'the peer port, still declared').to.be.a('string');
    // The kubelet's probes stay on the peer port, which keeps /readyz and /healthz.
    expect(c.readinessProbe.httpGet.port).to.equal(peerPort);
    expect(c.livenessProbe.httpGet.port).to.equal(peerPort);
    // Prometheus scrapes /metrics where it now is, and its namespace reaches that port alone.
    const monitor = one<PodMonitor>(objects, 'PodMonitor');
    expect(monitor.spec.podMetricsEndpoints.map((e) => [e.port, e.path])).to.deep.equal([
      [declared?.name, '/metrics'],
    ]);
    const prometheus = one<Policy>(objects, 'NetworkPolicy', 'knh-prometheus');
    const before = one<Policy>(plain, 'NetworkPolicy', 'knh-prometheus');
    expect(prometheus.spec.ingress.map((r) => r.ports)).to.deep.equal([
      [{ port: declared?.name, protocol: 'TCP' }],
    ]);
    expect(prometheus.spec.ingress.map((r) => r.from)).to.deep.equal(
      before.spec.ingress.map((r) => r.from),
    );
    // The mesh's policy is the kit's: knh's pods reach the peer port, not the views'.
    expect(one<Policy>(objects, 'NetworkPolicy', 'knh')).to.deep.equal(
      one<Policy>(plain, 'NetworkPolicy', 'knh'),
    );
    expect(one<Policy>(objects, 'NetworkPolicy', 'knh').spec.ingress[0]?.ports).to.deep.equal([
      { port: peerPort, protocol: 'TCP' },
    ]);
  });

  it('loopback: the variable alone, bound to loopback; no port and no rule to add', () => {
    const plain = parseObjects(kustomizeWith(BASE, KIT), 'the kit');
    const objects = parseObjects(kustomizeWith(BASE, KIT, { patches: loopback }), 'loopback');
    expect(schemaErrors(objects)).to.deep.equal([]);
    const c = containerOf(objects);
    const views = configOf(c).operatorListener;
    expect(views && isLoopback(views.host), `${JSON.stringify(views)} on loopback`).to.equal(true);
    expect(envValue(c, 'OPERATOR_LISTEN')).to.be.a('string');
    expect(c.ports).to.deep.equal(containerOf(plain).ports);
    const others = (os: KubeObject[]) => os.filter((o) => o.kind !== 'DaemonSet');
    expect(others(objects)).to.deep.equal(others(plain));
  });
});
