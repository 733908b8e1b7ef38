// Prometheus metrics of the coordinator's direct probes: latency of all, and per peer its verdict,
// its last answered latency and its failed probes; and whether its probe rounds start on time.
//
// Per-peer series exist on the coordinator only, one per peer and metric: every pod is scraped, so
// per-peer series on every node would grow with the square of the mesh (25M at 5,000 nodes). The
// latency distribution is one histogram over all peers (a per-peer one: 65k series at 5,000).
// Per-peer series are read from the verdicts at scrape time, so a peer that left the verdicts
// (it left discovery, or this node stopped leading) has none. Even on one pod they are 3 series a
// peer, so past `perPeerLimit` peers (METRICS_PER_PEER_LIMIT) there are none at all and only the
// aggregates tell the mesh's health: a scrape stays bounded whatever the size of the mesh.
// Each carries the peer's `node` (its Kubernetes node's name as the verdict knows it: the peer's
// own, once it answered, else the EndpointSlice's, else its IP) beside its `peer` address: an alert
// or a dashboard names the node without a join, at no cost in series.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Outcome, PeerTransport } from '../core/transport.js';
import type { PeerDiff } from '../discovery/diff.js';
import { lateThresholdMs } from '../prober/policy.js';
import type { RoundReport } from '../prober/rounds.js';
import type { PeerRecord } from '../prober/verdict.js';
import { rejection } from '../core/rejection.js';

export interface ProbedPeers {
  /** The coordinator's verdicts; empty on a follower. */
  records(): readonly PeerRecord[];
}

/** Seconds. Pod-network round trips are well under 10 ms; a timed-out probe lands past 1 s. */
const PROBE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
/** Seconds a round started after it was due: a healthy event loop keeps it to a few ms. */
const LATENESS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/**
 * Seconds a round took: ~10 ms for a small healthy mesh; seconds for a large one, when a peer does
 * not answer within PROBE_TIMEOUT (1 s), or when the coordinator is starved.
 */
const ROUND_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface ProbeMetricsOptions {
  /**
   * Per-peer series are exported while the verdicts hold at most this many peers; 0: never.
   * Default: no limit (NodeMetrics always passes METRICS_PER_PEER_LIMIT).
   */
  perPeerLimit?: number;
}

export class ProbeMetrics {
  private readonly duration: Histogram<'outcome'>;
  private readonly lateness: Histogram;
  private readonly late: Counter;
  private readonly roundDuration: Histogram;
  /** Peers in the latest discovery list: a probe ending after its peer left is not remembered. */
  private readonly listed = new Set<string>();
  /** Seconds, by peer address: the latest probe the peer answered. */
  private readonly answeredIn = new Map<string, number>();
  /** Failed probes by peer address, kept across terms so the counter never goes back. */
  private readonly failed = new Map<string, number>();

