// daemonset.yaml: valid Kubernetes objects (kubernetes-models' API schemas), least privilege,
// and only settings knh knows.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { expect } from 'chai';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { SETTINGS } from '../../src/config/settings.js';
import { DEFAULT_THRESHOLDS } from '../../src/health/checks.js';
import { LAG_DEFAULTS } from '../../src/health/event-loop-lag.js';
import { parseObjects, schemaErrors } from '../support/kube-objects.js';

const text = readFileSync(new URL('../../../daemonset.yaml', import.meta.url), 'utf8');
const docs = parseObjects(text, 'daemonset.yaml');
const only = <T>(kind: string) => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, kind).to.have.length(1);
  return found[0] as unknown as T;
};

interface Probe {
  httpGet: { path: string; port: string };
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
}

interface DaemonSetShape {
  metadata: { namespace: string };
  spec: {
    updateStrategy: { type: string; rollingUpdate?: { maxUnavailable?: string | number } };
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        serviceAccountName: string;
        nodeSelector?: Record<string, string>;
        tolerations: { operator: string; key?: string; effect?: string }[];
        securityContext: { runAsNonRoot: boolean };
        containers: {
          env: { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[];
          ports: { name: string; containerPort: number }[];
          lifecycle?: { preStop?: { sleep?: { seconds: number } } };
          readinessProbe?: Probe;
          livenessProbe?: Probe;
          resources: { requests: Record<string, string>; limits: Record<string, string> };
          securityContext: {
            allowPrivilegeEscalation: boolean;
            readOnlyRootFilesystem: boolean;
            capabilities: { drop: string[] };
          };
        }[];
      };
    };
  };
}

