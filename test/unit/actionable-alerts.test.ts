// Alerts people can act on: each says what to check first (by the failure the prober saw, or the
// kind of alert), names the pods involved where discovery knows them, and links to the status page
// and the runbook through each receiver's own link field; every payload stays valid.
import { expect } from 'chai';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import type { AlertGroup, ReceiverRequest } from '../../src/alerts/receiver-adapter.js';
import { linkHref } from '../../src/config/parse-value.js';
import type { FailureReason } from '../../src/core/transport.js';
import { peersFromSlice } from '../../src/discovery/endpoint-slices.js';
import { SliceIndex } from '../../src/discovery/slice-index.js';
import { alertmanagerAdapter, type PostableAlert } from '../../src/receivers/alertmanager.js';
import { hintOf } from '../../src/receivers/hints.js';
import type { AlertLinks } from '../../src/receivers/links.js';
import { pagerDutyAdapter, type TriggerEvent } from '../../src/receivers/pagerduty.js';
import { slackAdapter, type SlackBlock, type SlackMessage } from '../../src/receivers/slack.js';
import { webhookAdapter, type WebhookAlertBody } from '../../src/receivers/webhook.js';
import type { Alert, AlertKind } from '../../src/wire/alert.js';
import { loadSchemas, type SchemaName } from '../../src/wire/schemas.js';
import {
  alertGroup,
  brokenPathAlert,
  COORDINATOR,
  deadAlert,
  deathAndRecovery,
  firing,
  resolved,
} from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const T = Date.UTC(2026, 4, 1, 12);
const schemas = loadSchemas();
const LINKS: AlertLinks = {
  statusPage: 'https://knh.example.com/',
  runbook: 'https://wiki.example.com/knh/runbook#{kind}',
};
const KEY = 'R0123456789abcdef0123456789abcde';

/** worker-3 dead since T, the failure as the prober words it, its pod and the coordinator's named. */
const named = (reason: string, over: Partial<Alert> = {}): Alert =>
  deadAlert(3, T, {
    reason,
    peer: {
      id: 'worker-3@10.0.0.3',
      address: '10.0.0.3:8080',
      node_name: 'worker-3',
      pod_name: 'knh-7xk2p',
    },
    coordinator: { ...COORDINATOR, pod_name: 'knh-a1b2c' },
    ...over,
  });

function valid(schema: SchemaName, requests: readonly ReceiverRequest[]): unknown[] {
  for (const r of requests)
    expect(schemas.check(schema, r.body), schema).to.deep.equal({ ok: true });
  return requests.map((r) => r.body);
}

const FAILURES: Record<FailureReason, RegExp> = {
  refused: /refused.*knh pod or its container is down/,
  reset: /reset.*restart/,
  unreachable: /no route.*node is down.*CNI/,
  'connect-timeout': /timed out.*CNI, a NetworkPolicy, or a node/,
  timeout: /no answer in time.*overloaded/,
  'http-status': /HTTP error.*logs/,
  'bad-response': /not a valid knh answer.*PEER_SECRET/,
  aborted: /cut short.*no evidence about this node/,
};

describe('what to check, in one line', () => {
  for (const [reason, says] of Object.entries(FAILURES)) {
    it(`for a peer dead by ${reason}: ${String(says)}`, () => {
      // As the prober words it: the reason, its detail, the attempts.
      expect(hintOf({ kind: 'peer_dead', reason: `${reason} (detail) after 3 attempts` })).to.match(
        says,
      );
    });
  }

  it('says something different for each failure the prober tells apart', () => {
    const hints = Object.keys(FAILURES).map((r) => hintOf({ kind: 'peer_dead', reason: r }));
    expect(new Set(hints).size).to.equal(hints.length);
  });

  const KINDS: Record<AlertKind, RegExp> = {
    peer_dead: /does not answer/,
    path_broken: /NetworkPolicy.*between these two nodes/,
    cannot_judge: /coordinator's own node or network/,
    peer_degraded: /loss or latency on most of this node's paths/,
    path_degraded: /loss or latency between these two nodes/,
    peer_mtu: /MTU/,
    path_mtu: /MTU/,
    egress_broken: /egress NetworkPolicies/,
    partition: /split into groups/,
    peer_unauthenticated: /PEER_SECRET differs.*clock/,
  };
  for (const [kind, says] of Object.entries(KINDS)) {
    it(`for ${kind} without a failure it names: ${String(says)}`, () => {
      expect(hintOf({ kind: kind as AlertKind, reason: null })).to.match(says);
    });
  }

  it("goes by the kind when the reason names no failure (a finding's sentence)", () => {
    expect(hintOf({ kind: 'peer_dead', reason: 'gone quiet' })).to.match(/does not answer/);
    expect(hintOf({ kind: 'path_broken', reason: 'refused (ECONNREFUSED)' })).to.match(
      /NetworkPolicy/,
    );
  });
});

