// The node's /metrics: every series a dashboard or alert relies on, and per-peer series that go
// when their peer leaves discovery.
import { expect } from 'chai';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { Outcome } from '../../src/core/transport.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import type { ElectionState } from '../../src/metrics/election-metrics.js';
import { NodeMetrics } from '../../src/metrics/node-metrics.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import type { Health } from '../../src/wire/peer-view.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a text exposition (comments skipped). */
function parse(text: string): Sample[] {
  return text.split('\n').flatMap((line) => {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m?.[1] || !m[3]) return [];
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      if (k !== undefined && v !== undefined) labels[k] = v;
    }
    return [{ name: m[1], labels, value: Number(m[3]) }];
  });
}

/** The value of the sample with exactly these labels; undefined if there is none. */
function value(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return parse(text).find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want,
  )?.value;
}

const A = '10.0.0.1:8080';
const B = '10.0.0.2:8080';
const C = '10.0.0.3:8080';
/** Each peer's node, as its verdict names it. */
const NODES = new Map([
  [A, 'worker-a'],
  [B, 'worker-b'],
  [C, 'worker-c'],
]);
const record = (address: string, health: Health): PeerRecord => ({
  ...newRecord(address, 0, NODES.get(address)),
  health,
});
/** The labels of a per-peer series about `address`. */
const about = (address: string) => ({ peer: address, node: NODES.get(address) ?? '' });
const answer = (latencyMs: number): Outcome<PingResponse> => ({
  ok: true,
  latencyMs,
  value: { id: 'x', address: 'x', node_name: 'x', role: 'follower', epoch: 1, coordinator: null },
});
const failure = (reason: 'timeout' | 'aborted', latencyMs: number): Outcome<PingResponse> => ({
  ok: false,
  reason,
  phase: 'send',
  detail: reason,
  latencyMs,
});

function setup() {
  const world = {
    records: [] as PeerRecord[],
    election: { epoch: 0, role: 'follower', claimedRole: 'follower', coordinator: null } as {
      epoch: number;
      role: ElectionState['role'];
      claimedRole: ElectionState['role'];
      coordinator: NodeRef | null;
    },
    pending: 0,
  };
  const metrics = new NodeMetrics({
    build: { version: '1.2.3', revision: 'abc1234' },
    self: { id: 'worker-z@10.0.0.9', address: '10.0.0.9:8080', nodeName: 'worker-z' },
    perPeerLimit: 1_000,
    perPathLimit: 100,
    ownPaths: () => [],
    meshPeers: () => world.records.length,
    pathFindings: () => [],
    records: () => world.records,
    selfSuspicion: () => null,
    eventLoopLagMs: () => 0,
    election: () => world.election,
    webhooksPending: () => world.pending,
  });
  const scrape = async () => (await metrics.render()).body;
  return { world, metrics, scrape };
}

