// The `paths` section of GET /status: off, a follower's own paths, the coordinator's matrix of every
// node's paths up to 100 nodes and its summary per node beyond, the findings, and the settings to
// read them by; every answer valid against schemas/status.schema.json.
import { expect } from 'chai';
import type { Finding } from '../../src/paths/path-state.js';
import {
  FINDINGS_SHOWN,
  MATRIX_MAX_NODES,
  OWN_PATHS_SHOWN,
  pathsStatus,
  type PathsFacts,
} from '../../src/status/paths-status.js';
import type { PathsStatus } from '../../src/status/paths-types.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { nodeStatus } from '../support/node-status.js';
import {
  bookOf,
  coordinatorPaths,
  pathsFacts,
  pathsNodes,
  probedPath,
  reportedPath,
} from '../support/path-status.js';

const schemas = loadSchemas();

/** Builds the section, checks it within a whole status against the schema, and returns it. */
function section(facts: PathsFacts): PathsStatus {
  const paths = pathsStatus(facts);
  const check = schemas.check('status', nodeStatus({}, { paths }));
  expect(check, JSON.stringify(paths).slice(0, 2_000)).to.deep.equal({ ok: true });
  return paths;
}

function as<V extends PathsStatus['view']>(p: PathsStatus, view: V) {
  expect(p.view).to.equal(view);
  return p as Extract<PathsStatus, { view: V }>;
}

const [A, B, C, D] = pathsNodes(4).map((n) => n.address) as [string, string, string, string];

