// The monitoring kit's alerts (deploy/kustomize/components/monitoring/prometheusrule.yaml), run by
// the real `promtool test rules` over synthetic series shaped as knh's pods and kube-state-metrics
// export them: each alert fires when it should, with the labels and summary an operator reads,
// and stays quiet in the cases that look like it but are not.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { ROOT, alertRules, ruleGroups, type AlertRule } from '../support/monitoring-kit.js';
import { promtool, requirePromtool } from '../support/promtool.js';

type Labels = Record<string, string>;

/** A pod's target labels as a PodMonitor gives them. */
const target = (pod: string, ip: string): Labels => ({
  namespace: 'knh',
  job: 'knh/knh',
  pod,
  instance: `${ip}:8080`,
});
/** The coordinator and a follower. */
const A = target('knh-a', '10.0.0.1');
const B = target('knh-b', '10.0.0.2');
/** kube-state-metrics' target. */
const KSM: Labels = { namespace: 'knh', job: 'kube-state-metrics', instance: '10.0.9.9:8080' };
const PEER = { peer: '10.0.0.3:8080', node: 'worker-3' };

interface Series {
  series: string;
  values: string;
}

/** One input series: `name{labels}` and promtool's expanding notation, a sample every 15 s. */
function s(name: string, labels: Labels, values: string): Series {
  const inner = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return { series: `${name}{${inner}}`, values };
}

interface Expected {
  labels: Labels;
  summary: string;
}

interface Case {
  what: string;
  input: Series[];
  /** When to look (from the first sample), and the alerts firing then: none for a quiet case. */
  at: string;
  firing: Expected[];
}

