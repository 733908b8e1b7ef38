// The status page's summary, rendered by the server into the page itself: what a reader without
// JavaScript sees (this node, its role, the coordinator, the epoch, the peers by state, those down
// named with why, the open findings). The page's script puts its live view in its place once it has
// polled /status. Pure; every text from /status is escaped, since node names come from the cluster.
import type { PathFinding, PathsStatus } from './paths-types.js';
import type { NodeStatus, PeerState, StatusPeer } from './status-types.js';

/** At most this many peers not answering, and findings, are named (a lost zone is thousands). */
export const SUMMARY_NAMED = 50;

const STATES: readonly PeerState[] = ['alive', 'suspect', 'dead', 'unknown', 'left'];

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML, safe between tags and inside a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** How long ago, as the script's ticker says it ("42 s", "3 min", "2 h 5 min", "1 d 4 h"). */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor(s / 60) % 60} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor(s / 3600) % 24} h`;
}

/** A past time relative to the status's `now`, the absolute one in its title. */
function ago(iso: string, nowMs: number): string {
  const e = escapeHtml(iso);
  return `<time datetime="${e}" title="${e}">${span(Math.max(0, nowMs - Date.parse(iso)))} ago</time>`;
}

const nameOf = (n: { node_name: string; id: string; address: string }) =>
  n.node_name || n.id || n.address;
/** A node by its node name and address, escaped. */
const named = (n: { node_name: string; id: string; address: string }) =>
  `${escapeHtml(nameOf(n))} (<code>${escapeHtml(n.address)}</code>)`;

const RANK: Partial<Record<PeerState, number>> = { dead: 0, suspect: 1 };
/** Not answering, so worth naming: dead, suspect, or never seen to answer yet. */
const down = (p: StatusPeer) =>
  p.state === 'dead' || p.state === 'suspect' || (p.state === 'unknown' && p.last_failure !== null);

function downItem(p: StatusPeer, nowMs: number): string {
  const state = escapeHtml(p.state);
  const why = p.last_failure ?? 'no failure known to this coordinator';
  const seen = p.last_seen
    ? `last seen ${ago(p.last_seen, nowMs)}`
    : 'not seen since this coordinator leads';
  return (
    `<li data-peer="${escapeHtml(p.address)}" data-state="${state}">` +
    `<span class="badge s-${state}">${state}</span> ${named(p)}: ` +
    `<span class="why">${escapeHtml(why)}</span>; ${seen}</li>`
  );
}

function peersPart(s: NodeStatus, nowMs: number): string {
  const counts = STATES.map((st) => `${s.peers.filter((p) => p.state === st).length} ${st}`);
  const listed = s.peers
    .filter(down)
    .sort((a, b) => (RANK[a.state] ?? 2) - (RANK[b.state] ?? 2) || compareNames(a, b));
  const more = listed.length - SUMMARY_NAMED;
  const items = listed.slice(0, SUMMARY_NAMED).map((p) => downItem(p, nowMs));
  if (more > 0) items.push(`<li>and ${more} more (all in <a href="status">/status</a>)</li>`);
  const whose =
    s.view.source === 'own'
      ? 'its own verdicts'
      : s.view.source === 'coordinator'
        ? "the coordinator's verdicts"
        : 'no verdicts yet';
  return (
    `<p data-summary="peers"><strong>${s.peers.length} peers</strong> (${whose}): ${counts.join(', ')}.</p>` +
    (items.length ? `<ul class="down" data-summary="down">${items.join('')}</ul>` : '')
  );
}

const compareNames = (a: StatusPeer, b: StatusPeer) =>
  nameOf(a).localeCompare(nameOf(b), undefined, { numeric: true }) ||
  a.address.localeCompare(b.address);

