// The PagerDuty adapter: Events API v2 triggers and resolves, one page per group, bounded state.
import { hintOf } from '../../src/receivers/hints.js';
import { expect } from 'chai';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertChange, AlertGroup } from '../../src/alerts/receiver-adapter.js';
import {
  MAX_TRACKED,
  PAGERDUTY_EVENTS_URL,
  pagerDutyAdapter,
  type PagerDutyAdapter,
  type PagerDutyEvent,
  type TriggerEvent,
} from '../../src/receivers/pagerduty.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import {
  alertGroup,
  brokenPathAlert,
  cannotJudgeIncident,
  deadAlert,
  findingIncident,
  FINDINGS,
  firing,
  INCIDENT_JUDGEMENT,
  podAddress,
  resolved,
} from '../support/alerts.js';

const ROUTING_KEY = 'e93facc04764012d7bfb002500d5d1a6';
const T = Date.UTC(2025, 4, 6, 12, 3, 4);
const schemas = loadSchemas();

const dead = (n: number, over: Partial<Alert> = {}): Alert => deadAlert(n, T, over);
const broken = (n: number): Alert => brokenPathAlert(n, T, { reason: null });

/** Groups as the lifecycle builds them: `firing` lists every alert still firing after the window. */
function lifecycle() {
  const firingNow = new Map<string, Alert>();
  return (changes: AlertChange[], over: Partial<AlertGroup> = {}): AlertGroup => {
    for (const c of changes) {
      if (c.type === 'firing') firingNow.set(c.alert.key, c.alert);
      else firingNow.delete(c.alert.key);
    }
    return alertGroup(changes, T + 30_000, { firing: [...firingNow.values()], ...over });
  };
}

/**
 * The Events API v2 request as PagerDuty documents it (docs/events-API-v2/02-Trigger-Events.md),
 * checked by hand so a wrong schema cannot hide a wrong event.
 */
function expectDocumentedShape(e: PagerDutyEvent) {
  expect(e.routing_key).to.have.length(32);
  expect(e.dedup_key.length).to.be.within(1, 255);
  if (e.event_action === 'resolve') {
    expect(Object.keys(e).sort()).to.deep.equal(['dedup_key', 'event_action', 'routing_key']);
    return;
  }
  expect(e.event_action).to.equal('trigger');
  const p = e.payload;
  expect(p.summary.length).to.be.within(1, 1024);
  expect(p.source).to.be.a('string').and.not.empty;
  expect(['critical', 'error', 'warning', 'info']).to.include(p.severity);
  expect(new Date(p.timestamp).toISOString()).to.equal(p.timestamp);
  expect(p).to.include({ component: 'pod-network', group: 'knh' });
  expect(e.client).to.equal('knh');
}

/** Renders, checks every event against the schema and the documented shape, returns them. */
function send(adapter: PagerDutyAdapter, g: AlertGroup, url = PAGERDUTY_EVENTS_URL) {
  return adapter.render(g).map((r) => {
    expect(r.url).to.equal(url);
    const e = r.body as PagerDutyEvent;
    expect(r.key).to.equal(e.dedup_key);
    expect(schemas.check('pagerduty-event', e)).to.deep.equal({ ok: true });
    expectDocumentedShape(e);
    return e;
  });
}

const triggerOf = (e: PagerDutyEvent | undefined): TriggerEvent => {
  if (e?.event_action !== 'trigger') throw new Error(`not a trigger: ${JSON.stringify(e)}`);
  return e;
};
const adapter = (over: { maxTracked?: number; url?: string; source?: string } = {}) =>
  pagerDutyAdapter({ routingKey: ROUTING_KEY, ...over });

