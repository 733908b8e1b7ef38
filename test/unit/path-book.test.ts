// The coordinator's book of every node's paths: a full report replaces, a change report changes,
// a missed report makes it ask for everything, silent and unlisted nodes are forgotten, and what
// localization reads is what was reported.
import { expect } from 'chai';
import fc from 'fast-check';
import { PathBook } from '../../src/paths/path-book.js';
import { indexPaths, type PathIndex } from '../../src/paths/path-index.js';
import { localize, localizeIndex } from '../../src/paths/localize.js';
import type { PathReport, ReportedPath } from '../../src/wire/peer-messages.js';

const A = '10.0.0.1:8080';
const B = '10.0.0.2:8080';
const C = '10.0.0.3:8080';
const D = '10.0.0.4:8080';

const p = (to: string, state: ReportedPath['state'], since = 1_000): ReportedPath => ({
  to,
  state,
  since,
  samples: 10,
  loss_ratio: state === 'degraded' ? 0.3 : 0,
  p50_ms: 2,
  p99_ms: state === 'degraded' ? 500 : 5,
  ...(state === 'mtu' ? { mtu_size: 1_400 } : {}),
});

const report = (from: string, seq: number, full: boolean, paths: ReportedPath[]): PathReport => ({
  from: { id: `n@${from}`, address: from },
  epoch: 1,
  seq,
  full,
  paths,
});

const known = (book: PathBook, nodes = [A, B, C]) =>
  [...book.input(nodes).paths].map((x) => `${x.from}>${x.to} ${x.state}`);

