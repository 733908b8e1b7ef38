// The status page served at GET /: one self-contained HTML document that polls GET status.
//
// No external assets (a cluster may have no internet) and no framework. The script builds every node
// with createElement/textContent, never innerHTML, so text from /status cannot become markup. The
// style and the script are exported on their own so the route can allow exactly them by hash in its
// Content-Security-Policy. Neither may contain a backtick or "${": they are template literals here.
// The Paths panel's part of each is in page-paths.ts.
import { PATHS_SCRIPT, PATHS_STYLE } from './page-paths.js';

export const PAGE_STYLE = String.raw`
:root{--bg:#f5f7f9;--panel:#fff;--text:#1f2328;--muted:#5b6571;--line:#d8dee4;--head:#f0f3f6;
--alive:#1a7f37;--alive-bg:#dcf5e3;--suspect:#8a5a00;--suspect-bg:#fff3c4;--dead:#c4222c;
--dead-bg:#ffe5e3;--unknown:#59636e;--unknown-bg:#eceff2;--left:#3c5a7d;--left-bg:#e2e9f2;
--info:#0a5bc4;--info-bg:#e3f0ff;--maint:#6639ba;--maint-bg:#f0e9fc}
@media (prefers-color-scheme:dark){:root{--bg:#0f1419;--panel:#171d24;--text:#e3e8ee;
--muted:#9aa5b1;--line:#2c353f;--head:#1d252e;--alive:#5fd07d;--alive-bg:#15321f;--suspect:#f0c04a;
--suspect-bg:#3a2f0f;--dead:#ff7b72;--dead-bg:#3d1618;--unknown:#a0aab4;--unknown-bg:#262e37;
--left:#93b1d3;--left-bg:#1f2d3d;--info:#79b8ff;--info-bg:#132a45;--maint:#c2a4f5;--maint-bg:#2a1f40}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.45 system-ui,-apple-system,"Segoe UI",
Roboto,"Helvetica Neue",Arial,sans-serif}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.92em}
.top{display:flex;align-items:center;justify-content:space-between;gap:12px;flex-wrap:wrap;
padding:10px 20px;background:var(--panel);border-bottom:1px solid var(--line)}
.brand{display:flex;align-items:baseline;gap:10px}
.logo{font-weight:800;letter-spacing:.04em;color:var(--info)}
h1{font-size:17px;margin:0;font-weight:600}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);margin:0 0 10px}
h2 .sub{text-transform:none;letter-spacing:0;font-weight:400;margin-left:6px}
h1 .sub{font-size:14px;font-weight:400;margin-left:4px}
main{max-width:1280px;margin:0 auto;padding:16px 20px 8px}
.conn{display:inline-flex;align-items:center;gap:8px;padding:4px 12px;border-radius:999px;
font-weight:600;font-size:13px;background:var(--unknown-bg);color:var(--unknown)}
.conn::before{content:"";width:8px;height:8px;border-radius:50%;background:currentColor}
.conn[data-state=ok]{background:var(--alive-bg);color:var(--alive)}
.conn[data-state=lost]{background:var(--dead);color:#fff}
.banner{border-radius:8px;padding:10px 14px;margin:0 0 12px;border:1px solid;border-left-width:6px}
.banner strong{display:block;margin-bottom:2px}
.banner ul{margin:6px 0 0;padding-left:18px}
.banner li strong{display:inline;margin:0}
.b-lost{background:var(--dead-bg);border-color:var(--dead);color:var(--text)}
.b-self{background:var(--dead-bg);border-color:var(--dead)}
.b-dry{background:var(--suspect-bg);border-color:var(--suspect)}
.b-maint{background:var(--maint-bg);border-color:var(--maint)}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:1px;
background:var(--line);border:1px solid var(--line);border-radius:8px;overflow:hidden;margin-bottom:14px}
.fact{background:var(--panel);padding:10px 14px;min-width:0}
.fact .k{display:block;font-size:12px;color:var(--muted)}
.fact .v{display:block;font-weight:600;overflow-wrap:anywhere}
.fact .sub{display:block;font-size:12px;color:var(--muted);overflow-wrap:anywhere}
.tiles{display:flex;flex-wrap:wrap;gap:8px;margin-bottom:14px}
.tile{flex:1 1 110px;background:var(--panel);border:1px solid var(--line);border-top:4px solid var(--c);
border-radius:8px;padding:8px 12px}
.tile b{display:block;font-size:24px;line-height:1.1;color:var(--c)}
.tile span{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.05em}
.tile[data-count="0"] b{color:var(--muted)}
.tile.s-dead:not([data-count="0"]),.tile.s-suspect:not([data-count="0"]){background:var(--cb)}
.panel{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:14px;margin-bottom:14px}
table{width:100%;border-collapse:collapse}
th{text-align:left;font-size:12px;font-weight:600;color:var(--muted);background:var(--head);
padding:7px 10px;border-bottom:1px solid var(--line);white-space:nowrap}
td{padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:middle}
tbody tr:last-child td{border-bottom:0}
tr.r-dead td{background:var(--dead-bg)}
tr.r-suspect td{background:var(--suspect-bg)}
tr.r-dead td:first-child{box-shadow:inset 4px 0 var(--dead)}
tr.r-suspect td:first-child{box-shadow:inset 4px 0 var(--suspect)}
.name{font-weight:600;overflow-wrap:anywhere}
.sub{font-size:12px;color:var(--muted);overflow-wrap:anywhere}
.num{font-variant-numeric:tabular-nums;white-space:nowrap}
.badge{display:inline-flex;align-items:center;gap:6px;padding:2px 10px 2px 8px;border-radius:999px;
font-size:12px;font-weight:700;text-transform:uppercase;letter-spacing:.05em;white-space:nowrap;
color:var(--c);background:var(--cb);border:1px solid var(--c)}
.badge::before{content:"";width:8px;height:8px;border-radius:50%;background:var(--c)}
.s-alive{--c:var(--alive);--cb:var(--alive-bg)}.s-suspect{--c:var(--suspect);--cb:var(--suspect-bg)}
.s-dead{--c:var(--dead);--cb:var(--dead-bg)}.s-unknown{--c:var(--unknown);--cb:var(--unknown-bg)}
.s-left{--c:var(--left);--cb:var(--left-bg)}.s-info{--c:var(--info);--cb:var(--info-bg)}
.s-maint{--c:var(--maint);--cb:var(--maint-bg)}
.chip{display:inline-block;font-size:11px;font-weight:600;padding:1px 7px;border-radius:4px;
margin:1px 4px 1px 0;color:var(--c,var(--muted));background:var(--cb,var(--unknown-bg));white-space:nowrap;
border:1px solid color-mix(in srgb,var(--c,var(--muted)) 30%,transparent)}
.empty{color:var(--muted);padding:14px 10px;text-align:center}
.events{list-style:none;margin:0;padding:0}
.events li{display:grid;grid-template-columns:150px 120px 1fr;gap:10px;align-items:baseline;
padding:7px 4px;border-bottom:1px solid var(--line)}
.events li:last-child{border-bottom:0}
.events li[data-suppressed=true]{background:var(--maint-bg)}
.why{font-weight:600;color:var(--dead);overflow-wrap:anywhere}
.events .when{color:var(--muted)}.events .when b{color:var(--text);font-weight:600;margin-right:6px}
.summary dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0 0 10px}
.summary dt{color:var(--muted)}.summary dd{margin:0;font-weight:600;overflow-wrap:anywhere}
.summary p{margin:6px 0}.summary .warn{color:var(--suspect);font-weight:600}
.down{margin:4px 0 8px;padding-left:0;list-style:none}.down li{padding:3px 0;overflow-wrap:anywhere}
.foot{max-width:1280px;margin:0 auto;padding:0 20px 20px;color:var(--muted);font-size:12px}
.foot a{color:inherit}
body[data-connection=lost] .live{opacity:.55;filter:grayscale(.6)}
@media (max-width:760px){
main{padding:12px 10px 4px}.top{padding:8px 12px}.panel{padding:12px 10px}
.peers thead{display:none}.peers,.peers tbody{display:block}
.peers tbody tr{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));border:1px solid var(--line);
border-radius:8px;margin-bottom:8px;overflow:hidden}
.peers tbody td{border:0;padding:6px 10px}
td[data-col=node]{grid-area:1/1/2/4}td[data-col=state]{grid-area:1/4/2/-1;text-align:right}
td[data-col=address]{grid-column:1/-1;padding-top:0}
td[data-col=latency],td[data-col=since],td[data-col=last-probe]{grid-column:span 2;border-top:1px solid var(--line)}
td[data-col=latency]::before,td[data-col=since]::before,td[data-col=last-probe]::before{
content:attr(data-label);display:block;font-size:11px;color:var(--muted)}
td[data-col=notes]{grid-column:1/-1;border-top:1px solid var(--line)}td[data-col=notes]:empty{display:none}
.peers tbody td.empty{grid-column:1/-1}
tr.r-dead td:first-child,tr.r-suspect td:first-child{box-shadow:none}
tr.r-dead{border-left:5px solid var(--dead)}tr.r-suspect{border-left:5px solid var(--suspect)}
.events li{grid-template-columns:1fr auto}.events .text{grid-column:1/-1}}
${PATHS_STYLE}`;