describe('each receiver carries the hint, the pods and the links', () => {
  const one = named('refused (ECONNREFUSED) after 3 attempts');
  const REFUSED = hintOf(one);

  describe('Slack', () => {
    const render = (group: AlertGroup, links = LINKS) =>
      valid(
        'slack-message',
        slackAdapter({ webhookUrl: 'https://hooks.slack.com/x', links }).render(group),
      )[0] as SlackMessage;
    const blocks = (m: SlackMessage, type: SlackBlock['type']) =>
      m.blocks.filter((b) => b.type === type);

    it('shows what to check, the pod and the coordinator’s pod, and buttons to the status page and runbook', () => {
      const m = render(alertGroup([firing(one)], T));
      const text = JSON.stringify(m.blocks);
      expect(text).to.include(`*What to check:* ${REFUSED}`);
      expect(text).to.include('*Pod*\\nknh-7xk2p (10.0.0.3:8080)');
      expect(text).to.include('worker-1 (pod knh-a1b2c, 10.0.0.1:8080)');
      expect(blocks(m, 'actions')).to.deep.equal([
        {
          type: 'actions',
          elements: [
            {
              type: 'button',
              text: { type: 'plain_text', text: 'knh status page', emoji: true },
              url: 'https://knh.example.com/',
              action_id: 'knh-link-0',
            },
            {
              type: 'button',
              text: { type: 'plain_text', text: 'Runbook: peer_dead', emoji: true },
              url: 'https://wiki.example.com/knh/runbook#peer_dead',
              action_id: 'knh-link-1',
            },
          ],
        },
      ]);
    });

    it('shows each distinct hint of a group once, and none for what resolves', () => {
      const two = deadAlert(4, T, { reason: 'connect-timeout (10.0.0.4:8080) after 3 attempts' });
      const same = deadAlert(5, T, { reason: 'refused (ECONNREFUSED) after 3 attempts' });
      const m = render(
        alertGroup([firing(one), firing(two), firing(same), resolved(deadAlert(6, T))], T),
      );
      const [hints] = blocks(m, 'context').filter((b) =>
        JSON.stringify(b).includes('What to check'),
      );
      const lines = hints?.type === 'context' ? hints.elements.map((e) => e.text) : [];
      expect(lines).to.deep.equal([
        `:mag: *What to check:* ${REFUSED}`,
        `:mag: *What to check:* ${hintOf(two)}`,
      ]);
      const back = render(alertGroup([resolved(one)], T));
      expect(JSON.stringify(back.blocks)).not.to.include('What to check');
    });

    it('has no buttons without links, and a button per link set', () => {
      expect(blocks(render(alertGroup([firing(one)], T), {}), 'actions')).to.deep.equal([]);
      const [only] = blocks(
        render(alertGroup([firing(one)], T), { statusPage: LINKS.statusPage }),
        'actions',
      );
      expect(only?.type === 'actions' ? only.elements.map((e) => e.url) : []).to.deep.equal([
        'https://knh.example.com/',
      ]);
    });

    it('links a test alert to the runbook with {kind} left empty', () => {
      const m = render({ key: `knh:test:${T}`, at: T, changes: [], firing: [], test: true });
      const [actions] = blocks(m, 'actions');
      expect(actions?.type === 'actions' ? actions.elements.map((e) => e.url) : []).to.deep.equal([
        'https://knh.example.com/',
        'https://wiki.example.com/knh/runbook#',
      ]);
    });
  });

  describe('PagerDuty', () => {
    const adapter = (links = LINKS) => pagerDutyAdapter({ routingKey: KEY, links });

    it('sets client_url to the status page, links it and the runbook, and details the pods and the hint', () => {
      const [trigger] = valid(
        'pagerduty-event',
        adapter().render(alertGroup([firing(one)], T)),
      ) as [TriggerEvent];
      expect(trigger.client_url).to.equal('https://knh.example.com/');
      expect(trigger.links).to.deep.equal([
        { href: 'https://knh.example.com/', text: 'knh status page' },
        { href: 'https://wiki.example.com/knh/runbook#peer_dead', text: 'Runbook: peer_dead' },
      ]);
      expect(trigger.payload.custom_details).to.deep.include({
        pod: 'knh-7xk2p',
        coordinator_pod: 'knh-a1b2c',
        what_to_check: REFUSED,
      });
    });

    it("links a grouped page to its most urgent kind's runbook, each alert's hint in its details", () => {
      const path = brokenPathAlert(4, T);
      const [trigger] = valid(
        'pagerduty-event',
        adapter().render(alertGroup([firing(path), firing(one)], T)),
      ) as [TriggerEvent];
      expect(trigger.links?.[1]?.href).to.equal('https://wiki.example.com/knh/runbook#peer_dead');
      const details = trigger.payload.custom_details.alerts as { what_to_check: string }[];
      expect(details.map((d) => d.what_to_check)).to.deep.equal([hintOf(path), REFUSED]);
    });

    it('sends neither client_url nor links without links set', () => {
      const [trigger] = adapter({})
        .render(alertGroup([firing(one)], T))
        .map((r) => r.body) as [TriggerEvent];
      expect(trigger).to.not.have.any.keys('client_url', 'links');
    });
  });

  describe('Alertmanager', () => {
    const render = (group: AlertGroup, links = LINKS) =>
      valid(
        'alertmanager-alerts',
        alertmanagerAdapter({ baseUrl: 'http://am:9093', links }).render(group),
      )[0] as PostableAlert[];

    it('sets generatorURL to the status page, and annotates the runbook, the hint and the pods', () => {
      const [alert] = render(alertGroup([firing(one)], T));
      expect(alert?.generatorURL).to.equal('https://knh.example.com/');
      expect(alert?.annotations).to.deep.include({
        runbook_url: 'https://wiki.example.com/knh/runbook#peer_dead',
        hint: REFUSED,
        pod: 'knh-7xk2p',
        coordinator_pod: 'knh-a1b2c',
      });
      // A label identifies the alert: what another coordinator may not know stays out of them.
      expect(Object.keys(alert?.labels ?? {})).to.not.include.members(['pod', 'coordinator_pod']);
    });

    it('labels the alert the same with or without the pods named, so any coordinator resolves it', () => {
      const [withPods] = render(alertGroup([firing(one)], T));
      const [without] = render(alertGroup([resolved(deadAlert(3, T))], T));
      expect(without?.labels).to.deep.equal(withPods?.labels);
    });

    it('links each kind to its own runbook', () => {
      const [path] = render(alertGroup([firing(brokenPathAlert(4, T))], T));
      expect(path?.annotations.runbook_url).to.equal(
        'https://wiki.example.com/knh/runbook#path_broken',
      );
    });
  });

  describe('the generic webhook', () => {
    const render = (group: AlertGroup, links = LINKS) =>
      valid(
        'alert-webhook',
        webhookAdapter({ url: 'http://receiver/hook', links }).render(group),
      )[0] as WebhookAlertBody;

    it('carries status_page_url, and each alert its runbook_url, pods and (firing) hint', () => {
      const body = render(alertGroup([firing(one)], T));
      expect(body.status_page_url).to.equal('https://knh.example.com/');
      expect(body.changes[0]).to.deep.include({
        pod_name: 'knh-7xk2p',
        coordinator: { ...COORDINATOR, pod_name: 'knh-a1b2c' },
        hint: REFUSED,
        runbook_url: 'https://wiki.example.com/knh/runbook#peer_dead',
      });
    });

    it('leaves out what is not known or not set', () => {
      const body = render(alertGroup([firing(deadAlert(3, T))], T), {});
      expect(body).to.not.have.property('status_page_url');
      expect(body.changes[0]).to.not.have.any.keys('pod_name', 'runbook_url');
      expect(body.changes[0]?.coordinator).to.deep.equal(COORDINATOR);
    });
  });
});

