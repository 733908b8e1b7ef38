// SliceIndex: the peers of many EndpointSlices, one slice at a time, with per-address counts so an
// endpoint listed by two slices at once stays until the last drops it; the per-slice rules of
// peersFromSlices (port, terminating, not-ready, FQDN, deletion) are kept.
import { expect } from 'chai';
import fc from 'fast-check';
import { peersFromSlices, type SliceLike } from '../../src/discovery/endpoint-slices.js';
import { SliceIndex } from '../../src/discovery/slice-index.js';

const PORT = 8080;
const SLICES = 50;
const PER_SLICE = 100;

interface Endpoint {
  ip: string;
  ready?: boolean;
  terminating?: boolean;
}

/** An IPv4 slice of the Service in namespace `knh`, port `http` 8080 unless told otherwise. */
function slice(
  name: string,
  endpoints: (string | Endpoint)[],
  extra: Partial<SliceLike> & { resourceVersion?: string; deleting?: boolean } = {},
): SliceLike {
  const { resourceVersion, deleting, ...rest } = extra;
  return {
    metadata: {
      name,
      namespace: 'knh',
      resourceVersion,
      deletionTimestamp: deleting ? new Date() : undefined,
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: PORT, protocol: 'TCP' }],
    endpoints: endpoints.map((e) => {
      const { ip, ready, terminating } = typeof e === 'string' ? { ip: e } : e;
      return { addresses: [ip], conditions: { ready, serving: ready, terminating } };
    }),
    ...rest,
  };
}

/** Endpoint `e` of slice `s`: 10.0.s.(e+1), distinct over 50 × 100. */
const ipOf = (s: number, e: number) => `10.0.${s}.${e + 1}`;
const addr = (ip: string) => `${ip}:${PORT}`;
const nameOf = (s: number) => `knh-${String(s).padStart(2, '0')}`;

function fullService(): SliceLike[] {
  return Array.from({ length: SLICES }, (_, s) =>
    slice(
      nameOf(s),
      Array.from({ length: PER_SLICE }, (_, e) => ipOf(s, e)),
    ),
  );
}

function built(slices: SliceLike[]): SliceIndex {
  const index = new SliceIndex(PORT);
  for (const s of slices) index.upsert(s);
  return index;
}

