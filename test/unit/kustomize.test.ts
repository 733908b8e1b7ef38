// The kustomize kit (deploy/kustomize/): daemonset.yaml is the base as `npm run manifest` writes
// it; `kubectl kustomize` renders the base into exactly daemonset.yaml's objects, and the base with
// each component, and the example overlay, into valid Kubernetes objects that do what the
// component says. Renderings need kubectl (no cluster): skipped, saying why, where it is missing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { parse } from 'yaml';
import { BASE_DIR, MANIFEST_FILE, singleFileManifest } from '../../scripts/manifest.js';
import { SETTINGS } from '../../src/config/settings.js';
import { nameOf, parseObjects, schemaErrors, type KubeObject } from '../support/kube-objects.js';
import {
  docPatches,
  kustomize,
  kustomizeUnavailable,
  kustomizeWith,
  kustomizeWithout,
} from '../support/kustomize.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const BASE = join(ROOT, BASE_DIR);
const COMPONENTS = join(ROOT, 'deploy/kustomize/components');
const EXAMPLE = join(ROOT, 'deploy/kustomize/overlays/example');

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}
interface PodSpec {
  priorityClassName?: string;
  containers: {
    name: string;
    image: string;
    env: EnvVar[];
    ports?: { name?: string; containerPort: number }[];
  }[];
}
interface DaemonSet {
  metadata: { namespace?: string };
  spec: {
    selector: LabelSelector;
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
const daemonSetOf = (objects: KubeObject[]) => {
  const ds = objects.filter((o) => o.kind === 'DaemonSet');
  expect(ds, 'one DaemonSet').to.have.length(1);
  return ds[0] as unknown as DaemonSet;
};
const podOf = (objects: KubeObject[]) => daemonSetOf(objects).spec.template.spec;
const envOf = (objects: KubeObject[]) => podOf(objects).containers[0]?.env ?? [];
const key = (o: KubeObject) =>
  `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byKey = (objects: KubeObject[]) => new Map(objects.map((o) => [key(o), o]));

/** The component folders there are (the monitoring one comes with the metrics' kit). */
const componentNames = () =>
  readdirSync(COMPONENTS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(COMPONENTS, d.name, 'kustomization.yaml')))
    .map((d) => d.name);

/** Settings whose value is a credential, or a URL that may carry one: what the Secret holds. */
const RECEIVER_SECRETS = [
  'PEER_STATUS_URL',
  'CLUSTER_STATUS_URL',
  'SLACK_WEBHOOK_URL',
  'PAGERDUTY_ROUTING_KEY',
  'ALERTMANAGER_URL',
  'ALERT_WEBHOOK_URL',
];

interface NetworkPolicyPort {
  port?: string | number;
  protocol?: string;
  endPort?: number;
}
interface NetworkPolicy {
  metadata: { name: string; namespace?: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: {
      from?: {
        podSelector?: LabelSelector;
        namespaceSelector?: LabelSelector;
        ipBlock?: unknown;
      }[];
      ports?: NetworkPolicyPort[];
    }[];
    egress?: unknown[];
  };
}
const NETWORK_POLICY = join(COMPONENTS, 'network-policy');
const policiesOf = (objects: KubeObject[]) =>
  new Map(
    objects
      .filter((o) => o.kind === 'NetworkPolicy')
      .map((o) => [o.metadata.name, o as unknown as NetworkPolicy]),
  );
/** The rule's port for knh's port, as the DaemonSet declares it: its name if it has one. */
const knhPortOf = (ds: DaemonSet): NetworkPolicyPort => {
  const container = ds.spec.template.spec.containers[0];
  const listens = Number(container?.env.find((v) => v.name === 'CONTAINER_PORT')?.value);
  const port = container?.ports?.find((p) => p.containerPort === listens);
  expect(port, `a container port ${listens} (CONTAINER_PORT)`).to.not.equal(undefined);
  return { port: port?.name ?? port?.containerPort, protocol: 'TCP' };
};
describe('the kustomize base and daemonset.yaml', () => {
  it('daemonset.yaml is the base as `npm run manifest` writes it (run it after editing the base)', () => {
    expect(readFileSync(join(ROOT, MANIFEST_FILE), 'utf8')).to.equal(singleFileManifest(ROOT));
  });

  it('refuses a base that transforms its files: daemonset.yaml would not be its rendering', () => {
    const kustomization = parse(readFileSync(join(BASE, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    expect(Object.keys(kustomization).sort()).to.deep.equal(['apiVersion', 'kind', 'resources']);
    for (const r of kustomization.resources) expect(existsSync(join(BASE, r)), r).to.equal(true);
  });
});

describe('kubectl kustomize', function () {
  before(function () {
    const why = kustomizeUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  it('renders the base into exactly the objects of daemonset.yaml', () => {
    const rendered = parseObjects(kustomize(BASE), 'the base');
    const single = parseObjects(readFileSync(join(ROOT, MANIFEST_FILE), 'utf8'), MANIFEST_FILE);
    expect(schemaErrors(rendered)).to.deep.equal([]);
    expect(byKey(rendered)).to.deep.equal(byKey(single));
  });

  it('renders the base with each component into valid objects', () => {
    const names = componentNames();
    expect(names).to.include.members(['receiver-secrets', 'priority-class']);
    for (const name of names) {
      const objects = parseObjects(kustomizeWith(BASE, [join(COMPONENTS, name)]), name);
      expect(schemaErrors(objects), name).to.deep.equal([]);
      for (const v of envOf(objects)) {
        // The API server refuses a variable with both (unless the value is empty): one source each.
        expect(v.value === undefined || v.valueFrom === undefined, `${name}: ${v.name}`).to.equal(
          true,
        );
      }
    }
  });

  it('receiver-secrets: every receiver setting from the Secret knh-receivers, each optional', () => {
    const base = parseObjects(kustomize(BASE), 'the base');
    const objects = parseObjects(
      kustomizeWith(BASE, [join(COMPONENTS, 'receiver-secrets')]),
      'receiver-secrets',
    );
    const fromSecret = envOf(objects).filter((v) => v.valueFrom?.secretKeyRef);
    expect(fromSecret.map((v) => v.name)).to.have.members(RECEIVER_SECRETS);
    for (const v of fromSecret) {
      // A receiver whose key is missing is off; a pod starts without the Secret.
      expect(v.valueFrom?.secretKeyRef, v.name).to.deep.equal({
        name: 'knh-receivers',
        key: v.name,
        optional: true,
      });
      expect(v.value, `${v.name} has no value of its own`).to.equal(undefined);
    }
    // Every setting that holds a secret but the peer secret (a file of its own) is among them.
    const secrets = SETTINGS.filter((s) => 'secret' in s && s.secret).map((s) => s.env);
    const peer = new Set(['PEER_SECRET']);
    expect(RECEIVER_SECRETS).to.include.members(secrets.filter((s) => !peer.has(s)));
    const known = new Set<string>(SETTINGS.map((s) => s.env));
    for (const name of RECEIVER_SECRETS) expect(known.has(name), name).to.equal(true);
    // Nothing else changes: the other variables, and every other object, are the base's.
    const others = (env: EnvVar[]) => env.filter((v) => !RECEIVER_SECRETS.includes(v.name));
    expect(others(envOf(objects))).to.have.deep.members(others(envOf(base)));
    const withoutDs = (os: KubeObject[]) => byKey(os.filter((o) => o.kind !== 'DaemonSet'));
    expect(withoutDs(objects)).to.deep.equal(withoutDs(base));
  });

  it('priority-class: the pods name a PriorityClass above ordinary pods, below the system ones', () => {
    const objects = parseObjects(
      kustomizeWith(BASE, [join(COMPONENTS, 'priority-class')]),
      'priority-class',
    );
    const classes = objects.filter((o) => o.kind === 'PriorityClass') as unknown as {
      metadata: { name: string };
      value: number;
      globalDefault?: boolean;
    }[];
    const name = podOf(objects).priorityClassName;
    const used = classes.find((c) => c.metadata.name === name);
    expect(used, `a PriorityClass ${name}`).to.not.equal(undefined);
    // 0: pods that name no class; user-defined classes go up to one billion, above is Kubernetes'.
    expect(used?.value).to.be.above(0).and.below(1_000_000_000);
    expect(used?.globalDefault ?? false, 'not every pod of the cluster').to.equal(false);
  });

  it("network-policy: knh's pods reach each other's port, Prometheus's namespace reaches it, nothing else does", () => {
    const base = parseObjects(kustomize(BASE), 'the base');
    expect([...policiesOf(base).keys()], 'the base alone has no NetworkPolicy').to.deep.equal([]);
    const objects = parseObjects(kustomizeWith(BASE, [NETWORK_POLICY]), 'network-policy');
    const ds = daemonSetOf(objects);
    const policies = policiesOf(objects);
    expect([...policies.keys()]).to.have.members(['knh', 'knh-prometheus']);
    // The pods the DaemonSet creates: its selector, which its pods' labels match.
    const pods = ds.spec.selector;
    expect(pods.matchExpressions, 'the DaemonSet selects by labels only').to.equal(undefined);
    expect(Object.keys(pods.matchLabels ?? {})).to.not.be.empty;
    expect(ds.spec.template.metadata.labels).to.include(pods.matchLabels);
    const port = knhPortOf(ds);
    for (const [name, policy] of policies) {
      expect(policy.metadata.namespace, `${name}: the DaemonSet's namespace`).to.equal(
        ds.metadata.namespace,
      );
      expect(policy.spec.podSelector, `${name}: knh's pods, and only them`).to.deep.equal(pods);
      // Ingress only: egress stays open (receivers, DNS, the API server).
      expect(policy.spec.policyTypes, name).to.deep.equal(['Ingress']);
      expect(policy.spec.egress, name).to.equal(undefined);
      for (const rule of policy.spec.ingress ?? []) {
        expect(rule.ports, `${name}: knh's port only`).to.deep.equal([port]);
      }
    }
    // From knh's pods in their own namespace (a podSelector alone), and nothing else.
    expect(policies.get('knh')?.spec.ingress).to.deep.equal([
      { from: [{ podSelector: pods }], ports: [port] },
    ]);
    // From every pod of the namespace named `monitoring` (Prometheus), and nothing else.
    expect(policies.get('knh-prometheus')?.spec.ingress).to.deep.equal([
      {
        from: [
          { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
        ],
        ports: [port],
      },
    ]);
    // Nothing else changes.
    expect(byKey(objects.filter((o) => o.kind !== 'NetworkPolicy'))).to.deep.equal(byKey(base));
  });

  it("network-policy: docs/deploying.md's patches move Prometheus's policy, or delete it; the mesh's stays", () => {
    const [move, remove, ...more] = docPatches('### NetworkPolicy');
    expect(more, 'two patches shown').to.deep.equal([]);
    const plain = policiesOf(parseObjects(kustomizeWith(BASE, [NETWORK_POLICY]), 'network-policy'));
    const moved = policiesOf(
      parseObjects(kustomizeWith(BASE, [NETWORK_POLICY], { patches: move }), 'the move patch'),
    );
    expect(moved.get('knh-prometheus')?.spec.ingress?.[0]?.from).to.deep.equal([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prometheus' } } },
    ]);
    expect(moved.get('knh')).to.deep.equal(plain.get('knh'));
    const removed = policiesOf(
      parseObjects(kustomizeWith(BASE, [NETWORK_POLICY], { patches: remove }), 'the delete patch'),
    );
    expect([...removed.keys()]).to.deep.equal(['knh']);
    expect(removed.get('knh')).to.deep.equal(plain.get('knh'));
  });

  it('the example overlay uses every component, and renders into valid objects', () => {
    const overlay = parse(readFileSync(join(EXAMPLE, 'kustomization.yaml'), 'utf8')) as {
      components: string[];
    };
    const used = overlay.components.map((c) => join(EXAMPLE, c));
    expect(used).to.include.members(componentNames().map((n) => join(COMPONENTS, n)));
    // A component it names that is not there yet (monitoring, from the metrics' kit) is left out.
    const missing = used.filter((c) => !existsSync(join(c, 'kustomization.yaml')));
    if (missing.length > 0) console.log(`      rendered without ${missing.join(', ')}: not there`);
    const objects = parseObjects(
      missing.length > 0 ? kustomizeWithout(EXAMPLE, missing) : kustomize(EXAMPLE),
      'the example overlay',
    );
    expect(schemaErrors(objects)).to.deep.equal([]);
    // The peer secret is made by hand, once: applying the overlay never resets it.
    expect(objects.filter((o) => o.kind === 'Secret').map(nameOf)).to.deep.equal([]);
    const pod = podOf(objects);
    expect(pod.containers[0]?.image).to.not.equal('knh:dev');
    expect(pod.priorityClassName).to.be.a('string');
    expect([...policiesOf(objects).keys()]).to.have.members(['knh', 'knh-prometheus']);
    expect(envOf(objects).filter((v) => v.valueFrom?.secretKeyRef)).to.have.length(
      RECEIVER_SECRETS.length,
    );
  });

  /** Kinds that belong to no namespace. */
  const CLUSTER_SCOPED = new Set(['Namespace', 'PriorityClass']);
  /** Where the namespaced objects went, and whom the PodMonitor scrapes. */
  function placement(objects: KubeObject[]) {
    const namespaced = objects.filter((o) => !CLUSTER_SCOPED.has(o.kind));
    const monitor = objects.find((o) => o.kind === 'PodMonitor') as
      (KubeObject & { spec: { namespaceSelector?: { matchNames?: string[] } } }) | undefined;
    return {
      namespaces: [...new Set(namespaced.map((o) => o.metadata.namespace ?? '(none)'))],
      scraped: monitor?.spec.namespaceSelector?.matchNames,
    };
  }

  it("every combination of components: each namespaced object in knh's namespace, the monitor scraping it", () => {
    const names = componentNames();
    expect(names).to.include('monitoring');
    for (let mask = 0; mask < 1 << names.length; mask++) {
      const chosen = names.filter((_, i) => mask & (1 << i));
      const objects = parseObjects(
        kustomizeWith(
          BASE,
          chosen.map((n) => join(COMPONENTS, n)),
        ),
        chosen.join('+'),
      );
      const where = placement(objects);
      // No object left to land in whatever namespace kubectl happens to be set to.
      expect(where.namespaces, `base + ${chosen.join(', ') || 'nothing'}`).to.deep.equal(['knh']);
      if (chosen.includes('monitoring')) expect(where.scraped).to.deep.equal(['knh']);
    }
  });

  it('the example overlay, its namespace changed: every object and the monitor move with it', () => {
    for (const namespace of ['knh', 'observability']) {
      const objects = parseObjects(
        kustomizeWithout(EXAMPLE, [], (k) => (k.namespace = namespace)),
        `the example overlay in ${namespace}`,
      );
      expect(schemaErrors(objects)).to.deep.equal([]);
      expect(placement(objects)).to.deep.equal({ namespaces: [namespace], scraped: [namespace] });
      const ds = daemonSetOf(objects) as unknown as {
        spec: { template: { spec: { nodeSelector?: Record<string, string> } } };
      };
      expect(ds.spec.template.spec.nodeSelector).to.deep.equal({ 'kubernetes.io/os': 'linux' });
    }
  });

  it("docs/deploying.md's upgrade patches: the rollout's share, and the preStop of a cluster before 1.30", () => {
    const [pace, hook, ...rest] = docPatches('### Upgrades');
    expect(rest).to.deep.equal([]);
    const rolled = daemonSetOf(
      parseObjects(kustomizeWith(BASE, [], { patches: pace }), 'the pace patch'),
    ) as unknown as { spec: { updateStrategy: { rollingUpdate: { maxUnavailable: string } } } };
    expect(rolled.spec.updateStrategy.rollingUpdate.maxUnavailable).to.equal('25%');
    const old = parseObjects(kustomizeWith(BASE, [], { patches: hook }), 'the preStop patch');
    expect(schemaErrors(old)).to.deep.equal([]);
    expect(
      (podOf(old).containers[0] as unknown as { lifecycle: { preStop: unknown } }).lifecycle
        .preStop,
    ).to.deep.equal({ exec: { command: ['sleep', '3'] } });
  });
});