  constructor(
    registry: Registry,
    source: ProbedPeers,
    { perPeerLimit = Number.POSITIVE_INFINITY }: ProbeMetricsOptions = {},
  ) {
    const { answeredIn, failed } = this;
    const withinLimit = (records: readonly PeerRecord[]) =>
      perPeerLimit > 0 && records.length <= perPeerLimit;
    /** The verdicts whose per-peer series are exported: all of them, or none past the limit. */
    const perPeer = (): readonly PeerRecord[] => {
      const records = source.records();
      return withinLimit(records) ? records : [];
    };
    this.duration = new Histogram({
      name: 'knh_probe_duration_seconds',
      help: 'Direct probes (GET /ping, retries included) this node made of its peers as coordinator, by outcome (ok, failed): how long each took.',
      labelNames: ['outcome'],
      buckets: PROBE_BUCKETS,
      registers: [registry],
    });
    this.duration.zero({ outcome: 'ok' });
    this.duration.zero({ outcome: 'failed' });
    this.lateness = new Histogram({
      name: 'knh_probe_round_lateness_seconds',
      help: 'Probe rounds this node started as coordinator: how long after they were due each started (the previous start plus ELECTION_COOLDOWN_PERIOD; 0 for the first round of a term).',
      buckets: LATENESS_BUCKETS,
      registers: [registry],
    });
    this.late = new Counter({
      name: 'knh_probe_rounds_late_total',
      help: 'Probe rounds this node started as coordinator more than max(100 ms, half of ELECTION_COOLDOWN_PERIOD) after they were due: a starved CPU or a blocked event loop.',
      registers: [registry],
    });
    this.roundDuration = new Histogram({
      name: 'knh_probe_round_duration_seconds',
      help: "Probe rounds this node made as coordinator: how long each took, from its start until every peer's direct probe answered or failed (PROBE_TIMEOUT bounds each; retries and confirmations go on after the round).",
      buckets: ROUND_BUCKETS,
      registers: [registry],
    });
    new Gauge({
      name: 'knh_per_peer_metrics_enabled',
      help: "1 while this node's verdicts are within METRICS_PER_PEER_LIMIT, so the coordinator exports per-peer series (knh_peer_up, knh_probe_failures_total, knh_peer_probe_latency_seconds); 0 while it judges more peers than that, or the limit is 0. Followers never export them.",
      registers: [registry],
      collect() {
        this.set(withinLimit(source.records()) ? 1 : 0);
      },
    });
    new Counter({
      name: 'knh_probe_failures_total',
      help: 'Direct probes of the peer (by address, with its node) that failed, made by this node as coordinator; only on the coordinator.',
      labelNames: ['peer', 'node'],
      registers: [registry],
      collect() {
        this.reset();
        for (const r of perPeer()) {
          this.inc({ peer: r.address, node: r.nodeName }, failed.get(r.address) ?? 0);
        }
      },
    });
    new Gauge({
      name: 'knh_peer_up',
      help: "1 while this coordinator's verdict on the peer (by address, with its node) is alive, 0 while it is suspect, dead or not yet probed; only on the coordinator.",
      labelNames: ['peer', 'node'],
      registers: [registry],
      collect() {
        this.reset(); // peers that left, or every peer once this node no longer leads
        for (const r of perPeer()) {
          this.set({ peer: r.address, node: r.nodeName }, r.health === 'alive' ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: 'knh_peer_probe_latency_seconds',
      help: 'Round-trip time of the latest direct probe the peer (by address, with its node) answered; only on the coordinator.',
      labelNames: ['peer', 'node'],
      registers: [registry],
      collect() {
        this.reset();
        for (const r of perPeer()) {
          const seconds = answeredIn.get(r.address);
          if (seconds !== undefined) this.set({ peer: r.address, node: r.nodeName }, seconds);
        }
      },
    });
  }

  /** A probe round started `lateByMs` after it was due, with rounds `intervalMs` apart. */
  roundStarted(lateByMs: number, intervalMs: number): void {
    this.lateness.observe(lateByMs / 1000);
    if (lateByMs > lateThresholdMs(intervalMs)) this.late.inc();
  }

  /** A probe round ended (its probes answered or failed); aborted rounds are not reported. */
  roundEnded({ durationMs }: Pick<RoundReport, 'durationMs'>): void {
    this.roundDuration.observe(durationMs / 1000);
  }

  /** The transport with its `ping` measured: give it to the probe rounds only. */
  instrument<T extends Pick<PeerTransport, 'ping'>>(transport: T): T {
    return {
      ...transport,
      ping: (address: string, signal?: AbortSignal) => {
        let pinged: ReturnType<PeerTransport['ping']>;
        try {
          pinged = transport.ping(address, signal);
        } catch (err) {
          return rejection(err);
        }
        return pinged.then((outcome) => {
          this.observe(address, outcome);
          return outcome;
        });
      },
    };
  }

  /** One direct probe of `address` ended; an aborted one (leadership ended) is not counted. */
  observe(address: string, outcome: Outcome<unknown>): void {
    if (!outcome.ok && outcome.reason === 'aborted') return;
    const seconds = outcome.latencyMs / 1000;
    this.duration.observe({ outcome: outcome.ok ? 'ok' : 'failed' }, seconds);
    if (!this.listed.has(address)) return;
    if (outcome.ok) this.answeredIn.set(address, seconds);
    else this.failed.set(address, (this.failed.get(address) ?? 0) + 1);
  }

  /** Discovery changed the peers: what is known of those that left is forgotten. */
  peersChanged({ added, removed }: PeerDiff): void {
    for (const peer of removed) {
      this.listed.delete(peer);
      this.answeredIn.delete(peer);
      this.failed.delete(peer);
    }
    for (const peer of added) this.listed.add(peer);
  }
}
