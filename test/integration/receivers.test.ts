// Slack, PagerDuty and a generic webhook (auth header from a file) fed by a real mesh: nodes killed
// together are one grouped alert per receiver, resolved once they are back and stay up; a test
// alert reaches every receiver. The receivers are a local HTTP receiver (the Alertmanager one is
// tested against the real Alertmanager in alertmanager.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { MeshNode } from '../../src/demo/mesh.js';
import { Receiver, type ReceivedWebhook } from '../../src/demo/webhook-sink.js';
import { loadSchemas, type SchemaName } from '../../src/wire/schemas.js';
import { byRank } from '../support/expected-rank.js';
import { useMeshFixture, type MeshFixture } from '../support/mesh-fixture.js';
import { pollUntil, sleep } from '../support/poll.js';

const schemas = loadSchemas();
const ROUTING_KEY = 'R0123456789abcdef0123456789abcde';

interface SlackBody {
  text: string;
  blocks: { type: string; elements?: { url?: string; text?: unknown }[] }[];
}
interface PagerDutyBody {
  routing_key: string;
  event_action: string;
  dedup_key: string;
  payload?: { summary: string };
  client_url?: string;
  links?: { href: string; text: string }[];
}
interface HookBody {
  type: string;
  status?: string;
  status_page_url?: string;
  changes?: { status: string; node_name: string; hint?: string; runbook_url?: string }[];
}

