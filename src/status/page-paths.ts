// The status page's Paths panel (page.ts): the coordinator's matrix of every node's paths (rows
// from, columns to, each cell coloured by state with its figures in a title), its summary per node
// beyond 100 nodes, the findings highlighted; a follower's own paths. Pieces of the page's style
// and of its one script: PATHS_SCRIPT runs inside the page script's closure and uses its helpers
// (el, chip, latency, when, nodeName, byId). Neither may contain a backtick or "${".

export const PATHS_STYLE = String.raw`
.p-ok{--c:var(--alive);--cb:var(--alive-bg)}.p-degraded{--c:var(--suspect);--cb:var(--suspect-bg)}
.p-mtu{--c:var(--maint);--cb:var(--maint-bg)}.p-failed{--c:var(--dead);--cb:var(--dead-bg)}
.p-unknown{--c:var(--unknown);--cb:var(--unknown-bg)}
.paths-head{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin-bottom:10px}
.paths-note{color:var(--muted);margin:0 0 10px}
.findings{list-style:none;margin:0 0 12px;padding:0}
.findings li{padding:5px 8px;border-left:4px solid var(--dead);background:var(--dead-bg);margin-bottom:4px;
border-radius:4px;overflow-wrap:anywhere}
.findings li[data-finding$=degraded]{border-color:var(--suspect);background:var(--suspect-bg)}
.findings li[data-finding$=mtu]{border-color:var(--maint);background:var(--maint-bg)}
.scroll{overflow:auto;max-width:100%}
table.mx{width:auto;border-collapse:separate;border-spacing:1px}
.mx th,.mx td{padding:0;border:0;background:none}
.mx td{background:var(--cb);color:var(--c);text-align:center;font-size:11px;min-width:44px;height:22px;
font-variant-numeric:tabular-nums}
.mx td.p-degraded,.mx td.p-mtu,.mx td.p-failed{background:var(--c);color:var(--panel);font-weight:700}
.mx td.self{background:repeating-linear-gradient(45deg,var(--line) 0 2px,transparent 2px 5px)}
.mx td[data-finding]{outline:2px solid var(--text);outline-offset:-2px}
.mx thead th{font-size:10px;line-height:1.2;font-weight:600;color:var(--muted);padding:0 0 3px;vertical-align:bottom;
writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
.mx tbody th{font-size:11px;font-weight:600;text-align:right;padding:0 6px 0 0;white-space:nowrap;
max-width:160px;overflow:hidden;text-overflow:ellipsis}
.mx th[data-finding]{color:var(--dead);text-decoration:underline wavy}
.mx td:not(.self){padding:0 4px;white-space:nowrap}
.mx[data-dense] td,.mx[data-dense] td:not(.self){min-width:9px;width:9px;height:9px;font-size:0;padding:0}
.mx[data-dense] thead th{font-size:8px;line-height:9px}.mx[data-dense] tbody th{font-size:9px;line-height:9px}
.mx .corner{writing-mode:horizontal-tb;transform:none;text-align:right;padding-right:6px}
tr[data-finding] td:first-child{box-shadow:inset 4px 0 var(--dead)}
`;