describe('the paths section of /status', () => {
  it('says pair probing is off (PAIR_PROBES=0), and nothing else', () => {
    expect(section(pathsFacts({ enabled: false }))).to.deep.equal({ view: 'off' });
  });

  describe('on a follower', () => {
    const follower = (over: Partial<PathsFacts> = {}) =>
      as(section(pathsFacts({ role: 'follower', ...over })), 'own');

    it('lists its own paths worst first, with their figures, and where the matrix is', () => {
      const own = follower({
        nodes: pathsNodes(4),
        own: [
          probedPath(B, 'ok', Date.UTC(2026, 0, 1)),
          probedPath(D, 'degraded'),
          probedPath(C, 'failed'),
        ],
      });
      expect(own.coordinator).to.deep.equal(pathsFacts().coordinator);
      expect(own.own.map((p) => [p.to, p.state])).to.deep.equal([
        [C, 'failed'],
        [D, 'degraded'],
        [B, 'ok'],
      ]);
      expect(own.own[2]).to.deep.equal({
        to: B,
        state: 'ok',
        since: '2026-01-01T00:00:00.000Z',
        samples: 10,
        loss_ratio: 0,
        p50_ms: 0.4,
        p99_ms: 1.2,
      });
      expect(own.own[0]).to.include({ loss_ratio: 1, p50_ms: null, p99_ms: null });
      expect(own.counts).to.deep.equal({ ok: 1, degraded: 1, mtu: 0, failed: 1 });
    });

    it("names an MTU path's failing size", () => {
      const [path] = follower({ own: [probedPath(B, 'mtu')] }).own;
      expect(path).to.include({ state: 'mtu', mtu_size: 1_400 });
    });

    it('lists at most 100 paths, the worst, and counts them all', () => {
      const nodes = pathsNodes(300);
      const own = follower({
        nodes,
        own: nodes.slice(1).map((n, i) => probedPath(n.address, i % 50 === 0 ? 'failed' : 'ok')),
      });
      expect(own.own).to.have.length(OWN_PATHS_SHOWN);
      expect(own.own.slice(0, 6).map((p) => p.state)).to.deep.equal(Array(6).fill('failed'));
      expect(own.counts).to.deep.equal({ ok: 293, degraded: 0, mtu: 0, failed: 6 });
    });

    it('points to no coordinator while there is none (a candidate)', () => {
      const own = follower({ role: 'candidate', coordinator: null });
      expect(own.coordinator).to.equal(null);
      expect(own.own).to.deep.equal([]);
    });
  });

  it('gives the settings to read the figures by, with the rounds that cover every pair', () => {
    const settings = (count: number, probes: number) =>
      section(
        pathsFacts({
          role: 'follower',
          nodes: pathsNodes(count),
          settings: { ...pathsFacts().settings, probes_per_round: probes },
        }),
      );
    expect(as(settings(101, 20), 'own').settings).to.deep.equal({
      probes_per_round: 20,
      peers_per_round: 20,
      round_ms: 1_000,
      rounds_to_cover: 5,
      window_ms: 10_000,
      degraded_loss_ratio: 0.1,
      degraded_latency_ms: 400,
      mtu_probe_size: 1_400,
    });
    expect(as(settings(4, 20), 'own').settings.rounds_to_cover).to.equal(1);
    expect(as(settings(1, 20), 'own').settings.rounds_to_cover).to.equal(0);
  });

  it('says how many peers each node probes a round: PAIR_PROBES, or the others of a smaller mesh', () => {
    const perRound = (count: number, probes: number) =>
      as(
        section(
          pathsFacts({
            nodes: pathsNodes(count),
            settings: { ...pathsFacts().settings, probes_per_round: probes },
          }),
        ),
        count > 100 ? 'summary' : 'matrix',
      ).settings.peers_per_round;
    expect(perRound(5, 20)).to.equal(4);
    expect(perRound(21, 20)).to.equal(20);
    expect(perRound(150, 20)).to.equal(20);
    expect(perRound(1, 20)).to.equal(0);
  });

  describe('on the coordinator of at most 100 nodes: the matrix', () => {
    it('has a row a node and a column a node, in rank order whatever the order given', () => {
      const nodes = pathsNodes(4);
      const m = as(
        section(pathsFacts({ nodes: [nodes[2]!, nodes[0]!, nodes[3]!, nodes[1]!] })),
        'matrix',
      );
      expect(m.nodes).to.deep.equal(nodes);
      expect(m.matrix.map((r) => r.states)).to.deep.equal(['----', '----', '----', '----']);
    });

    it("gives each known path's state, p50, p99 and loss in its cell; '-' and nulls elsewhere", () => {
      const book = bookOf([A, B, C, D], (from, to) =>
        from === A && to === B
          ? 'failed'
          : from === C && to === A
            ? 'degraded'
            : from === D
              ? null
              : to === D
                ? 'mtu'
                : 'ok',
      );
      const m = as(section(pathsFacts({ nodes: pathsNodes(4), book: book.entries() })), 'matrix');
      expect(m.matrix.map((r) => r.states)).to.deep.equal(['-fom', 'o-om', 'do-m', '----']);
      expect(m.matrix[0]).to.deep.equal({
        states: '-fom',
        p50_ms: [null, null, 0.4, 0.4],
        p99_ms: [null, null, 1.2, 1.2],
        loss_ratio: [null, 1, 0, 0],
      });
      expect(m.matrix[2]).to.deep.include({
        p50_ms: [120, 0.4, null, 0.4],
        p99_ms: [650, 1.2, null, 1.2],
      });
      expect(m.counts).to.deep.equal({ ok: 4, degraded: 1, mtu: 3, failed: 1 });
    });

    it('leaves out paths from or to nodes not taking part, to themselves, or reported unknown', () => {
      const gone = '10.9.9.9:8080';
      const book = [
        ...bookOf([A, B, gone], (_from, to) => (to === B ? null : 'ok')).entries(),
        { from: A, path: reportedPath(B, 'unknown') },
        { from: A, path: reportedPath(A, 'ok') },
      ];
      const m = as(section(pathsFacts({ nodes: pathsNodes(2), book })), 'matrix');
      expect(m.matrix.map((r) => r.states)).to.deep.equal(['--', 'o-']);
      expect(m.counts.ok).to.equal(1);
    });

    it('rounds latencies to two significant digits and loss to a thousandth', () => {
      const paths = [
        {
          from: A,
          path: reportedPath(B, 'ok', { p50_ms: 0.123456, p99_ms: 1234.5, loss_ratio: 1 / 3 }),
        },
      ];
      const m = as(section(pathsFacts({ nodes: pathsNodes(2), book: paths })), 'matrix');
      expect(m.matrix[0]).to.deep.include({
        p50_ms: [null, 0.12],
        p99_ms: [null, 1200],
        loss_ratio: [null, 0.333],
      });
    });

    it('stays compact at 100 nodes: about 1.5 KB a row with all of its 99 paths known', () => {
      const all = pathsNodes(MATRIX_MAX_NODES).map((n) => n.address);
      let i = 0;
      const paths = [...bookOf(all, () => 'ok').entries()].map(({ from, path }) => ({
        from,
        path: { ...path, p50_ms: 0.3 + (i % 7) / 100, p99_ms: 1 + (i++ % 9) / 10, loss_ratio: 0.1 },
      }));
      const m = section(pathsFacts({ nodes: pathsNodes(MATRIX_MAX_NODES), book: paths }));
      expect(as(m, 'matrix').counts.ok).to.equal(9_900);
      expect(JSON.stringify(m).length).to.be.below(MATRIX_MAX_NODES * 1_600);
    });
  });

  describe('on the coordinator of more than 100 nodes: the summary', () => {
    const COUNT = MATRIX_MAX_NODES + 1;

    it("sums up each node's paths out and in, its figures merged", () => {
      const all = pathsNodes(COUNT).map((n) => n.address);
      const s = as(
        section(
          pathsFacts({
            nodes: pathsNodes(COUNT),
            // The first node's paths out fail; into the second are degraded; the last reports none.
            book: bookOf(all, (from, to) =>
              from === all.at(-1) ? null : from === A ? 'failed' : to === B ? 'degraded' : 'ok',
            ).entries(),
          }),
        ),
        'summary',
      );
      expect(s.summary).to.have.length(COUNT);
      expect(s.summary[0]!.out).to.deep.equal({
        known: 100,
        failed: 100,
        degraded: 0,
        mtu: 0,
        loss_ratio: 1,
        p50_ms: null,
        p99_ms: null,
      });
      // Into B: A's failed path, 98 degraded ones (not from A, B or the silent node).
      expect(s.summary[1]!.in).to.deep.equal({
        known: 99,
        failed: 1,
        degraded: 98,
        mtu: 0,
        loss_ratio: 0.307,
        p50_ms: 120,
        p99_ms: 650,
      });
      expect(s.summary[COUNT - 1]!.out).to.include({ known: 0, loss_ratio: null, p50_ms: null });
      expect(s.summary[COUNT - 1]!.in).to.include({ known: 100, failed: 1 });
      // 100 nodes report 100 paths each.
      expect(s.counts).to.deep.equal({ ok: 10_000 - 100 - 98, degraded: 98, mtu: 0, failed: 100 });
      expect(s).to.not.have.property('matrix');
    });

    it('is the view from 101 nodes on; 100 still get the matrix', () => {
      expect(section(pathsFacts({ nodes: pathsNodes(MATRIX_MAX_NODES) })).view).to.equal('matrix');
      expect(section(pathsFacts({ nodes: pathsNodes(COUNT) })).view).to.equal('summary');
    });
  });

  describe('findings', () => {
    const findingsOf = (findings: Finding[]) =>
      as(section(pathsFacts({ nodes: pathsNodes(4), findings })), 'matrix');

    it('names the nodes each finding blames, its path, its sides and its size', () => {
      const m = findingsOf([
        {
          kind: 'partition',
          sides: [
            [A, B],
            [C, D],
          ],
        },
        { kind: 'unreachable', node: D },
        { kind: 'egress-broken', node: C, reaches: [], reachedBy: [A, B] },
        { kind: 'path-broken', from: A, to: B, witnesses: [C] },
        { kind: 'node-mtu', node: B, size: 1_400 },
        { kind: 'path-mtu', from: C, to: A, size: 1_400 },
        { kind: 'node-degraded', node: A },
        { kind: 'path-degraded', from: B, to: C },
      ]);
      expect(m.findings).to.deep.equal([
        {
          kind: 'partition',
          nodes: [],
          sides: [
            [A, B],
            [C, D],
          ],
        },
        { kind: 'unreachable', nodes: [D] },
        { kind: 'egress-broken', nodes: [C] },
        { kind: 'path-broken', nodes: [A, B], from: A, to: B },
        { kind: 'node-mtu', nodes: [B], size: 1_400 },
        { kind: 'path-mtu', nodes: [C, A], from: C, to: A, size: 1_400 },
        { kind: 'node-degraded', nodes: [A] },
        { kind: 'path-degraded', nodes: [B, C], from: B, to: C },
      ]);
      expect(m.findings_total).to.equal(8);
    });

    it('lists at most 100, in the order localization gives them, and counts them all', () => {
      const many: Finding[] = pathsNodes(150).map((n) => ({
        kind: 'path-degraded',
        from: A,
        to: n.address,
      }));
      const m = findingsOf([{ kind: 'unreachable', node: D }, ...many]);
      expect(m.findings).to.have.length(FINDINGS_SHOWN);
      expect(m.findings[0]!.kind).to.equal('unreachable');
      expect(m.findings_total).to.equal(151);
    });

    it('come from the real localizer: a node nobody reaches is unreachable', () => {
      const m = coordinatorPaths(5, (_from, to) => (to === A ? 'failed' : 'ok'));
      expect(as(m, 'matrix').findings).to.deep.equal([{ kind: 'unreachable', nodes: [A] }]);
    });
  });

  it('the schema holds the section to its shape', () => {
    const m = coordinatorPaths(3, () => 'ok') as Extract<PathsStatus, { view: 'matrix' }>;
    const row = m.matrix[0]!;
    const bad: Record<string, unknown> = {
      'an unknown view': { view: 'gossip' },
      'off with more': { view: 'off', counts: m.counts },
      'a matrix without its rows': { ...m, matrix: undefined },
      'a matrix with a summary': { ...m, summary: [] },
      'an unknown cell state': { ...m, matrix: [{ ...row, states: '-ox' }] },
      'a row of 101 columns': { ...m, matrix: [{ ...row, states: '-'.repeat(101) }] },
      'a loss ratio over 1': { ...m, matrix: [{ ...row, loss_ratio: [null, 2, 0] }] },
      'an unknown finding kind': { ...m, findings: [{ kind: 'gremlins', nodes: [] }] },
      'own paths on the coordinator': { ...m, own: [] },
    };
    for (const [what, paths] of Object.entries(bad)) {
      const status: unknown = JSON.parse(
        JSON.stringify(nodeStatus({}, { paths: paths as PathsStatus })),
      );
      expect(schemas.check('status', status).ok, what).to.equal(false);
    }
    expect(schemas.check('status', nodeStatus({}, { paths: m })).ok).to.equal(true);
  });
});
