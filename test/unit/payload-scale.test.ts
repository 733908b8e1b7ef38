// Webhook payloads of a 5,000-node mesh: the cluster status stays valid (knh's schema and KNH's)
// within a known size, and receivers with size limits (Slack, PagerDuty) get a summary, not a map.
import { expect } from 'chai';
import { clusterStatusPayload } from '../../src/alerts/payloads.js';
import type { ClusterStatusPayload } from '../../src/wire/webhooks.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertGroup } from '../../src/alerts/receiver-adapter.js';
import { alertmanagerAdapter } from '../../src/receivers/alertmanager.js';
import { DETAILED, pagerDutyAdapter } from '../../src/receivers/pagerduty.js';
import { SUMMARY_MAX } from '../../src/receivers/pagerduty-summary.js';
import { slackMessage } from '../../src/receivers/slack.js';
import { LISTED, SLACK_LIMITS } from '../../src/receivers/slack-mrkdwn.js';
import { webhookAdapter } from '../../src/receivers/webhook.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { alive, confirmed, failing } from '../support/verdicts.js';

const schemas = loadSchemas();
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const MESH = 5_000;
/** Bytes a peer of the cluster status takes with names like `ip-10-244-19-250.eu-west-1…`. */
const PEER_BYTES_MAX = 250;
/** Bytes besides the peer map: coordinator, epoch, timestamps, flags. */
const ENVELOPE_BYTES_MAX = 500;
/** PagerDuty refuses an event over 512 KB (Events API v2). */
const PAGERDUTY_EVENT_MAX = 512 * 1024;
const REFUSED = 'refused (ECONNREFUSED) after 3 attempts';

/** Node `n` of the mesh, named as EKS names nodes after their IP (10.244.0.2 up, by default). */
function node(n: number, ipOf = (i: number) => `10.244.${Math.floor(i / 250)}.${(i % 250) + 2}`) {
  const ip = ipOf(n);
  const name = `ip-${ip.replace(/[.:]/g, '-')}.eu-west-1.compute.internal`;
  const address = ip.includes(':') ? `[${ip}]:8080` : `${ip}:8080`;
  return { ip, name, address, id: `${name}@${ip}` };
}

const COORDINATOR: NodeRef = { id: node(MESH).id, address: node(MESH).address };

/**
 * The coordinator's verdicts on `size` peers, through the real transitions: every 50th dead,
 * every 250th suspect, every 500th with a broken path, every 1,000th never seen alive yet.
 */
function verdicts(size: number, ipOf?: (i: number) => string): PeerRecord[] {
  return Array.from({ length: size }, (_, i) => {
    const { address, id } = node(i, ipOf);
    if (i % 1_000 === 999) return newRecord(address, T0);
    const up = alive(address, id, T0, 2).record;
    const failAt = T0 + 60_000 + i;
    if (i % 50 === 0 || i % 500 === 7) {
      const reachedBy = i % 50 === 0 ? [] : [node(i + 1).id, node(i + 2).id];
      return confirmed(up, failAt, { reachedBy, detail: REFUSED }).verdict.record;
    }
    if (i % 250 === 3) return failing(up, failAt, { detail: REFUSED }).record;
    return up;
  });
}

/** What the reporter sends for them (alerts/cluster-statuses.ts builds it the same way). */
function clusterStatus(size: number, ipOf?: (i: number) => string): ClusterStatusPayload {
  const records = verdicts(size, ipOf);
  return clusterStatusPayload({
    startGraceMs: 0,
    records,
    coordinator: COORDINATOR,
    epoch: 42,
    reason: 'periodic',
    sanity: 'ok',
    selfSuspicion: {
      suspect: false,
      unreachable: records.filter((r) => r.health === 'suspect' || r.brokenPath).length,
    },
    now: T0 + 120_000,
  });
}

const bytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body), 'utf8');

