// The Alertmanager adapter: postable alerts valid against its API v2, identifying the node, firing
// alerts ending in the future, resolved ones at the resolution, a heartbeat with the watchdog.
import { expect } from 'chai';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertGroup, ReceiverRequest } from '../../src/alerts/receiver-adapter.js';
import { alertmanagerAdapter, type PostableAlert } from '../../src/receivers/alertmanager.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import {
  alertGroup,
  cannotJudgeIncident,
  COORDINATOR,
  findingIncident,
  FINDINGS,
} from '../support/alerts.js';

const schemas = loadSchemas();
const T0 = Date.parse('2025-03-01T10:00:00.000Z');
const RESEND_MS = 30_000;

function alert(overrides: Partial<Alert> = {}): Alert {
  return {
    key: `knh:10.0.0.7:8080:${T0}`,
    kind: 'peer_dead',
    peer: { id: 'node-7@10.0.0.7', address: '10.0.0.7:8080', node_name: 'node-7' },
    coordinator: { id: 'node-9@10.0.0.9', address: '10.0.0.9:8080' },
    reason: 'timeout',
    path: null,
    startsAt: T0,
    endsAt: null,
    ...overrides,
  };
}

const pathAlert = alert({
  key: `knh:10.0.0.3:8080->10.0.0.7:8080:${T0}`,
  kind: 'path_broken',
  path: {
    from: '10.0.0.3:8080',
    to: '10.0.0.7:8080',
    witnesses: ['10.0.0.4:8080', '10.0.0.5:8080'],
  },
});

const group = (changes: AlertGroup['changes'], overrides: Partial<AlertGroup> = {}): AlertGroup =>
  alertGroup(changes, T0 + 5_000, overrides);

/** The one request, checked against the schema, and its alerts. */
function only(requests: ReceiverRequest[]): { request: ReceiverRequest; alerts: PostableAlert[] } {
  expect(requests).to.have.length(1);
  const request = requests[0] as ReceiverRequest;
  expect(schemas.check('alertmanager-alerts', request.body)).to.deep.equal({ ok: true });
  return { request, alerts: request.body as PostableAlert[] };
}

const byName = (alerts: PostableAlert[], name: string) =>
  alerts.filter((a) => a.labels.alertname === name);