describe('PagerDuty adapter', () => {
  it('names itself and its schema, and sends no heartbeat', () => {
    const pd = adapter();
    expect([pd.name, pd.schema]).to.deep.equal(['pagerduty', 'pagerduty-event']);
    expect('heartbeat' in pd).to.equal(false);
  });

  it('triggers a dead peer and resolves it under the same dedup key', () => {
    const group = lifecycle();
    const pd = adapter();
    const [open, ...rest] = send(pd, group([firing(dead(3))]));
    expect(rest).to.deep.equal([]);
    expect(triggerOf(open)).to.deep.equal({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: `knh:10.0.0.3:8080:${T}`,
      payload: {
        summary:
          'knh: worker-3 (10.0.0.3:8080) unreachable since 2025-05-06T12:03:04Z; last failure: ' +
          'timeout — seen by coordinator worker-1 (10.0.0.1:8080)',
        source: 'worker-3',
        severity: 'critical',
        timestamp: '2025-05-06T12:03:04.000Z',
        component: 'pod-network',
        group: 'knh',
        class: 'peer_dead',
        custom_details: {
          alert_key: `knh:10.0.0.3:8080:${T}`,
          kind: 'peer_dead',
          node: 'worker-3',
          peer_id: 'worker-3@10.0.0.3',
          pod_address: '10.0.0.3:8080',
          since: '2025-05-06T12:03:04.000Z',
          coordinator: 'worker-1@10.0.0.1',
          coordinator_address: '10.0.0.1:8080',
          reason: 'timeout',
          // The hint for a probe that timed out (test/unit/hints.test.ts words it).
          what_to_check: hintOf({ kind: 'peer_dead', reason: 'timeout' }),
        },
      },
      client: 'knh',
    });
    expect(send(pd, group([resolved(dead(3))]))).to.deep.equal([
      { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: `knh:10.0.0.3:8080:${T}` },
    ]);
  });

  it('pages a broken path as a warning saying who still reaches the node', () => {
    const group = lifecycle();
    const pd = adapter({ url: 'http://127.0.0.1:9999/v2/enqueue', source: 'prod-eu' });
    const [open] = send(pd, group([firing(broken(4))]), 'http://127.0.0.1:9999/v2/enqueue');
    const { payload, dedup_key } = triggerOf(open);
    expect(dedup_key).to.equal(`knh:10.0.0.1:8080->10.0.0.4:8080:${T}`);
    expect(payload).to.include({ severity: 'warning', class: 'path_broken', source: 'prod-eu' });
    expect(payload.summary).to.equal(
      'knh: path from worker-1 to worker-4 (10.0.0.4:8080) broken since 2025-05-06T12:03:04Z; ' +
        'reachable from worker-2 — seen by coordinator worker-1 (10.0.0.1:8080)',
    );
  });

  it('pages 30 failures once, and resolves that page only when the last of them resolves', () => {
    const group = lifecycle();
    const pd = adapter();
    const alerts = Array.from({ length: 30 }, (_, i) => dead(i + 3));
    const events = send(pd, group(alerts.map(firing)));
    expect(events).to.have.length(1);
    const open = triggerOf(events[0]);
    const groupKey = `knh:group:knh:10.0.0.3:8080:${T}`;
    expect(open.dedup_key).to.equal(groupKey);
    expect(open.payload.summary).to.match(
      /^knh: 30 nodes unreachable: worker-3, worker-4, .*, worker-32 — since 2025-05-06T12:03:04Z, seen by coordinator worker-1$/,
    );
    expect(open.payload.severity).to.equal('critical');
    expect(open.payload.custom_details).to.include({ group_key: alerts[0]?.key, alert_count: 30 });
    const listed = open.payload.custom_details.alerts as { node: string }[];
    expect(listed.map((a) => a.node)).to.deep.equal(alerts.map((a) => a.peer.node_name));
    expect([pd.openGroups, pd.tracked]).to.deep.equal([1, 30]);

    // A member firing again (another coordinator's view) is not paged on its own.
    expect(send(pd, group([firing(alerts[5] ?? dead(0))]))).to.deep.equal([]);
    // Recoveries over several windows, a newcomer among them: only the newcomer and, at the end,
    // the group are resolved.
    expect(send(pd, group(alerts.slice(0, 10).map(resolved)))).to.deep.equal([]);
    const newcomer = dead(99);
    expect(send(pd, group([firing(newcomer)])).map((e) => e.dedup_key)).to.deep.equal([
      newcomer.key,
    ]);
    expect(send(pd, group([...alerts.slice(10, 29), newcomer].map(resolved)))).to.deep.equal([
      { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: newcomer.key },
    ]);
    expect(pd.tracked).to.equal(1);
    expect(send(pd, group([resolved(alerts[29] ?? dead(0))]))).to.deep.equal([
      { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: groupKey },
    ]);
    expect([pd.openGroups, pd.tracked]).to.deep.equal([0, 0]);
  });

  it('triggers before resolving when one window holds both', () => {
    const group = lifecycle();
    const pd = adapter();
    const events = send(pd, group([resolved(dead(3)), firing(dead(4)), firing(broken(5))]));
    expect(events.map((e) => e.event_action)).to.deep.equal(['trigger', 'resolve']);
    expect(triggerOf(events[0]).payload.summary).to.match(
      /^knh: 1 node unreachable, 1 path broken: worker-4, worker-1→worker-5 — since/,
    );
  });

  it('keeps summaries within 1024 characters and dedup keys within 255', () => {
    const group = lifecycle();
    const pd = adapter();
    const long = (n: number) =>
      dead(n, {
        key: `knh:${'k'.repeat(300)}:${n}`,
        peer: { id: `x@10.0.0.${n}`, address: `10.0.0.${n}:8080`, node_name: 'n'.repeat(2000) },
        reason: 'r'.repeat(5000),
      });
    const [single] = send(pd, group([firing(long(1))]));
    expect(triggerOf(single).payload.summary).to.have.length(1024);
    const [resolve] = send(pd, group([resolved(long(1))]));
    expect(resolve?.dedup_key)
      .to.equal(single?.dedup_key)
      .and.match(/^knh:sha256:[0-9a-f]{64}$/);
    const many = Array.from({ length: 1000 }, (_, i) =>
      firing(dead(i, { peer: { ...dead(i).peer, node_name: `node-${i}-${'z'.repeat(40)}` } })),
    );
    const [grouped] = send(pd, group(many));
    const summary = triggerOf(grouped).payload.summary;
    expect(summary.length).to.be.at.most(1024);
    expect(summary).to.match(
      / and \d+ more — since 2025-05-06T12:03:04Z, seen by coordinator worker-1$/,
    );
    expect(triggerOf(grouped).payload.custom_details).to.include({ alerts_omitted: 800 });
  });

  it('sends a test as a trigger labelled TEST, resolved at once under the same key', () => {
    const group = lifecycle();
    const pd = adapter();
    for (const changes of [[], [firing(dead(3))]]) {
      const g = group(changes, { test: true });
      const [open, close, ...rest] = send(pd, g);
      expect(rest).to.deep.equal([]);
      expect(open?.dedup_key).to.equal(`knh:test:${g.at}`);
      expect(triggerOf(open).payload.summary).to.match(/^TEST: knh test alert, not a real problem/);
      expect(triggerOf(open).payload).to.include({ severity: 'info' });
      expect(close).to.deep.equal({
        routing_key: ROUTING_KEY,
        event_action: 'resolve',
        dedup_key: `knh:test:${g.at}`,
      });
    }
    expect(pd.tracked).to.equal(0);
  });

  it('remembers a bounded number of grouped alerts, forgetting the oldest incidents', () => {
    const group = lifecycle();
    const pd = adapter({ maxTracked: 10 });
    const pairs = Array.from({ length: 20 }, (_, i) => [dead(2 * i), dead(2 * i + 1)]);
    for (const pair of pairs) send(pd, group(pair.map(firing)));
    expect([pd.tracked, pd.openGroups]).to.deep.equal([10, 5]);
    // The newest incident still resolves with its last member; a forgotten one falls back to
    // the alert's own key.
    const [a, b] = pairs[19] ?? [];
    if (!a || !b) throw new Error('no pair');
    expect(send(pd, group([resolved(a)]))).to.deep.equal([]);
    expect(send(pd, group([resolved(b)])).map((e) => e.dedup_key)).to.deep.equal([
      `knh:group:${a.key}`,
    ]);
    const oldest = pairs[0]?.[0] ?? dead(0);
    expect(send(pd, group([resolved(oldest)])).map((e) => e.dedup_key)).to.deep.equal([oldest.key]);

    expect(MAX_TRACKED).to.equal(10_000);
  });

  it('resolves a grouped incident once none of its alerts is firing, resolution seen or not', () => {
    const group = lifecycle();
    const pd = adapter();
    const [a, b, c] = [dead(3), dead(4), dead(5)];
    send(pd, group([a, b, c].map(firing)));
    expect(send(pd, group([resolved(a)]))).to.deep.equal([]);
    // b and c stopped firing without a resolution reaching this adapter (say a lost window).
    expect(
      send(pd, group([firing(dead(6))], { firing: [dead(6)] })).map((e) => e.dedup_key),
    ).to.deep.equal([dead(6).key, `knh:group:${a.key}`]);
    expect([pd.openGroups, pd.tracked]).to.deep.equal([0, 0]);

    // A resolution counts even if the window's list of firing alerts still names the alert.
    const [d, e] = [dead(7), dead(8)];
    send(pd, group([d, e].map(firing)));
    const resolving = group([resolved(d), resolved(e)], { firing: [d, e] });
    expect(send(pd, resolving).map((x) => x.dedup_key)).to.deep.equal([`knh:group:${d.key}`]);
  });

  describe('a coordinator that cannot judge the mesh', () => {
    const SENTENCE =
      'knh cannot judge the mesh: coordinator worker-1 reaches 1 of 4 peers; worker-3, worker-4, ' +
      "worker-5 do not answer it, and worker-2 cannot reach them either: either they failed or worker-1's " +
      'side of the network is cut off from them, and knh cannot tell which';

    it("pages it as an error with knh's sentence, and resolves it under the same key", () => {
      const { opening, resolution, opened } = cannotJudgeIncident(T, T + 120_000);
      const group = lifecycle();
      const pd = adapter();
      const [open, ...rest] = send(pd, group([firing(opened)]));
      expect(rest).to.deep.equal([]);
      const { payload, dedup_key } = triggerOf(open);
      expect(dedup_key).to.equal(`knh:judge:10.0.0.1:8080:${T}`);
      expect(payload).to.include({
        summary: SENTENCE,
        severity: 'error',
        class: 'cannot_judge',
        source: 'worker-1',
        timestamp: '2025-05-06T12:03:04.000Z',
      });
      expect(payload.custom_details).to.deep.include({
        kind: 'cannot_judge',
        node: 'worker-1',
        coordinator: 'worker-1@10.0.0.1',
        judgement: { ...INCIDENT_JUDGEMENT, corroborated_count: 1 },
      });

      // Resolved by the coordinator that saw it fire: the lifecycle ends the firing alert.
      const seen = new AlertLifecycle(0);
      seen.onEvent(opening, T);
      const resolve = { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key };
      expect(send(pd, group(seen.onEvent(resolution, T + 120_000)))).to.deep.equal([resolve]);
      // By a successor that never saw it fire: the can_judge event's own alert, same key.
      const successor = { id: 'worker-2@10.0.0.2', address: '10.0.0.2:8080' };
      const { resolved: inherited } = cannotJudgeIncident(T, T + 120_000, { successor });
      const fresh = lifecycle();
      expect(send(adapter(), fresh([{ type: 'resolved', alert: inherited }]))).to.deep.equal([
        resolve,
      ]);
    });

    it('keeps a long sentence within the summary limit', () => {
      const corroboratedBy = Array.from({ length: 200 }, (_, i) => `relay-${i}@10.0.2.${i}`);
      const { opened } = cannotJudgeIncident(T, T + 1, { silent: 300, corroboratedBy });
      const [open] = send(adapter(), lifecycle()([firing(opened)]));
      const { summary } = triggerOf(open).payload;
      expect(opened.reason?.length).to.be.above(1024);
      expect(summary).to.have.length(1024);
      expect(summary).to.match(
        /^knh cannot judge the mesh: coordinator worker-1 reaches 1 of 301 peers; worker-3, .* and 295 more do not answer it, and relay-0, .*…$/,
      );
    });

    it('counts it apart from the nodes down in a grouped page, which stays critical', () => {
      const group = lifecycle();
      const pd = adapter();
      const { opened } = cannotJudgeIncident(T, T + 1);
      const deaths = [6, 7, 8].map((n) => dead(n));
      const [open, ...rest] = send(pd, group([...deaths, opened].map(firing)));
      expect(rest).to.deep.equal([]);
      const { payload, dedup_key } = triggerOf(open);
      expect(dedup_key).to.equal(`knh:group:${deaths[0]?.key}`);
      expect(payload.summary).to.equal(
        'knh: 3 nodes unreachable, 1 coordinator cannot judge the mesh: worker-6, worker-7, ' +
          'worker-8, worker-1 (cannot judge) — since 2025-05-06T12:03:04Z, seen by coordinator worker-1',
      );
      expect(payload).to.include({ severity: 'critical', class: 'peer_dead' });
      expect(payload.custom_details).to.include({ alert_count: 4 });
      // The page resolves with the last of its four alerts, the cannot_judge among them.
      expect(send(pd, group(deaths.map(resolved)))).to.deep.equal([]);
      expect(send(pd, group([resolved(opened)]))).to.deep.equal([
        { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key },
      ]);

      // Beside a broken path only, it makes the page an error rather than a warning.
      const mixed = send(adapter(), lifecycle()([firing(broken(9)), firing(opened)]));
      expect(triggerOf(mixed[0]).payload).to.include({ severity: 'error', class: 'cannot_judge' });
      expect(triggerOf(mixed[0]).payload.summary).to.match(
        /^knh: 1 coordinator cannot judge the mesh, 1 path broken: worker-1 \(cannot judge\), worker-1→worker-9 — /,
      );
    });

    it('keeps its sentence whole in a test page', () => {
      const { opened } = cannotJudgeIncident(T, T + 1);
      const [open] = send(adapter(), lifecycle()([firing(opened)], { test: true }));
      expect(triggerOf(open).payload.summary).to.equal(
        `TEST: knh test alert, not a real problem: ${SENTENCE}`,
      );
    });
  });

  describe("findings of every node's paths", () => {
    const found = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) =>
      findingIncident(f, T, T + 120_000).opened;
    const SINCE = 'since 2025-05-06T12:03:04Z';
    const SEEN = ' — seen by coordinator worker-1 (10.0.0.1:8080)';
    /** Each kind's incident title: what, where, since when, its facts. */
    const KINDS = [
      [
        FINDINGS.nodeDegraded,
        `node worker-3 (10.0.0.3:8080) is degraded ${SINCE}: loss 25% of 40 probes, p50 12.3 ms, p99 480 ms`,
      ],
      [
        FINDINGS.pathDegraded,
        `the path from worker-2 to worker-3 (10.0.0.3:8080) is degraded ${SINCE}: loss 25% of 40 probes, p50 12.3 ms, p99 480 ms`,
      ],
      [
        FINDINGS.nodeMtu,
        `node worker-3 (10.0.0.3:8080) is dropping full-size packets (MTU) ${SINCE}: packets of 1400 bytes of payload are dropped, smaller ones pass`,
      ],
      [
        FINDINGS.pathMtu,
        `the path from worker-2 to worker-3 (10.0.0.3:8080) is dropping full-size packets (MTU) ${SINCE}: packets of 1400 bytes of payload are dropped, smaller ones pass`,
      ],
      [
        FINDINGS.egressBroken,
        `the egress of node worker-3 (10.0.0.3:8080) is broken ${SINCE}: it reaches no other node, while 2 nodes reach it`,
      ],
      [
        FINDINGS.partition,
        `the mesh is partitioned ${SINCE}: 2 sides cannot reach each other: [10.0.0.1:8080, 10.0.0.2:8080] | [10.0.0.3:8080, 10.0.0.4:8080]`,
      ],
      [
        FINDINGS.pathBroken,
        `path from worker-2 to worker-3 (10.0.0.3:8080) broken ${SINCE}; reachable from worker-4, worker-5`,
      ],
    ] as const;

    for (const [finding, summary] of KINDS) {
      it(`${finding.kind}: a warning titled with what, where and its facts, resolved under its key`, () => {
        const group = lifecycle();
        const pd = adapter();
        const alert = found(finding);
        const [open, ...rest] = send(pd, group([firing(alert)]));
        expect(rest).to.deep.equal([]);
        const { payload, dedup_key } = triggerOf(open);
        expect(dedup_key).to.equal(alert.key);
        expect(payload).to.include({
          summary: `knh: ${summary}${SEEN}`,
          severity: 'warning',
          class: alert.kind,
        });
        expect(payload.custom_details).to.include({ kind: alert.kind, severity: 'warning' });
        expect(send(pd, group([resolved(alert)]))).to.deep.equal([
          { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key },
        ]);
      });
    }

    it('carries the facts in custom_details, and a partition comes from the mesh, not a node', () => {
      const details = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) =>
        triggerOf(send(adapter(), lifecycle()([firing(found(f))]))[0]).payload;
      expect(details(FINDINGS.nodeDegraded).custom_details).to.deep.include({
        facts: { figures: { samples: 40, loss_ratio: 0.25, p50_ms: 12.3, p99_ms: 480 } },
      });
      expect(details(FINDINGS.pathMtu).custom_details).to.deep.include({
        facts: { mtu: { size: 1400 } },
        path: {
          from: 'worker-2@10.0.0.2',
          to: 'worker-3@10.0.0.3',
          witnesses: [],
          witness_count: 0,
        },
      });
      expect(details(FINDINGS.egressBroken).custom_details).to.deep.include({
        facts: {
          egress: {
            reaches: [],
            reaches_count: 0,
            reached_by: ['10.0.0.2:8080', '10.0.0.4:8080'],
            reached_by_count: 2,
          },
        },
      });
      const partition = details(FINDINGS.partition);
      expect(partition.source).to.equal('knh');
      expect(partition.custom_details).to.deep.include({
        facts: {
          partition: {
            sides: [
              ['10.0.0.1:8080', '10.0.0.2:8080'],
              ['10.0.0.3:8080', '10.0.0.4:8080'],
            ],
            side_sizes: [2, 2],
            side_count: 2,
          },
        },
      });
    });

    it('names 20 nodes of each list and counts them all', () => {
      const many = (from: number) => Array.from({ length: 300 }, (_, i) => podAddress(from + i));
      const partition = findingIncident(
        { kind: 'partition', sides: [many(0), many(300)] },
        T,
        T + 1,
      ).opened;
      const [open] = send(adapter(), lifecycle()([firing(partition)]));
      const { summary, custom_details } = triggerOf(open).payload;
      expect(summary).to.match(/\[10\.0\.0\.0:8080, .*, 10\.0\.0\.19:8080 and 280 more\] \| /);
      const facts = custom_details.facts as {
        partition: { sides: string[][]; side_sizes: number[] };
      };
      expect(facts.partition.sides.map((s) => s.length)).to.deep.equal([20, 20]);
      expect(facts.partition.side_sizes).to.deep.equal([300, 300]);
    });

    it('pages findings alone as one warning, counted by kind, the most urgent its class', () => {
      const other = findingIncident(
        { ...FINDINGS.nodeDegraded, node: podAddress(6) },
        T,
        T + 1,
      ).opened;
      const alerts = [
        found(FINDINGS.nodeDegraded),
        other,
        found(FINDINGS.pathMtu),
        found(FINDINGS.egressBroken),
      ];
      const [open, ...rest] = send(adapter(), lifecycle()(alerts.map(firing)));
      expect(rest).to.deep.equal([]);
      expect(triggerOf(open).payload).to.include({
        severity: 'warning',
        class: 'egress_broken',
        summary:
          'knh: egress broken on 1 node, 1 path dropping full-size packets (MTU), 2 nodes degraded: ' +
          'worker-3 (egress), worker-2→worker-3 (MTU), worker-3 (degraded), worker-6 (degraded) — ' +
          'since 2025-05-06T12:03:04Z, seen by coordinator worker-1',
      });
    });

    it('keeps a grouped page critical when a node is down beside a degraded one', () => {
      const group = lifecycle();
      const pd = adapter();
      const degraded = found(FINDINGS.nodeDegraded);
      const [open] = send(pd, group([firing(degraded), firing(dead(7))]));
      expect(triggerOf(open).payload).to.include({
        severity: 'critical',
        class: 'peer_dead',
        summary:
          'knh: 1 node unreachable, 1 node degraded: worker-7, worker-3 (degraded) — since ' +
          '2025-05-06T12:03:04Z, seen by coordinator worker-1',
      });
      // Beside a coordinator that cannot judge, an error, as without the finding.
      const { opened: judge } = cannotJudgeIncident(T, T + 1);
      const [mixed] = send(adapter(), lifecycle()([firing(degraded), firing(judge)]));
      expect(triggerOf(mixed).payload).to.include({ severity: 'error', class: 'cannot_judge' });
    });
  });

  it('has a schema that rejects what PagerDuty rejects', () => {
    const group = lifecycle();
    const [open] = send(adapter(), group([firing(dead(3))]));
    const t = triggerOf(open);
    const bad: unknown[] = [
      { ...t, routing_key: 'short' },
      { ...t, event_action: 'escalate' },
      { ...t, payload: undefined },
      { ...t, payload: { ...t.payload, summary: 's'.repeat(1025) } },
      { ...t, payload: { ...t.payload, severity: 'fatal' } },
      { ...t, payload: { ...t.payload, source: undefined } },
      { ...t, dedup_key: 'd'.repeat(256) },
      { routing_key: ROUTING_KEY, event_action: 'resolve' },
      { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: 'k', payload: t.payload },
    ];
    for (const b of bad) {
      expect(schemas.check('pagerduty-event', b).ok, JSON.stringify(b).slice(0, 100)).to.equal(
        false,
      );
    }
  });
});
