// The generic webhook receiver: every body valid against alert-webhook, auth on every request.
import { hintOf } from '../../src/receivers/hints.js';
import { expect } from 'chai';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertChange, AlertGroup } from '../../src/alerts/receiver-adapter.js';
import {
  webhookAdapter,
  type WebhookAlertBody,
  type WebhookHeartbeatBody,
} from '../../src/receivers/webhook.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import {
  alertGroup,
  cannotJudgeIncident,
  deadAlert as deadSince,
  findingIncident,
  FINDINGS,
  INCIDENT_JUDGEMENT,
} from '../support/alerts.js';

const schemas = loadSchemas();

function expectValid(body: unknown, what: string) {
  expect(schemas.check('alert-webhook', body), `${what}: ${JSON.stringify(body)}`).to.deep.equal({
    ok: true,
  });
}

const T0 = Date.UTC(2025, 4, 1, 12, 0, 0);
const URL_ = 'https://hooks.example.internal/knh';
const coordinator = { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' };

/** worker-<n> dead since T0 as worker-9 saw it, resolved at `endsAt` if given. */
const deadAlert = (n: number, endsAt: number | null = null): Alert =>
  deadSince(n, T0, { reason: 'refused (ECONNREFUSED) after 3 attempts', endsAt }, coordinator);

const pathAlert: Alert = {
  key: `knh:10.0.0.9:8080->10.0.0.4:8080:${T0}`,
  kind: 'path_broken',
  peer: { id: 'worker-4@10.0.0.4', address: '10.0.0.4:8080', node_name: 'worker-4' },
  coordinator,
  reason: 'timeout after 3 attempts',
  path: {
    from: 'worker-9@10.0.0.9',
    to: 'worker-4@10.0.0.4',
    witnesses: ['worker-1@10.0.0.1', 'worker-2@10.0.0.2'],
  },
  startsAt: T0,
  endsAt: null,
};

const group = (changes: AlertChange[], firing: Alert[], test = false): AlertGroup =>
  alertGroup(changes, T0 + 5_000, { firing, test });

function renderOne(g: AlertGroup, options: { cluster?: string } = {}) {
  const requests = webhookAdapter({ url: URL_, ...options }).render(g);
  expect(requests).to.have.length(1);
  const [request] = requests;
  if (!request) throw new Error('no request');
  expect(request.url).to.equal(URL_);
  expect(request.key).to.equal(g.key);
  return request.body as WebhookAlertBody;
}

describe('webhookAdapter', () => {
  it('is the webhook receiver validated against alert-webhook', () => {
    const adapter = webhookAdapter({ url: URL_ });
    expect(adapter.name).to.equal('webhook');
    expect(adapter.schema).to.equal('alert-webhook');
    expect(schemas.names).to.include(adapter.schema);
  });

  it('renders a firing alert', () => {
    const alert = deadAlert(3);
    const body = renderOne(group([{ type: 'firing', alert }], [alert]), { cluster: 'prod-eu' });
    expectValid(body, 'firing');
    expect(body).to.deep.equal({
      version: 1,
      type: 'alert',
      group_key: alert.key,
      timestamp: '2025-05-01T12:00:05.000Z',
      cluster: 'prod-eu',
      status: 'firing',
      changes: [
        {
          status: 'firing',
          key: alert.key,
          kind: 'peer_dead',
          node_name: 'worker-3',
          peer_id: 'worker-3@10.0.0.3',
          address: '10.0.0.3:8080',
          starts_at: '2025-05-01T12:00:00.000Z',
          ends_at: null,
          coordinator,
          reason: 'refused (ECONNREFUSED) after 3 attempts',
          // The hint for a refused connection (test/unit/hints.test.ts words it).
          hint: hintOf(alert),
          path: null,
          severity: 'critical',
        },
      ],
      // Still firing: the same alert, its hint told once, in the change.
      firing: body.changes.map(({ hint: _, ...a }) => a),
      summary:
        '[prod-eu] Node worker-3 (10.0.0.3:8080) is down (refused (ECONNREFUSED) after 3 attempts); 1 alert firing.',
    });
  });

  it('renders a resolution, with when it ended', () => {
    const alert = deadAlert(3, T0 + 60_000);
    const body = renderOne(group([{ type: 'resolved', alert }], []));
    expectValid(body, 'resolved');
    expect(body.status).to.equal('resolved');
    expect(body).to.not.have.property('cluster');
    expect(body.changes[0]).to.include({
      status: 'resolved',
      ends_at: '2025-05-01T12:01:00.000Z',
    });
    expect(body.firing).to.deep.equal([]);
    expect(body.summary).to.equal('Node worker-3 (10.0.0.3:8080) is back up; no alerts firing.');
  });

  it('is firing when any change in a mixed group fires', () => {
    const a = deadAlert(3, T0 + 1_000);
    const b = deadAlert(4);
    const body = renderOne(
      group(
        [
          { type: 'resolved', alert: a },
          { type: 'firing', alert: b },
        ],
        [b],
      ),
    );
    expectValid(body, 'mixed');
    expect(body.status).to.equal('firing');
    expect(body.summary).to.equal('1 node down, 1 node back up; 1 alert firing.');
  });

  it('renders a group of 30 in one message with a short summary', () => {
    const alerts = Array.from({ length: 30 }, (_, i) => deadAlert(i + 10));
    const body = renderOne(
      group(
        alerts.map((alert) => ({ type: 'firing' as const, alert })),
        [...alerts, pathAlert],
      ),
    );
    expectValid(body, 'group of 30');
    expect(body.changes).to.have.length(30);
    expect(body.firing).to.have.length(31);
    expect(body.changes.map((c) => c.key)).to.deep.equal(alerts.map((a) => a.key));
    expect(body.summary).to.equal('30 nodes down; 31 alerts firing.');
  });

  it('renders a broken path with who cannot reach whom and who can', () => {
    const body = renderOne(group([{ type: 'firing', alert: pathAlert }], [pathAlert]));
    expectValid(body, 'path');
    expect(body.changes[0]).to.deep.include({
      kind: 'path_broken',
      path: {
        from: 'worker-9@10.0.0.9',
        to: 'worker-4@10.0.0.4',
        witnesses: ['worker-1@10.0.0.1', 'worker-2@10.0.0.2'],
      },
    });
    expect(body.summary).to.equal(
      'The path from worker-9@10.0.0.9 to node worker-4 (10.0.0.4:8080) is broken (2 other nodes reach it); 1 alert firing.',
    );
  });

  it('marks a test alert as a test', () => {
    const alert = { ...deadAlert(7), key: `knh:test:${T0}` };
    const body = renderOne(group([{ type: 'firing', alert }], [], true), { cluster: 'prod-eu' });
    expectValid(body, 'test');
    expect(body.type).to.equal('test');
    expect(body.summary).to.match(/^\[prod-eu\] Test alert from knh, not a real problem: /);
  });

  it('clips a long reason to stay within the schema', () => {
    const alert = { ...deadAlert(3), reason: 'x'.repeat(5_000) };
    const body = renderOne(group([{ type: 'firing', alert }], [alert]));
    expectValid(body, 'long reason');
    expect(body.changes[0]?.reason).to.have.length(1000);
    expect(body.summary).to.have.length.at.most(1000);
  });

  describe('a coordinator that cannot judge the mesh', () => {
    const BACK = T0 + 60_000;

    it('passes the kind and the figures through, and says so in the summary', () => {
      const { opened } = cannotJudgeIncident(T0, BACK);
      const body = renderOne(group([{ type: 'firing', alert: opened }], [opened]));
      expectValid(body, 'cannot_judge');
      const [change] = body.changes;
      expect(change).to.deep.include({
        status: 'firing',
        key: `knh:judge:10.0.0.1:8080:${T0}`,
        kind: 'cannot_judge',
        node_name: 'worker-1',
        peer_id: 'worker-1@10.0.0.1',
        address: '10.0.0.1:8080',
        ends_at: null,
        reason: opened.reason,
        path: null,
        judgement: INCIDENT_JUDGEMENT,
      });
      expect(change?.reason).to.match(/^knh cannot judge the mesh: coordinator worker-1 reaches/);
      expect(change?.hint).to.match(/coordinator's own node or network/);
      expect(body.firing).to.deep.equal(body.changes.map(({ hint: _, ...a }) => a));
      expect(body.summary).to.equal(
        'Coordinator worker-1 (10.0.0.1:8080) cannot judge the mesh: it reaches 1 of 4 peers; 1 alert firing.',
      );
    });

    it('resolves it without stating the figures it opened with as current', () => {
      const { opening, resolution } = cannotJudgeIncident(T0, BACK);
      const seen = new AlertLifecycle(0);
      seen.onEvent(opening, T0);
      const body = renderOne(group(seen.onEvent(resolution, BACK), []));
      expectValid(body, 'can_judge');
      expect(body.status).to.equal('resolved');
      expect(body.changes[0]).to.include({
        status: 'resolved',
        kind: 'cannot_judge',
        ends_at: new Date(BACK).toISOString(),
      });
      expect(body.summary).to.equal(
        'The mesh is judged again after coordinator worker-1 (10.0.0.1:8080) could not judge it; no alerts firing.',
      );
    });

    it('counts it apart from the nodes down, and leaves the other kinds as they were', () => {
      const { opened } = cannotJudgeIncident(T0, BACK);
      const deaths = [6, 7, 8].map((n) => deadAlert(n));
      const firing = [...deaths, opened];
      const body = renderOne(
        group(
          firing.map((alert) => ({ type: 'firing' as const, alert })),
          firing,
        ),
      );
      expectValid(body, 'mixed kinds');
      expect(body.summary).to.equal(
        '3 nodes down, 1 coordinator cannot judge the mesh; 4 alerts firing.',
      );
      expect(body.changes.map((c) => c.kind)).to.deep.equal([
        'peer_dead',
        'peer_dead',
        'peer_dead',
        'cannot_judge',
      ]);
      for (const c of body.changes.slice(0, 3)) expect(c).to.not.have.property('judgement');

      const { resolved: ended } = cannotJudgeIncident(T0, BACK);
      const back = renderOne(
        group(
          [
            { type: 'resolved', alert: deadAlert(6, BACK) },
            { type: 'resolved', alert: ended },
          ],
          [],
        ),
      );
      expect(back.summary).to.equal(
        '1 node back up, 1 cannot-judge alert resolved; no alerts firing.',
      );
    });

    it('lists at most 50 silent peers, counting them all', () => {
      const { opened } = cannotJudgeIncident(T0, BACK, { silent: 60 });
      const listed = opened.judgement?.unreachable ?? [];
      const alert: Alert = {
        ...opened,
        judgement: {
          reaches: 1,
          peers: 61,
          unreachable: [...listed, ...listed.slice(0, 10)],
          unreachable_count: 60,
          corroborated_by: [],
        },
      };
      const body = renderOne(group([{ type: 'firing', alert }], [alert]));
      expectValid(body, '60 silent');
      expect(body.changes[0]?.judgement?.unreachable).to.have.length(50);
      expect(body.changes[0]?.judgement?.unreachable_count).to.equal(60);
    });
  });

  describe("findings of every node's paths", () => {
    const BACK = T0 + 60_000;
    const found = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) =>
      findingIncident(f, T0, BACK).opened;
    const changed = (type: AlertChange['type'], alert: Alert): AlertChange => ({ type, alert });
    /** Each kind: the facts it passes through, and its summary alone while it fires. */
    const KINDS = [
      [
        FINDINGS.nodeDegraded,
        { figures: { samples: 40, loss_ratio: 0.25, p50_ms: 12.3, p99_ms: 480 } },
        'Node worker-3 (10.0.0.3:8080) is degraded: loss 25% of 40 probes, p50 12.3 ms, p99 480 ms',
      ],
      [
        FINDINGS.pathDegraded,
        { figures: { samples: 40, loss_ratio: 0.25, p50_ms: 12.3, p99_ms: 480 } },
        'The path from worker-2 to worker-3 (10.0.0.3:8080) is degraded: loss 25% of 40 probes, p50 12.3 ms, p99 480 ms',
      ],
      [
        FINDINGS.nodeMtu,
        { mtu: { size: 1400 } },
        'Node worker-3 (10.0.0.3:8080) is dropping full-size packets (MTU): packets of 1400 bytes of payload are dropped, smaller ones pass',
      ],
      [
        FINDINGS.pathMtu,
        { mtu: { size: 1400 } },
        'The path from worker-2 to worker-3 (10.0.0.3:8080) is dropping full-size packets (MTU): packets of 1400 bytes of payload are dropped, smaller ones pass',
      ],
      [
        FINDINGS.egressBroken,
        { egress: { reaches: [], reached_by: ['10.0.0.2:8080', '10.0.0.4:8080'] } },
        'The egress of node worker-3 (10.0.0.3:8080) is broken: it reaches no other node, while 2 nodes reach it',
      ],
      [
        FINDINGS.partition,
        {
          partition: {
            sides: [
              ['10.0.0.1:8080', '10.0.0.2:8080'],
              ['10.0.0.3:8080', '10.0.0.4:8080'],
            ],
          },
        },
        'The mesh is partitioned: 2 sides cannot reach each other: [10.0.0.1:8080, 10.0.0.2:8080] | [10.0.0.3:8080, 10.0.0.4:8080]',
      ],
    ] as const;

    for (const [finding, facts, summary] of KINDS) {
      it(`${finding.kind}: its kind, a warning, its facts and a summary saying so`, () => {
        const alert = found(finding);
        const body = renderOne(group([changed('firing', alert)], [alert]));
        expectValid(body, finding.kind);
        expect(body.changes[0]).to.deep.include({ kind: alert.kind, severity: 'warning', facts });
        expect(body.summary).to.equal(`${summary}; 1 alert firing.`);
        const back = renderOne(group([changed('resolved', { ...alert, endsAt: BACK })], []));
        expectValid(back, `${finding.kind} resolved`);
        expect(back.changes[0]).to.include({ status: 'resolved', severity: 'warning' });
      });
    }

    it('sends a group holding a dead node and a degraded one, each with its severity', () => {
      const degraded = found(FINDINGS.nodeDegraded);
      const dead = deadAlert(7);
      const body = renderOne(
        group([changed('firing', dead), changed('firing', degraded)], [dead, degraded]),
      );
      expectValid(body, 'dead and degraded');
      expect(body.changes.map((c) => [c.kind, c.severity])).to.deep.equal([
        ['peer_dead', 'critical'],
        ['peer_degraded', 'warning'],
      ]);
      expect(body.changes[0]).to.not.have.property('facts');
      expect(body.summary).to.equal('1 node down, 1 node degraded; 2 alerts firing.');
    });

    it('counts findings by kind in a group summary', () => {
      const alerts = [FINDINGS.partition, FINDINGS.nodeDegraded, FINDINGS.pathMtu].map(found);
      const body = renderOne(
        group(
          [
            ...alerts.map((a) => changed('firing', a)),
            changed('resolved', found(FINDINGS.egressBroken)),
          ],
          alerts,
        ),
      );
      expectValid(body, 'findings');
      expect(body.summary).to.equal(
        'Mesh partitioned, egress restored on 1 node, 1 path dropping full-size packets (MTU), 1 node degraded; 3 alerts firing.',
      );
    });

    it('names both ends of a path broken between two nodes', () => {
      const alert = found(FINDINGS.pathBroken);
      const body = renderOne(group([changed('firing', alert)], [alert]));
      expectValid(body, 'path between followers');
      expect(body.changes[0]).to.include({ kind: 'path_broken', severity: 'warning' });
      expect(body.changes[0]?.path).to.include({
        from: 'worker-2@10.0.0.2',
        to: 'worker-3@10.0.0.3',
      });
      expect(body.summary).to.equal(
        'The path from worker-2@10.0.0.2 to node worker-3 (10.0.0.3:8080) is broken (2 other nodes reach it); 1 alert firing.',
      );
    });
  });

  it('sends heartbeats only when asked to', () => {
    const silent = webhookAdapter({ url: URL_ });
    expect('heartbeat' in silent || 'heartbeatMs' in silent).to.equal(false);
    const adapter = webhookAdapter({ url: URL_, heartbeatMs: 60_000, cluster: 'prod-eu' });
    expect(adapter.heartbeatMs).to.equal(60_000);
    const quiet = adapter.heartbeat?.([], T0);
    const busy = adapter.heartbeat?.([deadAlert(3), pathAlert], T0 + 60_000);
    expect(quiet).to.have.length(1);
    expect(busy).to.have.length(1);
    const q = quiet?.[0];
    const b = busy?.[0];
    expect(q?.url).to.equal(URL_);
    expect(q?.key).to.not.equal(b?.key);
    expectValid(q?.body, 'heartbeat');
    expectValid(b?.body, 'heartbeat while firing');
    expect(q?.body).to.deep.equal({
      version: 1,
      type: 'heartbeat',
      timestamp: '2025-05-01T12:00:00.000Z',
      cluster: 'prod-eu',
      firing_count: 0,
      summary: '[prod-eu] knh is watching: no alerts firing.',
    } satisfies WebhookHeartbeatBody);
    expect((b?.body as WebhookHeartbeatBody).firing_count).to.equal(2);
  });

  it('puts the current auth header on every request', () => {
    let token = 'Bearer one';
    let calls = 0;
    const adapter = webhookAdapter({
      url: URL_,
      heartbeatMs: 1_000,
      auth: () => {
        calls++;
        return { Authorization: token };
      },
    });
    const alert = deadAlert(3);
    const g = group([{ type: 'firing', alert }], [alert]);
    const first = [...adapter.render(g), ...(adapter.heartbeat?.([alert], T0) ?? [])];
    expect(first.map((r) => r.headers)).to.deep.equal([
      { Authorization: 'Bearer one' },
      { Authorization: 'Bearer one' },
    ]);
    token = 'Bearer two';
    const second = [...adapter.render(g), ...(adapter.heartbeat?.([alert], T0 + 1_000) ?? [])];
    expect(second.map((r) => r.headers)).to.deep.equal([
      { Authorization: 'Bearer two' },
      { Authorization: 'Bearer two' },
    ]);
    expect(calls).to.equal(4);
  });

  it('sends no auth header when none is configured', () => {
    const alert = deadAlert(3);
    const [request] = webhookAdapter({ url: URL_ }).render(group([{ type: 'firing', alert }], []));
    expect(request?.headers).to.equal(undefined);
  });

  it('refuses options a config loader should have refused', () => {
    expect(() => webhookAdapter({ url: 'not a url' })).to.throw(/not a URL/);
    expect(() => webhookAdapter({ url: 'ftp://example.com/' })).to.throw(/http or https/);
    expect(() => webhookAdapter({ url: URL_, heartbeatMs: 0 })).to.throw(/positive integer/);
    expect(() => webhookAdapter({ url: URL_, cluster: '' })).to.throw(/cluster/);
  });
});

describe('schemas/alert-webhook', () => {
  const alert = deadAlert(3);
  const valid = () =>
    webhookAdapter({ url: URL_ }).render(group([{ type: 'firing', alert }], [alert]))[0]
      ?.body as WebhookAlertBody;

  /** A valid body, its one change, and the judgement of a cannot_judge opening. */
  function parts() {
    const base = valid();
    const [change] = base.changes;
    if (!change) throw new Error('no change');
    const judgement = cannotJudgeIncident(T0, T0 + 1).opened.judgement;
    if (!judgement) throw new Error('no judgement');
    return { base, change, judgement };
  }

  it('takes every finding with its facts, and an older body without severity', () => {
    const { base, change } = parts();
    for (const f of Object.values(FINDINGS)) {
      const opened = findingIncident(f, T0, T0 + 1).opened;
      const body = webhookAdapter({ url: URL_ }).render(
        group([{ type: 'firing', alert: opened }], []),
      )[0]?.body;
      expectValid(body, f.kind);
    }
    const older: Partial<typeof change> = { ...change };
    delete older.severity;
    expectValid({ ...base, changes: [older] }, 'no severity');
  });

  it('takes a cannot_judge change with its judgement', () => {
    const { base, change, judgement } = parts();
    expectValid({ ...base, changes: [{ ...change, kind: 'cannot_judge', judgement }] }, 'judged');
  });

  it('refuses bodies that are neither an alert group nor a heartbeat', () => {
    const { base, change, judgement } = parts();
    const bad: [string, unknown][] = [
      ['an extra property', { ...base, extra: 1 }],
      ['an extra property in a change', { ...base, changes: [{ ...change, extra: 1 }] }],
      ['a missing ends_at', { ...base, changes: [{ ...change, ends_at: undefined }] }],
      ['an unknown kind', { ...base, changes: [{ ...change, kind: 'node_sad' }] }],
      ['an unknown severity', { ...base, changes: [{ ...change, severity: 'info' }] }],
      ['unknown facts', { ...base, changes: [{ ...change, facts: { mood: 'sad' } }] }],
      [
        'figures without their percentiles',
        { ...base, changes: [{ ...change, facts: { figures: { samples: 1, loss_ratio: 0 } } }] },
      ],
      [
        'a loss ratio above 1',
        {
          ...base,
          changes: [
            {
              ...change,
              facts: { figures: { samples: 1, loss_ratio: 2, p50_ms: null, p99_ms: null } },
            },
          ],
        },
      ],
      [
        'a partition of one side',
        { ...base, changes: [{ ...change, facts: { partition: { sides: [['10.0.0.1:8080']] } } }] },
      ],
      [
        'a judgement with an unknown field',
        { ...base, changes: [{ ...change, judgement: { ...judgement, extra: 1 } }] },
      ],
      [
        'a judgement without its count',
        {
          ...base,
          changes: [{ ...change, judgement: { ...judgement, unreachable_count: undefined } }],
        },
      ],
      [
        'a judgement listing more than 50 peers',
        {
          ...base,
          changes: [
            {
              ...change,
              judgement: {
                ...judgement,
                unreachable: Array.from({ length: 51 }, () => judgement.unreachable[0]),
              },
            },
          ],
        },
      ],
      ['a heartbeat type on an alert', { ...base, type: 'heartbeat' }],
      ['another version', { ...base, version: 2 }],
      ['a bad timestamp', { ...base, timestamp: 'yesterday' }],
      ['an empty summary', { ...base, summary: '' }],
      ['a summary too long', { ...base, summary: 'x'.repeat(1001) }],
      ['too many changes', { ...base, changes: Array.from({ length: 10_001 }, () => change) }],
      [
        'a heartbeat with changes',
        {
          version: 1,
          type: 'heartbeat',
          timestamp: base.timestamp,
          firing_count: 0,
          summary: 'x',
          changes: [],
        },
      ],
      [
        'a heartbeat without a count',
        { version: 1, type: 'heartbeat', timestamp: base.timestamp, summary: 'x' },
      ],
    ];
    expectValid(base, 'base');
    for (const [what, body] of bad) {
      expect(schemas.check('alert-webhook', JSON.parse(JSON.stringify(body))).ok, what).to.equal(
        false,
      );
    }
  });
});
