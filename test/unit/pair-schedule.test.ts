// Pair probing's schedule: every node probes every other within a known number of rounds, and no
// node is probed by more than its share of the others in any round, whatever the mesh's size.
import { expect } from 'chai';
import fc from 'fast-check';
import { pairTargets, roundsToCover } from '../../src/paths/pair-schedule.js';

const nodes = (n: number) =>
  Array.from({ length: n }, (_, i) => `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}:8080`);

describe('pair schedule', () => {
  it('covers every ordered pair of a 100-node mesh within 5 rounds at 20 probes a round', () => {
    const all = nodes(100);
    const rounds = roundsToCover(all.length, 20);
    expect(rounds).to.equal(5);
    for (const self of all) {
      const seen = new Set<string>();
      for (let r = 0; r < rounds; r++) for (const t of pairTargets(self, all, r, 20)) seen.add(t);
      expect(seen.size, self).to.equal(all.length - 1);
      expect(seen.has(self)).to.equal(false);
    }
  });

  it('keeps each node probed by exactly its share in every round, at any size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 400 }),
        fc.integer({ min: 1, max: 40 }),
        fc.nat(1_000),
        (n, k, r) => {
          const all = nodes(n);
          const inbound = new Map<string, number>();
          for (const self of all) {
            const targets = pairTargets(self, all, r, k);
            expect(new Set(targets).size).to.equal(targets.length);
            expect(targets.length).to.equal(Math.min(k, n - 1));
            for (const t of targets) inbound.set(t, (inbound.get(t) ?? 0) + 1);
          }
          for (const count of inbound.values()) expect(count).to.equal(Math.min(k, n - 1));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('walks the ring from its own place: the nodes after it, then those before it', () => {
    // Which node probes whom must not change between versions (a mixed mesh's reports name their
    // sample by it): the ring written out, as the first version built it, is the reference.
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: -5, max: 500 }),
        (n, selfAt, k, r) => {
          const all = nodes(n);
          const self = selfAt < n ? all[selfAt]! : 'not-listed:1';
          const at = all.indexOf(self);
          const ring = at < 0 ? all : [...all.slice(at + 1), ...all.slice(0, at)];
          const count = Math.min(k, ring.length);
          const start =
            ring.length === 0 ? 0 : (((r * count) % ring.length) + ring.length) % ring.length;
          const expected = Array.from({ length: count }, (_, i) => ring[(start + i) % ring.length]);
          expect(pairTargets(self, all, r, k)).to.deep.equal(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('probes every other node once per cover, then starts over', () => {
    const all = nodes(7);
    const cover = roundsToCover(7, 2);
    expect(cover).to.equal(3);
    const first = [0, 1, 2].flatMap((r) => pairTargets(all[3]!, all, r, 2));
    expect(new Set(first).size).to.equal(6);
  });

  it('probes nobody alone, and works for a node not in the list (it is leaving)', () => {
    expect(pairTargets('a', ['a'], 0, 20)).to.deep.equal([]);
    expect(pairTargets('z', ['a', 'b'], 0, 20)).to.have.members(['a', 'b']);
    expect(roundsToCover(1, 20)).to.equal(0);
  });
});
