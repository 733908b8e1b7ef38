// Localizing path failures (src/paths/localize.ts): what an operator is told about each fault, and
// that nothing is blamed without evidence or blamed twice.
import { expect } from 'chai';
import fc from 'fast-check';
import { localize, type Finding, type PathState } from '../../src/paths/localize.js';
import { prng, shuffled } from '../support/bully-cluster.js';
import { addresses, PathMesh } from '../support/path-mesh.js';

// Five hosts, C the coordinator; the others its followers.
const HOSTS = addresses(5);
const [C, A, B, D, E] = HOSTS as [string, string, string, string, string];
const others = (...nodes: string[]) => HOSTS.filter((n) => !nodes.includes(n));

describe('localize: path failures', () => {
  it('two followers cut from each other: a path-broken each way naming both, nothing else', () => {
    const findings = localize(new PathMesh(HOSTS).cut(A, B).input());
    expect(findings).to.deep.equal([
      { kind: 'path-broken', from: A, to: B, witnesses: others(A, B) },
      { kind: 'path-broken', from: B, to: A, witnesses: others(A, B) },
    ]);
  });

  it('a node whose egress is cut: egress-broken, not a path-broken per peer', () => {
    const findings = localize(new PathMesh(HOSTS).each(D, 'out', 'failed').input());
    expect(findings).to.deep.equal([
      { kind: 'egress-broken', node: D, reaches: [], reachedBy: others(D) },
    ]);
  });

  it('a node that still reaches one peer of four: egress-broken, naming that peer', () => {
    const mesh = new PathMesh(HOSTS).each(D, 'out', 'failed').set(D, C, 'ok');
    expect(localize(mesh.input())).to.deep.equal([
      { kind: 'egress-broken', node: D, reaches: [C], reachedBy: others(D) },
    ]);
  });

  it('a 3 | 2 partition: one partition naming both sides, nothing else', () => {
    for (const small of [
      [D, E],
      [C, A],
    ]) {
      const large = others(...small);
      const findings = localize(new PathMesh(HOSTS).split(large, small).input());
      expect(findings).to.deep.equal([{ kind: 'partition', sides: sorted([large, small]) }]);
    }
  });

  it('two pairs cut from each other while the coordinator reaches all four: a partition, the coordinator in neither side', () => {
    const findings = localize(new PathMesh(HOSTS).split([A, B], [D, E]).input());
    expect(findings).to.deep.equal([
      {
        kind: 'partition',
        sides: sorted([
          [A, B],
          [D, E],
        ]),
      },
    ]);
  });

  it('a bridged split whose sides do not work inside, or of which one path across works: no partition', () => {
    const broken = new PathMesh(HOSTS).split([A, B], [D, E]).cut(A, B);
    expect(localize(broken.input()).map((f) => f.kind)).to.not.include('partition');
    const leaky = new PathMesh(HOSTS).split([A, B], [D, E]).set(A, D, 'ok');
    expect(localize(leaky.input()).map((f) => f.kind)).to.not.include('partition');
  });

  it('a split into three groups a node bridges (odd cycles): no partition claimed', () => {
    const nodes = addresses(7);
    const [k, ...rest] = nodes as [string, ...string[]];
    const groups = [rest.slice(0, 2), rest.slice(2, 4), rest.slice(4, 6)];
    const mesh = new PathMesh(nodes).split(groups[0]!, groups[1]!).split(groups[1]!, groups[2]!);
    mesh.split(groups[0]!, groups[2]!);
    const findings = localize(mesh.input());
    expect(findings.map((f) => f.kind)).to.not.include('partition');
    expect(findings.flatMap((f) => ('node' in f ? [f.node] : []))).to.not.include(k);
  });

  it('a crashed node: unreachable only, the failing paths to it blamed on nothing else', () => {
    expect(localize(new PathMesh(HOSTS).crash(E).input())).to.deep.equal([
      { kind: 'unreachable', node: E },
    ]);
  });

  it('a crashed node of a 3-node mesh: unreachable, though only two paths into it are known', () => {
    // Its two peers' paths into it are all there is to know, exactly MIN_KNOWN: the smallest mesh
    // that can judge a node must still name the one that crashed.
    const three = addresses(3);
    const crashed = three[2]!;
    expect(localize(new PathMesh(three).crash(crashed).input())).to.deep.equal([
      { kind: 'unreachable', node: crashed },
    ]);
  });

  it('a node with a quarter of its paths failing at random: the paths are named, not the node', () => {
    const nodes = addresses(13);
    const x = nodes[6]!;
    const peers = nodes.filter((n) => n !== x);
    const random = prng(7);
    const mesh = new PathMesh(nodes);
    const failingOut = shuffled(peers, random).slice(0, 3);
    const failingIn = shuffled(peers, random).slice(0, 3);
    failingOut.forEach((p) => mesh.set(x, p, 'failed'));
    failingIn.forEach((p) => mesh.set(p, x, 'failed'));

    const findings = localize(mesh.input());
    expect(findings.every((f) => f.kind === 'path-broken')).to.be.true;
    expect(
      findings.map((f) => f.kind === 'path-broken' && `${f.from} ${f.to}`).sort(),
    ).to.deep.equal(
      [...failingOut.map((p) => `${x} ${p}`), ...failingIn.map((p) => `${p} ${x}`)].sort(),
    );
  });

  it('full-size packets dropped on every path of one node: node-mtu once, naming the size', () => {
    const mesh = new PathMesh(HOSTS).each(B, 'both', { mtu: 1500 }).set(B, D, { mtu: 1400 });
    mesh.set(C, E, { mtu: 9000 });
    expect(localize(mesh.input())).to.deep.equal([
      { kind: 'node-mtu', node: B, size: 1400 },
      { kind: 'path-mtu', from: C, to: E, size: 9000 },
    ]);
  });

  it('every path of one node degraded: node-degraded once; a single degraded path by itself', () => {
    const mesh = new PathMesh(HOSTS).each(A, 'both', 'degraded').set(D, E, 'degraded');
    expect(localize(mesh.input())).to.deep.equal([
      { kind: 'node-degraded', node: A },
      { kind: 'path-degraded', from: D, to: E },
    ]);
  });

  it('a failing path between ends too little known to judge: nothing blamed', () => {
    // Each node knows one path of its own at most: nothing is known enough to blame.
    const sparse = new PathMesh(HOSTS, { dense: false }).set(A, B, 'failed').set(C, D, 'failed');
    expect(localize(sparse.set(E, A, 'failed').input())).to.deep.equal([]);
    // Unknown paths count for nothing: a dense mesh gone stale but for two failures.
    const stale = new PathMesh(HOSTS);
    for (const n of HOSTS) stale.each(n, 'out', 'unknown');
    expect(localize(stale.set(A, B, 'failed').set(B, A, 'failed').input())).to.deep.equal([]);
  });

  it('two groups never tested against each other: no partition claimed', () => {
    const sparse = new PathMesh(HOSTS, { dense: false });
    for (const [a, b] of [
      [C, A],
      [A, B],
      [D, E],
    ] as const) {
      sparse.set(a, b, 'ok').set(b, a, 'ok');
    }
    expect(localize(sparse.set(C, D, 'failed').input())).to.deep.equal([]);
  });

  it('a path given twice is a caller error', () => {
    const twice: PathState[] = [
      { from: A, to: B, state: 'ok' },
      { from: A, to: B, state: 'failed' },
    ];
    expect(() => localize({ nodes: HOSTS, paths: twice })).to.throw(/given twice/);
  });
});

