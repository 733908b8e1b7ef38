// Prometheus metrics of peer discovery: lists received, peers listed, peers joining and leaving.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PeerDiff } from '../discovery/diff.js';

export class DiscoveryMetrics {
  private readonly updates: Counter;
  private readonly changes: Counter<'change'>;
  private readonly peers: Gauge;

  constructor(registry: Registry) {
    this.updates = new Counter({
      name: 'knh_discovery_updates_total',
      help: 'Peer lists received from discovery (EndpointSlices or the static list), changed or not.',
      registers: [registry],
    });
    this.changes = new Counter({
      name: 'knh_discovery_peer_changes_total',
      help: 'Peers that joined (change="added") or left (change="removed") the peer list.',
      labelNames: ['change'],
      registers: [registry],
    });
    this.changes.inc({ change: 'added' }, 0);
    this.changes.inc({ change: 'removed' }, 0);
    this.peers = new Gauge({
      name: 'knh_discovery_peers',
      help: 'Other nodes in the latest peer list from discovery (this node not counted).',
      registers: [registry],
    });
  }

  /** A peer list arrived: `diff` against the previous one, `peers` in it besides this node. */
  update({ added, removed }: PeerDiff, peers: number): void {
    this.updates.inc();
    this.changes.inc({ change: 'added' }, added.length);
    this.changes.inc({ change: 'removed' }, removed.length);
    this.peers.set(peers);
  }
}