export const PATHS_SCRIPT = String.raw`
  const PATH_STATES = ['ok', 'degraded', 'mtu', 'failed'];
  const CELL = { o: 'ok', d: 'degraded', m: 'mtu', f: 'failed', '-': 'unknown' };
  const SUMMARY_ROWS = 200;
  const pct = (r) => r === null || r === undefined ? '\u2014' : (r * 100).toFixed(r > 0 && r < 0.1 ? 1 : 0) + ' %';
  const pathBadge = (state) => el('span', { class: 'badge p-' + state, 'data-badge': state, text: state });

  function figures(p50, p99, loss) {
    return 'p50 ' + latency(p50) + ' \u00b7 p99 ' + latency(p99) + ' \u00b7 loss ' + pct(loss);
  }
  function settingsLine(p) {
    const t = p.settings;
    // The others of a small mesh all, else a rotating sample of PAIR_PROBES of them.
    const who = t.rounds_to_cover === 1 ? (t.peers_per_round === 1 ? 'the other node' : 'all ' + t.peers_per_round + ' others')
      : t.peers_per_round + ' others';
    return 'each node probes ' + who + ' every ' + t.round_ms / 1000 + ' s; every pair within ' +
      t.rounds_to_cover + (t.rounds_to_cover === 1 ? ' round' : ' rounds') + '; figures over the last ' + t.window_ms / 1000 + ' s';
  }
  function countChips(p) {
    return el('div', { class: 'paths-head' }, ...PATH_STATES.map((st) =>
      el('span', { class: 'chip p-' + st, 'data-path-count': st, text: p.counts[st] + ' ' + st })),
      el('span', { class: 'chip p-unknown', text: 'not known' }));
  }

  // What each node is blamed for, and the cells of the paths the findings name.
  function flagsOf(p) {
    const nodes = new Map();
    const cells = new Map();
    const add = (map, key, kind) => map.set(key, (map.has(key) ? map.get(key) + ', ' : '') + kind);
    for (const f of p.findings) {
      if (f.from && f.to) add(cells, f.from + ' ' + f.to, f.kind);
      else for (const n of f.nodes) add(nodes, n, f.kind);
      if (f.sides) f.sides.forEach((side, i) => f.sides.forEach((other, j) => {
        if (i !== j) for (const a of side) for (const b of other) add(cells, a + ' ' + b, f.kind);
      }));
    }
    return { nodes, cells };
  }
  const toneOf = (kind) => /degraded$/.test(kind) ? 'suspect' : /mtu$/.test(kind) ? 'maint' : 'dead';
  function findingText(f, name) {
    if (f.sides) return f.sides.map((side) => side.map(name).join(', ')).join('  |  ');
    if (f.from && f.to) return name(f.from) + ' \u2192 ' + name(f.to) + (f.size ? ' (' + f.size + ' B)' : '');
    return f.nodes.map(name).join(', ') + (f.size ? ' (' + f.size + ' B)' : '');
  }
  function findingsList(p, name) {
    if (!p.findings.length) return el('p', { class: 'paths-note', 'data-findings': 'none',
      text: 'No findings: localization explains no path as failing, degraded or dropping full-size packets.' });
    const more = p.findings_total - p.findings.length;
    return el('ul', { class: 'findings', id: 'path-findings' }, ...p.findings.map((f) =>
      el('li', { 'data-finding': f.kind }, chip(toneOf(f.kind), f.kind), ' ' + findingText(f, name))),
      more > 0 ? el('li', { 'data-finding': 'more', text: '\u2026 and ' + more + ' more (all in /status)' }) : null);
  }

  // A cell's figures with their units: the p50, and the loss when there is some.
  const cellText = (p50, loss) => latency(p50) + (loss ? ' \u00b7 ' + pct(loss) : '');
  function matrixTable(p) {
    const { nodes: blamed, cells: flagged } = flagsOf(p);
    const n = p.nodes.length;
    const label = (node, i) => (i + 1) + ' ' + nodeName(node);
    const head = el('tr', {}, el('th', { class: 'corner', text: 'from \u2193 to \u2192' }), ...p.nodes.map((node, i) =>
      el('th', { scope: 'col', 'data-col-node': node.address, 'data-finding': blamed.get(node.address),
        title: node.id + ' (' + node.address + ')' + (blamed.has(node.address) ? ': ' + blamed.get(node.address) : ''),
        text: n > 16 ? String(i + 1) : label(node, i) })));
    const rows = p.matrix.map((row, i) => {
      const from = p.nodes[i];
      return el('tr', { 'data-row': from.address }, el('th', { scope: 'row', 'data-row-node': from.address,
        'data-finding': blamed.get(from.address), text: label(from, i),
        title: from.id + ' (' + from.address + ')' + (blamed.has(from.address) ? ': ' + blamed.get(from.address) : '') }),
        ...p.nodes.map((to, j) => {
          if (i === j) return el('td', { class: 'self p-unknown', title: nodeName(from) + ' (itself)' });
          const state = CELL[row.states[j]] || 'unknown';
          const finding = flagged.get(from.address + ' ' + to.address);
          const about = nodeName(from) + ' \u2192 ' + nodeName(to) + ': ';
          const title = state === 'unknown' ? about + 'not known (not probed lately, or not reported)'
            : about + state + ' \u00b7 ' + figures(row.p50_ms[j], row.p99_ms[j], row.loss_ratio[j]) +
              (finding ? ' \u00b7 finding: ' + finding : '');
          return el('td', { class: 'p-' + state, 'data-from': from.address, 'data-to': to.address,
            'data-state': state, 'data-finding': finding, title,
            text: state === 'unknown' || state === 'failed' ? '' : cellText(row.p50_ms[j], row.loss_ratio[j]) });
        }));
    });
    return el('div', { class: 'scroll' }, el('table', { class: 'mx', id: 'path-matrix', 'data-size': n,
      'data-dense': n > 16 ? '' : null }, el('thead', {}, head), el('tbody', {}, ...rows)));
  }

  function summaryTable(p) {
    const { nodes: blamed } = flagsOf(p);
    const bad = (d) => d.failed * 1e6 + d.mtu * 1e3 + d.degraded;
    const order = p.nodes.map((node, i) => ({ node, i, s: p.summary[i] }))
      .sort((a, b) => bad(b.s.out) + bad(b.s.in) - bad(a.s.out) - bad(a.s.in) || a.i - b.i);
    const num = (v) => el('td', { class: 'num', text: String(v) });
    const both = (a, b) => el('td', { class: 'num', text: a + ' / ' + b });
    const rows = order.slice(0, SUMMARY_ROWS).map(({ node, s }) =>
      el('tr', { 'data-path-node': node.address, 'data-finding': blamed.get(node.address) },
        el('td', {}, el('div', { class: 'name', text: nodeName(node) }), el('div', { class: 'sub', text: node.address })),
        num(s.out.known), num(s.out.failed), num(s.out.degraded), num(s.out.mtu),
        num(s.in.known), num(s.in.failed), num(s.in.degraded), num(s.in.mtu),
        both(pct(s.out.loss_ratio), pct(s.in.loss_ratio)), both(latency(s.out.p50_ms), latency(s.in.p50_ms)),
        both(latency(s.out.p99_ms), latency(s.in.p99_ms)),
        el('td', {}, blamed.has(node.address) ? chip(toneOf(blamed.get(node.address)), blamed.get(node.address)) : null)));
    const th = (text, title) => el('th', { text, title });
    return el('div', {}, el('p', { class: 'paths-note', 'data-summary-note': '', text: p.nodes.length + ' nodes: too many for a matrix, ' +
      'each node\'s paths are summed up instead (out: probed by it; in: probed by the others), ' +
      (p.nodes.length > SUMMARY_ROWS ? 'the ' + SUMMARY_ROWS + ' with the most failed, MTU and degraded paths first; /status has them all.' : 'the worst first.') }),
      el('div', { class: 'scroll' }, el('table', { id: 'path-summary' }, el('thead', {}, el('tr', {}, th('Node'),
        th('Out', 'Paths out known'), th('failed'), th('degraded'), th('mtu'), th('In', 'Paths in known'), th('failed'),
        th('degraded'), th('mtu'), th('Loss out / in'), th('p50 out / in'), th('p99 out / in'), th('Findings'))),
        el('tbody', {}, ...rows))));
  }

  function ownTable(p, s) {
    const peers = new Map(s.peers.map((peer) => [peer.address, peer]));
    const c = p.coordinator;
    const total = PATH_STATES.reduce((sum, st) => sum + p.counts[st], 0);
    const where = c ? 'The matrix of every node\'s paths is on the coordinator\'s page: ' + c.id + ' (' + c.address + ').'
      : 'There is no coordinator now to gather every node\'s paths.';
    const rows = p.own.map((path) => {
      const peer = peers.get(path.to);
      return el('tr', { 'data-own-path': path.to, 'data-state': path.state },
        el('td', {}, el('div', { class: 'name', text: peer ? nodeName(peer) : path.to }),
          el('div', { class: 'sub', text: path.to })),
        el('td', {}, pathBadge(path.state)), el('td', { class: 'num', text: latency(path.p50_ms) }),
        el('td', { class: 'num', text: latency(path.p99_ms) }), el('td', { class: 'num', text: pct(path.loss_ratio) }),
        el('td', { class: 'num', text: String(path.samples) + (path.mtu_size ? ' \u00b7 ' + path.mtu_size + ' B fail' : '') }),
        el('td', {}, when(path.since, false)));
    });
    return el('div', {}, el('p', { class: 'paths-note', 'data-paths-where': '', text: 'This node\'s own probes of the paths from it' +
      (total > p.own.length ? ', the ' + p.own.length + ' worst of ' + total : '') + '. ' + where }),
      el('div', { class: 'scroll' }, el('table', { id: 'own-paths' }, el('thead', {}, el('tr', {},
        ...['To', 'State', 'p50', 'p99', 'Loss', 'Samples', 'Since'].map((t) => el('th', { text: t })))),
        el('tbody', {}, ...(rows.length ? rows : [el('tr', {}, el('td', { class: 'empty', colspan: 7,
          text: 'No path probed yet.' }))])))));
  }

  // What the panel shows now: redrawn only when it changes, so that a title being read, or a
  // matrix scrolled, stays while the page polls (the paths change once a round at most).
  let shownPaths = null;
  function renderPaths(s) {
    const p = s.paths;
    const names = p.view === 'own' ? s.peers.map((peer) => peer.address + ' ' + nodeName(peer)) : [];
    const key = JSON.stringify([p, names]);
    if (key === shownPaths) return;
    shownPaths = key;
    const box = byId('paths');
    box.dataset.view = p.view;
    if (p.view === 'off') {
      byId('paths-sub').textContent = '';
      return box.replaceChildren(el('p', { class: 'empty', 'data-paths': 'off',
        text: 'Pair probing is off (PAIR_PROBES=0): the nodes do not probe each other\'s paths.' }));
    }
    byId('paths-sub').textContent = settingsLine(p);
    if (p.view === 'own') return box.replaceChildren(countChips(p), ownTable(p, s));
    const byAddress = new Map(p.nodes.map((node) => [node.address, node]));
    const name = (a) => byAddress.has(a) ? nodeName(byAddress.get(a)) : a;
    box.replaceChildren(countChips(p), findingsList(p, name),
      p.view === 'matrix' ? matrixTable(p) : summaryTable(p));
  }
`;
