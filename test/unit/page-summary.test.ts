// The status page's server-rendered summary: what a reader without JavaScript sees, every text from
// the cluster escaped.
import { expect } from 'chai';
import { escapeHtml, statusSummaryHtml, SUMMARY_NAMED } from '../../src/status/page-summary.js';
import { nodeStatus, statusPeer } from '../support/node-status.js';
import { coordinatorPaths } from '../support/path-status.js';

const NOW = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));
const ago = (s: number) => new Date(NOW.getTime() - s * 1_000).toISOString();

/** The text of the HTML, tags dropped and entities read, as a reader sees it. */
const text = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&#x2192;/g, '\u2192')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

describe('status page summary (server-rendered)', () => {
  it('escapes every character that could make markup or leave an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).to.equal(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('says the role, the coordinator, the epoch and the peers by state', () => {
    const html = statusSummaryHtml(
      nodeStatus(
        { now: NOW, peerCount: 4 },
        {
          role: 'follower',
          coordinator: { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' },
          view: { source: 'coordinator', as_of: NOW.toISOString() },
        },
      ),
    );
    const t = text(html);
    expect(html).to.match(/^<section id="summary"/);
    expect(t).to.include('This nodeworker-9 (10.0.0.9:8080)');
    expect(t).to.include('Rolefollower');
    expect(t).to.include('Coordinatorworker-1@10.0.0.1 (10.0.0.1:8080)');
    expect(t).to.include('Epoch3');
    expect(t).to.include(
      "4 peers (the coordinator's verdicts): 4 alive, 0 suspect, 0 dead, 0 unknown, 0 left.",
    );
    expect(html, 'nobody down: no list').to.not.include('data-summary="down"');
  });

  it('names the dead and suspect peers, why each is down and when it was last seen', () => {
    const html = statusSummaryHtml(
      nodeStatus(
        { now: NOW },
        {
          peers: [
            statusPeer(1, NOW),
            statusPeer(2, NOW, {
              state: 'dead',
              last_failure: 'refused (connect ECONNREFUSED) after 3 attempts',
              last_seen: ago(42),
            }),
            statusPeer(3, NOW, {
              state: 'suspect',
              last_failure: 'timeout (1000 ms) after 1 attempt',
            }),
          ],
        },
      ),
    );
    const items = [...html.matchAll(/<li data-peer="([^"]+)"[^>]*>(.*?)<\/li>/g)];
    expect(items.map((m) => m[1])).to.deep.equal(['10.0.0.2:8080', '10.0.0.3:8080']);
    expect(text(items[0]![2]!)).to.equal(
      'dead worker-2 (10.0.0.2:8080): refused (connect ECONNREFUSED) after 3 attempts; last seen 42 s ago',
    );
    // The absolute time in the title.
    expect(items[0]![2]).to.include(
      `<time datetime="${ago(42)}" title="${ago(42)}">42 s ago</time>`,
    );
    expect(text(items[1]![2]!)).to.equal(
      'suspect worker-3 (10.0.0.3:8080): timeout (1000 ms) after 1 attempt; not seen since this coordinator leads',
    );
    expect(text(html)).to.include('1 alive, 1 suspect, 1 dead');
  });

  it(`names at most ${SUMMARY_NAMED} peers down, and says how many more`, () => {
    const peers = Array.from({ length: SUMMARY_NAMED + 7 }, (_, i) =>
      statusPeer(i + 1, NOW, { state: 'dead', last_failure: 'refused' }),
    );
    const html = statusSummaryHtml(nodeStatus({ now: NOW }, { peers }));
    expect(html.match(/<li data-peer=/g)).to.have.length(SUMMARY_NAMED);
    expect(text(html)).to.include('and 7 more (all in /status)');
  });

  it("lists the coordinator's open findings, naming nodes by node name and address", () => {
    const paths = coordinatorPaths(4, (from, to) =>
      from === '10.0.0.2:8080' && to === '10.0.0.3:8080' ? 'failed' : 'ok',
    );
    const t = text(statusSummaryHtml(nodeStatus({ now: NOW }, { paths })));
    expect(t).to.match(
      /1 open finding about the paths:path-broken worker-2 \(10\.0\.0\.2:8080\) \u2192 worker-3 \(10\.0\.0\.3:8080\)/,
    );
    const none = coordinatorPaths(4, () => 'ok');
    expect(text(statusSummaryHtml(nodeStatus({ now: NOW }, { paths: none })))).to.include(
      'No open findings about the paths.',
    );
  });

  it('escapes names, failures and ids from the cluster: no markup gets through', () => {
    const hostile = '<img src=x onerror="alert(1)">';
    const html = statusSummaryHtml(
      nodeStatus(
        { now: NOW },
        {
          node_name: `<b>self</b>`,
          coordinator: { id: `${hostile}@10.0.0.1`, address: '10.0.0.1:8080' },
          peers: [
            statusPeer(7, NOW, {
              state: 'dead',
              node_name: hostile,
              id: `${hostile}@10.0.0.7`,
              address: '10.0.0.7:8080" onmouseover="x',
              last_failure: '</li><script>alert(2)</script>',
            }),
          ],
        },
      ),
    );
    expect(html).to.not.match(/<img|<script|<b>|onerror="|" onmouseover/);
    expect(text(html)).to.include(hostile);
    expect(text(html)).to.include('</li><script>alert(2)</script>');
    expect(html).to.include('data-peer="10.0.0.7:8080&quot; onmouseover=&quot;x"');
  });
});
