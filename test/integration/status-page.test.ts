// The status page in real headless Chromium: first against scripted /status answers, then on a
// running mesh of real knh processes where a peer is killed. Screenshots go to test-output/status-page/.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import express from 'express';
import { withViews } from '../../src/http/views.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import type { Locator, Page } from 'playwright-core';
import { listen, type HttpServer } from '../../src/http/server.js';
import { statusViews } from '../../src/http/routes/status.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { byRank, lowestRanked } from '../support/expected-rank.js';
import { useChromium } from '../support/headless-chromium.js';
import { useMeshFixture } from '../support/mesh-fixture.js';
import { maintenanceWindow, nodeStatus, statusEvent, statusPeer } from '../support/node-status.js';
import { coordinatorPaths, pathsFacts, pathsNodes, probedPath } from '../support/path-status.js';
import { pollUntil } from '../support/poll.js';
import { pathsStatus } from '../../src/status/paths-status.js';
import { findingPayload } from '../../src/alerts/finding-events.js';
import type { Finding } from '../../src/paths/path-state.js';
import { findingEntry } from '../../src/status/event-feed.js';

const OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/status-page/', import.meta.url));
/**
 * The docs' picture of the page (docs/operating.md), written by the mesh test when
 * KNH_DOCS_SCREENSHOT=1 (`npm run screenshots`).
 */