describe('links as every receiver takes them', () => {
  it('fills {kind} in and escapes what a URI may not hold', () => {
    expect(linkHref('https://wiki.example.com/knh/{kind}', 'egress_broken')).to.equal(
      'https://wiki.example.com/knh/egress_broken',
    );
    expect(linkHref('https://wiki.example.com/a|b^c{x}')).to.equal(
      'https://wiki.example.com/a%7Cb%5Ec%7Bx%7D',
    );
    expect(linkHref('https://bücher.example/knh')).to.equal('https://xn--bcher-kva.example/knh');
  });

  it('keeps a PagerDuty event valid when the runbook URL holds characters a URI may not', () => {
    const pd = pagerDutyAdapter({
      routingKey: KEY,
      links: {
        runbook: 'https://wiki.example.com/{kind}|notes^2',
        statusPage: 'https://knh.example.com/a b',
      },
    });
    valid('pagerduty-event', pd.render(alertGroup([firing(deadAlert(3, T))], T)));
  });
});

describe('the pods named in alerts', () => {
  it('are read from an EndpointSlice endpoint’s targetRef, a Pod’s only', () => {
    const peers = peersFromSlice(
      {
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [
          {
            addresses: ['10.0.0.3'],
            nodeName: 'worker-3',
            targetRef: { kind: 'Pod', name: 'knh-7xk2p' },
          },
          {
            addresses: ['10.0.0.4'],
            nodeName: 'worker-4',
            targetRef: { kind: 'Node', name: 'worker-4' },
          },
          { addresses: ['10.0.0.5'] },
        ],
      },
      8080,
    );
    expect([...peers.podNames]).to.deep.equal([['10.0.0.3:8080', 'knh-7xk2p']]);
  });

  it('are known while a slice lists the address, and forgotten with it', () => {
    const index = new SliceIndex(8080);
    const slice = (endpoints: { ip: string; pod: string }[]) => ({
      metadata: { name: 's1', namespace: 'knh', resourceVersion: String(endpoints.length) },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints: endpoints.map((e) => ({
        addresses: [e.ip],
        targetRef: { kind: 'Pod', name: e.pod },
      })),
    });
    index.upsert(
      slice([
        { ip: '10.0.0.3', pod: 'knh-7xk2p' },
        { ip: '10.0.0.4', pod: 'knh-q9w8e' },
      ]),
    );
    expect(index.podName('10.0.0.3:8080')).to.equal('knh-7xk2p');
    index.upsert(slice([{ ip: '10.0.0.4', pod: 'knh-q9w8e' }]));
    expect(index.podName('10.0.0.3:8080')).to.equal(undefined);
    expect(index.podName('10.0.0.4:8080')).to.equal('knh-q9w8e');
  });

  it('are filled in when an alert fires and kept to its resolution; shared, they stay valid', () => {
    const pods: Record<string, string> = {
      '10.0.0.3:8080': 'knh-7xk2p',
      '10.0.0.9:8080': 'knh-lead',
    };
    const life = new AlertLifecycle(0, (address) => pods[address]);
    const lead = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
    const [dead, back] = deathAndRecovery(
      upRecord('worker-3', '10.0.0.3', T),
      T + 1_000,
      T + 9_000,
      lead,
    );
    const [fired] = life.onEvent(dead, T + 1_000);
    expect(fired?.alert.peer.pod_name).to.equal('knh-7xk2p');
    expect(fired?.alert.coordinator.pod_name).to.equal('knh-lead');
    expect(schemas.check('alert', fired?.alert)).to.deep.equal({ ok: true });
    // The pod is gone from discovery by the time it is resolved: the alert keeps its name.
    delete pods['10.0.0.3:8080'];
    const [ended] = life.onEvent(back, T + 9_000);
    expect(ended?.alert.peer.pod_name).to.equal('knh-7xk2p');
  });

  it('leave an alert unnamed (and valid, as older versions share it) where nobody knows them', () => {
    const life = new AlertLifecycle(0);
    const [dead] = deathAndRecovery(upRecord('worker-3', '10.0.0.3', T), T + 1_000, T + 9_000);
    const [fired] = life.onEvent(dead, T + 1_000);
    expect(fired?.alert.peer).to.not.have.property('pod_name');
    expect(fired?.alert.coordinator).to.not.have.property('pod_name');
    expect(schemas.check('alert', fired?.alert)).to.deep.equal({ ok: true });
  });
});
