// A node out of sight at every receiver: a warning naming the node, why and its clock, valid
// against each receiver's schema, and its resolution.
import { expect } from 'chai';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import { sightPayload } from '../../src/alerts/out-of-sight.js';
import type { AlertGroup, ReceiverAdapter } from '../../src/alerts/receiver-adapter.js';
import { alertmanagerAdapter } from '../../src/receivers/alertmanager.js';
import { pagerDutyAdapter } from '../../src/receivers/pagerduty.js';
import { slackAdapter } from '../../src/receivers/slack.js';
import { webhookAdapter } from '../../src/receivers/webhook.js';
import { loadSchemas, type SchemaName } from '../../src/wire/schemas.js';

const schemas = loadSchemas();
const T = Date.UTC(2026, 10, 28, 9);
const sight = {
  address: '10.0.0.7:8080',
  startMs: T,
  refusal: 'expired',
  offsetMs: 120_400,
  inherited: false,
  seenMs: T,
};
const args = {
  sight,
  coordinator: { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' },
  epoch: 3,
  ref: { id: 'worker-7@10.0.0.7', node_name: 'worker-7' },
  health: 'alive' as const,
};

function groups(): [AlertGroup, AlertGroup] {
  const life = new AlertLifecycle(0);
  const opened = life.onEvent(sightPayload({ ...args, now: T + 3_000 }), T + 3_000);
  const closed = life.onEvent(
    sightPayload({ ...args, ended: 'takes', now: T + 60_000 }),
    T + 60_000,
  );
  const group = (changes: typeof opened, at: number): AlertGroup => ({
    key: changes[0]!.alert.key,
    at,
    changes,
    firing: changes.filter((c) => c.type === 'firing').map((c) => c.alert),
    test: false,
  });
  return [group(opened, T + 3_000), group(closed, T + 60_000)];
}

const ADAPTERS: [ReceiverAdapter, SchemaName][] = [
  [slackAdapter({ webhookUrl: 'https://hooks.slack.example/x' }), 'slack-message'],
  [alertmanagerAdapter({ baseUrl: 'http://am:9093' }), 'alertmanager-alerts'],
  [pagerDutyAdapter({ routingKey: 'k'.repeat(32) }), 'pagerduty-event'],
  [webhookAdapter({ url: 'https://hook.example/' }), 'alert-webhook'],
];

describe('receivers: a node out of sight', () => {
  for (const [adapter, schema] of ADAPTERS) {
    it(`${adapter.name}: a warning naming the node, the refusal and its clock; then resolved`, () => {
      const [open, close] = groups();
      const fired = adapter.render(open);
      expect(fired).to.have.length.at.least(1);
      const text = JSON.stringify(fired.map((r) => r.body));
      expect(text).to.include('worker-7');
      expect(text).to.match(/expired/);
      expect(text).to.match(/120 s ahead|120400/);
      expect(text, 'a warning').to.match(/warning/i);
      for (const r of fired)
        expect(schemas.check(schema, r.body), schema).to.deep.equal({ ok: true });
      const resolved = adapter.render(close);
      expect(resolved).to.have.length.at.least(1);
      for (const r of resolved) {
        expect(schemas.check(schema, r.body), schema).to.deep.equal({ ok: true });
      }
      expect(JSON.stringify(resolved.map((r) => r.body))).to.match(
        /resolved|authenticated again|resolve|"endsAt":"2026-11-28T09:01:00.000Z"/i,
      );
    });
  }
});