/** Every alert of the kit, with its cases: each fires in one at least and is quiet in one. */
const CASES: Record<string, Case[]> = {
  KnhPeerDown: [
    {
      what: 'a peer the coordinator has judged down for a minute',
      input: [
        s('knh_peer_up', { ...A, ...PEER }, '1 1 0x40'),
        s('knh_self_suspect', A, '0x42'),
        s('knh_self_suspect', B, '0x42'),
      ],
      at: '5m',
      firing: [
        {
          labels: { namespace: 'knh', ...PEER, severity: 'critical' },
          summary: 'knh: node worker-3 (10.0.0.3:8080) does not answer',
        },
      ],
    },
    {
      what: 'still firing when another pod takes over as coordinator (the series moves pods)',
      input: [
        s('knh_peer_up', { ...A, ...PEER }, '0x8 stale'),
        s('knh_peer_up', { ...B, ...PEER }, '_x9 0x30'),
      ],
      // Pending since 0: firing at 3m only if it never stopped at the change (2m15s).
      at: '3m',
      firing: [
        {
          labels: { namespace: 'knh', ...PEER, severity: 'critical' },
          summary: 'knh: node worker-3 (10.0.0.3:8080) does not answer',
        },
      ],
    },
    {
      what: 'a suspicion cleared within 30 s',
      input: [s('knh_peer_up', { ...A, ...PEER }, '1 1 0 0 1x30')],
      at: '3m',
      firing: [],
    },
    {
      what: 'peers silent to a coordinator that suspects itself (KnhCannotJudge says it)',
      input: [s('knh_peer_up', { ...A, ...PEER }, '0x40'), s('knh_self_suspect', A, '1x40')],
      at: '5m',
      firing: [],
    },
  ],
  KnhPeersDead: [
    {
      what: 'dead peers past METRICS_PER_PEER_LIMIT (no knh_peer_up)',
      input: [
        s('knh_peers', { ...A, health: 'dead' }, '3x40'),
        s('knh_per_peer_metrics_enabled', A, '0x40'),
        s('knh_peers', { ...B, health: 'dead' }, '0x40'),
        s('knh_per_peer_metrics_enabled', B, '1x40'),
      ],
      at: '5m',
      firing: [
        { labels: { namespace: 'knh', severity: 'critical' }, summary: 'knh: 3 peers dead' },
      ],
    },
    {
      what: 'dead peers within the limit (KnhPeerDown names each)',
      input: [
        s('knh_peers', { ...A, health: 'dead' }, '3x40'),
        s('knh_per_peer_metrics_enabled', A, '1x40'),
      ],
      at: '5m',
      firing: [],
    },
  ],
  KnhNoCoordinator: [
    {
      what: 'no pod leading for two minutes',
      input: [s('knh_is_coordinator', A, '0x40'), s('knh_is_coordinator', B, '0x40')],
      at: '5m',
      firing: [
        {
          labels: { namespace: 'knh', severity: 'critical' },
          summary: 'knh: no node leads the mesh',
        },
      ],
    },
    {
      what: 'a hand-over of a minute',
      input: [
        s('knh_is_coordinator', A, '1 1 1 1 0 0 0 0 1x30'),
        s('knh_is_coordinator', B, '0x40'),
      ],
      at: '3m',
      firing: [],
    },
  ],
  KnhSeveralCoordinators: [
    {
      what: 'two pods leading for two minutes',
      input: [s('knh_is_coordinator', A, '1x40'), s('knh_is_coordinator', B, '1x40')],
      at: '5m',
      firing: [
        {
          labels: { namespace: 'knh', severity: 'warning' },
          summary: 'knh: 2 nodes lead the mesh at once',
        },
      ],
    },
    {
      what: 'one pod leading',
      input: [s('knh_is_coordinator', A, '1x40'), s('knh_is_coordinator', B, '0x40')],
      at: '5m',
      firing: [],
    },
  ],
  KnhCannotJudge: [
    {
      what: 'a coordinator suspecting itself for a minute',
      input: [s('knh_self_suspect', A, '0 0 1x40'), s('knh_self_suspect', B, '0x42')],
      at: '5m',
      firing: [
        {
          labels: { ...A, severity: 'critical' },
          summary: 'knh: the coordinator knh-a cannot judge the mesh',
        },
      ],
    },
    {
      what: 'a suspicion of 30 s',
      input: [s('knh_self_suspect', A, '0 1 1 0x40')],
      at: '5m',
      firing: [],
    },
  ],
  KnhProbeRoundsLate: [
    {
      what: 'a coordinator starting a fifth of its rounds late (a round a second)',
      input: [
        s('knh_probe_round_lateness_seconds_count', A, '0+15x100'),
        s('knh_probe_rounds_late_total', A, '0+3x100'),
      ],
      at: '20m',
      firing: [
        {
          labels: { ...A, severity: 'warning' },
          summary: 'knh: knh-a starts 20% of its probe rounds late',
        },
      ],
    },
    {
      what: 'a few late rounds, and a follower (no rounds)',
      input: [
        s('knh_probe_round_lateness_seconds_count', A, '0+15x100'),
        s('knh_probe_rounds_late_total', A, '0+1x100'),
        s('knh_probe_round_lateness_seconds_count', B, '0x100'),
        s('knh_probe_rounds_late_total', B, '0x100'),
      ],
      at: '20m',
      firing: [],
    },
  ],
  KnhPartition: [
    {
      what: 'a partition found',
      input: [
        s('knh_path_findings', { ...A, kind: 'partition' }, '1x20'),
        s('knh_path_findings', { ...B, kind: 'partition' }, '0x20'),
      ],
      at: '3m',
      firing: [
        {
          labels: { namespace: 'knh', severity: 'critical' },
          summary: 'knh: the pod network is split',
        },
      ],
    },
    {
      what: 'none found',
      input: [s('knh_path_findings', { ...A, kind: 'partition' }, '0x20')],
      at: '3m',
      firing: [],
    },
  ],
  KnhPathsBroken: [
    {
      what: 'two broken paths',
      input: [s('knh_path_findings', { ...A, kind: 'path-broken' }, '2x40')],
      at: '5m',
      firing: [
        {
          labels: { namespace: 'knh', kind: 'path-broken', severity: 'warning' },
          summary: 'knh: path-broken findings (2)',
        },
      ],
    },
    {
      what: 'a node nobody reaches (KnhPeerDown tells it)',
      input: [
        s('knh_path_findings', { ...A, kind: 'unreachable' }, '1x40'),
        s('knh_path_findings', { ...A, kind: 'path-broken' }, '0x40'),
      ],
      at: '5m',
      firing: [],
    },
  ],
  KnhPathsDegraded: [
    {
      what: 'a node dropping full-size packets for five minutes',
      input: [s('knh_path_findings', { ...A, kind: 'node-mtu' }, '1x60')],
      at: '10m',
      firing: [
        {
          labels: { namespace: 'knh', kind: 'node-mtu', severity: 'warning' },
          summary: 'knh: node-mtu findings (1)',
        },
      ],
    },
    {
      what: 'a path degraded for three minutes',
      input: [s('knh_path_findings', { ...A, kind: 'path-degraded' }, '1x12 0x40')],
      at: '10m',
      firing: [],
    },
  ],
  KnhWebhookDeliveriesFailing: [
    {
      what: 'a Slack event given up (the counter there at 0 before it)',
      input: [
        s(
          'knh_webhook_deliveries_total',
          { ...A, kind: 'slack', outcome: 'given-up' },
          '0x20 1x40',
        ),
        s('knh_webhook_deliveries_total', { ...A, kind: 'slack', outcome: 'delivered' }, '0+1x60'),
      ],
      at: '7m',
      firing: [
        {
          labels: { namespace: 'knh', kind: 'slack', outcome: 'given-up', severity: 'warning' },
          summary: 'knh: slack webhooks given-up',
        },
      ],
    },
    {
      what: 'deliveries, and a failure more than 15 minutes ago',
      input: [
        s(
          'knh_webhook_deliveries_total',
          { ...A, kind: 'slack', outcome: 'given-up' },
          '0x20 1x120',
        ),
        s('knh_webhook_deliveries_total', { ...A, kind: 'slack', outcome: 'delivered' }, '0+1x140'),
      ],
      at: '25m',
      firing: [],
    },
  ],
  KnhPeerMessagesRefused: [
    {
      what: 'bad signatures for ten minutes',
      input: [s('knh_peer_messages_refused_total', { ...A, reason: 'bad-signature' }, '0+2x100')],
      at: '15m',
      firing: [
        {
          labels: { namespace: 'knh', pod: 'knh-a', severity: 'warning' },
          summary: 'knh: knh-a refuses unsigned or badly signed peer messages',
        },
      ],
    },
    {
      what: 'messages from pods not yet discovered (not an authentication failure)',
      input: [s('knh_peer_messages_refused_total', { ...A, reason: 'stranger' }, '0+2x100')],
      at: '15m',
      firing: [],
    },
  ],
  KnhCoordinatorFlapping: [
    {
      what: 'a coordinator change every 15 s',
      input: [s('knh_coordinator_changes_total', A, '0+1x100')],
      at: '16m',
      firing: [
        {
          labels: { namespace: 'knh', severity: 'warning' },
          summary: "knh: knh's coordinator keeps changing",
        },
      ],
    },
    {
      what: 'a change every 5 minutes',
      input: [s('knh_coordinator_changes_total', A, '0x19 1x19 2x19 3x19 4x30')],
      at: '20m',
      firing: [],
    },
  ],
  KnhPodsNotReady: [
    {
      what: 'a pod not ready for 15 minutes',
      input: [
        s('kube_daemonset_status_number_ready', { ...KSM, daemonset: 'knh' }, '2x100'),
        s('kube_daemonset_status_desired_number_scheduled', { ...KSM, daemonset: 'knh' }, '3x100'),
      ],
      at: '20m',
      firing: [
        {
          labels: { ...KSM, daemonset: 'knh', severity: 'warning' },
          summary: "knh: 2 of the DaemonSet's pods are ready",
        },
      ],
    },
    {
      what: 'a rolling update (5 minutes a pod short), and another DaemonSet short',
      input: [
        s('kube_daemonset_status_number_ready', { ...KSM, daemonset: 'knh' }, '3x20 2x20 3x60'),
        s('kube_daemonset_status_desired_number_scheduled', { ...KSM, daemonset: 'knh' }, '3x100'),
        s('kube_daemonset_status_number_ready', { ...KSM, daemonset: 'other' }, '0x100'),
        s(
          'kube_daemonset_status_desired_number_scheduled',
          { ...KSM, daemonset: 'other' },
          '3x100',
        ),
      ],
      at: '20m',
      firing: [],
    },
  ],
  KnhNotScraped: [
    {
      what: 'no knh series for 15 minutes',
      input: [s('up', { job: 'other', instance: '10.0.5.5:9100' }, '1x100')],
      at: '20m',
      firing: [{ labels: { severity: 'warning' }, summary: 'knh: no knh pod is scraped' }],
    },
    {
      what: 'a knh pod scraped',
      input: [s('knh_build_info', { ...A, version: '0.1.0' }, '1x100')],
      at: '20m',
      firing: [],
    },
  ],
};

