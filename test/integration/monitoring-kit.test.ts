// The monitoring kit (deploy/kustomize/components/monitoring) as an operator uses it: `kubectl
// kustomize` renders it beside knh's DaemonSet, its PodMonitor scrapes knh's pods, its dashboard
// reaches Grafana's sidecar, its runbook links can be rebased as docs/operating.md shows, and every
// query of the dashboard and of the alerts is valid PromQL that reads only metrics real knh nodes
// expose (kube-state-metrics' listed apart).
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'chai';
import { ConfigMap } from 'kubernetes-models/v1';
import { parse, stringify } from 'yaml';
import {
  KIT_DIR,
  ROOT,
  alertRules,
  dashboard,
  dashboardQueries,
  kustomize,
  rawDashboardQueries,
  SCOPE_VARIABLES,
  requireKubectl,
  ruleGroups,
  type KubeObject,
} from '../support/monitoring-kit.js';
import { useMeshFixture } from '../support/mesh-fixture.js';
import { exposedNames, metricNames } from '../support/promql-names.js';
import { promtool, requirePromtool } from '../support/promtool.js';

/** The selectors of an expression that read knh's series (its own and Node's), and their braces. */
function selectorsOf(expr: string): { metric: string; matchers: string }[] {
  return [...expr.matchAll(/\b((?:knh|process|nodejs)_\w+)(\{[^}]*\})?/g)].map((m) => ({
    metric: m[1]!,
    matchers: m[2] ?? '',
  }));
}

/** The selectors of `expr` that do not keep to the dashboard's cluster, namespace and job. */
function unscoped(expr: string): string[] {
  return selectorsOf(expr)
    .filter(({ matchers }) =>
      Object.keys(SCOPE_VARIABLES).some((v) => !matchers.includes(`${v}=~"$${v}"`)),
    )
    .map(({ metric, matchers }) => `${metric}${matchers}`);
}

/** Series the alerts read from kube-state-metrics, not from knh. */
const EXTERNAL = [
  'kube_daemonset_status_desired_number_scheduled',
  'kube_daemonset_status_number_ready',
];

interface PodTemplateShape {
  metadata: { namespace: string };
  spec: {
    template: {
      metadata: { labels: Record<string, string> };
      spec: { containers: { ports: { name: string; containerPort: number }[] }[] };
    };
  };
}

interface PodMonitorShape {
  metadata: { namespace: string };
  spec: {
    selector: { matchLabels: Record<string, string> };
    podMetricsEndpoints: { port: string; path: string }[];
  };
}

const byKind = (objects: KubeObject[], kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).to.have.length(1);
  return found[0] as KubeObject;
};

/** The kustomization an operator would write: the manifest, in its namespace, with the kit. */
function kustomization(dir: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    namespace: 'knh',
    resources: ['daemonset.yaml'],
    components: [relative(dir, KIT_DIR)],
    ...extra,
  };
}

/** The overlay of the runbook recipe in docs/operating.md: its YAML block with `replacements`. */
function runbookRecipe(): Record<string, unknown> {
  const doc = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');
  const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  const recipe = blocks.filter((b) => b.includes('replacements:'));
  expect(recipe, "docs/operating.md's runbook recipe").to.have.length(1);
  return parse(recipe[0] ?? '') as Record<string, unknown>;
}

