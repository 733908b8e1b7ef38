// The Slack adapter: one schema-valid, readable message per group, within Slack's documented limits.
import { expect } from 'chai';
import type { Alert } from '../../src/wire/alert.js';
import type { AlertChange, AlertGroup } from '../../src/alerts/receiver-adapter.js';
import { slackAdapter, type SlackBlock, type SlackMessage } from '../../src/receivers/slack.js';
import { escapeSlack, fit } from '../../src/receivers/slack-mrkdwn.js';
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
  podAddress,
  resolved,
} from '../support/alerts.js';

const WEBHOOK = 'https://hooks.slack.com/services/T000/B000/XXXX';
const T = Date.UTC(2025, 4, 6, 12, 3, 4);
const UNIX = Math.floor(T / 1000);
const schemas = loadSchemas();

const dead = (n: number, over: Partial<Alert> = {}): Alert => deadAlert(n, T, over);
const broken = (n: number): Alert =>
  brokenPathAlert(n, T, { witnesses: ['worker-2@10.0.0.2', 'worker-5@10.0.0.5'] });
/** Changes grouped by a window closing 30 s after they began. */
const group = (changes: AlertChange[], over: Partial<AlertGroup> = {}): AlertGroup =>
  alertGroup(changes, T + 30_000, over);

/**
 * Slack's documented shape, checked by hand (not through our schema, so a wrong schema cannot
 * hide a wrong message): https://docs.slack.dev/reference/block-kit/blocks and the message text.
 */
function expectSlackShape(m: SlackMessage) {
  expect(m.text.length).to.be.within(1, 40_000);
  expect(m.blocks.length).to.be.within(1, 50);
  for (const b of m.blocks) {
    if (b.type === 'header') {
      expect(b.text.type).to.equal('plain_text');
      expect(b.text.text.length).to.be.within(1, 150);
    } else if (b.type === 'section') {
      expect(b.text ?? b.fields, 'a section has text or fields').to.exist;
      if (b.text) expect(b.text.text.length).to.be.within(1, 3000);
      expect(b.fields?.length ?? 0).to.be.at.most(10);
      for (const f of b.fields ?? []) expect(f.text.length).to.be.within(1, 2000);
    } else if (b.type === 'actions') {
      expect(b.elements.length).to.be.within(1, 25);
      for (const e of b.elements) expect(e.text.text.length).to.be.within(1, 75);
    } else {
      expect(b.type).to.equal('context');
      expect(b.elements.length).to.be.within(1, 10);
      for (const e of b.elements) expect(e.text.length).to.be.within(1, 3000);
    }
  }
}

/** Every string Slack will parse for control characters. */
function texts(m: SlackMessage): string[] {
  const of = (b: SlackBlock): string[] =>
    b.type === 'header'
      ? [b.text.text]
      : b.type === 'section'
        ? [...(b.text ? [b.text.text] : []), ...(b.fields ?? []).map((f) => f.text)]
        : b.type === 'actions'
          ? b.elements.map((e) => e.text.text)
          : b.elements.map((e) => e.text);
  return [m.text, ...m.blocks.flatMap(of)];
}

function render(g: AlertGroup, clusterName?: string): SlackMessage {
  const requests = slackAdapter({ webhookUrl: WEBHOOK, clusterName }).render(g);
  expect(requests).to.have.length(1);
  const [request] = requests;
  expect(request?.url).to.equal(WEBHOOK);
  expect(request?.key).to.equal(g.key);
  const body = request?.body as SlackMessage;
  expect(schemas.check('slack-message', body)).to.deep.equal({ ok: true });
  expectSlackShape(body);
  return body;
}

const section = (m: SlackMessage, i: number) => {
  const b = m.blocks.filter((x) => x.type === 'section')[i];
  if (b?.type !== 'section') throw new Error(`no section ${i}`);
  return b;
};
const fieldsOf = (m: SlackMessage) =>
  Object.fromEntries(
    (section(m, 0).fields ?? []).map((f) => {
      const [name = '', ...value] = f.text.split('\n');
      return [name.replace(/\*/g, ''), value.join('\n')];
    }),
  );

