// Kubernetes discovery at 5,000 nodes: a Service of 50 EndpointSlices of 100 endpoints, watched
// by kubernetesPeers (the real @kubernetes/client-node informer) through the in-repo fake API.
// Every peer of every slice is listed; a change to one slice is published as just that change;
// an endpoint moved between slices is never dropped; a burst of slice updates is one update.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '../../src/discovery/kube-client.js';
import { expect } from 'chai';
import { systemClock } from '../../src/core/system-clock.js';
import { kubernetesPeers } from '../../src/discovery/kubernetes.js';
import type { PeerSource } from '../../src/discovery/peer-source.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { pollUntil } from '../support/poll.js';

const NS = 'knh';
const SERVICE = 'knh';
const PORT = 8080;
const SLICES = 50;
const PER_SLICE = 100;

const nameOf = (s: number) => `knh-${String(s).padStart(2, '0')}`;
/** Endpoint `e` of slice `s` as first listed: 10.1.s.(e+1). */
const ipOf = (s: number, e: number) => `10.1.${s}.${e + 1}`;
const addr = (ip: string) => `${ip}:${PORT}`;

describe('kubernetes discovery with 50 EndpointSlices of 100 endpoints (real client library, fake API)', function () {
  this.timeout(60_000);
  let api: FakeKubeApi;
  let dir: string;
  let source: PeerSource;
  let logger: CapturingLogger;
  /** Every list kubernetesPeers published, in order. */
  let publishes: string[][];
  /** What the fake API lists, by slice name: the test's own record of the Service. */
  let model: Map<string, string[]>;

  const list = (name: string, ips: string[]) => {
    model.set(name, ips);
    api.upsert(
      NS,
      SERVICE,
      name,
      PORT,
      ips.map((ip) => ({ ip, nodeName: `node-${ip}` })),
    );
  };
  const unlist = (name: string) => {
    model.delete(name);
    api.remove(NS, name);
  };
  const expected = () => [...new Set([...model.values()].flat().map(addr))].sort();
  const ipsOf = (name: string) => model.get(name) ?? [];

  /** Waits for a publish after the first `after`, and returns it. */
  const publishAfter = (after: number) =>
    pollUntil(`publish #${after + 1}`, () => publishes[after], {
      timeoutMs: 15_000,
      everyMs: 20,
      describe: () => `${publishes.length} publishes`,
    });
  /** Waits until the latest publish is exactly what the fake API lists; returns its position. */
  const publishedModel = () => {
    const want = expected();
    return pollUntil(
      `a publish of the ${want.length} listed peers`,
      () => {
        const last = publishes.at(-1);
        if (!last || last.length !== want.length) return undefined;
        return last.every((a, i) => a === want[i]) ? publishes.length - 1 : undefined;
      },
      {
        timeoutMs: 15_000,
        everyMs: 20,
        describe: () => `${publishes.length} publishes, last of ${publishes.at(-1)?.length}`,
      },
    );
  };

  beforeEach(async () => {
    api = await new FakeKubeApi().start();
    dir = mkdtempSync(join(tmpdir(), 'knh-many-slices-'));
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(api.writeKubeconfig(join(dir, 'kubeconfig.json')));
    model = new Map();
    publishes = [];
    for (let s = 0; s < SLICES; s++)
      list(
        nameOf(s),
        Array.from({ length: PER_SLICE }, (_, e) => ipOf(s, e)),
      );
    logger = new CapturingLogger();
    source = kubernetesPeers({
      kubeConfig,
      namespace: NS,
      serviceName: SERVICE,
      port: PORT,
      clock: systemClock,
      logger,
      backoff: { initialMs: 200, maxMs: 1_000 },
    });
    await source.start((addresses) => publishes.push([...addresses]));
    const first = await publishAfter(0);
    expect(first, 'the first publish lists every slice').to.deep.equal(expected());
    expect(first).to.have.length(SLICES * PER_SLICE);
  });

  afterEach(async () => {
    await source.stop();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the 5,000 peers of all 50 slices at once, and is synced', async () => {
    expect(publishes).to.have.length(1);
    expect(publishes[0])
      .to.include(addr(ipOf(0, 0)))
      .and.to.include(addr(ipOf(49, 99)));
    expect(
      logger.records.find((r) => r.fields.event === 'discovery-synced')?.fields.slices,
    ).to.equal(SLICES);
    await pollUntil('synced', () => (source.synced?.() ? true : undefined), { timeoutMs: 10_000 });
  });

  it('publishes a change to one slice as exactly that change', async () => {
    const name = nameOf(7);
    const before = publishes.length;
    const dropped = ipsOf(name).slice(0, 3);
    list(name, [...ipsOf(name).slice(3), '10.2.7.1', '10.2.7.2']);
    const next = await publishAfter(before);
    const [was, is] = [new Set(publishes[before - 1]), new Set(next)];
    expect(next.filter((a) => !was.has(a))).to.deep.equal(['10.2.7.1:8080', '10.2.7.2:8080']);
    expect(publishes[before - 1]?.filter((a) => !is.has(a))).to.deep.equal(dropped.map(addr));
    expect(next).to.deep.equal(expected());
    expect(next).to.have.length(4_999);
  });

  it('never drops an endpoint moved between slices, whichever slice is updated first', async () => {
    const moved = ipOf(3, 42);
    const from = publishes.length;
    // Removed from slice 3 before it is added to slice 4.
    list(
      nameOf(3),
      ipsOf(nameOf(3)).filter((ip) => ip !== moved),
    );
    list(nameOf(4), [...ipsOf(nameOf(4)), moved]);
    // Then on to slice 5, added there before slice 4 lets it go.
    list(nameOf(5), [...ipsOf(nameOf(5)), moved]);
    list(
      nameOf(4),
      ipsOf(nameOf(4)).filter((ip) => ip !== moved),
    );
    // A change after the moves: once it is published, every move before it has been seen.
    list(nameOf(9), [...ipsOf(nameOf(9)), '10.2.9.1']);
    await publishedModel();
    const since = publishes.slice(from);
    expect(since.length).to.be.greaterThan(0);
    for (const [i, p] of since.entries())
      expect(p.includes(addr(moved)), `publish ${from + i} lists the moved endpoint`).to.equal(
        true,
      );
    expect(publishes.at(-1)).to.have.length(5_001);
  });

  it('removes a deleted slice’s peers, except those another slice still lists', async () => {
    const kept = ipOf(20, 0);
    list(nameOf(21), [...ipsOf(nameOf(21)), kept]);
    unlist(nameOf(20));
    const at = await publishedModel();
    const last = publishes[at] ?? [];
    expect(last).to.have.length(4_901);
    expect(last).to.include(addr(kept));
    expect(last).to.not.include(addr(ipOf(20, 1)));
    for (const p of publishes.slice(1)) expect(p).to.include(addr(kept));
  });

  it('coalesces a burst of 20 slice updates into few publishes with the net result', async () => {
    const before = publishes.length;
    for (let s = 10; s < 30; s++) {
      const ips = ipsOf(nameOf(s));
      list(nameOf(s), [...ips.slice(1), `10.3.${s}.1`]);
    }
    const at = await publishedModel();
    const burst = at + 1 - before;
    expect(burst, `${burst} publishes for 20 updates`).to.be.within(1, 3);
    expect(publishes.at(-1)).to.have.length(5_000);
    expect(publishes.at(-1))
      .to.include('10.3.29.1:8080')
      .and.not.include(addr(ipOf(29, 0)));
  });

  it('is right after a relist: changes made while the API was away, its history compacted', async () => {
    await pollUntil('synced', () => (source.synced?.() ? true : undefined), { timeoutMs: 10_000 });
    const listsBefore = api.requests.filter((r) => r.query.watch !== 'true').length;
    await api.goDown();
    list(nameOf(5), ipsOf(nameOf(5)).slice(50));
    unlist(nameOf(6));
    list(nameOf(50), ['10.4.0.1', '10.4.0.2']);
    api.compact();
    await api.comeBack();
    const at = await publishedModel();
    expect(publishes[at]).to.have.length(5_000 - 50 - 100 + 2);
    expect(
      api.requests.filter((r) => r.query.watch !== 'true').length,
      'relisted',
    ).to.be.greaterThan(listsBefore);
  });
});