describe('alertmanagerAdapter', () => {
  const adapter = alertmanagerAdapter({
    baseUrl: 'http://alertmanager:9093/',
    resendMs: RESEND_MS,
  });

  it('names itself, its schema and re-posts every resend interval', () => {
    expect(adapter.name).to.equal('alertmanager');
    expect(adapter.schema).to.equal('alertmanager-alerts');
    expect(adapter.heartbeatMs).to.equal(RESEND_MS);
    expect(alertmanagerAdapter({ baseUrl: 'http://a:9093' }).heartbeatMs).to.equal(30_000);
  });

  it('posts a firing alert to /api/v2/alerts with labels identifying the node', () => {
    const { request, alerts } = only(adapter.render(group([{ type: 'firing', alert: alert() }])));
    expect(request.url).to.equal('http://alertmanager:9093/api/v2/alerts');
    expect(request.key).to.equal(alert().key);
    expect(alerts).to.have.length(1);
    const [a] = alerts as [PostableAlert];
    expect(a.labels).to.deep.equal({
      alertname: 'KnhPeerUnreachable',
      severity: 'critical',
      node: 'node-7',
      pod_ip: '10.0.0.7',
      instance: '10.0.0.7:8080',
      knh_key: alert().key,
    });
    expect(a.annotations.summary).to.include('node-7');
    expect(a.annotations.description)
      .to.include(new Date(T0).toISOString())
      .and.include('timeout')
      .and.include('node-9');
    expect(a.startsAt).to.equal(new Date(T0).toISOString());
    // Firing: ends by itself 4 resend intervals after this post unless posted again.
    expect(Date.parse(a.endsAt)).to.equal(T0 + 5_000 + 4 * RESEND_MS);
    expect(a).to.not.have.property('generatorURL');
  });

  it('keeps the labels of an alert identical from firing to resolution (Alertmanager identity)', () => {
    const fired = only(adapter.render(group([{ type: 'firing', alert: alert() }]))).alerts;
    // Resolved by another coordinator, after a hand-over.
    const resolvedBy = { id: 'node-8@10.0.0.8', address: '10.0.0.8:8080' };
    const resolved = alert({ endsAt: T0 + 60_000, coordinator: resolvedBy });
    const ended = only(
      adapter.render(group([{ type: 'resolved', alert: resolved }], { at: T0 + 61_000 })),
    ).alerts;
    expect(ended[0]?.labels).to.deep.equal(fired[0]?.labels);
    expect(ended[0]?.annotations.coordinator).to.equal('node-8@10.0.0.8');
  });

  it('resolves with endsAt = the resolution time', () => {
    const resolved = alert({ endsAt: T0 + 60_000 });
    const { alerts } = only(
      adapter.render(group([{ type: 'resolved', alert: resolved }], { at: T0 + 62_000 })),
    );
    expect(alerts[0]?.endsAt).to.equal(new Date(T0 + 60_000).toISOString());
    expect(alerts[0]?.startsAt).to.equal(new Date(T0).toISOString());
  });

  it('never ends an alert before it starts (Alertmanager rejects that)', () => {
    const skewed = alert({ endsAt: T0 - 1_000 });
    const { alerts } = only(adapter.render(group([{ type: 'resolved', alert: skewed }])));
    expect(alerts[0]?.endsAt).to.equal(alerts[0]?.startsAt);
  });

  it('puts every change of a group, firing and resolved, in one request', () => {
    const other = alert({
      key: `knh:10.0.0.6:8080:${T0 - 90_000}`,
      peer: { id: 'node-6@10.0.0.6', address: '10.0.0.6:8080', node_name: 'node-6' },
      startsAt: T0 - 90_000,
      endsAt: T0 + 4_000,
    });
    const { alerts } = only(
      adapter.render(
        group([
          { type: 'firing', alert: alert() },
          { type: 'resolved', alert: other },
          { type: 'firing', alert: pathAlert },
        ]),
      ),
    );
    expect(alerts.map((a) => a.labels.knh_key)).to.deep.equal([
      alert().key,
      other.key,
      pathAlert.key,
    ]);
    const now = T0 + 5_000;
    expect(Date.parse(alerts[0]?.endsAt ?? '')).to.be.above(now);
    expect(Date.parse(alerts[1]?.endsAt ?? '')).to.equal(T0 + 4_000);
  });

  it('labels a broken path with both ends and lists the witnesses', () => {
    const { alerts } = only(adapter.render(group([{ type: 'firing', alert: pathAlert }])));
    const [a] = alerts as [PostableAlert];
    expect(a.labels).to.include({
      alertname: 'KnhPathBroken',
      severity: 'warning',
      node: 'node-7',
      path_from: '10.0.0.3:8080',
      path_to: '10.0.0.7:8080',
    });
    expect(a.annotations.witnesses).to.equal('10.0.0.4:8080, 10.0.0.5:8080');
  });

  it('adds the cluster label and the status page as generator URL when configured', () => {
    const named = alertmanagerAdapter({
      baseUrl: 'http://am:9093/prefix',
      cluster: 'prod-eu',
      links: { statusPage: 'http://knh.example/status' },
    });
    const { request, alerts } = only(named.render(group([{ type: 'firing', alert: alert() }])));
    expect(request.url).to.equal('http://am:9093/prefix/api/v2/alerts');
    expect(alerts[0]?.labels.cluster).to.equal('prod-eu');
    expect(alerts[0]?.generatorURL).to.equal('http://knh.example/status');
    const beat = only(named.heartbeat?.([], T0) ?? []).alerts;
    expect(beat[0]?.labels).to.deep.equal({
      alertname: 'KnhWatchdog',
      severity: 'none',
      cluster: 'prod-eu',
    });
  });

  it('leaves out a label Alertmanager would drop for being empty', () => {
    const unnamed = alert({
      peer: { id: '10.0.0.7:8080', address: '10.0.0.7:8080', node_name: '' },
    });
    const { alerts } = only(adapter.render(group([{ type: 'firing', alert: unnamed }])));
    expect(alerts[0]?.labels).to.not.have.property('node');
  });

  it('heartbeat re-posts every firing alert with a fresh endsAt, and the watchdog', () => {
    const now = T0 + 600_000;
    const { request, alerts } = only(adapter.heartbeat?.([alert(), pathAlert], now) ?? []);
    expect(request.url).to.equal('http://alertmanager:9093/api/v2/alerts');
    expect(alerts.map((a) => a.labels.knh_key)).to.deep.equal([
      alert().key,
      pathAlert.key,
      undefined,
    ]);
    for (const a of alerts) expect(Date.parse(a.endsAt)).to.equal(now + 4 * RESEND_MS);
    const [dog] = byName(alerts, 'KnhWatchdog');
    expect(dog?.labels).to.deep.equal({ alertname: 'KnhWatchdog', severity: 'none' });
    expect(Date.parse(dog?.startsAt ?? '')).to.equal(now);
  });

  it('heartbeat with nothing firing still posts the watchdog', () => {
    const { alerts } = only(adapter.heartbeat?.([], T0) ?? []);
    expect(alerts.map((a) => a.labels.alertname)).to.deep.equal(['KnhWatchdog']);
  });

  it('posts a test group as a KnhTestAlert that Alertmanager ends after a minute', () => {
    const test = group([{ type: 'firing', alert: alert() }], { test: true, key: 'knh:test:1' });
    const { alerts } = only(adapter.render(test));
    expect(alerts).to.have.length(1);
    const [a] = alerts as [PostableAlert];
    expect(a.labels).to.include({ alertname: 'KnhTestAlert', severity: 'none', node: 'node-7' });
    expect(Date.parse(a.startsAt)).to.equal(test.at);
    expect(Date.parse(a.endsAt)).to.equal(test.at + 60_000);
    expect(byName(alerts, 'KnhPeerUnreachable')).to.be.empty;

    const bare = only(adapter.render(group([], { test: true, key: 'knh:test:2' }))).alerts;
    expect(bare.map((b) => b.labels.alertname)).to.deep.equal(['KnhTestAlert']);
  });

  it('sends nothing for a group without changes', () => {
    expect(adapter.render(group([]))).to.deep.equal([]);
  });

  describe('a coordinator that cannot judge the mesh', () => {
    const BACK = T0 + 60_000;
    const SENTENCE =
      'knh cannot judge the mesh: coordinator worker-1 reaches 1 of 4 peers; worker-3, worker-4, ' +
      "worker-5 do not answer it, and worker-2 cannot reach them either: either they failed or worker-1's " +
      'side of the network is cut off from them, and knh cannot tell which';
    const LABELS = {
      alertname: 'KnhCannotJudge',
      severity: 'critical',
      node: 'worker-1',
      pod_ip: '10.0.0.1',
      instance: '10.0.0.1:8080',
      knh_key: `knh:judge:10.0.0.1:8080:${T0}`,
    };

    it("fires KnhCannotJudge, critical, about the coordinator, with knh's sentence", () => {
      const { opened } = cannotJudgeIncident(T0, BACK);
      const { alerts } = only(adapter.render(group([{ type: 'firing', alert: opened }])));
      const [a] = alerts as [PostableAlert];
      expect(a.labels).to.deep.equal(LABELS);
      const { hint, ...annotations } = a.annotations;
      // Whose network to suspect: the coordinator's own, not the peers it cannot reach.
      expect(hint).to.match(/coordinator's own node or network/);
      expect(annotations).to.deep.equal({
        summary:
          'knh cannot judge the mesh: coordinator worker-1 (10.0.0.1:8080) cannot reach most of its peers',
        description: `${SENTENCE}; since ${new Date(T0).toISOString()}; sent by coordinator worker-1 (10.0.0.1:8080).`,
        coordinator: 'worker-1@10.0.0.1',
        reaches: '1 of 4 peers',
        unreachable: 'worker-3, worker-4, worker-5',
        corroborated_by: 'worker-2',
      });
      expect(a.startsAt).to.equal(new Date(T0).toISOString());
      expect(Date.parse(a.endsAt)).to.equal(T0 + 5_000 + 4 * RESEND_MS);
      // Re-posted while it fires, like the others.
      const beat = only(adapter.heartbeat?.([opened], T0 + 600_000) ?? []).alerts;
      expect(byName(beat, 'KnhCannotJudge').map((b) => b.labels)).to.deep.equal([LABELS]);
    });

    it('resolves with the same labels and endsAt, whoever resolves it', () => {
      const { opening, resolution } = cannotJudgeIncident(T0, BACK);
      const seen = new AlertLifecycle(0);
      seen.onEvent(opening, T0);
      const held = seen.onEvent(resolution, BACK);
      const successor = { id: 'worker-2@10.0.0.2', address: '10.0.0.2:8080' };
      const { resolved: inherited } = cannotJudgeIncident(T0, BACK, { successor });
      for (const changes of [held, [{ type: 'resolved' as const, alert: inherited }]]) {
        const [a] = only(adapter.render(group(changes, { at: BACK + 2_000 }))).alerts;
        expect(a?.labels).to.deep.equal(LABELS);
        expect(a?.endsAt).to.equal(new Date(BACK).toISOString());
        expect(a?.annotations.description).to.include(`ended ${new Date(BACK).toISOString()}`);
      }
      const [byHeir] = only(
        adapter.render(group([{ type: 'resolved', alert: inherited }], { at: BACK })),
      ).alerts;
      expect(byHeir?.annotations).to.include({ coordinator: 'worker-2@10.0.0.2' });
      expect(byHeir?.annotations.description).to.match(
        /^knh can judge the mesh again: worker-2 leads now, in place of worker-1, and reaches 3 of 3 peers; /,
      );
    });

    it('posts it beside the dead nodes of the same group, each under its own name', () => {
      const { opened } = cannotJudgeIncident(T0, BACK);
      const { alerts } = only(
        adapter.render(
          group([
            { type: 'firing', alert: alert() },
            { type: 'firing', alert: opened },
          ]),
        ),
      );
      expect(
        alerts.map((a) => [a.labels.alertname, a.labels.severity, a.labels.node]),
      ).to.deep.equal([
        ['KnhPeerUnreachable', 'critical', 'node-7'],
        ['KnhCannotJudge', 'critical', 'worker-1'],
      ]);
      expect(alerts[0]?.annotations).to.not.have.property('reaches');
    });

    it('keeps long lists of nodes within the schema', () => {
      const corroboratedBy = Array.from(
        { length: 2000 },
        (_, i) => `${'r'.repeat(60)}-${i}@10.0.3.1`,
      );
      const { opened } = cannotJudgeIncident(T0, BACK, { silent: 80, corroboratedBy });
      const [a] = only(adapter.render(group([{ type: 'firing', alert: opened }]))).alerts;
      expect(a?.annotations.unreachable).to.match(
        /^worker-3, worker-4, .*, worker-52 and 30 more$/,
      );
      expect(a?.annotations.corroborated_by).to.have.length(4000).and.match(/…$/);
      expect(a?.annotations.description?.length).to.be.at.most(4000);
    });
  });

  describe("findings of every node's paths", () => {
    const BACK = T0 + 60_000;
    const incident = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) => findingIncident(f, T0, BACK);
    const NODE = { node: 'worker-3', pod_ip: '10.0.0.3', instance: '10.0.0.3:8080' };
    const PATH = { ...NODE, path_from: 'worker-2@10.0.0.2', path_to: 'worker-3@10.0.0.3' };
    /** Each kind: its alertname, and the labels that identify it (besides knh_key). */
    const KINDS = [
      [FINDINGS.nodeDegraded, 'KnhPeerDegraded', NODE],
      [FINDINGS.pathDegraded, 'KnhPathDegraded', PATH],
      [FINDINGS.nodeMtu, 'KnhPeerMtu', NODE],
      [FINDINGS.pathMtu, 'KnhPathMtu', PATH],
      [FINDINGS.egressBroken, 'KnhEgressBroken', NODE],
      [FINDINGS.partition, 'KnhPartition', {}],
      [FINDINGS.pathBroken, 'KnhPathBroken', PATH],
    ] as const;

    for (const [finding, alertname, where] of KINDS) {
      it(`${finding.kind}: ${alertname}, a warning, labelled the same from firing to resolution`, () => {
        const { opened } = incident(finding);
        const healthy = { samples: 40, failures: 0, lossRatio: 0, p50Ms: 1, p99Ms: 2 };
        const { resolved } = findingIncident(finding, T0, BACK, { figures: healthy });
        const [fired] = only(adapter.render(group([{ type: 'firing', alert: opened }]))).alerts;
        expect(fired?.labels).to.deep.equal({
          alertname,
          severity: 'warning',
          ...where,
          knh_key: opened.key,
        });
        // Resolved by the coordinator that saw it fire (its alert, ended), or by one that did not
        // (the closing event's own alert, whose reason and figures are the closing's): figures
        // are no label, or the resolution would be another alert.
        for (const alert of [{ ...opened, endsAt: BACK }, resolved]) {
          const at = BACK + 2_000;
          const [ended] = only(adapter.render(group([{ type: 'resolved', alert }], { at }))).alerts;
          expect(ended?.labels).to.deep.equal(fired?.labels);
          expect(ended?.endsAt).to.equal(new Date(BACK).toISOString());
        }
      });
    }

    it('keeps a partition labelled the same when another coordinator resolves it', () => {
      const successor = { id: 'worker-4@10.0.0.4', address: '10.0.0.4:8080' };
      const opened = findingIncident(FINDINGS.partition, T0, BACK).opened;
      const heir = findingIncident(FINDINGS.partition, T0, BACK, { coordinator: successor });
      expect(heir.resolved.peer.address, 'its node is whoever told it').to.not.equal(
        opened.peer.address,
      );
      const [fired] = only(adapter.render(group([{ type: 'firing', alert: opened }]))).alerts;
      const [ended] = only(
        adapter.render(group([{ type: 'resolved', alert: heir.resolved }], { at: BACK })),
      ).alerts;
      expect(ended?.labels).to.deep.equal(fired?.labels);
      expect(ended?.annotations.coordinator).to.equal(successor.id);
    });

    it('puts the figures of a degraded node in annotations', () => {
      const { opened } = incident(FINDINGS.nodeDegraded);
      const [a] = only(adapter.render(group([{ type: 'firing', alert: opened }]))).alerts;
      const { hint, ...annotations } = a?.annotations ?? {};
      expect(hint).to.match(/^loss or latency on most of this node's paths/);
      expect(annotations).to.deep.equal({
        summary: 'knh: node worker-3 (10.0.0.3:8080) is degraded',
        description:
          `knh: node worker-3 (10.0.0.3:8080) is degraded since ${new Date(T0).toISOString()}: ` +
          'loss 25% of 40 probes, p50 12.3 ms, p99 480 ms; a warning: no node is down; decided by ' +
          'coordinator worker-1 (10.0.0.1:8080).',
        coordinator: COORDINATOR.id,
        loss_percent: '25',
        samples: '40',
        p50_ms: '12.3',
        p99_ms: '480',
      });
    });

    it('tells the size an MTU finding drops, the reach of a cut egress, the sides of a partition', () => {
      const annotations = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) =>
        only(adapter.render(group([{ type: 'firing', alert: incident(f).opened }]))).alerts[0]
          ?.annotations;
      expect(annotations(FINDINGS.pathMtu)).to.include({
        summary:
          'knh: the path from worker-2 to worker-3 (10.0.0.3:8080) is dropping full-size packets (MTU)',
        mtu_bytes: '1400',
      });
      expect(annotations(FINDINGS.egressBroken)).to.include({
        summary: 'knh: the egress of node worker-3 (10.0.0.3:8080) is broken',
        reaches: 'none',
        reached_by: '10.0.0.2:8080, 10.0.0.4:8080',
      });
      expect(annotations(FINDINGS.partition)).to.include({
        summary: 'knh: the mesh is partitioned',
        sides:
          '2 sides cannot reach each other: [10.0.0.1:8080, 10.0.0.2:8080] | [10.0.0.3:8080, 10.0.0.4:8080]',
      });
    });

    it('names both ends of a path broken between two nodes', () => {
      const { opened } = incident(FINDINGS.pathBroken);
      const [a] = only(adapter.render(group([{ type: 'firing', alert: opened }]))).alerts;
      expect(a?.annotations.summary).to.equal(
        'knh: worker-2@10.0.0.2 cannot reach worker-3@10.0.0.3',
      );
      expect(a?.annotations.witnesses).to.equal('worker-4@10.0.0.4, worker-5@10.0.0.5');
      expect(a?.annotations.description).to.not.include('last failure');
    });

    it('posts a dead node critical beside a degraded one, a warning', () => {
      const { opened } = incident(FINDINGS.nodeDegraded);
      const { alerts } = only(
        adapter.render(
          group([
            { type: 'firing', alert: alert() },
            { type: 'firing', alert: opened },
          ]),
        ),
      );
      expect(alerts.map((a) => [a.labels.alertname, a.labels.severity])).to.deep.equal([
        ['KnhPeerUnreachable', 'critical'],
        ['KnhPeerDegraded', 'warning'],
      ]);
    });
  });

  it('the schema rejects what Alertmanager rejects', () => {
    const valid: PostableAlert = {
      labels: { alertname: 'X' },
      annotations: {},
      startsAt: new Date(T0).toISOString(),
      endsAt: new Date(T0).toISOString(),
    };
    const ok = (v: unknown) => schemas.check('alertmanager-alerts', v).ok;
    expect(ok([valid])).to.equal(true);
    expect(ok([]), 'empty').to.equal(false);
    expect(ok([{ ...valid, labels: {} }]), 'no label').to.equal(false);
    expect(ok([{ ...valid, labels: { 'pod-ip': '1' } }]), 'label name').to.equal(false);
    expect(ok([{ ...valid, labels: { '1x': '1' } }]), 'label name').to.equal(false);
    expect(ok([{ ...valid, annotations: { 'a.b': 'c' } }]), 'annotation name').to.equal(false);
    expect(ok([{ ...valid, labels: { a: 1 } }]), 'label value').to.equal(false);
    expect(ok([{ ...valid, endsAt: 'yesterday' }]), 'date').to.equal(false);
    expect(ok([{ ...valid, generatorURL: 'not a uri' }]), 'uri').to.equal(false);
    expect(ok([{ ...valid, status: 'firing' }]), 'unknown property').to.equal(false);
  });
});