describe('receivers: Slack, PagerDuty, generic webhook (real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();
  let receiver: Receiver;
  let dir: string;

  beforeEach(async () => {
    receiver = new Receiver({ schemas, port: 0 });
    await receiver.start();
    dir = mkdtempSync(join(tmpdir(), 'knh-receivers-'));
  });

  afterEach(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const at = (path: string) => receiver.received.filter((w) => w.path === path);
  const bodies = <T>(path: string) => at(path).map((w) => w.body as T);

  function expectSchema(path: string, schema: SchemaName): void {
    for (const w of at(path)) {
      expect(schemas.check(schema, w.body), `${path} ${JSON.stringify(w.body)}`).to.deep.equal({
        ok: true,
      });
    }
  }

  async function start(): Promise<MeshFixture> {
    const authFile = join(dir, 'token');
    writeFileSync(authFile, 'Bearer s3cret-token\n');
    // The Slack webhook and the routing key as mounted Secrets hold them.
    const slackFile = join(dir, 'slack-webhook-url');
    writeFileSync(slackFile, `${receiver.url('/slack')}\n`);
    const keyFile = join(dir, 'pagerduty-routing-key');
    writeFileSync(keyFile, `${ROUTING_KEY}\n`);
    return startMesh({
      size: 5,
      env: {
        SLACK_WEBHOOK_URL_FILE: slackFile,
        PAGERDUTY_ROUTING_KEY_FILE: keyFile,
        PAGERDUTY_URL: receiver.url('/pagerduty'),
        STATUS_PAGE_URL: 'https://knh.example/',
        RUNBOOK_URL: 'https://wiki.example/knh#{kind}',
        ALERT_WEBHOOK_URL: receiver.url('/hook'),
        ALERT_WEBHOOK_AUTH_FILE: authFile,
        ALERT_HOLD_DOWN: '2',
        ALERT_GROUP_WAIT: '2',
        CLUSTER_NAME: 'test-cluster',
      },
    });
  }

  it('two nodes killed together: one grouped alert per receiver; resolved once they are back', async () => {
    const fx = await start();
    await fx.settled();
    const [, , , a, b] = byRank(fx.nodes);
    if (!a || !b) throw new Error('mesh too small');
    await Promise.all([fx.mesh.kill(a.index), fx.mesh.kill(b.index)]);

    // KNH's webhook gets one event per node, as always.
    for (const n of [a, b]) {
      await fx.waitForPeerStatus(
        `peer_dead for ${n.name}`,
        (p) => p.event === 'peer_dead' && p.peer.address === n.address,
      );
    }
    await pollUntil(
      'a Slack message, a PagerDuty trigger and a webhook alert',
      () =>
        at('/slack').length > 0 && at('/pagerduty').length > 0 && at('/hook').length > 0
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    await sleep(3_000); // a second page per node would have come by now
    const slack = bodies<SlackBody>('/slack');
    expect(slack, 'one Slack message for both').to.have.length(1);
    expect(slack[0]?.text).to.include(a.name).and.to.include(b.name);
    const triggers = bodies<PagerDutyBody>('/pagerduty').filter(
      (e) => e.event_action === 'trigger',
    );
    expect(triggers, 'one PagerDuty incident for both').to.have.length(1);
    expect(triggers[0]?.payload?.summary).to.include(a.name).and.to.include(b.name);
    const hooks = at('/hook');
    expect(hooks.map((h) => (h.body as HookBody).type)).to.deep.equal(['alert']);
    expect(
      ((hooks[0]?.body as HookBody).changes ?? []).map((c) => [c.status, c.node_name]).sort(),
    ).to.deep.equal(
      [
        ['firing', a.name],
        ['firing', b.name],
      ].sort(),
    );
    expect(hooks[0]?.headers.authorization, 'auth header from the file').to.equal(
      'Bearer s3cret-token',
    );
    // Links and what to check: a killed node's port refuses, so its pod or container is down.
    const hook = hooks[0]?.body as HookBody;
    expect(hook.status_page_url).to.equal('https://knh.example/');
    for (const c of hook.changes ?? []) {
      expect(c.hint).to.match(/knh pod or its container is down/);
      expect(c.runbook_url).to.equal('https://wiki.example/knh#peer_dead');
    }
    expect(triggers[0]?.routing_key, 'routing key from its file').to.equal(ROUTING_KEY);
    expect(triggers[0]?.client_url).to.equal('https://knh.example/');
    expect(triggers[0]?.links?.map((l) => l.href)).to.deep.equal([
      'https://knh.example/',
      'https://wiki.example/knh#peer_dead',
    ]);
    const buttons = slack[0]?.blocks.find((b) => b.type === 'actions')?.elements ?? [];
    expect(buttons.map((b) => b.url)).to.deep.equal([
      'https://knh.example/',
      'https://wiki.example/knh#peer_dead',
    ]);
    expect(JSON.stringify(slack[0]?.blocks)).to.include('What to check');

    // Back, and they stay up past the hold-down: resolved, once.
    await Promise.all([fx.restart(a.index), fx.restart(b.index)]);
    const resolvedAll = await pollUntil(
      'PagerDuty resolving the grouped incident',
      () => bodies<PagerDutyBody>('/pagerduty').find((e) => e.event_action === 'resolve'),
      { timeoutMs: 25_000 },
    );
    expect(resolvedAll.dedup_key).to.equal(triggers[0]?.dedup_key);
    await pollUntil(
      'the webhook hearing both resolved',
      () => {
        const resolved = at('/hook')
          .flatMap((h) => (h.body as HookBody).changes ?? [])
          .filter((c) => c.status === 'resolved');
        return resolved.length >= 2 ? resolved : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(at('/slack').length, 'a resolve message on Slack').to.be.at.least(2);
    expectSchema('/slack', 'slack-message');
    expectSchema('/pagerduty', 'pagerduty-event');
    expectSchema('/hook', 'alert-webhook');
  });

  it('POST /test-alert on any node sends a test to every receiver; not from outside the pod', async () => {
    const fx = await start();
    const { coordinator } = await fx.waitForLeader();
    const follower = fx.nodes.find((n) => n !== coordinator) as MeshNode;
    const res = await fetch(`http://${follower.address}/test-alert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).to.equal(202);
    expect(((await res.json()) as { sent_to: string[] }).sent_to.sort()).to.deep.equal([
      'pagerduty',
      'slack',
      'webhook',
    ]);
    const got = await pollUntil(
      'the test on all three',
      () => {
        const paths = new Set(receiver.received.map((w: ReceivedWebhook) => w.path));
        return ['/slack', '/pagerduty', '/hook'].every((p) => paths.has(p))
          ? receiver.received
          : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(got.some((w) => w.path === '/hook' && (w.body as HookBody).type === 'test')).to.be.true;
    expect(bodies<SlackBody>('/slack')[0]?.text.toLowerCase()).to.include('test');
    expectSchema('/slack', 'slack-message');
    expectSchema('/pagerduty', 'pagerduty-event');
    expectSchema('/hook', 'alert-webhook');
  });
});