export const PAGE_SCRIPT = String.raw`
'use strict';
(() => {
  const POLL_MS = 2000;
  const TIMEOUT_MS = 5000;
  const STATES = ['alive', 'suspect', 'dead', 'unknown', 'left'];
  const RANK = { dead: 0, suspect: 1 };
  const TONE = { peer_dead: 'dead', peer_recovered: 'alive', path_broken: 'suspect',
    path_restored: 'alive', suspected: 'suspect', cleared: 'alive', alive: 'alive',
    never_alive: 'unknown', withheld: 'unknown', cannot_judge: 'suspect', can_judge: 'alive',
    peer_flapping: 'suspect', peer_unauthenticated: 'suspect', peer_authenticated: 'alive',
    coordinator: 'info', left: 'left', maintenance: 'maint', partition: 'dead',
    partition_healed: 'alive', egress_broken: 'dead', egress_restored: 'alive',
    peer_degraded: 'suspect', peer_healthy: 'alive', path_degraded: 'suspect', path_healthy: 'alive',
    peer_mtu: 'maint', peer_mtu_ok: 'alive', path_mtu: 'maint', path_mtu_ok: 'alive' };
  const byId = (id) => document.getElementById(id);
  let last = null;
  let skewMs = 0;
  let lastOkMs = null;
  let failure = null;

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = String(v);
      else if (k === 'class') e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const c of children) if (c !== null && c !== undefined && c !== false)
      e.append(typeof c === 'string' ? document.createTextNode(c) : c);
    return e;
  }
  const serverNow = () => Date.now() + skewMs;
  const pad = (n) => String(n).padStart(2, '0');
  function clock(iso) {
    const d = new Date(iso);
    return pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }
  function span(ms) {
    const s = Math.round(Math.abs(ms) / 1000);
    if (s < 60) return s + ' s';
    if (s < 3600) return Math.floor(s / 60) + ' min';
    if (s < 86400) return Math.floor(s / 3600) + ' h ' + (Math.floor(s / 60) % 60) + ' min';
    return Math.floor(s / 86400) + ' d ' + (Math.floor(s / 3600) % 24) + ' h';
  }
  function relative(iso) {
    const ms = serverNow() - Date.parse(iso);
    return ms > -1000 ? span(Math.max(ms, 0)) + ' ago' : 'in ' + span(ms);
  }
  // A <time> the ticker keeps current; '\u2014' when there is no time.
  function when(iso, withClock) {
    if (!iso) return el('span', { class: 'sub', text: '\u2014' });
    return el('time', { datetime: iso, title: new Date(iso).toISOString(),
      'data-rel': withClock ? 'clock' : 'rel', text: label(iso, withClock) });
  }
  const label = (iso, withClock) =>
    withClock ? clock(iso) + ' (' + relative(iso) + ')' : relative(iso);
  function latency(ms) {
    if (ms === null || ms === undefined) return '\u2014';
    return ms < 10 ? ms.toFixed(1) + ' ms' : Math.round(ms) + ' ms';
  }
  const badge = (state) =>
    el('span', { class: 'badge s-' + (STATES.includes(state) ? state : 'unknown'),
      'data-badge': state, text: state });
  const chip = (tone, text, title) => el('span', { class: 'chip s-' + tone, text, title });
  const nodeName = (p) => p.node_name || p.id || p.address;

  function fact(k, field, value, sub) {
    return el('div', { class: 'fact' }, el('span', { class: 'k', text: k }),
      el('span', { class: 'v', 'data-field': field }, value),
      sub ? el('span', { class: 'sub', 'data-field': field + '-sub' }, sub) : null);
  }
  function renderFacts(s) {
    const c = s.coordinator;
    const self = c && c.address === s.address;
    const view = s.view.source === 'own' ? 'own verdicts'
      : s.view.source === 'coordinator' ? "coordinator's verdicts" : 'no verdicts yet';
    byId('facts').replaceChildren(
      fact('This node', 'node', nodeName(s), s.address + (s.ready ? '' : ' \u00b7 not ready')),
      fact('Role', 'role', s.role, 'knh ' + s.version),
      fact('Epoch', 'epoch', String(s.epoch)),
      fact('Coordinator', 'coordinator', c ? (self ? 'this node' : c.id) : 'none (electing)',
        c ? c.address : null),
      fact('View', 'view', view, s.view.as_of ? el('span', {}, 'as of ', when(s.view.as_of, true)) : null),
      fact('Updated', 'updated', clock(s.now), 'every ' + POLL_MS / 1000 + ' s'));
  }

  function windowItem(w) {
    const scope = w.scope === 'mesh' ? 'Whole mesh' : 'Nodes ' + w.nodes.join(', ');
    const begun = Date.parse(w.starts) <= serverNow();
    return el('li', { 'data-window': w.id }, el('strong', { text: scope }),
      begun ? ' since ' : ' from ', el('time', { datetime: w.starts, title: w.starts,
        text: clock(w.starts) }), ' until ', el('time', { datetime: w.until, 'data-rel': 'clock',
        title: w.until, text: label(w.until, true) }), w.reason ? ' \u2014 ' + w.reason : '');
  }
  function renderBanners(s) {
    const out = [];
    if (failure) out.push(el('div', { class: 'banner b-lost', 'data-banner': 'connection-lost',
      role: 'alert' }, el('strong', { text: 'Connection lost' }),
      failure + '. Showing what this page last received' +
      (lastOkMs ? ' ' + span(Date.now() - lastOkMs) + ' ago' : '') + '; retrying every ' +
      POLL_MS / 1000 + ' s.'));
    if (!s) return byId('banners').replaceChildren(...out);
    if (s.self_suspect) out.push(el('div', { class: 'banner b-self', 'data-banner': 'self-suspect' },
      el('strong', { text: 'Coordinator suspects its own network' }),
      'It cannot reach most of its peers, so it declares none of them dead.'));
    if (s.dry_run) out.push(el('div', { class: 'banner b-dry', 'data-banner': 'dry-run' },
      el('strong', { text: 'Dry run' }), 'DRY_RUN=true: webhooks are logged, not sent.'));
    if (s.maintenance.length) {
      const held = s.events.filter((e) => e.suppressed).length;
      out.push(el('div', { class: 'banner b-maint', 'data-banner': 'maintenance' },
        el('strong', { text: 'Maintenance: alerts paused' }),
        held === 1 ? '1 alert would have fired; it is marked in Recent events.'
          : held ? held + ' alerts would have fired; they are marked in Recent events.'
            : s.view.source === 'coordinator'
              ? 'Alerts it holds back are listed on the coordinator\'s page.'
              : 'No alert withheld yet.',
        el('ul', {}, ...s.maintenance.map(windowItem))));
    }
    byId('banners').replaceChildren(...out);
  }

  function renderTiles(peers) {
    byId('tiles').replaceChildren(...STATES.map((st) => {
      const n = peers.filter((p) => p.state === st).length;
      return el('div', { class: 'tile s-' + st, 'data-tile': st, 'data-count': n },
        el('b', { text: String(n) }), el('span', { text: st }));
    }));
  }
  // A peer that answers: its latency. One that does not: why its last probe failed and when it
  // last answered, not the latency it had then.
  function health(p) {
    const down = p.last_failure || p.last_seen || p.state === 'dead' || p.state === 'suspect';
    if (!down) return [el('span', { class: 'num', text: latency(p.latency_ms) })];
    return [el('div', { class: 'why', 'data-field': 'failure',
      text: p.last_failure || 'no failure known to this coordinator' }),
      el('div', { class: 'sub', 'data-field': 'last-seen' }, ...(p.last_seen
        ? ['last seen ', when(p.last_seen, false)] : ['not seen since this coordinator leads']))];
  }
  function peerRow(p, s) {
    const notes = [];
    if (s.coordinator && p.address === s.coordinator.address) notes.push(chip('info', 'coordinator'));
    if (p.address === s.address) notes.push(chip('info', 'this node'));
    if (p.path_broken) notes.push(chip('suspect', 'path broken',
      'The coordinator cannot reach it, but other peers can'));
    if (p.in_maintenance) notes.push(chip('maint', 'maintenance', 'Alerts about it are paused'));
    if (p.alerted) notes.push(chip('dead', 'alerted'));
    const td = (col, labelText, ...c) => el('td', { 'data-col': col, 'data-label': labelText }, ...c);
    return el('tr', { class: 'r-' + p.state, 'data-peer': p.address, 'data-state': p.state },
      td('node', 'Node', el('div', { class: 'name', text: nodeName(p) }),
        p.id !== nodeName(p) ? el('div', { class: 'sub', text: p.id }) : null),
      td('address', 'Address', el('code', { text: p.address })),
      td('state', 'State', badge(p.state)),
      td('latency', 'Latency', ...health(p)),
      td('since', 'Since', when(p.since, false)),
      td('last-probe', 'Last probe', when(p.last_probe, false)),
      td('notes', 'Notes', ...notes));
  }
  function renderPeers(s) {
    const peers = s.peers.slice().sort((a, b) =>
      (RANK[a.state] ?? 2) - (RANK[b.state] ?? 2) ||
      nodeName(a).localeCompare(nodeName(b), undefined, { numeric: true }) ||
      a.address.localeCompare(b.address));
    renderTiles(peers);
    byId('peer-count').textContent = peers.length ? '(' + peers.length + ')' : '';
    const empty = s.view.source === 'none'
      ? 'No verdicts yet: this node has not heard from a coordinator.' : 'No peers known.';
    byId('peers').replaceChildren(...(peers.length ? peers.map((p) => peerRow(p, s))
      : [el('tr', {}, el('td', { class: 'empty', colspan: 7, text: empty }))]));
  }
  function renderEvents(s) {
    const withheld = s.dry_run && !s.maintenance.length ? 'suppressed (dry run)'
      : 'suppressed (maintenance)';
    const items = s.events.map((e) => el('li', { 'data-event': e.kind, 'data-kind': e.kind,
      'data-suppressed': String(e.suppressed), 'data-event-peer': e.peer },
      el('span', { class: 'when num', title: e.time }, el('b', { text: clock(e.time) }),
        when(e.time, false)),
      el('span', {}, chip(TONE[e.kind] || 'unknown', e.kind.replace(/_/g, ' '))),
      el('span', { class: 'text' }, e.text + ' ',
        e.suppressed ? chip('maint', withheld, 'An alert that was not sent') : null)));
    byId('events').replaceChildren(...(items.length ? items
      : [el('li', { class: 'empty', text: 'No events yet.' })]));
  }

${PATHS_SCRIPT}
  function render() {
    const s = last;
    document.body.dataset.connection = failure ? 'lost' : s ? 'ok' : 'connecting';
    const conn = byId('connection');
    conn.dataset.state = document.body.dataset.connection;
    conn.textContent = failure ? 'Connection lost' : s ? 'Live \u00b7 ' + clock(s.now) : 'Connecting\u2026';
    renderBanners(s);
    if (!s) return;
    const summary = byId('summary');
    if (summary) summary.remove();
    byId('live').hidden = false;
    const dead = s.peers.filter((p) => p.state === 'dead').length;
    document.title = (failure ? '\u26a0 ' : dead ? '\u2716 ' + dead + ' dead \u00b7 ' : '') + 'knh \u00b7 ' + nodeName(s);
    renderFacts(s);
    renderPeers(s);
    renderEvents(s);
    renderPaths(s);
    byId('version').textContent = 'knh ' + s.version;
    byId('seen-by').textContent = 'as seen by ' + nodeName(s);
  }
  function tick() {
    for (const t of document.querySelectorAll('time[data-rel]'))
      t.textContent = label(t.getAttribute('datetime'), t.dataset.rel === 'clock');
    if (failure) renderBanners(last);
  }

  async function poll() {
    try {
      const res = await fetch('status', { cache: 'no-store', headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = await res.json().catch(() => null);
      if (!res.ok || !body) throw new Error('HTTP ' + res.status + (body && body.error ? ': ' + body.error : ''));
      skewMs = Date.parse(body.now) - Date.now();
      last = body;
      lastOkMs = Date.now();
      failure = null;
    } catch (err) {
      failure = err && err.name === 'TimeoutError' ? 'No answer within ' + TIMEOUT_MS / 1000 + ' s'
        : err && /^HTTP/.test(err.message) ? err.message : 'The node does not answer';
    }
    try { render(); } finally { setTimeout(poll, POLL_MS); }
  }
  setInterval(tick, 1000);
  void poll();
})();
`;