describe('daemonset.yaml', () => {
  it('is a list of valid Kubernetes objects, each known to kubernetes-models', () => {
    expect(docs.length).to.be.greaterThan(4);
    expect(schemaErrors(docs)).to.deep.equal([]);
  });

  it('grants only list and watch on EndpointSlices, in its own namespace', () => {
    expect(docs.map((d) => d.kind)).to.not.include.members(['ClusterRole', 'ClusterRoleBinding']);
    const role = only<{
      metadata: { namespace: string };
      rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    }>('Role');
    expect(role.rules).to.deep.equal([
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ]);
    const ds = only<DaemonSetShape>('DaemonSet');
    expect(role.metadata.namespace).to.equal(ds.metadata.namespace);
    const binding = only<{
      roleRef: { kind: string; name: string };
      subjects: { kind: string; name: string }[];
    }>('RoleBinding');
    expect(binding.roleRef).to.include({ kind: 'Role', name: 'knh' });
    expect(binding.subjects[0]).to.include({
      kind: 'ServiceAccount',
      name: ds.spec.template.spec.serviceAccountName,
    });
  });

  /** The peer Secret, the placeholder it ships with, and how the DaemonSet's pod mounts it. */
  function peerSecret() {
    const secret = only<{
      metadata: { name: string; namespace: string; labels: Record<string, string> };
      stringData: Record<string, string>;
    }>('Secret');
    const ds = only<DaemonSetShape>('DaemonSet');
    const pod = ds.spec.template.spec as unknown as {
      securityContext: { runAsGroup: number; fsGroup: number };
      volumes: { name: string; secret?: { secretName: string; defaultMode: number } }[];
      containers: {
        env: { name: string; value?: string }[];
        volumeMounts: { name: string; mountPath: string; readOnly: boolean }[];
      }[];
    };
    const [key, placeholder] = Object.entries(secret.stringData)[0] ?? [];
    return { secret, ds, pod, key, placeholder };
  }

  it('creates the peer secret and mounts it readable by knh alone', () => {
    const { secret, ds, pod, key } = peerSecret();
    expect(secret.metadata.namespace).to.equal(ds.metadata.namespace);
    const volume = pod.volumes.find((v) => v.secret?.secretName === secret.metadata.name);
    expect(volume, 'a volume of the Secret').to.not.equal(undefined);
    const container = pod.containers[0];
    const mount = container?.volumeMounts.find((m) => m.name === volume?.name);
    expect(mount?.readOnly).to.equal(true);
    const file = container?.env.find((e) => e.name === 'PEER_SECRET_FILE')?.value;
    expect(file).to.equal(`${mount?.mountPath}/${key}`);
    // Secret files belong to root; the container runs as 1000: readable through fsGroup only.
    expect(pod.securityContext.fsGroup).to.equal(pod.securityContext.runAsGroup);
    const mode = volume?.secret?.defaultMode ?? 0;
    expect(mode & 0o040, 'group-readable').to.not.equal(0);
    expect(mode & 0o007, 'not world-readable').to.equal(0);
  });

  it('ships a placeholder secret that knh refuses, saying what to do', () => {
    const { placeholder } = peerSecret();
    // The placeholder never authenticates anything: knh stops with a message saying what to do.
    const dir = mkdtempSync(join(tmpdir(), 'knh-manifest-'));
    try {
      writeFileSync(join(dir, 'peer-secret'), `${placeholder}`);
      const loaded = loadConfig(
        { DISCOVERY: 'static', PEERS: '10.0.0.1:8080', PEER_SECRET_FILE: join(dir, 'peer-secret') },
        { hostname: 'h' },
      );
      expect(loaded.ok).to.equal(false);
      if (!loaded.ok) expect(loaded.errors.join('\n')).to.include('placeholder of daemonset.yaml');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has the install replace exactly the placeholder, and updates leave the Secret alone', () => {
    const { secret, placeholder } = peerSecret();
    // The install (README and docs/deploying.md) replaces exactly it, and updates leave the
    // Secret alone.
    const readme = ['README.md', 'docs/deploying.md']
      .map((f) => readFileSync(new URL(`../../../${f}`, import.meta.url), 'utf8'))
      .join('\n');
    expect(readme).to.include(
      `sed "s/${placeholder}/$(openssl rand -hex 32)/" daemonset.yaml | kubectl apply -f -`,
    );
    expect(secret.metadata.labels['app.kubernetes.io/component']).to.equal('peer-secret');
    expect(readme).to.include(
      "kubectl apply -f daemonset.yaml -l 'app.kubernetes.io/component!=peer-secret'",
    );
  });

  it('sets only settings knh knows, with the pod identity from the downward API', () => {
    const known = new Set<string>(
      SETTINGS.flatMap((s) => [s.env, ...('aliases' in s ? s.aliases : [])]),
    );
    const [container] = only<DaemonSetShape>('DaemonSet').spec.template.spec.containers;
    const env = container?.env ?? [];
    for (const e of env) {
      if (e.name === 'NODE_OPTIONS') continue; // Node's own: the next test
      expect(known.has(e.name), `${e.name} is a knh setting`).to.equal(true);
    }
    const field = (name: string) =>
      env.find((e) => e.name === name)?.valueFrom?.fieldRef?.fieldPath;
    expect(field('POD_IP')).to.equal('status.podIP');
    expect(field('NODE_NAME')).to.equal('spec.nodeName');
    expect(field('NAMESPACE')).to.equal('metadata.namespace');
    expect(field('POD_NAME')).to.equal('metadata.name');
    const service = only<{ metadata: { name: string } }>('Service');
    expect(env.find((e) => e.name === 'SERVICE_NAME')?.value).to.equal(service.metadata.name);
    const port = env.find((e) => e.name === 'CONTAINER_PORT')?.value;
    expect(container?.ports.map((p) => String(p.containerPort))).to.include(port);
  });

  it('runs one locked-down pod on every Linux node, probed, bounded, rolled a tenth at a time', () => {
    const ds = only<DaemonSetShape>('DaemonSet');
    const pod = ds.spec.template.spec;
    expect(pod.tolerations, 'tolerates every taint').to.deep.include({ operator: 'Exists' });
    expect(pod.nodeSelector, 'no pod for a Windows node').to.deep.equal({
      'kubernetes.io/os': 'linux',
    });
    expect(pod.securityContext.runAsNonRoot).to.equal(true);
    expect(ds.spec.updateStrategy.type).to.equal('RollingUpdate');
    expect(ds.spec.updateStrategy.rollingUpdate?.maxUnavailable).to.equal('10%');
    for (const c of pod.containers) {
      // The kubelet's sleep: nothing needs a `sleep` binary in the image.
      expect(
        c.lifecycle?.preStop?.sleep?.seconds,
        'keeps answering while its endpoint leaves',
      ).to.equal(3);
      expect(c.readinessProbe?.httpGet.port).to.equal('http');
      expect(c.livenessProbe?.httpGet.port).to.equal('http');
      expect(c.resources.requests).to.have.keys('cpu', 'memory');
      expect(c.resources.limits).to.have.property('memory');
      expect(c.securityContext).to.deep.equal({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });

  it("sizes Node's heap under MAX_MEMORY_USAGE and the memory limit", () => {
    const [container] = only<DaemonSetShape>('DaemonSet').spec.template.spec.containers;
    const value = (name: string) => container?.env.find((e) => e.name === name)?.value ?? '';
    const flag = (name: string) =>
      Number(new RegExp(`--${name}=(\\d+)`).exec(value('NODE_OPTIONS'))?.[1]);
    const oldSpace = flag('max-old-space-size');
    const semiSpace = flag('max-semi-space-size') || 16; // Node 20's default on 64-bit
    expect(oldSpace, 'max-old-space-size').to.be.above(0);
    const limitMi = Number(/^(\d+)Mi$/.exec(container?.resources.limits.memory ?? '')?.[1]);
    const maxMemory = Number(value('MAX_MEMORY_USAGE'));
    // The heap (old space, and new space: two semi-spaces) with room for Node itself and sockets.
    expect(oldSpace + 2 * semiSpace + 48).to.be.at.most(maxMemory);
    expect(maxMemory).to.be.below(limitMi);
  });

  it('requests what a follower and the coordinator of a small mesh use (docs/benchmarks.md)', () => {
    const [container] = only<DaemonSetShape>('DaemonSet').spec.template.spec.containers;
    const { requests, limits } = container?.resources ?? { requests: {}, limits: {} };
    // The hand-written note of `npm run bench:footprint`, and the scale bench's coordinators.
    const doc = readFileSync(new URL('../../../docs/benchmarks.md', import.meta.url), 'utf8');
    const note = doc.slice(doc.indexOf("## What a pod uses: the manifest's requests"));
    // Every row whose process starts so: its RSS (the second column) and CPU (the last).
    const row = (start: string) => {
      const lines = note.split('\n').filter((l) => l.startsWith(`| ${start}`));
      expect(lines, `a row "${start}" in docs/benchmarks.md`).to.not.be.empty;
      const cells = lines.map((l) => l.split('|').slice(2, -1));
      const rss = cells.map((c) => c[0] ?? '').join(' ');
      const cpu = cells.map((c) => c.at(-1) ?? '').join(' ');
      // The highest figure of a cell ("92–101 MB": 101), which must have one.
      const most = (cell: string, unit: string) => {
        const figures = [...cell.matchAll(new RegExp(`([\\d.]+) ${unit}`, 'g'))].map((m) =>
          Number(m[1]),
        );
        expect(figures, `${start}: a figure in ${unit}`).to.not.be.empty;
        return Math.max(...figures);
      };
      return { rssMb: most(rss, 'MB'), cpuPercent: most(cpu, '%') };
    };
    const follower = row('A follower');
    const coordinator = row('The coordinator of 29 peers');
    const largest = row('The coordinator of 5,000 peers');
    const mb = (q: string) => {
      const m = /^(\d+)(Mi|Gi|M|G)$/.exec(q);
      expect(m, `a memory quantity: ${q}`).to.not.equal(null);
      const unit = { Mi: 2 ** 20, Gi: 2 ** 30, M: 1e6, G: 1e9 }[(m?.[2] ?? 'M') as 'M'];
      return (Number(m?.[1]) * unit) / 1e6;
    };
    const memory = mb(requests.memory ?? '');
    // No knh pod of a mesh of up to 30 nodes runs above its request, the coordinator included: it
    // is not the first evicted under pressure. A larger mesh raises it (docs/deploying.md).
    expect(memory, 'memory request, MB').to.be.at.least(follower.rssMb);
    expect(memory, 'memory request, MB').to.be.at.least(coordinator.rssMb);
    // The limit holds the largest coordinator documented: it is a limit, not a request.
    expect(largest.rssMb, 'the 5,000-peer coordinator, MB').to.be.below(mb(limits.memory ?? ''));
    expect(memory).to.be.below(mb(limits.memory ?? ''));
    const cpu = /^(\d+)m$/.exec(requests.cpu ?? '');
    expect(Number(cpu?.[1]) / 10, 'CPU request, % of one core').to.be.at.least(follower.cpuPercent);
    expect(limits, 'no CPU limit: a throttled node answers late').to.not.have.property('cpu');
  });

  it('probes /readyz for readiness and /healthz for liveness, never restarting on one stall', () => {
    for (const c of only<DaemonSetShape>('DaemonSet').spec.template.spec.containers) {
      expect(c.readinessProbe?.httpGet.path).to.equal('/readyz');
      expect(c.livenessProbe?.httpGet.path).to.equal('/healthz');
      // Kubernetes' defaults where a field is left out.
      const {
        periodSeconds = 10,
        timeoutSeconds = 1,
        failureThreshold = 3,
      } = c.livenessProbe ?? {};
      // One stall fails /healthz while it lasts and for LAG_DEFAULTS.windowMs after: the probes
      // before a restart must span more than that, plus a stall at the event-loop limit.
      const toleratedMs = (failureThreshold - 1) * periodSeconds * 1000;
      expect(toleratedMs, 'consecutive liveness failures before a restart, ms').to.be.greaterThan(
        LAG_DEFAULTS.windowMs + DEFAULT_THRESHOLDS.maxEventLoopLagMs,
      );
      expect(timeoutSeconds * 1000, 'a GC pause is not a timed-out probe').to.be.at.least(
        DEFAULT_THRESHOLDS.maxEventLoopLagMs,
      );
    }
  });

  it('has a Service that selects the pods and publishes not-ready addresses', () => {
    const ds = only<DaemonSetShape>('DaemonSet');
    const service = only<{
      spec: {
        selector: Record<string, string>;
        publishNotReadyAddresses: boolean;
        ports: { targetPort: string }[];
      };
    }>('Service');
    expect(ds.spec.template.metadata.labels).to.include(service.spec.selector);
    expect(ds.spec.selector.matchLabels).to.deep.equal(service.spec.selector);
    expect(service.spec.publishNotReadyAddresses).to.equal(true);
    const names = ds.spec.template.spec.containers.flatMap((c) => c.ports.map((p) => p.name));
    for (const p of service.spec.ports) expect(names).to.include(p.targetPort);
  });
});
