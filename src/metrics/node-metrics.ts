// The node's one Prometheus registry: every knh_ metric, grouped by the part of knh it describes,
// and the standard process and Node.js metrics.
import { Gauge, Registry } from 'prom-client';
import type { BuildInfo } from '../build-info.js';
import type { PeerDiff } from '../discovery/diff.js';
import { DetectionMetrics, type DetectionSource } from './detection-metrics.js';
import { DiscoveryMetrics } from './discovery-metrics.js';
import type { StandingView } from '../auth/peer-standing.js';
import { ElectionMetrics, type ElectionState } from './election-metrics.js';
import { PathMetrics, type PathSource } from './path-metrics.js';
import { PeerMessageMetrics } from './peer-message-metrics.js';
import { ProbeMetrics } from './probe-metrics.js';
import { registerProcessMetrics } from './process-metrics.js';
import { WebhookMetrics } from './webhook-metrics.js';

export interface NodeMetricsOptions extends DetectionSource, PathSource {
  build: BuildInfo;
  /** This node, as knh_node_info shows it: the series a query joins on to name a pod's node. */
  self: { id: string; address: string; nodeName: string };
  /** The election's current state (read at every scrape). */
  election(): ElectionState;
  /** Webhook events queued or being delivered, over every receiver. */
  webhooksPending(): number;
  /**
   * Per-peer series (coordinator only) are exported while its verdicts hold at most this many
   * peers; 0: never (METRICS_PER_PEER_LIMIT).
   */
  perPeerLimit: number;
  /**
   * Every node's per-path series are exported while the mesh has at most this many other nodes; 0:
   * never (METRICS_PER_PATH_LIMIT).
   */
  perPathLimit: number;
  /** Whether peer messages are signed (PEER_SECRET). */
  peerAuth?: boolean;
  /** What peers said of this node's signed messages lately (none without a secret). */
  standing?: () => StandingView | null;
  /**
   * A rendering is served again for this long (ms; default 0): a flood of scrapes costs one
   * rendering a second, not one each, and cannot delay the probe rounds.
   */
  cacheMs?: number;
}

/** Gauges read their sources at scrape time; counters are told of events by main's wiring. */
export class NodeMetrics {
  readonly registry = new Registry();
  readonly detection: DetectionMetrics;
  readonly probes: ProbeMetrics;
  readonly election: ElectionMetrics;
  readonly webhooks: WebhookMetrics;
  readonly discovery: DiscoveryMetrics;
  readonly peerMessages: PeerMessageMetrics;
  private readonly cacheMs: number;
  private cached: {
    atMs: number;
    rendering: Promise<{ contentType: string; body: string }>;
  } | null = null;

  constructor(options: NodeMetricsOptions) {
    const registry = this.registry;
    this.cacheMs = options.cacheMs ?? 0;
    this.detection = new DetectionMetrics(registry, options);
    this.probes = new ProbeMetrics(registry, options, { perPeerLimit: options.perPeerLimit });
    new PathMetrics(registry, options, { perPathLimit: options.perPathLimit });
    this.election = new ElectionMetrics(registry, () => options.election());
    this.webhooks = new WebhookMetrics(registry, () => options.webhooksPending());
    this.discovery = new DiscoveryMetrics(registry);
    this.peerMessages = new PeerMessageMetrics(
      registry,
      options.peerAuth ?? false,
      options.standing,
    );
    new Gauge({
      name: 'knh_build_info',
      help: 'Always 1: the knh version this node runs and the git revision it was built from.',
      labelNames: ['version', 'revision'],
      registers: [registry],
    }).set({ version: options.build.version, revision: options.build.revision }, 1);
    const { id, address, nodeName } = options.self;
    new Gauge({
      name: 'knh_node_info',
      help: 'Always 1: this node by name (its Kubernetes node), id and address (the `peer` label of the series about it on other pods), and the knh version it runs.',
      labelNames: ['node', 'id', 'address', 'version'],
      registers: [registry],
    }).set({ node: nodeName, id, address, version: options.build.version }, 1);
    registerProcessMetrics(registry);
  }

  /** A peer list from discovery: counted, and the series of peers that left are removed. */
  peersListed(diff: PeerDiff, peers: number): void {
    this.discovery.update(diff, peers);
    this.probes.peersChanged(diff);
  }

  /** The text exposition format, and its content type. */
  render(): Promise<{ contentType: string; body: string }> {
    const t = performance.now();
    if (this.cached && t - this.cached.atMs < this.cacheMs) return this.cached.rendering;
    const rendering = this.registry
      .metrics()
      .then((body) => ({ contentType: this.registry.contentType, body }));
    this.cached = { atMs: t, rendering };
    return rendering;
  }
}