function findingText(f: PathFinding, name: (address: string) => string): string {
  const size = f.size ? ` (${f.size} B)` : '';
  if (f.sides) return f.sides.map((side) => `[${side.map(name).join(', ')}]`).join(' | ');
  if (f.from && f.to) return `${name(f.from)} &#x2192; ${name(f.to)}${size}`;
  return f.nodes.map(name).join(', ') + size;
}

function findingsPart(p: PathsStatus): string {
  if (p.view === 'off')
    return '<p data-summary="findings">Pair probing is off (PAIR_PROBES=0).</p>';
  if (p.view === 'own') {
    const where = p.coordinator
      ? `on the coordinator's page: ${escapeHtml(p.coordinator.id)} (<code>${escapeHtml(p.coordinator.address)}</code>)`
      : 'with the coordinator, and there is none now';
    return `<p data-summary="findings">The findings about every node's paths are ${where}.</p>`;
  }
  if (!p.findings.length) return '<p data-summary="findings">No open findings about the paths.</p>';
  const byAddress = new Map(p.nodes.map((n) => [n.address, n]));
  const name = (address: string) => {
    const n = byAddress.get(address);
    return n ? named(n) : `<code>${escapeHtml(address)}</code>`;
  };
  const shown = p.findings.slice(0, SUMMARY_NAMED);
  const more = p.findings_total - shown.length;
  const items = shown.map(
    (f) =>
      `<li data-finding="${escapeHtml(f.kind)}"><strong>${escapeHtml(f.kind)}</strong> ${findingText(f, name)}</li>`,
  );
  if (more > 0) items.push(`<li>and ${more} more (all in <a href="status">/status</a>)</li>`);
  return (
    `<p data-summary="findings"><strong>${p.findings_total} open finding${p.findings_total === 1 ? '' : 's'}</strong> about the paths:</p>` +
    `<ul class="down">${items.join('')}</ul>`
  );
}

function fact(label: string, field: string, value: string): string {
  return `<dt>${label}</dt><dd data-summary="${field}">${value}</dd>`;
}

/** The summary section of the page for `s`, as HTML. */
export function statusSummaryHtml(s: NodeStatus): string {
  const nowMs = Date.parse(s.now);
  const c = s.coordinator;
  const coordinator = !c
    ? 'none (electing)'
    : c.address === s.address
      ? 'this node'
      : `${escapeHtml(c.id)} (<code>${escapeHtml(c.address)}</code>)`;
  const alerts = [
    s.self_suspect
      ? '<p class="warn" data-summary="self-suspect">The coordinator cannot reach most of its peers, so it declares none of them dead.</p>'
      : '',
    s.maintenance.length
      ? `<p class="warn" data-summary="maintenance">Maintenance: alerts paused by ${s.maintenance.length} window${s.maintenance.length === 1 ? '' : 's'}.</p>`
      : '',
    s.dry_run
      ? '<p class="warn" data-summary="dry-run">Dry run: webhooks are logged, not sent.</p>'
      : '',
  ].join('');
  return (
    `<section id="summary" class="panel summary" aria-labelledby="summary-title">` +
    `<h2 id="summary-title">Summary<span class="sub">as of <time datetime="${escapeHtml(s.now)}">${escapeHtml(s.now)}</time>; ` +
    `reload for news (the live view needs JavaScript)</span></h2>` +
    `<dl>` +
    fact('This node', 'node', named(s)) +
    fact('Role', 'role', escapeHtml(s.role)) +
    fact('Coordinator', 'coordinator', coordinator) +
    fact('Epoch', 'epoch', String(s.epoch)) +
    `</dl>` +
    alerts +
    peersPart(s, nowMs) +
    findingsPart(s.paths) +
    `</section>`
  );
}

/** The summary when /status could not be built: the page still loads, and says so. */
export function summaryUnavailableHtml(): string {
  return (
    '<section id="summary" class="panel summary"><h2>Summary</h2>' +
    '<p class="warn" data-summary="unavailable">This node could not build its status just now; ' +
    '<a href="status">/status</a> says why.</p></section>'
  );
}