describe('NodeMetrics', () => {
  it('serves the text format, every knh_ metric with HELP and TYPE, build and node info, and the process metrics under their standard names', async () => {
    const { metrics, scrape } = setup();
    const { contentType } = await metrics.render();
    expect(contentType).to.match(/^text\/plain; version=0\.0\.4/);
    const body = await scrape();
    const declared = [...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(declared).to.include.members([
      'knh_build_info gauge',
      'knh_peers gauge',
      'knh_peer_transitions_total counter',
      'knh_self_suspect gauge',
      'knh_unreachable_peers gauge',
      'knh_probe_duration_seconds histogram',
      'knh_probe_round_duration_seconds histogram',
      'knh_per_peer_metrics_enabled gauge',
      'knh_probe_failures_total counter',
      'knh_peer_up gauge',
      'knh_peer_probe_latency_seconds gauge',
      'knh_elections_total counter',
      'knh_coordinator_changes_total counter',
      'knh_epoch gauge',
      'knh_is_coordinator gauge',
      'knh_coordinator_info gauge',
      'knh_handovers_refused_total counter',
      'knh_webhook_deliveries_total counter',
      'knh_webhook_queue_length gauge',
      'knh_discovery_updates_total counter',
      'knh_discovery_peer_changes_total counter',
      'knh_discovery_peers gauge',
      'knh_node_info gauge',
      // What the standard Node.js dashboards and queries read, named as everywhere else.
      'process_cpu_seconds_total counter',
      'process_resident_memory_bytes gauge',
      'process_start_time_seconds gauge',
      'process_open_fds gauge',
      'nodejs_eventloop_lag_seconds gauge',
      'nodejs_heap_size_used_bytes gauge',
      'nodejs_gc_duration_seconds histogram',
    ]);
    for (const line of declared) {
      const name = line.split(' ')[0] ?? '';
      expect(name, "knh's own prefix, or a standard one").to.match(/^(knh|process|nodejs)_/);
      expect(name, 'no prefixed process metric').not.to.match(/^knh_(process|nodejs)_/);
      expect(body, `HELP of ${name}`).to.match(new RegExp(`^# HELP ${name} \\S`, 'm'));
      // Prometheus keeps _total for counters (prom-client's *_active_*_total gauges are removed).
      if (name.endsWith('_total')) expect(line, 'a _total name').to.match(/ counter$/);
    }
    expect(value(body, 'knh_build_info', { version: '1.2.3', revision: 'abc1234' })).to.equal(1);
    expect(
      value(body, 'knh_node_info', {
        node: 'worker-z',
        id: 'worker-z@10.0.0.9',
        address: '10.0.0.9:8080',
        version: '1.2.3',
      }),
    ).to.equal(1);
  });

  it("exports every counter of knh's own at 0 from the first scrape, every label value known up front", async () => {
    const { scrape } = setup();
    const body = await scrape();
    const counters = [...body.matchAll(/^# TYPE (knh_\S+) counter$/gm)].map((m) => m[1] ?? '');
    expect(counters).to.have.length.above(5);
    const perPeer = new Set(['knh_probe_failures_total']); // no peers listed yet: no series
    for (const name of counters.filter((n) => !perPeer.has(n))) {
      const samples = parse(body).filter((s) => s.name === name);
      expect(samples, `${name}: a series from the start, so rate() sees its first event`).to.not.be
        .empty;
      expect(
        samples.map((s) => s.value),
        name,
      ).to.satisfy((values: number[]) => values.every((v) => v === 0));
    }
    const transitions = parse(body).filter((s) => s.name === 'knh_peer_transitions_total');
    expect(transitions.map((s) => s.labels.transition)).to.have.members([
      'died',
      'recovered',
      'first-alive',
      'never-alive',
      'suspected',
      'cleared',
      'withheld',
      'path-broken',
      'path-restored',
    ]);
  });

  it("names each peer's node beside its address: the verdict's name, its IP until somebody tells one", async () => {
    const { world, metrics, scrape } = setup();
    const D = '10.0.0.4:8080'; // a static peer not heard from: no name yet
    metrics.peersListed({ added: [A, D], removed: [] }, 2);
    world.records = [record(A, 'dead'), { ...newRecord(D, 0), health: 'unknown' }];
    let body = await scrape();
    expect(value(body, 'knh_peer_up', about(A))).to.equal(0);
    expect(value(body, 'knh_peer_up', { peer: D, node: '10.0.0.4' })).to.equal(0);

    // D answered with its own name: its series carry it, and only it.
    world.records = [record(A, 'dead'), { ...newRecord(D, 0, 'worker-d'), health: 'alive' }];
    body = await scrape();
    const ups = parse(body).filter((s) => s.name === 'knh_peer_up' && s.labels.peer === D);
    expect(ups).to.deep.equal([
      { name: 'knh_peer_up', labels: { peer: D, node: 'worker-d' }, value: 1 },
    ]);
  });

  /**
   * A coordinator that probed A (answering), B (answering once, then timing out twice) and C (a
   * probe aborted as leadership ended), with its verdicts on them.
   */
  async function probedThreePeers() {
    const fx = setup();
    const { world, metrics } = fx;
    metrics.peersListed({ added: [A, B, C], removed: [] }, 3);
    world.records = [record(A, 'alive'), record(B, 'suspect'), record(C, 'unknown')];
    const replies = new Map<string, Outcome<PingResponse>[]>([
      [A, [answer(2), answer(3)]],
      [B, [answer(4), failure('timeout', 1000), failure('timeout', 1000)]],
      [C, [failure('aborted', 5)]], // leadership ended mid-probe: not a probe failure
    ]);
    const transport = metrics.probes.instrument({
      ping: (address: string) => Promise.resolve(replies.get(address)?.shift() ?? answer(1)),
    });
    for (const [address, outcomes] of [...replies]) {
      for (let i = outcomes.length; i > 0; i--) await transport.ping(address);
    }
    return fx;
  }

  it('counts probes and failures per peer, with the peer verdict and last answered latency', async () => {
    const { scrape } = await probedThreePeers();
    const body = await scrape();
    expect(value(body, 'knh_probe_failures_total', about(A))).to.equal(0);
    expect(value(body, 'knh_probe_failures_total', about(B))).to.equal(2);
    expect(value(body, 'knh_probe_failures_total', about(C))).to.equal(0);
    expect(value(body, 'knh_peer_up', about(A))).to.equal(1);
    expect(value(body, 'knh_peer_up', about(B))).to.equal(0);
    expect(value(body, 'knh_peer_up', about(C))).to.equal(0);
    expect(value(body, 'knh_peer_probe_latency_seconds', about(A))).to.equal(0.003);
    expect(value(body, 'knh_peer_probe_latency_seconds', about(B)), 'last answered').to.equal(
      0.004,
    );
    expect(value(body, 'knh_peer_probe_latency_seconds', about(C)), 'never answered').to.be
      .undefined;
    expect(value(body, 'knh_probe_duration_seconds_count', { outcome: 'ok' })).to.equal(3);
    expect(value(body, 'knh_probe_duration_seconds_count', { outcome: 'failed' })).to.equal(2);
    expect(
      value(body, 'knh_probe_duration_seconds_bucket', { outcome: 'ok', le: '0.0025' }),
    ).to.equal(1);
    expect(value(body, 'knh_probe_duration_seconds_sum', { outcome: 'failed' })).to.equal(2);
  });

  it('keeps per-peer series to the coordinator, their counts surviving a step down', async () => {
    const { world, scrape } = await probedThreePeers();
    // Stepped down: per-peer series only on the coordinator (else they grow with the mesh squared).
    const leading = world.records;
    world.records = [];
    const follower = await scrape();
    expect(parse(follower).filter((s) => s.labels.peer !== undefined)).to.deep.equal([]);
    expect(value(follower, 'knh_probe_duration_seconds_count', { outcome: 'ok' })).to.equal(3);

    // Leading again: the failure count goes on from where it was, never back.
    world.records = leading;
    expect(value(await scrape(), 'knh_probe_failures_total', about(B))).to.equal(2);
  });

  it('removes every series of a peer that leaves discovery, even if a probe of it ends later', async () => {
    const { world, metrics, scrape } = setup();
    metrics.peersListed({ added: [A, B], removed: [] }, 2);
    world.records = [record(A, 'alive'), record(B, 'dead')];
    metrics.probes.observe(A, answer(1));
    metrics.probes.observe(B, answer(1));
    metrics.probes.observe(B, failure('timeout', 1000));
    const before = await scrape();
    expect(parse(before).filter((s) => s.labels.peer === B)).to.have.length(3);

    // The coordinator drops B from its verdicts (ProbeRounds.setPeers), main tells the metrics.
    metrics.peersListed({ added: [], removed: [B] }, 1);
    world.records = [record(A, 'alive')];
    metrics.probes.observe(B, failure('timeout', 1000)); // a probe in flight when B left
    const after = await scrape();
    expect(parse(after).filter((s) => s.labels.peer === B)).to.deep.equal([]);
    expect(after).not.to.include(B);
    expect(value(after, 'knh_probe_failures_total', about(A))).to.equal(0);
    expect(value(after, 'knh_peer_up', about(A))).to.equal(1);

    // Back again: a new series from 0.
    metrics.peersListed({ added: [B], removed: [] }, 2);
    world.records = [record(A, 'alive'), record(B, 'unknown')];
    expect(value(await scrape(), 'knh_probe_failures_total', about(B))).to.equal(0);
  });

  it('counts discovery updates, joins and leaves, and shows the peers listed', async () => {
    const { metrics, scrape } = setup();
    expect(value(await scrape(), 'knh_discovery_peer_changes_total', { change: 'added' })).to.equal(
      0,
    );
    metrics.peersListed({ added: [A, B, C], removed: [] }, 3);
    metrics.peersListed({ added: [], removed: [] }, 3);
    metrics.peersListed({ added: [], removed: [C] }, 2);
    const body = await scrape();
    expect(value(body, 'knh_discovery_updates_total')).to.equal(3);
    expect(value(body, 'knh_discovery_peers')).to.equal(2);
    expect(value(body, 'knh_discovery_peer_changes_total', { change: 'added' })).to.equal(3);
    expect(value(body, 'knh_discovery_peer_changes_total', { change: 'removed' })).to.equal(1);
  });

  it('shows the election: epoch, role, one coordinator_info series, elections and changes', async () => {
    const { world, metrics, scrape } = setup();
    const one = { id: 'node-1@10.0.0.1', address: A };
    const two = { id: 'node-2@10.0.0.2', address: B };
    let body = await scrape();
    expect(value(body, 'knh_epoch')).to.equal(0);
    expect(value(body, 'knh_is_coordinator')).to.equal(0);
    expect(parse(body).filter((s) => s.name === 'knh_coordinator_info')).to.deep.equal([]);

    metrics.election.electionStarted();
    metrics.election.coordinatorChanged();
    // A term no peer has confirmed yet (or every peer refused to authenticate): not claimed.
    world.election = { epoch: 3, role: 'coordinator', claimedRole: 'candidate', coordinator: one };
    body = await scrape();
    expect(value(body, 'knh_is_coordinator'), 'unconfirmed').to.equal(0);
    world.election = {
      epoch: 3,
      role: 'coordinator',
      claimedRole: 'coordinator',
      coordinator: one,
    };
    body = await scrape();
    expect(value(body, 'knh_elections_total')).to.equal(1);
    expect(value(body, 'knh_coordinator_changes_total')).to.equal(1);
    expect(value(body, 'knh_epoch')).to.equal(3);
    expect(value(body, 'knh_is_coordinator')).to.equal(1);
    expect(value(body, 'knh_coordinator_info', one)).to.equal(1);

    metrics.election.coordinatorChanged();
    world.election = { epoch: 4, role: 'follower', claimedRole: 'follower', coordinator: two };
    body = await scrape();
    expect(value(body, 'knh_coordinator_changes_total')).to.equal(2);
    expect(value(body, 'knh_is_coordinator')).to.equal(0);
    const info = parse(body).filter((s) => s.name === 'knh_coordinator_info');
    expect(info, 'only the current coordinator').to.deep.equal([
      { name: 'knh_coordinator_info', labels: two, value: 1 },
    ]);
  });

  it('counts the hand-overs refused by reason, each from zero', async () => {
    const { metrics, scrape } = setup();
    let body = await scrape();
    const refused = (reason: string) => value(body, 'knh_handovers_refused_total', { reason });
    expect([refused('not-predecessor'), refused('newer-term')]).to.deep.equal([0, 0]);
    metrics.election.handoverRefused('not-predecessor');
    metrics.election.handoverRefused('not-predecessor');
    metrics.election.handoverRefused('newer-term');
    body = await scrape();
    expect([refused('not-predecessor'), refused('newer-term')]).to.deep.equal([2, 1]);
  });

  it('counts webhook outcomes by kind from zero, and shows the queue length', async () => {
    const { world, metrics, scrape } = setup();
    world.pending = 4;
    metrics.webhooks.settled('peer-status', 'delivered');
    metrics.webhooks.settled('peer-status', 'delivered');
    metrics.webhooks.settled('cluster-status', 'superseded');
    const body = await scrape();
    const deliveries = (kind: string, outcome: string) =>
      value(body, 'knh_webhook_deliveries_total', { kind, outcome });
    expect(deliveries('peer-status', 'delivered')).to.equal(2);
    expect(deliveries('cluster-status', 'superseded')).to.equal(1);
    for (const outcome of ['given-up', 'rejected', 'dropped']) {
      expect(deliveries('peer-status', outcome), outcome).to.equal(0);
      expect(deliveries('cluster-status', outcome), outcome).to.equal(0);
    }
    expect(value(body, 'knh_webhook_queue_length')).to.equal(4);
  });
});
