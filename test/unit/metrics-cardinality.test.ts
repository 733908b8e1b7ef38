// The size of a scrape at 5,000 nodes: per-peer series (3 a peer, coordinator only) up to
// METRICS_PER_PEER_LIMIT peers, per-path series (3 a path, every node) up to METRICS_PER_PATH_LIMIT
// peers, none past them or with a limit 0; everything else a fixed set.
import { expect } from 'chai';
import type { Outcome } from '../../src/core/transport.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { NodeMetrics } from '../../src/metrics/node-metrics.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import type { Health } from '../../src/wire/peer-view.js';
import { probedPath } from '../support/path-status.js';

/** knh_peer_up, knh_probe_failures_total, knh_peer_probe_latency_seconds. */
const PER_PEER = 3;
/** knh_path_loss_ratio, knh_path_p50_latency_seconds, knh_path_p99_latency_seconds (answered). */
const PER_PATH = 3;
/**
 * Series that do not grow with the mesh, process metrics included (docs/operating.md, Metrics, has
 * the counts on running nodes); prom-client adds GC series as new kinds of collection happen.
 */
const FIXED_MAX = 250;
const MESH = 5_000;
/** The node scraped. */
const SELF = { id: 'worker-me@10.245.0.1', address: '10.245.0.1:8080', nodeName: 'worker-me' };

/** Peer `n`'s address, from 10.244.0.1 up (5,000 peers: to 10.244.19.250). */
const address = (n: number) => `10.244.${Math.floor(n / 250)}.${(n % 250) + 1}:8080`;
/** The labels of peer `n`'s series: its address and its node's name. */
const peerLabels = (n: number) => `{peer="${address(n)}",node="worker-${n}"}`;
/** The labels of the path to peer `n`: its address, and its IP for a name (nobody told one). */
const pathLabels = (n: number) =>
  `{peer="${address(n)}",node="${address(n).replace(/:8080$/, '')}"}`;
const healthOf = (n: number): Health =>
  n % 100 === 0 ? 'dead' : n % 250 === 7 ? 'suspect' : 'alive';

function mesh(size: number): PeerRecord[] {
  return Array.from({ length: size }, (_, i) => ({
    ...newRecord(address(i), 0),
    id: `worker-${i}@${address(i).replace(/:8080$/, '')}`,
    nodeName: `worker-${i}`,
    health: healthOf(i),
  }));
}

const answer: Outcome<PingResponse> = {
  ok: true,
  latencyMs: 2,
  value: { id: 'x', address: 'x', node_name: 'x', role: 'follower', epoch: 1, coordinator: null },
};
const timeout: Outcome<PingResponse> = {
  ok: false,
  reason: 'timeout',
  phase: 'send',
  detail: 'timeout',
  latencyMs: 1_000,
};

/**
 * A coordinator (or, with `leading` false, a follower) judging `size` peers, all probed, and
 * pair-probing every one of them: a path to each, every 50th failed.
 */
