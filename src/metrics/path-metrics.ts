// Prometheus metrics of pair probing (issue 22): every node's own paths (the paths from it) by
// state, their figures summed up, and each path's loss and latency; on the coordinator, the
// findings of its last localization by kind.
//
// Per-path series are every node's, not the coordinator's only: every pod is scraped, so at N nodes
// the mesh exports 3·N·(N − 1) of them in all. They exist while the mesh has at most
// `perPathLimit` other nodes (METRICS_PER_PATH_LIMIT), none at all past it, where the aggregates
// (and the status page) tell how the paths fare: a scrape stays bounded whatever the mesh's size.
// Every series is read from the prober at scrape time: a path forgotten has none. A per-path series
// names the peer at its end by address (`peer`) and by node (`node`), as the per-peer ones do.
import { Gauge, type Registry } from 'prom-client';
import { mergeStats } from '../paths/merge-stats.js';
import type { PathCondition, ProbedPath } from '../paths/pair-prober.js';
import type { Finding } from '../paths/path-state.js';
import { parseAddress } from '../wire/node-ref.js';

export interface PathSource {
  /** This node's own paths, as its pair prober judges them. */
  ownPaths(): readonly ProbedPath[];
  /** The other nodes taking part (pair probing probes each in turn). */
  meshPeers(): number;
  /** The findings of this node's last localization as coordinator; none on a follower. */
  pathFindings(): readonly Finding[];
  /** The name of the node at `address`, where known (default: none, so its IP stands for it). */
  nodeOf?(address: string): string | undefined;
}

const STATES: readonly Exclude<PathCondition, 'unknown'>[] = ['ok', 'degraded', 'mtu', 'failed'];
const KINDS: readonly Finding['kind'][] = [
  'partition',
  'unreachable',
  'egress-broken',
  'path-broken',
  'node-mtu',
  'path-mtu',
  'node-degraded',
  'path-degraded',
];

const seconds = (ms: number | null) => (ms === null ? Number.NaN : ms / 1000);

export class PathMetrics {
  constructor(registry: Registry, source: PathSource, { perPathLimit }: { perPathLimit: number }) {
    const withinLimit = () => perPathLimit > 0 && source.meshPeers() <= perPathLimit;
    /** The paths whose own series are exported: all of them, or none past the limit. */
    const perPath = () => (withinLimit() ? source.ownPaths() : []);
    const own = () => source.ownPaths().filter((p) => p.state !== 'unknown');
    const nodeOf = (address: string) =>
      source.nodeOf?.(address) ?? parseAddress(address)?.ip ?? address;
    const registers = [registry];

    new Gauge({
      name: 'knh_per_path_metrics_enabled',
      help: '1 while the mesh has at most METRICS_PER_PATH_LIMIT other nodes, so this node exports a series a path of its own (knh_path_loss_ratio, knh_path_p50_latency_seconds, knh_path_p99_latency_seconds); 0 past it, or with the limit 0.',
      registers,
      collect() {
        this.set(withinLimit() ? 1 : 0);
      },
    });
    const perPathGauge = (name: string, help: string, value: (p: ProbedPath) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ['peer', 'node'],
        registers,
        collect() {
          this.reset(); // paths forgotten, or every path past the limit
          for (const p of perPath()) {
            const v = p.state === 'unknown' ? null : value(p);
            if (v !== null) this.set({ peer: p.to, node: nodeOf(p.to) }, v);
          }
        },
      });
    perPathGauge(
      'knh_path_loss_ratio',
      "Share of this node's pair probes of the peer (by address) that were lost (timed out or cut short; a refusal is the peer's host answering, no loss), over PATH_WINDOW; within METRICS_PER_PATH_LIMIT.",
      (p) => p.stats.lossRatio,
    );
    perPathGauge(
      'knh_path_p50_latency_seconds',
      "Median round trip of this node's pair probes of the peer (by address) that it answered, over PATH_WINDOW; within METRICS_PER_PATH_LIMIT.",
      (p) => (p.stats.p50Ms === null ? null : p.stats.p50Ms / 1000),
    );
    perPathGauge(
      'knh_path_p99_latency_seconds',
      "99th percentile round trip of this node's pair probes of the peer (by address) that it answered, over PATH_WINDOW; within METRICS_PER_PATH_LIMIT.",
      (p) => (p.stats.p99Ms === null ? null : p.stats.p99Ms / 1000),
    );

    new Gauge({
      name: 'knh_paths',
      help: "This node's own paths (pair probing, to the peers it probed lately) by state: ok, degraded, mtu (full-size packets dropped), failed.",
      labelNames: ['state'],
      registers,
      collect() {
        const paths = own();
        for (const state of STATES) {
          this.set({ state }, paths.filter((p) => p.state === state).length);
        }
      },
    });
    const aggregate = (name: string, help: string, value: (paths: ProbedPath[]) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(own()));
        },
      });
    aggregate(
      'knh_paths_loss_ratio',
      "Share of this node's pair probes of all its paths that failed, over PATH_WINDOW (0 with none).",
      (paths) => mergeStats(paths.map((p) => p.stats)).lossRatio,
    );
    aggregate(
      'knh_paths_max_loss_ratio',
      "The highest loss ratio of this node's paths, over PATH_WINDOW (0 with none).",
      (paths) => Math.max(0, ...paths.map((p) => p.stats.lossRatio)),
    );
    aggregate(
      'knh_paths_p50_latency_seconds',
      "The median round trips of this node's paths averaged, each weighted by its answered probes, over PATH_WINDOW; NaN with none answered.",
      (paths) => seconds(mergeStats(paths.map((p) => p.stats)).p50Ms),
    );
    aggregate(
      'knh_paths_p99_latency_seconds',
      "The 99th percentile round trips of this node's paths averaged, each weighted by its answered probes, over PATH_WINDOW; NaN with none answered.",
      (paths) => seconds(mergeStats(paths.map((p) => p.stats)).p99Ms),
    );
    aggregate(
      'knh_paths_max_p99_latency_seconds',
      "The highest 99th percentile round trip of this node's paths, over PATH_WINDOW; NaN with none answered.",
      (paths) => {
        const p99s = paths.flatMap((p) => (p.stats.p99Ms === null ? [] : [p.stats.p99Ms]));
        return seconds(p99s.length === 0 ? null : Math.max(...p99s));
      },
    );

    new Gauge({
      name: 'knh_path_findings',
      help: "Findings of this coordinator's last localization of every node's paths, by kind (partition, unreachable, egress-broken, path-broken, node-mtu, path-mtu, node-degraded, path-degraded); 0 on a follower.",
      labelNames: ['kind'],
      registers,
      collect() {
        const findings = source.pathFindings();
        for (const kind of KINDS) {
          this.set({ kind }, findings.filter((f) => f.kind === kind).length);
        }
      },
    });
  }
}