function expectValidClusterStatus(p: ClusterStatusPayload) {
  expect(schemas.check('cluster-status', p)).to.deep.equal({ ok: true });
  expect(referenceErrors('knh-cluster-status', p)).to.deep.equal([]);
  // KNH's schema gives peer_map's items as a one-element tuple: it checks peer_map[0] only.
  const bad = p.peer_map.flatMap((peer, i) =>
    referenceErrors('knh-cluster-status', { ...p, peer_map: [peer] }).map((e) => `[${i}] ${e}`),
  );
  expect(bad).to.deep.equal([]);
}

/** Peer `n`'s death, as the dispatcher hands it to receivers. */
function deadAlert(n: number): Alert {
  const { id, address, name } = node(n);
  return {
    key: `knh:${address}:${T0 + n}`,
    kind: 'peer_dead',
    peer: { id, address, node_name: name },
    coordinator: COORDINATOR,
    reason: REFUSED,
    path: null,
    startsAt: T0 + n,
    endsAt: null,
  };
}

/** 5,000 nodes dead at once (a zone lost), in one grouping window; or their recovery. */
function massGroup(type: 'firing' | 'resolved'): AlertGroup {
  const alerts = Array.from({ length: MESH }, (_, i) =>
    type === 'firing' ? deadAlert(i) : { ...deadAlert(i), endsAt: T0 + 600_000 },
  );
  return {
    key: alerts[0]?.key ?? '',
    at: T0 + 30_000,
    changes: alerts.map((alert) => ({ type, alert })),
    firing: type === 'firing' ? alerts : [],
    test: false,
  };
}

/** Distinct peers a body names (the coordinator's name not counted). */
const namesIn = (body: unknown) => {
  const names = new Set(
    JSON.stringify(body).match(/ip-10-244-\d+-\d+\.eu-west-1\.compute\.internal/g),
  );
  names.delete(node(MESH).name);
  return names.size;
};