async function scrape(
  size: number,
  perPeerLimit: number,
  { leading = true, perPathLimit = 100 } = {},
) {
  const records = mesh(size);
  const paths = records.map((r, i) => probedPath(r.address, i % 50 === 0 ? 'failed' : 'ok'));
  const metrics = new NodeMetrics({
    build: { version: '1.2.3', revision: 'abc1234' },
    self: SELF,
    perPeerLimit,
    perPathLimit,
    ownPaths: () => paths,
    meshPeers: () => size,
    pathFindings: () => (leading ? [{ kind: 'unreachable', node: address(0) }] : []),
    records: () => (leading ? records : []),
    selfSuspicion: () =>
      leading ? { suspect: false, unreachable: 0, silent: 0, considered: size } : null,
    election: () => {
      const role = leading ? 'coordinator' : 'follower';
      return { epoch: 2, role, claimedRole: role, coordinator: null };
    },
    webhooksPending: () => 0,
    eventLoopLagMs: () => 0,
  });
  metrics.peersListed({ added: records.map((r) => r.address), removed: [] }, size);
  // Every peer answered once (so each has a latency series); the ones not alive failed since.
  for (const r of records) {
    metrics.probes.observe(r.address, answer);
    if (r.health !== 'alive') metrics.probes.observe(r.address, timeout);
  }
  const body = (await metrics.render()).body;
  const samples = body.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
  const sample = (name: string, labels = '') =>
    samples.find((s) => s.startsWith(`${name}${labels} `))?.split(' ')[1];
  return {
    body,
    samples,
    perPeer: samples.filter((s) => !s.startsWith('knh_path_') && /\{(?:.*,)?peer="/.test(s)).length,
    perPath: samples.filter((s) => s.startsWith('knh_path_') && /\{(?:.*,)?peer="/.test(s)).length,
    /** knh's own series, not prom-client's process metrics. */
    own: samples.filter((s) => s.startsWith('knh_')).length,
    sample,
  };
}

describe('metrics cardinality at 5,000 peers', function () {
  this.timeout(20_000);

  it('past METRICS_PER_PEER_LIMIT: no per-peer series, a scrape as small as with no peers, and the aggregates', async () => {
    const none = await scrape(0, 1_000);
    const over = await scrape(MESH, 1_000);
    expect(over.perPeer).to.equal(0);
    expect(over.body).not.to.match(/peer="/);
    expect(over.own, "knh's own series do not grow with the mesh").to.equal(none.own);
    expect(over.samples.length).to.be.at.most(FIXED_MAX);
    expect(over.sample('knh_per_peer_metrics_enabled')).to.equal('0');
    // What a dashboard still has: peers by health, unreachable peers, every probe's outcome.
    const dead = mesh(MESH).filter((r) => r.health === 'dead').length;
    const suspect = mesh(MESH).filter((r) => r.health === 'suspect').length;
    expect(over.sample('knh_peers', '{health="dead"}')).to.equal(String(dead));
    expect(over.sample('knh_peers', '{health="suspect"}')).to.equal(String(suspect));
    expect(over.sample('knh_peers', '{health="alive"}')).to.equal(String(MESH - dead - suspect));
    expect(over.sample('knh_unreachable_peers')).to.equal('0');
    expect(over.sample('knh_probe_duration_seconds_count', '{outcome="failed"}')).to.equal(
      String(dead + suspect),
    );
  });

  it('up to the limit: 3 series a peer besides the fixed set', async () => {
    for (const [size, limit] of [
      [1_000, 1_000],
      [MESH, MESH],
    ] as const) {
      const { perPeer, samples, sample } = await scrape(size, limit);
      expect(perPeer, `${size} peers, limit ${limit}`).to.equal(PER_PEER * size);
      expect(samples.length).to.be.at.most(FIXED_MAX + PER_PEER * size);
      expect(sample('knh_per_peer_metrics_enabled')).to.equal('1');
      expect(sample('knh_peer_up', peerLabels(1))).to.equal('1');
      expect(sample('knh_peer_up', peerLabels(100))).to.equal('0');
      expect(sample('knh_probe_failures_total', peerLabels(100))).to.equal('1');
      expect(sample('knh_peer_probe_latency_seconds', peerLabels(1))).to.equal('0.002');
    }
    // One peer past the limit turns all of them off, not some.
    expect((await scrape(1_001, 1_000)).perPeer).to.equal(0);
  });

  it('0 turns per-peer series off, however few the peers', async () => {
    const { perPeer, sample } = await scrape(3, 0);
    expect(perPeer).to.equal(0);
    expect(sample('knh_per_peer_metrics_enabled')).to.equal('0');
    expect(sample('knh_peers', '{health="alive"}')).to.equal('2');
    expect(sample('knh_peers', '{health="dead"}')).to.equal('1');
  });

  it('a follower has the fixed set only, whatever the size of the mesh', async () => {
    const follower = await scrape(MESH, MESH, { leading: false });
    expect(follower.perPeer).to.equal(0);
    expect(follower.samples.length).to.be.at.most(FIXED_MAX);
    expect(follower.sample('knh_per_peer_metrics_enabled'), 'within the limit').to.equal('1');
  });

  describe("every node's per-path series", () => {
    const seconds = (text: string | undefined) => Number(text);

    it('past METRICS_PER_PATH_LIMIT: none, a scrape as small as with no peers, and the aggregates', async () => {
      const over = await scrape(MESH, 1_000, { leading: false });
      expect(over.perPath).to.equal(0);
      expect(over.own).to.equal((await scrape(0, 1_000, { leading: false })).own);
      expect(over.samples.length).to.be.at.most(FIXED_MAX);
      expect(over.sample('knh_per_path_metrics_enabled')).to.equal('0');
      // Every 50th path failed: 100 of 5,000.
      expect(over.sample('knh_paths', '{state="failed"}')).to.equal('100');
      expect(over.sample('knh_paths', '{state="ok"}')).to.equal('4900');
      expect(over.sample('knh_paths', '{state="degraded"}')).to.equal('0');
      expect(seconds(over.sample('knh_paths_loss_ratio'))).to.be.closeTo(0.02, 1e-12);
      expect(over.sample('knh_paths_max_loss_ratio')).to.equal('1');
      expect(seconds(over.sample('knh_paths_p50_latency_seconds'))).to.be.closeTo(0.0004, 1e-12);
      expect(seconds(over.sample('knh_paths_p99_latency_seconds'))).to.be.closeTo(0.0012, 1e-12);
      expect(seconds(over.sample('knh_paths_max_p99_latency_seconds'))).to.be.closeTo(
        0.0012,
        1e-12,
      );
    });

    it('up to the limit: each path its loss, and its p50 and p99 once answered', async () => {
      const { perPath, sample } = await scrape(100, 1_000, { leading: false });
      // Paths 0 and 50 failed: no latency.
      expect(perPath).to.equal(PER_PATH * 100 - 2 * 2);
      expect(sample('knh_per_path_metrics_enabled')).to.equal('1');
      expect(sample('knh_path_loss_ratio', pathLabels(1))).to.equal('0');
      expect(seconds(sample('knh_path_p99_latency_seconds', pathLabels(1)))).to.equal(0.0012);
      expect(sample('knh_path_loss_ratio', pathLabels(50))).to.equal('1');
      expect(sample('knh_path_p50_latency_seconds', pathLabels(50))).to.equal(undefined);
      // One peer past the limit turns all of them off.
      expect((await scrape(101, 1_000, { leading: false })).perPath).to.equal(0);
    });

    it('0 turns them off, however few the peers', async () => {
      const { perPath, sample } = await scrape(3, 1_000, { perPathLimit: 0 });
      expect(perPath).to.equal(0);
      expect(sample('knh_per_path_metrics_enabled')).to.equal('0');
      expect(sample('knh_paths', '{state="ok"}')).to.equal('2');
      const alone = await scrape(0, 1_000, { perPathLimit: 0 });
      expect(alone.sample('knh_per_path_metrics_enabled'), 'no peers').to.equal('0');
    });

    it('has no latency aggregate (NaN) when no probe was answered', async () => {
      const { sample } = await scrape(1, 1_000);
      // prom-client writes NaN as Nan, which Prometheus reads as NaN.
      expect(sample('knh_paths_p50_latency_seconds')).to.equal('Nan');
      expect(sample('knh_paths_max_p99_latency_seconds')).to.equal('Nan');
      expect(sample('knh_paths_loss_ratio')).to.equal('1');
    });

    it("counts the coordinator's findings by kind, every kind from 0; a follower's are 0", async () => {
      const coordinator = await scrape(10, 1_000);
      expect(coordinator.sample('knh_path_findings', '{kind="unreachable"}')).to.equal('1');
      expect(coordinator.sample('knh_path_findings', '{kind="partition"}')).to.equal('0');
      expect(coordinator.samples.filter((s) => s.startsWith('knh_path_findings{'))).to.have.length(
        8,
      );
      const follower = await scrape(10, 1_000, { leading: false });
      expect(follower.sample('knh_path_findings', '{kind="unreachable"}')).to.equal('0');
    });
  });

  it('times each probe round in knh_probe_round_duration_seconds, from 5 ms to 10 s', async () => {
    const metrics = new NodeMetrics({
      build: { version: '1.2.3', revision: 'abc1234' },
      self: SELF,
      perPeerLimit: 1_000,
      perPathLimit: 100,
      ownPaths: () => [],
      meshPeers: () => 0,
      pathFindings: () => [],
      records: () => [],
      selfSuspicion: () => null,
      election: () => ({ epoch: 0, role: 'follower', claimedRole: 'follower', coordinator: null }),
      webhooksPending: () => 0,
      eventLoopLagMs: () => 0,
    });
    for (const durationMs of [3, 12, 40, 900, 1_200, 30_000]) {
      metrics.probes.roundEnded({ durationMs });
    }
    const body = (await metrics.render()).body;
    const bucket = (le: string) =>
      new RegExp(`^knh_probe_round_duration_seconds_bucket\\{le="${le}"\\} (\\d+)$`, 'm').exec(
        body,
      )?.[1];
    expect(bucket('0.005')).to.equal('1');
    expect(bucket('0.025')).to.equal('2');
    expect(bucket('1')).to.equal('4');
    expect(bucket('10')).to.equal('5');
    expect(bucket('\\+Inf')).to.equal('6');
    expect(body).to.match(/^knh_probe_round_duration_seconds_count 6$/m);
    const sum = /^knh_probe_round_duration_seconds_sum (\S+)$/m.exec(body)?.[1];
    expect(Number(sum)).to.be.closeTo(32.155, 1e-9);
  });
});