describe('SliceIndex', () => {
  it('holds the peers of every slice: 50 slices of 100 endpoints are 5,000 peers', () => {
    const slices = fullService();
    const index = built(slices);
    const addresses = index.addresses();
    expect(addresses).to.have.length(SLICES * PER_SLICE);
    expect(addresses).to.deep.equal(peersFromSlices(slices, PORT).addresses);
    expect(addresses)
      .to.include(addr(ipOf(0, 0)))
      .and.to.include(addr(ipOf(49, 99)));
    expect(index.totals()).to.deep.equal({
      slices: 50,
      peers: 5_000,
      terminating: 0,
      notReady: 0,
    });
  });

  it('changes only the updated slice’s contribution, and keeps the list while nothing changes', () => {
    const slices = fullService();
    const index = built(slices);
    const before = index.addresses();
    const ips = Array.from({ length: PER_SLICE }, (_, e) => ipOf(7, e));
    const updated = [...ips.slice(3), '10.1.7.1', '10.1.7.2'];
    expect(index.upsert(slice(nameOf(7), updated))).to.equal(true);
    const after = index.addresses();
    const [had, has] = [new Set(before), new Set(after)];
    expect(before.filter((a) => !has.has(a))).to.deep.equal(ips.slice(0, 3).map(addr));
    expect(after.filter((a) => !had.has(a))).to.deep.equal(['10.1.7.1:8080', '10.1.7.2:8080']);
    expect(after).to.have.length(4_999);
    expect(after).to.deep.equal([...after].sort());

    // The same contents again, or a replayed resourceVersion: no change, the very same array.
    expect(index.upsert(slice(nameOf(7), updated))).to.equal(false);
    expect(index.addresses()).to.equal(after);
    expect(index.upsert(slice(nameOf(8), ['10.9.9.9'], { resourceVersion: '5' }))).to.equal(true);
    expect(
      index.upsert(slice(nameOf(8), ['10.9.9.8'], { resourceVersion: '5' })),
      'the same resourceVersion is the same object',
    ).to.equal(false);
    expect(index.addresses()).to.include('10.9.9.9:8080');
  });

  it('never loses an endpoint Kubernetes moves between slices, whichever update comes first', () => {
    const moved = ipOf(3, 42);
    const a = Array.from({ length: PER_SLICE }, (_, e) => ipOf(3, e));
    const b = Array.from({ length: PER_SLICE }, (_, e) => ipOf(4, e));
    const aWithout = a.filter((ip) => ip !== moved);

    // Added to B first: listed twice for a while, then dropped from A.
    const addFirst = built(fullService());
    addFirst.upsert(slice(nameOf(4), [...b, moved]));
    expect(addFirst.addresses()).to.include(addr(moved));
    expect(addFirst.totals().peers).to.equal(5_000);
    addFirst.upsert(slice(nameOf(3), aWithout));
    expect(addFirst.addresses()).to.include(addr(moved));
    expect(addFirst.totals().peers).to.equal(5_000);

    // Dropped from A first: gone between the two updates, but both applied before the list is
    // read (one publish window) is no change at all.
    const dropFirst = built(fullService());
    const before = dropFirst.addresses();
    expect(dropFirst.upsert(slice(nameOf(3), aWithout))).to.equal(true);
    expect(dropFirst.upsert(slice(nameOf(4), [...b, moved]))).to.equal(true);
    expect(dropFirst.addresses(), 'the same list, not rebuilt').to.equal(before);
  });

  it('names the node each address runs on, as its slice does, and forgets it when it goes', () => {
    const index = new SliceIndex(PORT);
    const named: SliceLike = {
      ...slice('a', ['10.0.0.1', '10.0.0.2']),
      endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'worker-1' }, { addresses: ['10.0.0.2'] }],
    };
    index.upsert(named);
    expect(index.nodeName('10.0.0.1:8080')).to.equal('worker-1');
    expect(index.nodeName('10.0.0.2:8080'), 'the slice names none').to.equal(undefined);
    index.remove(named);
    expect(index.nodeName('10.0.0.1:8080')).to.equal(undefined);
  });

  it('removes a deleted slice’s peers unless another slice still lists them', () => {
    const index = built([
      slice('a', ['10.0.0.1', '10.0.0.2']),
      slice('b', ['10.0.0.2', '10.0.0.3']),
    ]);
    expect(index.remove(slice('a', []))).to.equal(true);
    expect(index.addresses()).to.deep.equal(['10.0.0.2:8080', '10.0.0.3:8080']);
    expect(index.remove(slice('a', [])), 'already gone').to.equal(false);
    // A delete names the slice; its contents (whatever the event carries) are not read.
    expect(index.remove(slice('b', ['10.0.0.9']))).to.equal(true);
    expect(index.addresses()).to.deep.equal([]);
    expect(index.totals()).to.deep.equal({ slices: 0, peers: 0, terminating: 0, notReady: 0 });
  });

  it('applies the per-slice rules: terminating left out, not-ready kept, FQDN and deleting slices ignored, the port', () => {
    const slices: SliceLike[] = [
      slice('conditions', [
        { ip: '10.0.0.1' },
        { ip: '10.0.0.2', ready: false },
        { ip: '10.0.0.3', ready: false, terminating: true },
      ]),
      slice('fqdn', ['10.0.0.4'], { addressType: 'FQDN' }),
      slice('deleting', ['10.0.0.5'], { deleting: true }),
      slice('named', ['10.0.0.6'], {
        ports: [
          { name: 'metrics', port: 9090 },
          { name: 'http', port: 8081 },
        ],
      }),
      slice('only', ['10.0.0.7'], { ports: [{ name: 'web', port: 8082 }] }),
      slice('unnamed', ['10.0.0.8'], {
        ports: [
          { name: 'a', port: 1 },
          { name: 'b', port: 2 },
        ],
      }),
      slice('v6', ['FD00:0:0::1'], { addressType: 'IPv6' }),
    ];
    const index = built(slices);
    const expected = [
      '10.0.0.1:8080',
      '10.0.0.2:8080',
      '10.0.0.6:8081',
      '10.0.0.7:8082',
      '10.0.0.8:8080',
      '[fd00::1]:8080',
    ];
    expect(index.addresses()).to.deep.equal(expected);
    expect(peersFromSlices(slices, PORT).addresses).to.deep.equal(expected);
    expect(index.totals()).to.deep.include({ terminating: 1, notReady: 1 });

    // Counts follow the slice: replaced, then removed.
    index.upsert(slice('conditions', [{ ip: '10.0.0.1', ready: false }]));
    expect(index.totals()).to.deep.include({ terminating: 0, notReady: 1 });
    index.remove(slice('conditions', []));
    expect(index.totals()).to.deep.include({ terminating: 0, notReady: 0 });
    // A slice marked for deletion contributes nothing from then on.
    index.upsert(slice('named', ['10.0.0.6'], { deleting: true }));
    expect(index.addresses()).to.not.include('10.0.0.6:8081');
  });

  it('holds exactly the listed slices after replaceAll (a relist), costing nothing when unchanged', () => {
    const slices = fullService().map((s, i) => ({
      ...s,
      metadata: { ...s.metadata, resourceVersion: String(i + 1) },
    }));
    const index = built(slices);
    const before = index.addresses();
    expect(index.replaceAll(slices)).to.equal(false);
    expect(index.addresses()).to.equal(before);
    const relisted = slices.slice(1);
    expect(index.replaceAll(relisted)).to.equal(true);
    expect(index.addresses()).to.deep.equal(peersFromSlices(relisted, PORT).addresses);
    expect(index.totals().slices).to.equal(49);
  });

  it('agrees with peersFromSlices after any sequence of upserts and deletes, in any order', () => {
    // Few names and few addresses, so slices overlap and events repeat.
    const ips = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];
    const event = fc.oneof(
      fc.record({
        kind: fc.constant('upsert' as const),
        name: fc.constantFrom('a', 'b', 'c'),
        ips: fc.subarray(ips),
        terminating: fc.subarray(ips),
      }),
      fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom('a', 'b', 'c') }),
    );
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.boolean(), (events, readEach) => {
        const index = new SliceIndex(PORT);
        const model = new Map<string, SliceLike>();
        let last = index.addresses();
        for (const e of events) {
          if (e.kind === 'delete') {
            index.remove(slice(e.name, []));
            model.delete(e.name);
          } else {
            const s = slice(
              e.name,
              e.ips.map((ip) => ({ ip, terminating: e.terminating.includes(ip) })),
            );
            index.upsert(s);
            model.set(e.name, s);
          }
          if (!readEach) continue;
          const expected = peersFromSlices([...model.values()], PORT);
          const now = index.addresses();
          expect(now).to.deep.equal(expected.addresses);
          expect(now === last).to.equal(
            now.length === last.length && now.every((a, i) => a === last[i]),
          );
          last = now;
          expect(index.totals()).to.deep.equal({
            slices: model.size,
            peers: expected.addresses.length,
            terminating: expected.terminating,
            notReady: expected.notReady,
          });
        }
        expect(index.addresses()).to.deep.equal(
          peersFromSlices([...model.values()], PORT).addresses,
        );
      }),
      { numRuns: 300 },
    );
  });
});