const DOCS_SCREENSHOT = fileURLToPath(
  new URL('../../../docs/images/status-page.png', import.meta.url),
);
/** The page polls every 2 s: a few polls. */
const RENDERED_MS = 8_000;
const WIDE = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  const path = `${OUTPUT_DIR}${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

const row = (page: Page, address: string) => page.locator(`tr[data-peer="${address}"]`);

/** Attribute `name` of every element `locator` finds, in document order. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((l) => l.getAttribute(name)));
}

const rowOrder = (page: Page) => attributes(page.locator('#peers tr'), 'data-peer');

/** Serves GET / and GET /status like a node, answering whatever `current` is (schema-checked). */
class ScriptedNode {
  current: NodeStatus = nodeStatus();
  private server: HttpServer | null = null;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  async start(): Promise<void> {
    const views = statusViews({ status: () => this.current, schemas: loadSchemas() });
    const app = withViews(views, express(), { logger: new CapturingLogger() });
    this.server = await listen(app, '127.0.0.1', this.port);
    this.port = this.server.port;
  }

  /** Stops answering: the port refuses connections until start() again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    await server?.close();
  }
}

describe('status page in headless Chromium', function () {
  this.timeout(90_000);
  const openPage = useChromium();

  describe('against scripted /status answers', () => {
    let node: ScriptedNode;

    beforeEach(async () => {
      node = new ScriptedNode();
      await node.start();
    });

    afterEach(async () => {
      await node.stop();
    });

    it('renders the peers dead first, suppressed alerts, maintenance and dry run, and follows changes', async () => {
      const now = new Date();
      node.current = nodeStatus(
        { now },
        {
          dry_run: true,
          peers: [
            statusPeer(1, now),
            statusPeer(2, now, { state: 'dead', alerted: true, in_maintenance: true }),
            statusPeer(3, now, { state: 'suspect', path_broken: true }),
            statusPeer(4, now, { state: 'left', latency_ms: null }),
            statusPeer(5, now, { state: 'unknown', since: null, last_probe: null }),
          ],
          events: [
            statusEvent(now, 4, {
              kind: 'peer_dead',
              peer: 'worker-2@10.0.0.2',
              text: 'worker-2@10.0.0.2 is dead: no answer from it or from 2 other peers',
              suppressed: true,
            }),
            statusEvent(now, 30, {
              kind: 'left',
              peer: 'worker-4@10.0.0.4',
              text: 'worker-4@10.0.0.4 left',
            }),
          ],
          maintenance: [maintenanceWindow(now, { scope: 'nodes', nodes: ['worker-2'] })],
        },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);

      await row(page, '10.0.0.1:8080')
        .and(page.locator('[data-state="alive"]'))
        .waitFor({ timeout: RENDERED_MS });
      expect(await rowOrder(page)).to.deep.equal([
        '10.0.0.2:8080',
        '10.0.0.3:8080',
        '10.0.0.1:8080',
        '10.0.0.4:8080',
        '10.0.0.5:8080',
      ]);
      const dead = row(page, '10.0.0.2:8080');
      expect(await dead.getAttribute('data-state')).to.equal('dead');
      // The state is a word, not a colour only.
      expect(await dead.locator('[data-col="state"]').innerText()).to.match(/^dead$/i);
      expect(await dead.locator('[data-col="notes"]').innerText()).to.match(/maintenance/i);
      expect(await row(page, '10.0.0.3:8080').locator('[data-col="notes"]').innerText()).to.match(
        /path broken/i,
      );
      expect(await row(page, '10.0.0.1:8080').locator('[data-col="latency"]').innerText()).to.equal(
        '0.5 ms',
      );
      expect(await row(page, '10.0.0.1:8080').locator('[data-col="since"]').innerText()).to.match(
        /^1 min ago$/,
      );
      expect(await page.locator('[data-field="role"]').innerText()).to.equal('coordinator');
      expect(await page.locator('[data-field="coordinator"]').innerText()).to.equal('this node');
      expect(await page.locator('#connection').getAttribute('data-state')).to.equal('ok');

      const events = page.locator('#events li');
      expect(await events.count()).to.equal(2);
      expect(await events.first().getAttribute('data-suppressed')).to.equal('true');
      expect(await events.first().innerText()).to.include('suppressed (maintenance)');
      expect(await events.nth(1).innerText()).to.not.include('suppressed');

      expect(await page.locator('[data-banner="dry-run"]').innerText()).to.include('not sent');
      const windowItem = page.locator('[data-banner="maintenance"] li[data-window="mw-1"]');
      expect(await windowItem.innerText()).to.match(
        /worker-2 since .* until .*\(in (29|30) min\) — kernel upgrade/,
      );
      expect(await page.locator('[data-banner="maintenance"]').innerText()).to.include(
        '1 alert would have fired; it is marked',
      );
      await screenshot(page, 'scripted-wide');
      const phone = await openPage(PHONE);
      await phone.page.goto(node.url);
      await row(phone.page, '10.0.0.2:8080').waitFor({ timeout: RENDERED_MS });
      await screenshot(phone.page, 'scripted-phone');

      // The next answers: worker-1 dies, the maintenance ends.
      const later = new Date();
      node.current = nodeStatus(
        { now: later },
        {
          self_suspect: true,
          peers: [statusPeer(1, later, { state: 'dead', since: later.toISOString() })],
          events: [statusEvent(later, 0, { kind: 'peer_dead', peer: 'worker-1@10.0.0.1' })],
        },
      );
      await row(page, '10.0.0.1:8080')
        .and(page.locator('[data-state="dead"]'))
        .waitFor({ timeout: RENDERED_MS });
      await page.locator('[data-banner="maintenance"]').waitFor({ state: 'detached' });
      expect(await page.locator('[data-banner="self-suspect"]').innerText()).to.include(
        'declares none of them dead',
      );
      expect(await page.locator('#peers tr').count()).to.equal(1);
      expect(await page.title()).to.match(/1 dead/);
      expect(problems, 'script errors or CSP violations').to.deep.equal([]);
    });

    it('tells why a dead peer is down and when it was last seen, not the latency it had', async () => {
      const now = new Date();
      const lastSeen = new Date(now.getTime() - 42_000).toISOString();
      node.current = nodeStatus(
        { now },
        {
          peers: [
            statusPeer(1, now),
            statusPeer(2, now, {
              state: 'dead',
              alerted: true,
              latency_ms: 88,
              last_seen: lastSeen,
              last_failure: 'refused (connect ECONNREFUSED 10.0.0.2:8080) after 3 attempts',
            }),
            statusPeer(3, now, {
              state: 'suspect',
              latency_ms: 12,
              last_failure: 'timeout (1000 ms) after 1 attempt',
            }),
          ],
        },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const dead = row(page, '10.0.0.2:8080').locator('[data-col="latency"]');
      await dead.waitFor({ timeout: RENDERED_MS });
      expect(await dead.locator('[data-field="failure"]').innerText()).to.equal(
        'refused (connect ECONNREFUSED 10.0.0.2:8080) after 3 attempts',
      );
      expect(await dead.locator('[data-field="last-seen"]').innerText()).to.match(
        /^last seen 4\d s ago$/,
      );
      // The absolute time in the tooltip.
      expect(await dead.locator('time').getAttribute('title')).to.equal(lastSeen);
      expect(await dead.innerText()).to.not.include('88');
      const suspect = row(page, '10.0.0.3:8080').locator('[data-col="latency"]');
      expect(await suspect.innerText()).to.equal(
        'timeout (1000 ms) after 1 attempt\nnot seen since this coordinator leads',
      );
      // A peer that answers shows its latency, with its unit.
      expect(await row(page, '10.0.0.1:8080').locator('[data-col="latency"]').innerText()).to.equal(
        '0.5 ms',
      );
      await screenshot(page, 'scripted-dead-why');
      expect(problems, 'script errors or CSP violations').to.deep.equal([]);
    });

    it('lists the findings about the paths among the events, naming nodes by node name and address', async () => {
      const now = new Date();
      const nodes = pathsNodes(5);
      const refOf = (address: string) => {
        const n = nodes.find((x) => x.address === address);
        return { id: n?.id ?? address, node_name: n?.node_name ?? '' };
      };
      const told = (f: Finding, secondsAgo: number) => {
        const entry = findingEntry(
          findingPayload({
            finding: { id: 'x', opened: f, latest: f, openedMs: 0 },
            closing: false,
            startMs: 0,
            coordinator: nodes[0]!,
            epoch: 3,
            now: now.getTime(),
            refOf,
            figures: null,
          }),
          nodes,
        );
        return statusEvent(now, secondsAgo, entry);
      };
      const [n2, n3, n4] = [nodes[1]!.address, nodes[2]!.address, nodes[3]!.address];
      node.current = nodeStatus(
        { now },
        {
          events: [
            told({ kind: 'path-broken', from: n2, to: n3, witnesses: [n4] }, 2),
            told({ kind: 'egress-broken', node: n4, reaches: [], reachedBy: [n2, n3] }, 5),
          ],
        },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const broken = page.locator('#events li[data-kind="path_broken"]');
      await broken.waitFor({ timeout: RENDERED_MS });
      expect(await broken.innerText()).to.include(`worker-2 (${n2}) \u2192 worker-3 (${n3})`);
      const egress = page.locator('#events li[data-kind="egress_broken"]');
      expect(await egress.innerText()).to.include(`its egress is broken \u2014 worker-4 (${n4})`);
      // Coloured as what it is: a node cut off in red, not grey as an unknown kind.
      expect(await egress.locator('.chip').getAttribute('class')).to.equal('chip s-dead');
      expect(problems).to.deep.equal([]);
    });

    it('says how many peers each node probes in a mesh smaller than PAIR_PROBES, and gives units in the cells', async () => {
      const nodes = pathsNodes(5).map((n) => n.address);
      node.current = nodeStatus(
        {},
        {
          paths: coordinatorPaths(5, (from, to) =>
            from === nodes[1] && to === nodes[2] ? 'degraded' : 'ok',
          ),
        },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const matrix = page.locator('#path-matrix');
      await matrix.waitFor({ timeout: RENDERED_MS });
      expect(await page.locator('#paths-sub').innerText()).to.include(
        'each node probes all 4 others every 1 s; every pair within 1 round',
      );
      const cell = (from: string, to: string) =>
        matrix.locator(`td[data-from="${from}"][data-to="${to}"]`);
      expect(await cell(nodes[0]!, nodes[1]!).innerText()).to.match(/^[\d.]+ ms$/);
      expect(await cell(nodes[1]!, nodes[2]!).innerText()).to.equal('120 ms \u00b7 30 %');
      await screenshot(page, 'scripted-paths-5');
      expect(problems).to.deep.equal([]);
    });

    it('reads without JavaScript: the server renders the summary, escaped, under the same CSP', async () => {
      const now = new Date();
      const hostile = '<img src=x onerror="window.__knhXss=1">';
      const nodes = pathsNodes(5).map((n) => n.address);
      node.current = nodeStatus(
        { now, peerCount: 0 },
        {
          peers: [
            statusPeer(1, now),
            statusPeer(2, now, {
              state: 'dead',
              last_seen: new Date(now.getTime() - 42_000).toISOString(),
              last_failure: 'refused (connect ECONNREFUSED) after 3 attempts',
            }),
            statusPeer(3, now, { state: 'suspect', node_name: hostile, last_failure: 'timeout' }),
            statusPeer(4, now),
          ],
          paths: coordinatorPaths(5, (from, to) =>
            from === nodes[1] && to === nodes[2] ? 'failed' : 'ok',
          ),
        },
      );
      const { page, problems } = await openPage({ ...WIDE, javaScriptEnabled: false });
      await page.goto(node.url);
      const summary = page.locator('#summary');
      expect(await summary.isVisible()).to.equal(true);
      expect(await page.locator('#live').isVisible(), 'the live view needs the script').to.equal(
        false,
      );
      expect(await summary.locator('[data-summary="role"]').innerText()).to.equal('coordinator');
      expect(await summary.locator('[data-summary="coordinator"]').innerText()).to.equal(
        'this node',
      );
      expect(await summary.locator('[data-summary="epoch"]').innerText()).to.equal('3');
      expect(await summary.locator('[data-summary="peers"]').innerText()).to.equal(
        '4 peers (its own verdicts): 2 alive, 1 suspect, 1 dead, 0 unknown, 0 left.',
      );
      const down = summary.locator('[data-summary="down"] li');
      expect(await attributes(down, 'data-peer')).to.deep.equal(['10.0.0.2:8080', '10.0.0.3:8080']);
      expect(await down.first().innerText()).to.match(
        /^DEAD worker-2 \(10\.0\.0\.2:8080\): refused \(connect ECONNREFUSED\) after 3 attempts; last seen 42 s ago$/i,
      );
      expect(await down.nth(1).innerText()).to.include(hostile);
      expect(await page.locator('img').count(), 'a name from the cluster is text').to.equal(0);
      expect(await summary.locator('[data-finding="path-broken"]').innerText()).to.equal(
        `path-broken worker-2 (${nodes[1]}) \u2192 worker-3 (${nodes[2]})`,
      );
      await screenshot(page, 'scripted-no-javascript');
      expect(problems, 'CSP violations').to.deep.equal([]);

      // With the script on, its live view takes the summary's place.
      const live = await openPage(WIDE);
      await live.page.goto(node.url);
      await row(live.page, '10.0.0.2:8080').waitFor({ timeout: RENDERED_MS });
      expect(await live.page.locator('#summary').count()).to.equal(0);
      expect(live.problems).to.deep.equal([]);
    });

    it('shows text from /status as text: a hostile peer name creates no element', async () => {
      const now = new Date();
      const hostile = '<img src=x onerror="window.__knhXss=1">';
      node.current = nodeStatus(
        { now, peerCount: 1 },
        {
          node_name: '<b>self</b>',
          peers: [statusPeer(7, now, { node_name: hostile, id: `${hostile}@10.0.0.7` })],
          events: [
            statusEvent(now, 1, { kind: '<i>x</i>', text: '<script>window.__knhXss=2</script>' }),
          ],
          maintenance: [
            maintenanceWindow(now, { reason: '<img src=y onerror="window.__knhXss=3">' }),
          ],
        },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      await row(page, '10.0.0.7:8080').waitFor({ timeout: RENDERED_MS });

      expect(await page.locator('img').count(), 'img elements').to.equal(0);
      expect(await page.locator('main i, #facts b, #events script').count()).to.equal(0);
      expect(await page.evaluate('window.__knhXss')).to.equal(undefined);
      expect(await row(page, '10.0.0.7:8080').locator('.name').innerText()).to.equal(hostile);
      expect(await page.locator('[data-field="node"]').innerText()).to.equal('<b>self</b>');
      expect(await page.locator('#events li').first().innerText()).to.include(
        '<script>window.__knhXss=2</script>',
      );
      expect(problems).to.deep.equal([]);
    });

    it("renders the coordinator's matrix of 100 nodes, a cell a path coloured by state, the findings highlighted", async () => {
      const nodes = pathsNodes(100).map((n) => n.address);
      const [w2, w3, w7, w10, w11] = [2, 3, 7, 10, 11].map((i) => nodes[i - 1]) as [
        string,
        string,
        string,
        string,
        string,
      ];
      // worker-7 is unreachable, worker-2 → worker-3 broken, worker-10 → worker-11 degraded.
      const paths = coordinatorPaths(100, (from, to) =>
        to === w7 || (from === w2 && to === w3)
          ? 'failed'
          : from === w10 && to === w11
            ? 'degraded'
            : 'ok',
      );
      node.current = nodeStatus({}, { paths });
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const matrix = page.locator('#path-matrix');
      await matrix.waitFor({ timeout: RENDERED_MS });

      expect(await matrix.locator('tbody tr').count()).to.equal(100);
      expect(await matrix.locator('tbody td').count()).to.equal(100 * 100);
      expect(await matrix.locator('td[data-state="ok"]').count()).to.equal(9_900 - 100 - 1);
      expect(await matrix.locator('td[data-state="failed"]').count()).to.equal(99 + 1);
      const cell = (from: string, to: string) =>
        matrix.locator(`td[data-from="${from}"][data-to="${to}"]`);
      expect(await cell(w2, w3).getAttribute('data-finding')).to.equal('path-broken');
      expect(await cell(w10, w11).getAttribute('data-state')).to.equal('degraded');
      expect(await cell(w10, w11).getAttribute('data-finding')).to.equal('path-degraded');
      expect(await cell(w10, w11).getAttribute('title')).to.equal(
        'worker-10 → worker-11: degraded · p50 120 ms · p99 650 ms · loss 30 % · finding: path-degraded',
      );
      expect(await cell(w2, w7).getAttribute('title')).to.match(/^worker-2 → worker-7: failed/);
      expect(
        await matrix.locator(`th[data-col-node="${w7}"]`).getAttribute('data-finding'),
      ).to.equal('unreachable');
      expect(await page.locator('#path-findings li').allInnerTexts()).to.deep.equal([
        'unreachable worker-7',
        'path-broken worker-2 → worker-3',
        'path-degraded worker-10 → worker-11',
      ]);
      expect(await page.locator('[data-path-count="failed"]').innerText()).to.equal('100 failed');
      expect(await page.locator('#paths-sub').innerText()).to.include(
        'each node probes 20 others every 1 s; every pair within 5 rounds',
      );
      // Readable at 100 × 100: small square cells, the whole matrix within a wide screen.
      const box = await matrix.boundingBox();
      expect(box?.width, 'matrix width').to.be.below(WIDE.width);
      const c = await cell(w2, w3).boundingBox();
      expect(c?.width).to.be.within(8, 12);
      await screenshot(page, 'paths-matrix-100');

      // The same paths polled again: the matrix stays (a title being read is not redrawn away).
      await page.evaluate('document.getElementById("path-matrix").dataset.seen = "yes"');
      for (let i = 0; i < 2; i++) await page.waitForResponse((r) => r.url().endsWith('/status'));
      expect(await matrix.getAttribute('data-seen')).to.equal('yes');
      expect(problems, 'script errors or CSP violations').to.deep.equal([]);
    });

    it('renders the summary per node beyond 100 nodes, the worst first', async () => {
      const nodes = pathsNodes(150).map((n) => n.address);
      const w40 = nodes[39]!;
      node.current = nodeStatus(
        {},
        { paths: coordinatorPaths(150, (from) => (from === w40 ? 'failed' : 'ok')) },
      );
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const rows = page.locator('#path-summary tbody tr');
      await rows.first().waitFor({ timeout: RENDERED_MS });
      expect(await rows.count()).to.equal(150);
      expect(await rows.first().getAttribute('data-path-node')).to.equal(w40);
      expect(await rows.first().getAttribute('data-finding')).to.equal('egress-broken');
      expect(await rows.first().locator('td').nth(2).innerText()).to.equal('149');
      expect(await page.locator('#path-matrix').count()).to.equal(0);
      expect(await page.locator('[data-summary-note]').innerText()).to.include('150 nodes');
      await screenshot(page, 'paths-summary-150');
      expect(problems).to.deep.equal([]);
    });

    it("shows a follower its own paths, worst first, and says the matrix is on the coordinator's page", async () => {
      const now = new Date();
      const coordinator = { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' };
      const paths = pathsStatus(
        pathsFacts({
          role: 'follower',
          coordinator,
          nodes: pathsNodes(4),
          own: [
            probedPath('10.0.0.2:8080', 'ok', now.getTime() - 60_000),
            probedPath('10.0.0.3:8080', 'mtu'),
          ],
        }),
      );
      node.current = nodeStatus({ now }, { role: 'follower', coordinator, paths });
      const { page, problems } = await openPage(WIDE);
      await page.goto(node.url);
      const rows = page.locator('#own-paths tbody tr');
      await rows.first().waitFor({ timeout: RENDERED_MS });
      expect(await attributes(rows, 'data-state')).to.deep.equal(['mtu', 'ok']);
      // Named as the peers list names them.
      expect(await rows.nth(1).locator('.name').innerText()).to.equal('worker-2');
      expect(await rows.nth(1).innerText()).to.match(/0\.4 ms\s+1\.2 ms\s+0 %\s+10\s+1 min ago/);
      expect(await rows.first().innerText()).to.include('1400 B fail');
      expect(await page.locator('[data-paths-where]').innerText()).to.include(
        "on the coordinator's page: worker-1@10.0.0.1 (10.0.0.1:8080)",
      );

      // A large mesh: the 100 worst of its paths, and how many there are.
      const many = pathsNodes(151).slice(1);
      node.current = nodeStatus(
        { now },
        {
          role: 'follower',
          coordinator,
          paths: pathsStatus(
            pathsFacts({
              role: 'follower',
              coordinator,
              nodes: pathsNodes(151),
              own: many.map((n) => probedPath(n.address, 'ok')),
            }),
          ),
        },
      );
      await page
        .locator('[data-paths-where]', { hasText: 'the 100 worst of 150' })
        .waitFor({ timeout: RENDERED_MS });
      expect(await rows.count()).to.equal(100);
      expect(problems).to.deep.equal([]);
    });

    it('says so when pair probing is off', async () => {
      node.current = nodeStatus({}, { paths: { view: 'off' } });
      const { page } = await openPage(WIDE);
      await page.goto(node.url);
      await page.locator('[data-paths="off"]').waitFor({ timeout: RENDERED_MS });
      expect(await page.locator('[data-paths="off"]').innerText()).to.include('PAIR_PROBES=0');
    });

    it('says the connection is lost when the node stops answering, and recovers', async () => {
      const { page } = await openPage(WIDE);
      await page.goto(node.url);
      await page.locator('#connection[data-state="ok"]').waitFor({ timeout: RENDERED_MS });

      await node.stop();
      await page.locator('#connection[data-state="lost"]').waitFor({ timeout: RENDERED_MS });
      expect(await page.locator('#connection').innerText()).to.match(/connection lost/i);
      expect(await page.locator('[data-banner="connection-lost"]').innerText()).to.match(
        /connection lost/i,
      );
      // What it knew stays on screen, marked stale.
      expect(await page.locator('#peers tr[data-peer]').count()).to.equal(3);
      await screenshot(page, 'scripted-connection-lost');

      await node.start(); // the same port again
      await page.locator('#connection[data-state="ok"]').waitFor({ timeout: RENDERED_MS });
      expect(await page.locator('[data-banner="connection-lost"]').count()).to.equal(0);
    });
  });

  describe('on a running mesh of real nodes', () => {
    const startMesh = useMeshFixture();

    it("shows every peer alive, then a killed peer dead and why, on the coordinator's page", async () => {
      // Five nodes, as the demo runs: this test's picture of the page is the docs' one.
      const fx = await startMesh({ size: 5 });
      const { coordinator } = await fx.settled();
      const status = await fetch(`http://${coordinator.address}/status`);
      expect(
        status.status,
        'GET /status on a node (are statusViews wired in src/node/operator-views.ts?)',
      ).to.equal(200);
      const others = fx.nodes.filter((n) => n !== coordinator);

      const { page, problems } = await openPage(WIDE);
      await page.goto(`http://${coordinator.address}/`);
      for (const n of others) {
        await row(page, n.address)
          .and(page.locator('[data-state="alive"]'))
          .waitFor({ timeout: 15_000 });
      }
      expect(await page.locator('[data-field="coordinator"]').innerText()).to.equal('this node');

      const victim = lowestRanked(fx.nodes);
      await fx.mesh.kill(victim.index);
      await row(page, victim.address)
        .and(page.locator('[data-state="dead"]'))
        .waitFor({ timeout: 20_000 });
      await page
        .locator(
          `#events li[data-kind="peer_dead"][data-event-peer="${victim.name}@${victim.host}"]`,
        )
        .waitFor({ timeout: 5_000 });
      for (const n of others.filter((o) => o !== victim)) {
        expect(await row(page, n.address).getAttribute('data-state'), n.name).to.equal('alive');
      }
      expect(await rowOrder(page)).to.have.property('0', victim.address);
      // Why it is dead (its port refuses: the process is gone) and when it last answered.
      const why = row(page, victim.address).locator('[data-col="latency"]');
      expect(await why.locator('[data-field="failure"]').innerText()).to.match(/^refused/);
      expect(await why.locator('[data-field="last-seen"]').innerText()).to.match(
        /^last seen \d+ s ago$/,
      );
      expect(await page.locator('#paths-sub').innerText()).to.include(
        'each node probes all 4 others',
      );

      const path = await screenshot(page, 'mesh-with-dead-peer');
      expect(statSync(path).size).to.be.greaterThan(0);
      if (process.env.KNH_DOCS_SCREENSHOT === '1') {
        // The failed column of the killed node in the matrix, as an operator would find it.
        await page
          .locator(`#path-findings li[data-finding="unreachable"]`)
          .waitFor({ timeout: 15_000 });
        mkdirSync(dirname(DOCS_SCREENSHOT), { recursive: true });
        await page.screenshot({ path: DOCS_SCREENSHOT, fullPage: true });
        expect(statSync(DOCS_SCREENSHOT).size, 'a small picture for the docs').to.be.below(200_000);
      }
      expect(problems, 'script errors or CSP violations').to.deep.equal([]);

      // A follower shows the coordinator's verdicts, from its last announcement.
      const follower = others.find((o) => o !== victim);
      if (!follower) throw new Error('a mesh of 5 has a follower that is not the victim');
      const followerPage = await openPage(WIDE);
      await followerPage.page.goto(`http://${follower.address}/`);
      await row(followerPage.page, victim.address)
        .and(followerPage.page.locator('[data-state="dead"]'))
        .waitFor({ timeout: 10_000 });
      expect(await followerPage.page.locator('[data-field="view"]').innerText()).to.equal(
        "coordinator's verdicts",
      );
      // Why, as the coordinator announced it.
      expect(
        await row(followerPage.page, victim.address).locator('[data-field="failure"]').innerText(),
      ).to.match(/^refused/);
      await screenshot(followerPage.page, 'mesh-follower-view');
    });

    it("shows every node's paths in the coordinator's matrix, a killed node's column failing, and a follower its own paths", async () => {
      const fx = await startMesh({ size: 4 });
      const { coordinator } = await fx.settled();
      const { page, problems } = await openPage(WIDE);
      await page.goto(`http://${coordinator.address}/`);
      const matrix = page.locator('#path-matrix[data-size="4"]');
      // Every node probes the 3 others each round (PAIR_PROBES 20) and reports them to the coordinator.
      await pollUntil(
        'the 12 paths of the mesh ok in the matrix',
        async () =>
          (await matrix.locator('td[data-state="ok"]').count()) === 12 ? true : undefined,
        { timeoutMs: 15_000 },
      );
      const ranked = byRank(fx.nodes)
        .reverse()
        .map((n) => n.address);
      expect(
        await attributes(matrix.locator('tbody th'), 'data-row-node'),
        'rows in rank order',
      ).to.deep.equal(ranked);
      const [first, second] = ranked as [string, string];
      const cell = (from: string, to: string) =>
        matrix.locator(`td[data-from="${from}"][data-to="${to}"]`);
      expect(await cell(first, second).getAttribute('title')).to.match(
        /: ok · p50 [\d.]+ ms · p99 [\d.]+ ms · loss [\d.]+ %$/,
      );
      expect(await cell(first, second).innerText(), 'the p50 in the cell').to.match(/^[\d.]+ ms$/);
      expect(await page.locator('#paths-sub').innerText()).to.include(
        'each node probes all 3 others',
      );

      const victim = lowestRanked(fx.nodes);
      await fx.mesh.kill(victim.index);
      // Three probes failing in a row (a round each) make a path failed.
      for (const from of fx.nodes.filter((n) => n !== victim)) {
        await cell(from.address, victim.address)
          .and(page.locator('[data-state="failed"]'))
          .waitFor({ timeout: 15_000 });
      }
      await page
        .locator('#path-findings li[data-finding="unreachable"]')
        .waitFor({ timeout: 10_000 });
      expect(
        await page.locator(`th[data-col-node="${victim.address}"]`).getAttribute('data-finding'),
      ).to.equal('unreachable');
      await screenshot(page, 'mesh-paths-matrix');
      expect(problems, 'script errors or CSP violations').to.deep.equal([]);

      // A follower shows its own paths, the one to the killed node failed.
      const follower = fx.nodes.find((n) => n !== coordinator && n !== victim);
      if (!follower) throw new Error('a mesh of 4 has a follower that is not the victim');
      const followerPage = await openPage(WIDE);
      await followerPage.page.goto(`http://${follower.address}/`);
      await followerPage.page
        .locator(`#own-paths tr[data-own-path="${victim.address}"][data-state="failed"]`)
        .waitFor({ timeout: 10_000 });
      expect(await followerPage.page.locator('#own-paths tbody tr').count()).to.equal(3);
      expect(await followerPage.page.locator('[data-paths-where]').innerText()).to.include(
        coordinator.address,
      );
      expect(followerPage.problems).to.deep.equal([]);
    });
  });
});