describe('PathBook', () => {
  it('takes a full report, then changes to it, and forgets paths reported unknown', () => {
    const book = new PathBook();
    expect(book.take(report(A, 0, true, [p(B, 'ok'), p(C, 'ok')]), 0)).to.deep.equal({
      accepted: true,
      resync: false,
    });
    book.take(report(A, 1, false, [p(C, 'failed'), p(B, 'unknown')]), 10);
    expect(known(book)).to.deep.equal([`${A}>${C} failed`]);
  });

  it('asks for everything when it holds nothing from the node, or missed a report', () => {
    const book = new PathBook();
    expect(book.take(report(A, 4, false, [p(B, 'ok')]), 0).resync).to.equal(true);
    book.take(report(A, 0, true, [p(B, 'ok')]), 0);
    expect(book.take(report(A, 2, false, [p(B, 'failed')]), 1).resync, 'seq 1 missed').to.equal(
      true,
    );
    expect(known(book), 'nothing held from it until the full report').to.deep.equal([]);
  });

  it('forgets a node silent longer than the stale time, or no longer listed', () => {
    const book = new PathBook();
    book.take(report(A, 0, true, [p(B, 'ok')]), 0);
    book.take(report(B, 0, true, [p(A, 'ok')]), 10_000);
    book.prune(new Set([A, B, C]), 15_001, 15_000);
    expect(known(book)).to.deep.equal([`${B}>${A} ok`]);
    book.prune(new Set([A, C]), 15_002, 15_000);
    expect(known(book)).to.deep.equal([]);
  });

  it('gives MTU paths their size, and the figures and start of a finding', () => {
    const book = new PathBook();
    book.take(report(A, 0, true, [p(B, 'mtu', 500), p(C, 'degraded', 700)]), 0);
    book.take(report(C, 0, true, [p(B, 'degraded', 300)]), 0);
    const mtu = [...book.input([A, B, C]).paths].find((x) => x.state === 'mtu');
    expect(mtu).to.deep.equal({ from: A, to: B, state: 'mtu', size: 1_400 });
    expect(book.startOf({ kind: 'path-mtu', from: A, to: B, size: 1_400 })).to.equal(500);
    expect(book.startOf({ kind: 'node-degraded', node: C })).to.equal(300);
    const figures = book.figuresOf({ kind: 'node-degraded', node: C });
    expect(figures?.samples).to.equal(20);
    expect(figures?.lossRatio).to.equal(0.3);
    expect(book.startOf({ kind: 'partition', sides: [[A], [B, C]] }), 'no failed path').to.equal(
      null,
    );
  });

  it('indexes again rightly after its paths or the nodes changed (its arrays are reused)', () => {
    const book = new PathBook();
    const key = (i: PathIndex) =>
      Array.from(
        i.from,
        (_, k) => `${i.names[i.from[k]!]}>${i.names[i.to[k]!]} ${i.state[k]}`,
      ).sort();
    const same = (nodes: string[]) =>
      expect(key(book.index(nodes))).to.deep.equal(key(indexPaths(nodes, book.input(nodes).paths)));
    const four = [A, B, C, D];
    book.take(report(A, 0, true, [p(B, 'ok'), p(C, 'failed'), p(D, 'ok')]), 0);
    book.take(report(B, 0, true, [p(A, 'ok'), p(C, 'degraded')]), 0);
    same(four);
    // More paths than the arrays hold, then fewer, under the same array of nodes.
    book.take(report(C, 0, true, [p(A, 'ok'), p(B, 'ok'), p(D, 'mtu')]), 0);
    book.take(report(D, 0, true, [p(A, 'failed'), p(B, 'ok'), p(C, 'ok')]), 0);
    same(four);
    book.take(report(A, 1, false, [p(B, 'unknown'), p(C, 'ok')]), 0);
    book.take(report(D, 0, true, []), 0);
    same(four);
    // Another array of nodes: another list of names.
    same([A, B, C]);
    same([D, C, B, A]);
  });

  it('indexes its paths as localization would index them, whatever was taken, changed and forgotten', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            from: fc.constantFrom(A, B, C, D),
            to: fc.constantFrom(A, B, C, D),
            state: fc.constantFrom<ReportedPath['state']>(
              'ok',
              'failed',
              'degraded',
              'mtu',
              'unknown',
            ),
            full: fc.boolean(),
          }),
          { maxLength: 40 },
        ),
        (steps) => {
          const book = new PathBook();
          const seq = new Map<string, number>();
          for (const step of steps) {
            const next = step.full ? 0 : (seq.get(step.from) ?? -1) + 1;
            const reply = book.take(
              report(step.from, next, step.full, [p(step.to, step.state)]),
              0,
            );
            seq.set(step.from, reply.resync ? -2 : next);
          }
          const nodes = [A, B, C];
          const key = (i: PathIndex, k: number) =>
            `${i.names[i.from[k]!]}>${i.names[i.to[k]!]} ${i.state[k]} ${i.size[k]}`;
          const all = (i: PathIndex) => Array.from(i.from, (_, k) => key(i, k)).sort();
          const direct = book.index(nodes);
          const viaInput = indexPaths(nodes, book.input(nodes).paths);
          expect(all(direct)).to.deep.equal(all(viaInput));
          expect(localizeIndex(direct)).to.deep.equal(localize(book.input(nodes)));
        },
      ),
    );
  });

  it("holds what a map of each node's paths by target would, whatever reports it took", () => {
    // Enough nodes that the slots outgrow their first arrays (64).
    const nodes = Array.from({ length: 12 }, (_, i) => `10.0.1.${i + 1}:8080`);
    const path = fc.record({
      to: fc.constantFrom(...nodes),
      state: fc.constantFrom<ReportedPath['state']>('ok', 'failed', 'degraded', 'mtu', 'unknown'),
      since: fc.integer({ min: 0, max: 9 }),
    });
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            from: fc.constantFrom(...nodes),
            full: fc.boolean(),
            // Now and then a report is missed: the book forgets the node and asks for all.
            missed: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
            // A path may come twice in one report: the last one counts.
            paths: fc.array(path, { maxLength: 14 }),
          }),
          { maxLength: 60 },
        ),
        (steps) => {
          const book = new PathBook();
          const model = new Map<string, { seq: number; paths: Map<string, ReportedPath> }>();
          for (const step of steps) {
            const held = model.get(step.from);
            const seq = step.full ? 0 : (held?.seq ?? -1) + (step.missed ? 2 : 1);
            const told = step.paths.map((x) => p(x.to, x.state, x.since));
            const reply = book.take(report(step.from, seq, step.full, told), 0);
            if (!step.full && (!held || step.missed)) {
              expect(reply.resync).to.equal(true);
              model.delete(step.from);
              continue;
            }
            const paths = step.full ? new Map<string, ReportedPath>() : held!.paths;
            for (const x of told) {
              if (x.state === 'unknown' || x.to === step.from) paths.delete(x.to);
              else paths.set(x.to, x);
            }
            model.set(step.from, { seq, paths });
          }
          const expected = [...model].flatMap(([from, { paths }]) =>
            [...paths.values()].map((x) => `${from}>${JSON.stringify(x)}`),
          );
          const actual = [...book.entries()].map((e) => `${e.from}>${JSON.stringify(e.path)}`);
          expect(actual.sort()).to.deep.equal(expected.sort());
          expect(book.size.paths).to.equal(expected.length);
          for (const from of nodes) {
            for (const to of nodes) {
              expect(book.path(from, to)).to.deep.equal(model.get(from)?.paths.get(to));
            }
          }
          const key = (i: PathIndex, k: number) =>
            `${i.names[i.from[k]!]}>${i.names[i.to[k]!]} ${i.state[k]} ${i.size[k]}`;
          const all = (i: PathIndex) => Array.from(i.from, (_, k) => key(i, k)).sort();
          expect(all(book.index(nodes))).to.deep.equal(
            all(indexPaths(nodes, book.input(nodes).paths)),
          );
        },
      ),
    );
  });
});