describe('Slack adapter', () => {
  it('names itself and its schema, and sends no heartbeat', () => {
    const adapter = slackAdapter({ webhookUrl: WEBHOOK });
    expect(adapter.name).to.equal('slack');
    expect(adapter.schema).to.equal('slack-message');
    expect('heartbeat' in adapter).to.equal(false);
    expect(adapter.render(group([]))).to.deep.equal([]);
  });

  it('says what failed, where, since when and which coordinator saw it', () => {
    const m = render(group([firing(dead(3))]));
    expect(m.text).to.equal(
      ':red_circle: knh: worker-3 (10.0.0.3:8080) unreachable since 12:03:04 UTC ' +
        '(last failure: timeout) — seen by coordinator worker-1 (10.0.0.1:8080)',
    );
    expect(m.blocks[0]).to.deep.equal({
      type: 'header',
      text: { type: 'plain_text', text: ':red_circle: worker-3 unreachable', emoji: true },
    });
    expect(fieldsOf(m)).to.deep.equal({
      Node: 'worker-3',
      'Pod address': '10.0.0.3:8080',
      Since: `<!date^${UNIX}^{date_short_pretty} {time_secs}|12:03:04 UTC>`,
      Coordinator: 'worker-1 (10.0.0.1:8080)',
      Reason: 'timeout',
    });
    const context = m.blocks.at(-1);
    expect(context?.type).to.equal('context');
    expect(JSON.stringify(context)).to.include(`knh:10.0.0.3:8080:${T}`);
  });

  it('shows the date in the fallback when the problem began on another day', () => {
    const m = render(group([firing(dead(3, { startsAt: T - 86_400_000 }))]));
    expect(m.text).to.include('since 2025-05-05 12:03:04 UTC');
  });

  it('names the cluster when configured', () => {
    const m = render(group([firing(dead(3))]), 'prod-eu');
    expect(m.text).to.match(/^:red_circle: knh \(prod-eu\): worker-3/);
    expect(m.blocks[0]).to.have.nested.property(
      'text.text',
      ':red_circle: prod-eu: worker-3 unreachable',
    );
  });

  it('announces a recovery, with how long the node was down', () => {
    const m = render(group([resolved(dead(3))], { firing: [] }));
    expect(m.text).to.equal(
      ':large_green_circle: knh: worker-3 (10.0.0.3:8080) recovered after 2 min ' +
        '(unreachable since 12:03:04 UTC) — seen by coordinator worker-1 (10.0.0.1:8080)',
    );
    expect(m.blocks[0]).to.have.nested.property(
      'text.text',
      ':large_green_circle: worker-3 recovered',
    );
    const fields = fieldsOf(m);
    expect(fields['Down for']).to.equal('2 min');
    expect(fields.Recovered).to.equal(
      `<!date^${UNIX + 125}^{date_short_pretty} {time_secs}|12:05:09 UTC>`,
    );
    expect(JSON.stringify(m.blocks.at(-1))).to.include('No alert firing now');
  });

  it('groups 30 failures into one message listing 20 nodes and counting the rest', () => {
    const changes = Array.from({ length: 30 }, (_, i) => firing(dead(i + 3)));
    const m = render(group(changes));
    expect(m.text).to.match(
      /^:red_circle: knh: 30 nodes unreachable since 12:03:04 UTC: worker-3, worker-4, .*worker-32 — seen by coordinator worker-1 \(10\.0\.0\.1:8080\)$/,
    );
    expect(m.blocks[0]).to.have.nested.property('text.text', ':red_circle: 30 nodes unreachable');
    const list = section(m, 0).text?.text ?? '';
    expect(list.split('\n')[0]).to.equal(
      `*30 nodes unreachable* since <!date^${UNIX}^{date_short_pretty} {time_secs}|12:03:04 UTC>`,
    );
    expect(list.match(/^• /gm)).to.have.length(20);
    expect(list).to.include('• *worker-22* `10.0.0.22:8080` — timeout');
    expect(list).to.not.include('worker-23');
    expect(list).to.match(/\n_and 10 more_$/);
    expect(JSON.stringify(section(m, 1).fields)).to.include('worker-1 (10.0.0.1:8080)');
    const keys = JSON.stringify(m.blocks.at(-1));
    expect(keys).to.include(`knh:10.0.0.3:8080:${T}`).and.include('and 10 more');
    expect(keys).to.include('30 alerts firing now');
  });

  it('describes a broken path: from where to where, and who still reaches the node', () => {
    const m = render(group([firing(broken(4))]));
    expect(m.text).to.equal(
      ':large_orange_circle: knh: path from worker-1 to worker-4 (10.0.0.4:8080) broken since ' +
        '12:03:04 UTC; reachable from worker-2, worker-5 — seen by coordinator worker-1 (10.0.0.1:8080)',
    );
    expect(section(m, 0).text?.text).to.include(
      'is reachable from worker-2, worker-5, so it is up',
    );
    expect(fieldsOf(m)).to.include({
      Path: 'worker-1 → worker-4',
      'Reachable from': 'worker-2, worker-5',
    });
    // The key's `->` is escaped like any other text taken from the alert.
    expect(JSON.stringify(m.blocks.at(-1))).to.include('8080-&gt;10.0.0.4');
  });

  it('puts firings and recoveries of one window in one message, one section each', () => {
    const changes = [firing(dead(3)), firing(dead(4)), firing(broken(6)), resolved(dead(7))];
    const m = render(group(changes));
    expect(m.text.split('\n')).to.deep.equal([
      ':red_circle: knh: 2 nodes unreachable, 1 path broken, 1 node recovered',
      '2 nodes unreachable since 12:03:04 UTC: worker-3, worker-4',
      '1 path broken since 12:03:04 UTC: worker-1 → worker-6',
      '1 node recovered: worker-7',
      'seen by coordinator worker-1 (10.0.0.1:8080)',
    ]);
    expect(m.blocks.filter((b) => b.type === 'section')).to.have.length(4);
    expect(section(m, 2).text?.text).to.include('*worker-7* `10.0.0.7:8080` recovered after 2 min');
  });

  describe('a coordinator that cannot judge the mesh', () => {
    const incident = (over: Parameters<typeof cannotJudgeIncident>[2] = {}) =>
      cannotJudgeIncident(T, T + 125_000, over);
    const since = `<!date^${UNIX}^{date_short_pretty} {time_secs}|12:03:04 UTC>`;

    it('says knh cannot judge, not that the coordinator is down, and whom it does not reach', () => {
      const { opened } = incident();
      const m = render(group([firing(opened)]));
      const sentence =
        "coordinator worker-1 reaches 1 of 4 peers; worker-3, worker-4, worker-5 do not answer it, and worker-2 cannot reach them either: either they failed or worker-1's side of the network is cut off from them, and knh cannot tell which";
      expect(m.text).to.equal(
        `:warning: knh: cannot judge the mesh since 12:03:04 UTC: ${sentence}` +
          ' — seen by coordinator worker-1 (10.0.0.1:8080)',
      );
      expect(m.blocks[0]).to.deep.equal({
        type: 'header',
        text: { type: 'plain_text', text: ':warning: knh cannot judge the mesh', emoji: true },
      });
      expect(section(m, 0).text?.text).to.equal(
        `knh cannot judge the mesh: ${sentence}.\n_Since ${since}._`,
      );
      expect(fieldsOf(m)).to.deep.equal({
        Coordinator: 'worker-1 (10.0.0.1:8080)',
        Since: since,
        Reaches: '1 of 4 peers',
        'Not answering': 'worker-3, worker-4, worker-5',
        'Cannot reach them either': 'worker-2',
      });
      for (const t of texts(m)) expect(t).to.not.match(/unreachable|worker-1 recovered/);
      expect(JSON.stringify(m.blocks.at(-1)))
        .to.include(`knh:judge:10.0.0.1:8080:${T}`)
        .and.include('1 alert firing now');
    });

    it('lists 20 silent peers and counts the rest, and says when no peer could check them', () => {
      const { opened } = incident({ silent: 30, corroboratedBy: [] });
      const fields = fieldsOf(render(group([firing(opened)])));
      expect(fields['Not answering']).to.match(/^worker-3, worker-4, .*, worker-22 and 10 more$/);
      expect(fields['Not answering']).to.not.include('worker-23');
      expect(fields['Cannot reach them either']).to.equal('no peer it reaches could check them');
      expect(fields.Reaches).to.equal('1 of 31 peers');
    });

    it('announces the resolution without repeating the figures it opened with', () => {
      const { opening, resolution } = incident();
      // The coordinator that saw it fire resolves the firing alert itself, ended.
      const lifecycle = new AlertLifecycle(0);
      lifecycle.onEvent(opening, T);
      const changes = lifecycle.onEvent(resolution, T + 125_000);
      expect(changes.map((c) => c.type)).to.deep.equal(['resolved']);
      const m = render(group(changes, { firing: [] }));
      expect(m.text).to.equal(
        ':large_green_circle: knh: can judge the mesh again after 2 min: coordinator worker-1 ' +
          '(10.0.0.1:8080) could not judge it since 12:03:04 UTC — seen by coordinator worker-1 (10.0.0.1:8080)',
      );
      expect(m.blocks[0]).to.have.nested.property(
        'text.text',
        ':large_green_circle: knh can judge the mesh again',
      );
      expect(section(m, 0).text?.text).to.equal(
        'knh can judge the mesh again: coordinator *worker-1* (`10.0.0.1:8080`) could not judge ' +
          `it for 2 min (since ${since}).`,
      );
      expect(fieldsOf(m)).to.deep.equal({
        Coordinator: 'worker-1 (10.0.0.1:8080)',
        'Could not judge since': since,
        'Judging again': `<!date^${UNIX + 125}^{date_short_pretty} {time_secs}|12:05:09 UTC>`,
        'Could not judge for': '2 min',
      });
      // The firing alert's sentence and figures are the opening's, no longer true.
      expect(texts(m).join('\n')).to.not.match(/1 of 4|do not answer|cannot tell which/);
    });

    it('names the successor that resolved it', () => {
      const successor = { id: 'worker-2@10.0.0.2', address: '10.0.0.2:8080' };
      const { opened, resolved: ended } = incident({ successor });
      expect(ended.key).to.equal(opened.key);
      const m = render(group([{ type: 'resolved', alert: ended }], { firing: [] }));
      expect(m.text).to.match(/ — seen by coordinator worker-2 \(10\.0\.0\.2:8080\)$/);
      expect(fieldsOf(m)).to.include({
        Coordinator: 'worker-1 (10.0.0.1:8080)',
        'Resolved by': 'worker-2 (10.0.0.2:8080)',
      });
    });

    it('gets a section of its own beside nodes down, counted apart from them', () => {
      const { opened } = incident();
      const deaths = [6, 7, 8].map((n) => firing(dead(n)));
      const m = render(group([...deaths, firing(opened)]));
      expect(m.text.split('\n')).to.deep.equal([
        ':red_circle: knh: 3 nodes unreachable, 1 coordinator cannot judge the mesh',
        '3 nodes unreachable since 12:03:04 UTC: worker-6, worker-7, worker-8',
        '1 coordinator cannot judge the mesh since 12:03:04 UTC: worker-1 reaches 1 of 4 peers',
        'seen by coordinator worker-1 (10.0.0.1:8080)',
      ]);
      expect(m.blocks[0]).to.have.nested.property(
        'text.text',
        ':red_circle: 3 nodes unreachable, 1 coordinator cannot judge the mesh',
      );
      const nodesDown = section(m, 0).text?.text ?? '';
      expect(nodesDown.match(/^• /gm)).to.have.length(3);
      expect(nodesDown).to.not.include('worker-1');
      expect(section(m, 1).text?.text).to.equal(
        `*1 coordinator cannot judge the mesh* since ${since}\n` +
          '• *worker-1* `10.0.0.1:8080` — coordinator worker-1 reaches 1 of 4 peers; worker-3, ' +
          "worker-4, worker-5 do not answer it, and worker-2 cannot reach them either: either they failed or worker-1's side of the network is cut off from them, and knh cannot tell which",
      );
      expect(JSON.stringify(m.blocks.at(-1))).to.include('4 alerts firing now');

      // Without nodes down, it outranks a broken path.
      const warning = render(group([firing(broken(6)), firing(opened)]));
      expect(warning.blocks[0]).to.have.nested.property(
        'text.text',
        ':warning: 1 coordinator cannot judge the mesh, 1 path broken',
      );
    });

    it('counts its resolution apart from the nodes that recovered', () => {
      const { opened } = incident();
      const m = render(group([resolved(dead(6)), resolved(opened)], { firing: [] }));
      expect(m.text.split('\n').slice(0, 3)).to.deep.equal([
        ':large_green_circle: knh: 1 node recovered, 1 cannot-judge alert resolved',
        '1 node recovered: worker-6',
        '1 cannot-judge alert resolved: worker-1',
      ]);
      expect(section(m, 1).text?.text).to.equal(
        '*1 cannot-judge alert resolved*\n• *worker-1* `10.0.0.1:8080` could not judge it for 2 min',
      );
    });

    it('stays within Slack limits with a huge sentence and huge names', () => {
      const { opened } = incident({ silent: 60 });
      const huge: Alert = {
        ...opened,
        peer: { ...opened.peer, node_name: 'c'.repeat(5000) },
        reason: `knh cannot judge the mesh: ${'&'.repeat(100_000)}`,
        judgement: {
          reaches: 1,
          peers: 61,
          unreachable: Array.from({ length: 50 }, (_, i) => ({
            id: `n${i}@10.0.1.${i}`,
            address: `10.0.1.${i}:8080`,
            node_name: `${'n'.repeat(300)}${i}`,
          })),
          unreachable_count: 60,
          corroborated_by: Array.from({ length: 500 }, (_, i) => `${'w'.repeat(300)}${i}@x`),
        },
      };
      // render() checks the schema and Slack's documented limits.
      const single = render(group([firing(huge)]));
      expect(section(single, 0).text?.text).to.match(/^knh cannot judge the mesh: (&amp;)+…\.\n/);
      render(group([firing(huge), firing(dead(3)), resolved(huge)]));
    });

    it('escapes Slack control characters in its sentence and names', () => {
      const { opened } = incident();
      const evil: Alert = {
        ...opened,
        reason: 'knh cannot judge the mesh: <!channel> & <https://evil.example|x>',
        judgement: {
          reaches: 1,
          peers: 3,
          unreachable: [{ id: 'a<@U1>@10.0.0.3', address: '10.0.0.3:8080', node_name: '<!here>' }],
          unreachable_count: 2,
          corroborated_by: ['b<#C1>@10.0.0.4'],
        },
      };
      for (const g of [group([firing(evil)]), group([firing(evil), firing(dead(4))])]) {
        for (const t of texts(render(g))) {
          const rest = t.replace(/<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|[^<>|]+>/g, '');
          expect(rest, t).to.not.match(/[<>]/);
        }
      }
      expect(fieldsOf(render(group([firing(evil)])))).to.include({
        'Not answering': '&lt;!here&gt; and 1 more',
        'Cannot reach them either': 'b&lt;#C1&gt;',
      });
    });
  });

  describe("findings of every node's paths", () => {
    const found = (f: (typeof FINDINGS)[keyof typeof FINDINGS]) =>
      findingIncident(f, T, T + 125_000).opened;
    const since = `<!date^${UNIX}^{date_short_pretty} {time_secs}|12:03:04 UTC>`;
    const FIGURES = 'loss 25% of 40 probes, p50 12.3 ms, p99 480 ms';
    const SIDES =
      '2 sides cannot reach each other: [10.0.0.1:8080, 10.0.0.2:8080] | [10.0.0.3:8080, 10.0.0.4:8080]';
    /** Each kind: its header, firing and resolved, and the facts its message shows. */
    const KINDS = [
      {
        finding: FINDINGS.nodeDegraded,
        header: ':large_yellow_circle: worker-3 degraded',
        healed: ':large_green_circle: worker-3 healthy again',
        facts: FIGURES,
      },
      {
        finding: FINDINGS.pathDegraded,
        header: ':large_yellow_circle: path worker-2 → worker-3 degraded',
        healed: ':large_green_circle: path worker-2 → worker-3 healthy again',
        facts: FIGURES,
      },
      {
        finding: FINDINGS.nodeMtu,
        header: ':large_yellow_circle: worker-3 dropping full-size packets (MTU)',
        healed: ':large_green_circle: worker-3 passing full-size packets again',
        facts: 'packets of 1400 bytes of payload are dropped',
      },
      {
        finding: FINDINGS.pathMtu,
        header: ':large_yellow_circle: path worker-2 → worker-3 dropping full-size packets (MTU)',
        healed: ':large_green_circle: path worker-2 → worker-3 passing full-size packets again',
        facts: 'packets of 1400 bytes of payload are dropped',
      },
      {
        finding: FINDINGS.egressBroken,
        header: ':large_orange_circle: worker-3 egress broken',
        healed: ':large_green_circle: worker-3 egress restored',
        facts: 'it reaches no other node, while 2 nodes reach it',
      },
      {
        finding: FINDINGS.partition,
        header: ':large_orange_circle: mesh partitioned',
        healed: ':large_green_circle: mesh whole again',
        facts: SIDES,
      },
    ];

    for (const { finding, header, healed, facts } of KINDS) {
      it(`${finding.kind}: a warning headed by what it is, its facts shown while it fires`, () => {
        const opened = found(finding);
        const m = render(group([firing(opened)]));
        expect(m.blocks[0]).to.have.nested.property('text.text', header);
        expect(m.text)
          .to.include(facts)
          .and.match(/^:large_(yellow|orange)_circle: knh: /);
        expect(section(m, 0).text?.text)
          .to.include(facts)
          .and.include('_A warning: ')
          .and.include('no node is down');
        expect(fieldsOf(m)).to.include({ Severity: 'warning: no node is down' });
        for (const t of texts(m)) expect(t).to.not.match(/unreachable|:red_circle:/);

        const back = render(group([resolved(opened)], { firing: [] }));
        expect(back.blocks[0]).to.have.nested.property('text.text', healed);
        // The alert's facts are the opening's: no longer true once it is resolved.
        for (const t of texts(back)) expect(t).to.not.include(facts);
        expect(fieldsOf(back)).to.include({ Lasted: '2 min' });
      });
    }

    it('shows a degraded node with its loss and latency, where and since when', () => {
      const m = render(group([firing(found(FINDINGS.nodeDegraded))]));
      expect(m.text).to.equal(
        `:large_yellow_circle: knh: node worker-3 (10.0.0.3:8080) is degraded since 12:03:04 UTC: ${FIGURES}` +
          ' — seen by coordinator worker-1 (10.0.0.1:8080)',
      );
      expect(section(m, 0).text?.text).to.equal(
        `Node *worker-3* (\`10.0.0.3:8080\`) is degraded since ${since}: ${FIGURES}.\n` +
          '_A warning: it still answers; no node is down._',
      );
      expect(fieldsOf(m)).to.deep.equal({
        Node: 'worker-3',
        'Pod address': '10.0.0.3:8080',
        Since: since,
        Coordinator: 'worker-1 (10.0.0.1:8080)',
        Severity: 'warning: no node is down',
        Loss: '25% of 40 probes',
        Latency: 'p50 12.3 ms, p99 480 ms',
      });
    });

    it('shows the dropped size of an MTU finding, the reach of a cut egress, the sides of a partition', () => {
      expect(fieldsOf(render(group([firing(found(FINDINGS.pathMtu))])))).to.include({
        Path: 'worker-2 → worker-3',
        'Dropped size': '1400 bytes of payload; smaller packets pass',
      });
      expect(fieldsOf(render(group([firing(found(FINDINGS.egressBroken))])))).to.include({
        Reaches: 'no other node',
        'Reached by': '10.0.0.2:8080, 10.0.0.4:8080',
      });
      const partition = fieldsOf(render(group([firing(found(FINDINGS.partition))])));
      expect(partition).to.include({ Sides: SIDES, Coordinator: 'worker-1 (10.0.0.1:8080)' });
      expect(partition, 'about the mesh, not the coordinator').to.not.have.property('Node');
    });

    it('names 20 nodes of a list and counts the rest', () => {
      const many = (from: number) => Array.from({ length: 30 }, (_, i) => podAddress(from + i));
      const egress = findingIncident(
        { kind: 'egress-broken', node: podAddress(3), reaches: [], reachedBy: many(10) },
        T,
        T + 1,
      ).opened;
      expect(fieldsOf(render(group([firing(egress)])))['Reached by']).to.match(
        /^10\.0\.0\.10:8080, .*, 10\.0\.0\.29:8080 and 10 more$/,
      );
      const partition = findingIncident(
        { kind: 'partition', sides: [many(10), many(50)] },
        T,
        T + 1,
      ).opened;
      const sides = fieldsOf(render(group([firing(partition)]))).Sides ?? '';
      expect(sides).to.match(
        /^2 sides cannot reach each other: \[10\.0\.0\.10:8080, .*, 10\.0\.0\.29:8080 and 10 more\] \| \[10\.0\.0\.50:8080, .*, 10\.0\.0\.69:8080 and 10 more\]$/,
      );
    });

    it('gives each kind its own section in a group, titled by what it is and how many', () => {
      const other = (f: typeof FINDINGS.nodeDegraded) =>
        findingIncident({ ...f, node: podAddress(6) }, T, T + 1).opened;
      const changes = [
        ...Object.values(FINDINGS).map((f) => firing(found(f))),
        firing(other(FINDINGS.nodeDegraded)),
        resolved(found(FINDINGS.nodeMtu)),
        resolved(found(FINDINGS.partition)),
      ];
      const m = render(group(changes));
      const titles = m.blocks
        .filter((b) => b.type === 'section' && b.text)
        .map((b) => (b.type === 'section' ? b.text?.text.split('\n')[0] : ''));
      expect(titles).to.deep.equal([
        `*mesh partitioned* since ${since}`,
        `*egress broken on 1 node* since ${since}`,
        `*1 path broken* since ${since}`,
        `*1 node dropping full-size packets (MTU)* since ${since}`,
        `*1 path dropping full-size packets (MTU)* since ${since}`,
        `*2 nodes degraded* since ${since}`,
        `*1 path degraded* since ${since}`,
        '*mesh whole again*',
        '*1 node passing full-size packets again*',
      ]);
      expect((m.blocks[0] as { text: { text: string } }).text.text).to.match(
        /^:large_orange_circle: mesh partitioned, egress broken on 1 node, 1 path broken, 1 node dropping full-size packets \(MTU\), /,
      );
      const degraded = section(m, 5).text?.text ?? '';
      expect(degraded).to.include(`• *worker-3* \`10.0.0.3:8080\` — ${FIGURES}`);
      expect(degraded).to.include(`• *worker-6* \`10.0.0.6:8080\` — ${FIGURES}`);
      expect(section(m, 1).text?.text).to.include(
        '• *worker-3* `10.0.0.3:8080` — it reaches no other node, while 2 nodes reach it',
      );
      expect(section(m, 0).text?.text).to.include(`• ${SIDES}`);
      expect(section(m, 8).text?.text).to.include(
        '• *worker-3* `10.0.0.3:8080` passing full-size packets again after 2 min',
      );
      expect(m.text.split('\n')).to.include(
        `2 nodes degraded since 12:03:04 UTC: worker-3, worker-6`,
      );
    });

    it('keeps a dead node red and first beside a degraded one', () => {
      const m = render(group([firing(found(FINDINGS.nodeDegraded)), firing(dead(7))]));
      expect(m.blocks[0]).to.have.nested.property(
        'text.text',
        ':red_circle: 1 node unreachable, 1 node degraded',
      );
      expect(section(m, 0).text?.text).to.match(/^\*1 node unreachable\*/);
      expect(section(m, 1).text?.text).to.match(/^\*1 node degraded\*/);
      // Degraded alone is yellow; a broken path beside it makes the message orange.
      const paths = render(group([firing(found(FINDINGS.nodeDegraded)), firing(broken(6))]));
      expect(paths.blocks[0]).to.have.nested.property(
        'text.text',
        ':large_orange_circle: 1 path broken, 1 node degraded',
      );
    });

    it('names both ends of a path broken between two nodes, neither the coordinator', () => {
      const m = render(group([firing(found(FINDINGS.pathBroken))]));
      expect(m.blocks[0]).to.have.nested.property(
        'text.text',
        ':large_orange_circle: path worker-2 → worker-3 broken',
      );
      expect(m.text).to.match(
        /^:large_orange_circle: knh: path from worker-2 to worker-3 \(10\.0\.0\.3:8080\) broken since 12:03:04 UTC; reachable from worker-4, worker-5/,
      );
      expect(fieldsOf(m)).to.include({ Path: 'worker-2 → worker-3' });
      const grouped = render(group([firing(found(FINDINGS.pathBroken)), firing(broken(6))]));
      const items = (section(grouped, 0).text?.text ?? '').split('\n').slice(1);
      expect(items).to.deep.equal([
        '• *worker-2* → *worker-3* `10.0.0.3:8080`; reachable from worker-4, worker-5',
        '• *worker-1* → *worker-6* `10.0.0.6:8080`; reachable from worker-2, worker-5',
      ]);
    });

    it('says when the findings it resolves began, not that nodes were down', () => {
      const changes = [resolved(found(FINDINGS.nodeDegraded)), resolved(found(FINDINGS.pathMtu))];
      const m = render(group(changes, { firing: [] }));
      expect(m.blocks[0]).to.have.nested.property(
        'text.text',
        ':large_green_circle: 1 path passing full-size packets again, 1 node healthy again',
      );
      const summary = section(m, 2).fields?.map((f) => f.text.split('\n')[0]);
      expect(summary).to.deep.equal(['*Coordinator*', '*Began*']);
    });
  });

  it('escapes Slack control characters in everything taken from an alert', () => {
    const evil = dead(3, {
      key: 'knh:<!everyone>:1',
      peer: { id: 'x<@U1>@10.0.0.3', address: '10.0.0.3:8080', node_name: 'evil<!channel>&co' },
      coordinator: { id: 'c<#C1>@10.0.0.1', address: '10.0.0.1:8080' },
      reason: '<https://evil.example|click here> & more',
    });
    for (const g of [group([firing(evil)]), group([firing(evil), firing(dead(4))])]) {
      const m = render(g);
      for (const t of texts(m)) {
        // Our only markup with angle brackets is the date token; nothing else may open one.
        const rest = t.replace(/<!date\^\d+\^\{date_short_pretty\} \{time_secs\}\|[^<>|]+>/g, '');
        expect(rest, t).to.not.match(/[<>]/);
        expect(rest, t).to.not.match(/&(?!amp;|lt;|gt;)/);
      }
      expect(m.text).to.include('evil&lt;!channel&gt;&amp;co');
    }
  });

  it('stays within Slack limits with huge names, reasons and groups', () => {
    const huge = 'n'.repeat(5000);
    const long = (n: number) =>
      dead(n, {
        key: `knh:${'k'.repeat(400)}:${n}`,
        peer: { id: `${huge}@10.0.0.${n}`, address: `10.0.0.${n}:8080`, node_name: `${huge}<${n}` },
        reason: '&'.repeat(100_000),
      });
    const single = render(group([firing(long(3))]));
    expect(single.text).to.match(
      /^:red_circle: knh: n{5000}&lt;3 \(10\.0\.0\.3:8080\) unreachable/,
    );
    expect(single.text.length).to.be.at.most(40_000);
    const many = Array.from({ length: 500 }, (_, i) => firing(long(i)));
    const paths = Array.from({ length: 300 }, (_, i) => firing(broken(i)));
    const m = render(group([...many, ...paths, resolved(long(9))]));
    expect(m.text.length).to.be.at.most(40_000);
    expect(m.text.endsWith('…')).to.equal(true);
    expect(texts(m).join('')).to.not.match(/&(?!amp;|lt;|gt;)/, 'no entity is cut in half');
  });

  it('labels a test group clearly as a test', () => {
    const m = render(group([firing(dead(3))], { test: true }));
    expect(m.text).to.match(
      /^:test_tube: \[TEST\] knh: worker-3 .* — a test alert, not a real problem$/,
    );
    expect(m.blocks[0]).to.have.nested.property(
      'text.text',
      ':test_tube: [TEST] worker-3 unreachable',
    );
    expect(section(m, 0).text?.text).to.include('*Test alert*').and.include('nothing is wrong');
    const bare = render(group([], { test: true, key: `knh:test:${T}` }));
    expect(bare.text).to.include('[TEST]').and.include('nothing is wrong');
  });

  it('has a schema that rejects what Slack rejects', () => {
    const ok = render(group([firing(dead(3))]));
    const bad: unknown[] = [
      { blocks: ok.blocks },
      { ...ok, text: 'x'.repeat(40_001) },
      { ...ok, blocks: Array.from({ length: 51 }, () => ok.blocks[0]) },
      { ...ok, blocks: [{ type: 'header', text: { type: 'plain_text', text: 'x'.repeat(151) } }] },
      { ...ok, blocks: [{ type: 'header', text: { type: 'mrkdwn', text: 'x' } }] },
      { ...ok, blocks: [{ type: 'section' }] },
      { ...ok, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: 'x'.repeat(3001) } }] },
      { ...ok, blocks: [{ type: 'context', elements: [] }] },
    ];
    for (const b of bad)
      expect(schemas.check('slack-message', b).ok, JSON.stringify(b).slice(0, 80)).to.equal(false);
  });

  it('escapes and cuts text without splitting an entity', () => {
    expect(escapeSlack('a<b>&c')).to.equal('a&lt;b&gt;&amp;c');
    expect(fit('&&&&', 10)).to.equal('&amp;…');
    expect(fit('abc', 3)).to.equal('abc');
    for (let max = 1; max < 30; max += 1) {
      const out = fit('<&>'.repeat(20), max);
      expect(out.length).to.be.at.most(max);
      expect(out.replace(/&(amp|lt|gt);/g, '')).to.match(/^[^&]*…$/);
    }
  });
});
