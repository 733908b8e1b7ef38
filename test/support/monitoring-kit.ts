// The monitoring kit (deploy/kustomize/components/monitoring) as tests read it: its PrometheusRule's
// alerts, its dashboard's queries as Grafana would send them, and `kubectl kustomize` of it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Context } from 'mocha';
import { parse, parseAllDocuments } from 'yaml';

export const ROOT = new URL('../../../', import.meta.url).pathname;
export const KIT_DIR = join(ROOT, 'deploy/kustomize/components/monitoring');

/** One Kubernetes object of a rendering. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [key: string]: unknown;
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

/** The PrometheusRule's spec: its groups, as Prometheus reads a rules file. */
export function ruleGroups(): RuleGroup[] {
  const doc = parse(readFileSync(join(KIT_DIR, 'prometheusrule.yaml'), 'utf8')) as {
    kind: string;
    spec: { groups: RuleGroup[] };
  };
  expect(doc.kind).to.equal('PrometheusRule');
  return doc.spec.groups;
}

export const alertRules = (): AlertRule[] => ruleGroups().flatMap((g) => g.rules);

export interface DashboardQuery {
  panel: string;
  expr: string;
}

interface Panel {
  title: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Grafana's interval variables, as it fills them in at a 30 s scrape interval. */
const GRAFANA_VARIABLES: Record<string, string> = {
  __rate_interval: '2m',
  __interval: '30s',
  __range: '3h',
};

/** The dashboard's own variables, as Grafana fills them in when All is picked (allValue). */
export const SCOPE_VARIABLES: Record<string, string> = {
  cluster: '.*',
  namespace: '.*',
  job: '.*',
};

export interface DashboardVariable {
  name: string;
  type: string;
  definition?: string;
  includeAll?: boolean;
  allValue?: string;
  multi?: boolean;
}

export function dashboard(): {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: DashboardVariable[] };
} {
  return JSON.parse(readFileSync(join(KIT_DIR, 'dashboard.json'), 'utf8')) as ReturnType<
    typeof dashboard
  >;
}

/** Every query of every panel as the dashboard holds it, variables unfilled. */
export function rawDashboardQueries(): DashboardQuery[] {
  const all = (panels: Panel[]): Panel[] => panels.flatMap((p) => [p, ...all(p.panels ?? [])]);
  return all(dashboard().panels).flatMap((panel) =>
    (panel.targets ?? []).map((t) => ({ panel: panel.title, expr: t.expr ?? '' })),
  );
}

/** Every query of every panel (rows' panels too), with Grafana's variables filled in. */
export function dashboardQueries(): DashboardQuery[] {
  return rawDashboardQueries().map(({ panel, expr }) => ({
    panel,
    expr: expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => {
      const value = GRAFANA_VARIABLES[name] ?? SCOPE_VARIABLES[name];
      if (value === undefined) throw new Error(`${panel}: unknown variable ${whole}`);
      return value;
    }),
  }));
}

const SKIP_ENV = 'KNH_SKIP_KUBECTL';

/** Fails the test when kubectl is missing, unless KNH_SKIP_KUBECTL=1 skips it. */
export function requireKubectl(ctx: Context): void {
  const found = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
  if (!found.error) return;
  if (process.env[SKIP_ENV] === '1') {
    console.log(`    skipped: ${SKIP_ENV}=1 and kubectl is not installed`);
    ctx.skip();
  }
  throw new Error(
    `kubectl not found (${found.error.message}): install it (its \`kustomize\` renders the ` +
      `kit), or set ${SKIP_ENV}=1 to skip this test`,
  );
}

/** `kubectl kustomize <dir>`: the objects it renders; throws with its message if it fails. */
export function kustomize(dir: string): KubeObject[] {
  const run = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${run.stderr}`);
  return parseAllDocuments(run.stdout).map((d) => {
    expect(d.errors, 'YAML errors').to.deep.equal([]);
    return d.toJS() as KubeObject;
  });
}