function ruleNamed(alert: string): AlertRule {
  const rule = alertRules().find((r) => r.alert === alert);
  if (!rule) throw new Error(`no rule ${alert} in the PrometheusRule`);
  return rule;
}

/** promtool's test file for `cases` of `rule`, reading the rules from `rulesFile`. */
function testFile(rulesFile: string, rule: AlertRule, cases: Case[]): string {
  return stringify({
    rule_files: [rulesFile],
    evaluation_interval: '15s',
    tests: cases.map((c) => ({
      name: `${rule.alert}: ${c.what}`,
      interval: '15s',
      input_series: c.input,
      alert_rule_test: [
        {
          eval_time: c.at,
          alertname: rule.alert,
          exp_alerts: c.firing.map((e) => ({
            exp_labels: e.labels,
            // The description and runbook are the same for every alert of the rule (checked below).
            exp_annotations: {
              summary: e.summary,
              description: rule.annotations.description,
              runbook_url: rule.annotations.runbook_url,
            },
          })),
        },
      ],
    })),
  });
}

/** GitHub's anchor of a heading: lower case, punctuation but '-' dropped, spaces to '-'. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');

describe("the monitoring kit's alerts (promtool test rules)", function () {
  this.timeout(60_000);
  let dir = '';
  let rulesFile = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'knh-rules-'));
    rulesFile = join(dir, 'rules.yaml');
    writeFileSync(rulesFile, stringify({ groups: ruleGroups() }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** `promtool test rules` of `cases` of `rule`. */
  async function run(rule: AlertRule, cases: Case[]) {
    const file = join(dir, `${rule.alert}.test.yaml`);
    writeFileSync(file, testFile(rulesFile, rule, cases));
    return promtool(['test', 'rules', file]);
  }

  it('are valid rules for `promtool check rules`', async function () {
    requirePromtool(this);
    const { code, output } = await promtool(['check', 'rules', rulesFile]);
    expect(output).to.include(`SUCCESS: ${alertRules().length} rules found`);
    expect(code).to.equal(0);
  });

  it('each has cases that make it fire and cases that keep it quiet, and nothing else', () => {
    expect(Object.keys(CASES)).to.have.members(alertRules().map((r) => r.alert));
    for (const [alert, cases] of Object.entries(CASES)) {
      expect(
        cases.some((c) => c.firing.length > 0),
        `${alert} fires`,
      ).to.be.true;
      expect(
        cases.some((c) => c.firing.length === 0),
        `${alert} stays quiet`,
      ).to.be.true;
    }
  });

  it('each has a severity, a summary, a description without templates and a runbook in docs/operating.md', () => {
    const operating = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');
    const headings = new Set(
      [...operating.matchAll(/^#{1,6} (.*)$/gm)].map((m) => anchorOf(m[1] ?? '')),
    );
    for (const rule of alertRules()) {
      expect(['critical', 'warning'], rule.alert).to.include(rule.labels.severity);
      expect(rule.annotations.summary, rule.alert).to.match(/^knh: /);
      expect(rule.annotations.description, rule.alert).to.be.a('string').and.not.include('{{');
      const [path, anchor = ''] = (rule.annotations.runbook_url ?? '').split('#');
      expect(path, `${rule.alert}'s runbook`).to.equal('docs/operating.md');
      expect([...headings], `${rule.alert}'s runbook section`).to.include(anchor);
      expect(anchor, rule.alert).to.equal(rule.alert.toLowerCase());
    }
  });

  it('promtool fails a case whose alert does not do what it expects (so a clean run means something)', async function () {
    requirePromtool(this);
    const quietExpected: Case = {
      what: 'nobody leads, yet expected quiet',
      input: [s('knh_is_coordinator', A, '0x40')],
      at: '5m',
      firing: [],
    };
    const { code, output } = await run(ruleNamed('KnhNoCoordinator'), [quietExpected]);
    expect(code).to.not.equal(0);
    expect(output).to.include('KnhNoCoordinator');
  });

  for (const [alert, cases] of Object.entries(CASES)) {
    const whats = cases.map((c) => `${c.firing.length ? 'fires' : 'quiet'}: ${c.what}`);
    it(`${alert} (${whats.join('; ')})`, async function () {
      requirePromtool(this);
      const { code, output } = await run(ruleNamed(alert), cases);
      expect(output, `promtool test rules for ${alert}`).to.include('SUCCESS');
      expect(code).to.equal(0);
    });
  }
});