describe('localize: properties', () => {
  const STATES = ['ok', 'failed', 'degraded', 'mtu', 'unknown'] as const;
  /** A mesh of 2 to 9 nodes, each ordered path in a random state, and nodes in a random order. */
  const meshes = fc
    .integer({ min: 2, max: 9 })
    .chain((n) =>
      fc.record({
        nodes: fc.shuffledSubarray(addresses(n), { minLength: n }),
        states: fc.array(fc.constantFrom(...STATES), { minLength: n * n, maxLength: n * n }),
      }),
    )
    .map(({ nodes, states }) => {
      const paths: PathState[] = [];
      nodes.forEach((from, i) =>
        nodes.forEach((to, j) => {
          const state = states[i * nodes.length + j]!;
          if (i === j) return;
          paths.push(state === 'mtu' ? { from, to, state, size: 1400 } : { from, to, state });
        }),
      );
      return { nodes, paths };
    });

  it('names only nodes it was given, a stranger in the paths included', () => {
    fc.assert(
      fc.property(meshes, ({ nodes, paths }) => {
        const stranger = '192.0.2.1:8080';
        const withStranger = [
          ...paths,
          { from: stranger, to: nodes[0]!, state: 'failed' as const },
        ];
        const named = localize({ nodes, paths: withStranger }).flatMap(nodesOf);
        expect(named.filter((n) => !nodes.includes(n))).to.deep.equal([]);
      }),
    );
  });

  it('a mesh whose known paths all work is told nothing', () => {
    fc.assert(
      fc.property(meshes, ({ nodes, paths }) => {
        const working = paths.map((p): PathState => ({
          from: p.from,
          to: p.to,
          state: p.state === 'unknown' ? 'unknown' : 'ok',
        }));
        expect(localize({ nodes, paths: working })).to.deep.equal([]);
      }),
    );
  });

  it('the findings do not depend on the order of nodes or paths', () => {
    fc.assert(
      fc.property(meshes, fc.integer(), ({ nodes, paths }, seed) => {
        const random = prng(seed);
        const again = { nodes: shuffled(nodes, random), paths: shuffled(paths, random) };
        expect(localize(again)).to.deep.equal(localize({ nodes, paths }));
      }),
    );
  });

  it('a node failing less than half its paths each way: only those paths are named', () => {
    const cases = fc.integer({ min: 4, max: 12 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        out: fc.subarray(addresses(n).slice(1), { maxLength: Math.ceil((n - 1) / 2) - 1 }),
        into: fc.subarray(addresses(n).slice(1), { maxLength: Math.ceil((n - 1) / 2) - 1 }),
      }),
    );
    fc.assert(
      fc.property(cases, ({ n, out, into }) => {
        const nodes = addresses(n);
        const x = nodes[0]!;
        const mesh = new PathMesh(nodes);
        out.forEach((p) => mesh.set(x, p, 'failed'));
        into.forEach((p) => mesh.set(p, x, 'failed'));
        const named = localize(mesh.input()).map((f) =>
          f.kind === 'path-broken' ? `${f.from} ${f.to}` : f.kind,
        );
        const failing = [...out.map((p) => `${x} ${p}`), ...into.map((p) => `${p} ${x}`)];
        expect(named.sort()).to.deep.equal(failing.sort());
      }),
    );
  });

  it('a path-broken is never a path another finding already explains', () => {
    fc.assert(
      fc.property(meshes, ({ nodes, paths }) => {
        const findings = localize({ nodes, paths });
        const unreachable = new Set(
          findings.flatMap((f) => (f.kind === 'unreachable' ? [f.node] : [])),
        );
        const egress = new Set(
          findings.flatMap((f) => (f.kind === 'egress-broken' ? [f.node] : [])),
        );
        const sides = findings.flatMap((f) => (f.kind === 'partition' ? f.sides : []));
        const side = (n: string) => sides.findIndex((s) => s.includes(n));
        for (const f of findings) {
          if (f.kind !== 'path-broken') continue;
          expect(unreachable.has(f.from) || unreachable.has(f.to), 'an unreachable end').to.be
            .false;
          expect(egress.has(f.from), 'a source with its egress broken').to.be.false;
          expect(
            side(f.from) >= 0 && side(f.to) >= 0 && side(f.from) !== side(f.to),
            'across sides',
          ).to.be.false;
        }
      }),
    );
  });
});

/** Every node a finding names. */
function nodesOf(f: Finding): string[] {
  switch (f.kind) {
    case 'partition':
      return f.sides.flat();
    case 'egress-broken':
      return [f.node, ...f.reaches, ...f.reachedBy];
    case 'path-broken':
      return [f.from, f.to, ...f.witnesses];
    case 'path-mtu':
    case 'path-degraded':
      return [f.from, f.to];
    default:
      return [f.node];
  }
}

function sorted(sides: string[][]): string[][] {
  return sides.map((s) => [...s].sort()).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