describe('webhook payloads at 5,000 peers', function () {
  this.timeout(30_000);

  it('the cluster status of 5,000 peers is valid (knh and KNH) and within its size bound', () => {
    const p = clusterStatus(MESH);
    expect(p.peer_map).to.have.length(MESH);
    const health = (h: string) => p.peer_map.filter((peer) => peer.health === h).length;
    expect([health('dead'), health('suspect'), health('unknown')]).to.deep.equal([100, 20, 5]);
    expect(p.peer_map.filter((peer) => peer.path_broken)).to.have.length(10);
    expectValidClusterStatus(p);
    expect(bytes(p)).to.be.at.most(ENVELOPE_BYTES_MAX + PEER_BYTES_MAX * MESH);
  });

  it('grows linearly with the peers (docs/webhooks.md: 100, 1,000 and 5,000 peers)', () => {
    const sizes = [100, 1_000, MESH].map((n) => bytes(clusterStatus(n)));
    for (const [i, n] of [100, 1_000, MESH].entries()) {
      expect(sizes[i], `${n} peers`).to.be.at.most(ENVELOPE_BYTES_MAX + PEER_BYTES_MAX * n);
      expect(sizes[i], `${n} peers`).to.be.at.least(150 * n);
    }
  });

  it('IPv6 pods with 253-character node names (the longest) stay valid, at most 3.5 MB', () => {
    const ipv6 = (i: number) => `fd12:3456:789a:${(i + 1).toString(16)}:1111:2222:3333:4444`;
    const name = 'n'.repeat(253);
    const p = clusterStatus(MESH, ipv6);
    p.peer_map = p.peer_map.map((peer) => ({
      ...peer,
      id: `${name}@${peer.id.split('@')[1] ?? ''}`,
      node_name: name,
    }));
    expectValidClusterStatus(p);
    expect(bytes(p)).to.be.at.most(3.5 * 1024 * 1024);
  });

  it('Slack: 5,000 nodes dead at once is one summary message within Slack limits', () => {
    for (const type of ['firing', 'resolved'] as const) {
      const m = slackMessage(massGroup(type), { clusterName: 'prod-eu-west-1' });
      expect(schemas.check('slack-message', m), type).to.deep.equal({ ok: true });
      expect(m.text.length).to.be.at.most(SLACK_LIMITS.text);
      expect(m.blocks.length).to.be.at.most(SLACK_LIMITS.blocks);
      for (const b of m.blocks) {
        if (b.type === 'header') expect(b.text.text.length).to.be.at.most(SLACK_LIMITS.header);
        if (b.type === 'section') {
          expect(b.text?.text.length ?? 0).to.be.at.most(SLACK_LIMITS.sectionText);
          for (const f of b.fields ?? []) expect(f.text.length).to.be.at.most(SLACK_LIMITS.field);
        }
      }
      // Counts and the first few names, not the map.
      const word = type === 'firing' ? 'unreachable' : 'recovered';
      expect(m.text).to.include(`5000 nodes ${word}`);
      expect(m.text).to.include('and 4950 more');
      const [section = ''] = m.blocks.flatMap((b) =>
        b.type === 'section' && b.text ? [b.text.text] : [],
      );
      const listed = section.split('\n').filter((line) => line.startsWith('• ')).length;
      expect(listed).to.be.within(1, LISTED);
      expect(section).to.include(`_and ${MESH - listed} more_`);
      expect(namesIn(m)).to.be.at.most(50);
      expect(bytes(m)).to.be.below(16 * 1024);
    }
  });

  it('PagerDuty: one incident for 5,000 nodes, describing 200 of them, under 512 KB', () => {
    const pd = pagerDutyAdapter({ routingKey: 'R0123456789abcdef0123456789abcde' });
    const [trigger, ...others] = pd.render(massGroup('firing'));
    expect(others).to.deep.equal([]);
    expect(schemas.check('pagerduty-event', trigger?.body)).to.deep.equal({ ok: true });
    const body = trigger?.body as {
      payload: { summary: string; custom_details: Record<string, unknown> };
    };
    expect(body.payload.summary.length).to.be.at.most(SUMMARY_MAX);
    expect(body.payload.summary).to.match(/^knh: 5000 nodes unreachable: /);
    expect(body.payload.custom_details).to.include({ alert_count: MESH, alerts_omitted: 4_800 });
    expect(body.payload.custom_details.alerts).to.have.length(DETAILED);
    expect(bytes(body)).to.be.below(PAGERDUTY_EVENT_MAX);
    // Their recovery resolves that one incident.
    const resolves = pd.render(massGroup('resolved'));
    expect(resolves.map((r) => (r.body as { event_action: string }).event_action)).to.deep.equal([
      'resolve',
    ]);
  });

  it('the generic webhook and Alertmanager get every node (no size limit): valid, size known', () => {
    const webhook = webhookAdapter({ url: 'http://receiver/hook' }).render(massGroup('firing'));
    expect(webhook).to.have.length(1);
    expect(schemas.check('alert-webhook', webhook[0]?.body)).to.deep.equal({ ok: true });
    const { changes, firing } = webhook[0]?.body as { changes: unknown[]; firing: unknown[] };
    expect([changes.length, firing.length]).to.deep.equal([MESH, MESH]);
    expect(bytes(webhook[0]?.body)).to.be.below(6 * 1024 * 1024);

    const am = alertmanagerAdapter({ baseUrl: 'http://alertmanager:9093', cluster: 'prod' });
    const [post, ...more] = am.render(massGroup('firing'));
    expect(more).to.deep.equal([]);
    expect(schemas.check('alertmanager-alerts', post?.body)).to.deep.equal({ ok: true });
    expect(post?.body).to.have.length(MESH);
    expect(bytes(post?.body)).to.be.below(5 * 1024 * 1024);
    // While they fire, every 30 s: all of them again, and the watchdog.
    const beat = am.heartbeat?.(massGroup('firing').firing, T0 + 60_000) ?? [];
    expect(beat.map((r) => (r.body as unknown[]).length)).to.deep.equal([MESH + 1]);
  });
});