/**
 * The whole document: the style and the script inline, nothing fetched but `status`. `summary`:
 * the server's summary of the status, HTML already escaped (page-summary.ts), shown until the
 * script's live view (hidden until then) replaces it, and all there is without JavaScript.
 */
export const statusPageHtml = (summary: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>knh &#xb7; mesh status</title>
<link rel="icon" href="data:,">
<style>${PAGE_STYLE}</style>
</head>
<body data-connection="connecting">
<header class="top">
<div class="brand"><span class="logo">knh</span><h1>Mesh status<span id="seen-by" class="sub"></span></h1></div>
<div id="connection" class="conn" data-state="connecting" role="status" aria-live="polite">Connecting&#x2026;</div>
</header>
<main>
<div id="banners"></div>
${summary}
<div id="live" class="live" hidden>
<section id="facts" class="facts" aria-label="This node"></section>
<section id="tiles" class="tiles" aria-label="Peers by state"></section>
<section class="panel" aria-labelledby="peers-title">
<h2 id="peers-title">Peers <span id="peer-count"></span></h2>
<table class="peers">
<thead><tr><th>Node</th><th>Address</th><th>State</th><th>Latency, or why down</th><th>Since</th><th>Last probe</th><th>Notes</th></tr></thead>
<tbody id="peers"></tbody>
</table>
</section>
<section class="panel" aria-labelledby="paths-title">
<h2 id="paths-title">Paths between nodes<span id="paths-sub" class="sub"></span></h2>
<div id="paths"></div>
</section>
<section class="panel" aria-labelledby="events-title">
<h2 id="events-title">Recent events<span class="sub">newest first</span></h2>
<ol id="events" class="events"></ol>
</section>
</div>
</main>
<footer class="foot"><span id="version">knh</span> &#xb7; refreshes every 2 s &#xb7; <a href="status">status as JSON</a></footer>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