describe('the monitoring kit (kubectl kustomize, promtool, real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();
  let dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs = [];
  });

  /** `kubectl kustomize` of daemonset.yaml with the kit (and `extra` in the kustomization). */
  function render(extra: Record<string, unknown> = {}): KubeObject[] {
    const dir = mkdtempSync(join(tmpdir(), 'knh-kit-'));
    dirs.push(dir);
    copyFileSync(join(ROOT, 'daemonset.yaml'), join(dir, 'daemonset.yaml'));
    writeFileSync(join(dir, 'kustomization.yaml'), stringify(kustomization(dir, extra)));
    return kustomize(dir);
  }

  it("renders beside knh's DaemonSet: a PodMonitor on its pods' metrics port, the alerts, and the dashboard for Grafana's sidecar", function () {
    requireKubectl(this);
    const objects = render();
    const ds = byKind(objects, 'DaemonSet') as unknown as PodTemplateShape;
    const monitor = byKind(objects, 'PodMonitor') as unknown as PodMonitorShape;
    const rule = byKind(objects, 'PrometheusRule');
    const dashboards = objects.filter((o) => o.kind === 'ConfigMap');
    expect(dashboards.map((o) => o.metadata.name)).to.deep.equal(['knh-dashboard']);
    const config = dashboards[0] as KubeObject & { data: Record<string, string> };
    for (const o of [monitor, rule, config] as { metadata: { namespace?: string } }[]) {
      expect(o.metadata.namespace).to.equal(ds.metadata.namespace);
    }

    // The PodMonitor selects the DaemonSet's pods, on a port its container has.
    const podLabels = ds.spec.template.metadata.labels;
    expect(podLabels).to.include(monitor.spec.selector.matchLabels);
    const ports = ds.spec.template.spec.containers.flatMap((c) => c.ports.map((p) => p.name));
    expect(monitor.spec.podMetricsEndpoints).to.have.length(1);
    expect(ports).to.include(monitor.spec.podMetricsEndpoints[0]?.port);
    expect(monitor.spec.podMetricsEndpoints[0]?.path).to.equal('/metrics');

    expect(rule.spec).to.deep.equal({ groups: ruleGroups() });

    // Grafana's sidecar loads ConfigMaps labelled grafana_dashboard: "1".
    expect(() => new ConfigMap(config).validate()).to.not.throw();
    expect(config.metadata.labels).to.include({ grafana_dashboard: '1' });
    const files = Object.keys(config.data);
    expect(files).to.deep.equal(['knh.json']);
    expect(JSON.parse(config.data['knh.json'] ?? '')).to.deep.equal(dashboard());
  });

  it("rebases every alert's runbook link with the replacement docs/operating.md shows", function () {
    requireKubectl(this);
    const recipe = runbookRecipe();
    const rendered = render(recipe);
    expect(
      rendered.map((o) => o.metadata.name),
      'the recipe adds no object',
    ).to.not.include('knh-runbook');
    const rule = byKind(rendered, 'PrometheusRule') as unknown as {
      spec: { groups: { rules: { alert: string; annotations: { runbook_url: string } }[] }[] };
    };
    const literal = JSON.stringify(recipe).match(/base=([^"]+)/)?.[1];
    expect(literal, "the recipe's base").to.match(/^https:\/\//);
    const rules = rule.spec.groups.flatMap((g) => g.rules);
    expect(rules).to.have.length(alertRules().length);
    for (const r of rules) {
      expect(r.annotations.runbook_url).to.equal(`${literal}#${r.alert.toLowerCase()}`);
    }
  });

  it('every query of the dashboard is valid PromQL (`promtool check rules` reads it)', async function () {
    requirePromtool(this);
    const queries = dashboardQueries();
    expect(queries.length).to.be.above(20);
    const dir = mkdtempSync(join(tmpdir(), 'knh-dashboard-'));
    dirs.push(dir);
    const check = async (exprs: string[]) => {
      const file = join(dir, 'queries.yaml');
      const rules = exprs.map((expr, i) => ({ record: `knh_dashboard:query_${i}`, expr }));
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
      return promtool(['check', 'rules', file]);
    };
    const { code, output } = await check(queries.map((q) => q.expr));
    expect(output).to.include(`SUCCESS: ${queries.length} rules found`);
    expect(code).to.equal(0);
    // A clean run means something: a query that is not PromQL fails.
    expect((await check(['sum(knh_peers) by'])).code).to.not.equal(0);
  });

  it('every query of the dashboard reads only the installation its cluster, namespace and job variables pick', () => {
    const variables = dashboard().templating.list;
    for (const name of Object.keys(SCOPE_VARIABLES)) {
      const v = variables.find((x) => x.name === name);
      expect(v, `variable ${name}`).to.include({ type: 'query', includeAll: true, multi: true });
      // All must match a series without the label too (a Prometheus with no `cluster` label).
      expect(v?.allValue, name).to.equal('.*');
      expect(v?.definition, name).to.match(
        new RegExp(`^label_values\\(knh_build_info.*, ${name}\\)$`),
      );
    }
    const queries = rawDashboardQueries();
    expect(queries.length).to.be.above(20);
    for (const { panel, expr } of queries) {
      expect(selectorsOf(expr), `${panel}: reads knh's series`).to.not.be.empty;
      expect(unscoped(expr), `${panel}: ${expr}`).to.deep.equal([]);
    }
    // A query left unscoped would be caught.
    expect(
      unscoped('sum(knh_peers{health="dead"}) and on (job) knh_build_info{job=~"$job"}'),
    ).to.have.length(2);
  });

  it('every metric the dashboard and the alerts read is one that real knh nodes expose', async function () {
    const fx = await startMesh({ size: 3 });
    await fx.settled();
    const exposed = new Set<string>();
    for (const node of fx.running()) {
      const res = await fetch(`http://${node.address}/metrics`, {
        signal: AbortSignal.timeout(5_000),
      });
      for (const name of exposedNames(await res.text())) exposed.add(name);
    }
    expect(exposed, 'what the nodes expose').to.include.members([
      'knh_peer_up',
      'process_cpu_seconds_total',
      'knh_probe_round_duration_seconds_bucket',
    ]);

    const read = new Map<string, string>(); // metric → the first query reading it
    for (const { panel, expr } of dashboardQueries()) {
      for (const name of metricNames(expr)) if (!read.has(name)) read.set(name, `panel ${panel}`);
    }
    expect(read.size, 'metrics the dashboard reads').to.be.above(20);
    for (const { alert, expr } of alertRules()) {
      for (const name of metricNames(expr)) if (!read.has(name)) read.set(name, `alert ${alert}`);
    }
    const unknown = [...read].filter(([name]) => !exposed.has(name));
    expect(unknown.map(([name]) => name).sort(), 'read, not exposed').to.deep.equal(EXTERNAL);
    // A misspelled metric would be caught.
    expect(metricNames('rate(knh_probe_rounds_late_totl[5m])').filter((n) => !exposed.has(n))).to
      .not.be.empty;
  });
});
