// Choosing the relays of an indirect probe: only peers this node reaches, at random, and cheaply
// among thousands.
import { expect } from 'chai';
import { pickRelays } from '../../src/prober/indirect.js';
import { answered, attemptFailed, newRecord, type PeerRecord } from '../../src/prober/verdict.js';

const addr = (n: number) => `10.${Math.floor(n / 250)}.0.${n % 250}:8080`;

function seeded(seed: number): () => number {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

/** `n` peers; `alive(i)` says which answer (the others never did). */
function mesh(n: number, alive: (i: number) => boolean) {
  const peers = Array.from({ length: n }, (_, i) => addr(i));
  const records = new Map<string, PeerRecord>();
  for (const [i, address] of peers.entries()) {
    const fresh = newRecord(address, 0);
    records.set(
      address,
      alive(i)
        ? answered(fresh, { latencyMs: 1, id: `n${i}@x`, nodeName: `n${i}` }, 1).record
        : fresh,
    );
  }
  let lookups = 0;
  const record = (address: string) => (lookups++, records.get(address));
  return { peers, records, record, lookups: () => lookups };
}

describe('pickRelays', () => {
  it('picks distinct live peers other than the target, never one it cannot reach', () => {
    const { peers, records, record } = mesh(300, (i) => i % 3 !== 0);
    // Some live peers are suspect now, or behind a broken path: not relays either.
    for (const i of [1, 2, 4]) {
      const r = records.get(addr(i))!;
      records.set(r.address, attemptFailed(r, { latencyMs: 1, detail: 'x' }, 2, 2).record);
    }
    const r5 = records.get(addr(5))!;
    records.set(r5.address, { ...r5, brokenPath: { sinceMs: 1, witnesses: [], alerted: true } });
    const random = seeded(1);
    for (let k = 0; k < 500; k++) {
      const target = addr(k % 300);
      const relays = pickRelays(peers, record, target, 3, random);
      expect(relays).to.have.length(3);
      expect(new Set(relays.map((r) => r.address)).size).to.equal(3);
      for (const r of relays) {
        expect(r.address).to.not.equal(target);
        expect(r.health).to.equal('alive');
        expect(r.brokenPath).to.equal(null);
      }
    }
  });

  it('looks at a few records, not all, when most peers qualify (5,000 peers)', () => {
    const { peers, record, lookups } = mesh(5_000, (i) => i % 3 !== 0);
    const random = seeded(2);
    for (let k = 0; k < 100; k++) pickRelays(peers, record, addr(k), 3, random);
    expect(lookups() / 100).to.be.below(50);
  });

  it('finds the only ones that qualify when few do, and none when none do', () => {
    const { peers, record } = mesh(100, (i) => i === 17 || i === 60);
    const relays = pickRelays(peers, record, addr(0), 3, seeded(3));
    expect(relays.map((r) => r.address)).to.have.members([addr(17), addr(60)]);
    const none = mesh(100, () => false);
    expect(pickRelays(none.peers, none.record, addr(0), 3, seeded(4))).to.deep.equal([]);
    expect(pickRelays(peers, record, addr(0), 0, seeded(5))).to.deep.equal([]);
  });

  it('spreads its choice over all that qualify', () => {
    const { peers, record } = mesh(20, (i) => i < 10);
    const chosen = new Map<string, number>();
    const random = seeded(6);
    for (let k = 0; k < 1_000; k++) {
      for (const r of pickRelays(peers, record, addr(19), 1, random)) {
        chosen.set(r.address, (chosen.get(r.address) ?? 0) + 1);
      }
    }
    expect(chosen.size).to.equal(10);
    for (const n of chosen.values()) expect(n).to.be.within(50, 150);
  });
});
