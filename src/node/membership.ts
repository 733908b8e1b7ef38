// Which peers this node works with: those discovery lists (itself left out), minus those that
// left in order; whether discovery lists this node itself, and what it says while it does not.
import type { Config } from '../config/load.js';
import { every, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { Departures, type Departed } from '../discovery/departures.js';
import { diffPeers } from '../discovery/diff.js';
import type { EventLog } from '../status/event-log.js';
import { parseAddress, type NodeRef } from '../wire/node-ref.js';

/** How long a peer that left in order is left alone before it is probed again. */
export const DEPARTED_FOR_MS = 5 * 60_000;

/** How long a node waits to see its own address among the peers before it says why. */
const SELF_WAIT_WARN_MS = 30_000;

export interface MembershipOptions {
  config: Pick<Config, 'discovery' | 'probeTimeoutMs' | 'serviceName' | 'namespace'>;
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  events: EventLog;
  /** Discovery's list changed, or was listed again (every time). */
  onListed(change: { added: string[]; removed: string[] }, discovered: ReadonlySet<string>): void;
  /** The peers taking part changed. */
  onPresent(present: readonly string[]): void;
  /** Whether discovery lists this node (every time it lists). */
  onSelfListed(listed: boolean): void;
}

export class Membership {
  /** Every peer discovery lists (self excluded). */
  private listedPeers: readonly string[] = [];
  /** The same, to look up (5,000 peers). */
  private discovered = new Set<string>();
  /** The IPs of the discovered peers: who may send large bodies (http/body-budget.ts). */
  private discoveredIps = new Set<string>();
  /** Those not departed: they take part. */
  private presentPeers: readonly string[] = [];
  private selfListed = false;
  private stopWarning: (() => void) | null = null;
  /** Stopping: discovery may still call back until it has stopped, and changes nothing. */
  private closed = false;
  private readonly departures: Departures;
  /**
   * Kubernetes: take part only while this pod is listed, so that every peer can reach it too
   * (KNH waited the same way), and step out when its endpoint leaves. Static: PEERS may leave it out.
   */
  private readonly mustSeeSelf: boolean;

  constructor(private readonly o: MembershipOptions) {
    // Messages a leaving node sent just before its leave may still arrive for a request timeout.
    this.departures = new Departures(2 * o.config.probeTimeoutMs + 1_000, DEPARTED_FOR_MS);
    this.mustSeeSelf = o.config.discovery === 'kubernetes';
  }

  get peers(): readonly string[] {
    return this.listedPeers;
  }

  get present(): readonly string[] {
    return this.presentPeers;
  }

  /** Whether discovery lists this node's own address (static discovery: once loaded). */
  get listsSelf(): boolean {
    return this.selfListed;
  }

  isPeer(address: string): boolean {
    return this.discovered.has(address);
  }

  /** Whether a connection from `ip` comes from a discovered peer's pod. */
  isPeerIp(ip: string): boolean {
    return this.discoveredIps.has(ip);
  }

  departed(): Departed[] {
    return this.departures.list();
  }

  /** Armed before discovery starts: an API that never answers must not leave the node silent. */
  start(): void {
    if (this.mustSeeSelf) this.waitForSelf();
  }

  /** The node is stopping: what discovery says from now on changes nothing. */
  close(): void {
    this.closed = true;
    this.stopWaiting();
  }

  /** Discovery's list of addresses (this node's own among them, when listed). */
  update(addresses: readonly string[]): void {
    if (this.closed) return;
    const { self, logger } = this.o;
    const next = addresses.filter((a) => a !== self.address);
    const change = diffPeers(this.listedPeers, next);
    this.listedPeers = next;
    this.discovered = new Set(next);
    this.discoveredIps = new Set(next.map((a) => (parseAddress(a)?.ip ?? a).toLowerCase()));
    this.o.onListed(change, this.discovered);
    const { added, removed } = change;
    if (added.length > 0 || removed.length > 0) {
      logger.info(
        { event: 'peers-changed', added, removed, peers: next.length },
        `peers: ${next.length} (+${added.length} -${removed.length})`,
      );
      for (const address of added) this.departures.clear(address);
      this.apply();
    }
    const listed = !this.mustSeeSelf || addresses.includes(self.address);
    this.selfListed = listed;
    if (listed) this.stopWaiting();
    this.o.onSelfListed(listed);
    if (!listed) this.waitForSelf();
  }

  /** A peer said it is leaving; false when it is not a discovered peer (ignored). */
  leave(from: NodeRef): boolean {
    const { clock, logger, events } = this.o;
    if (!this.departures.mark(from, this.listedPeers, clock.now())) return false;
    logger.info(
      { event: 'peer-left', peer: from.id, peerAddress: from.address },
      `${from.id} is shutting down: no longer probed or elected, not reported dead`,
    );
    events.add('left', `${from.id} shut down in order (not reported dead)`, from.id);
    this.apply();
    return true;
  }

  /** A departed peer that speaks again (it restarted) takes part again. */
  spoke(address: string): void {
    if (!this.departures.spoke(address, this.o.clock.now())) return;
    this.o.events.add('returned', `${address} is back after leaving`, address);
    this.apply();
  }

  /**
   * Peers gone longer than DEPARTED_FOR_MS take part again: each is handed to `probeAgain`, to be
   * probed as the live node it last was.
   */
  expireDepartures(probeAgain: (d: Departed) => void): void {
    const expired = this.departures.expire(this.o.clock.now());
    if (expired.length === 0) return;
    this.apply();
    for (const d of expired) {
      this.o.events.add(
        'returned',
        `${d.id} left ${DEPARTED_FOR_MS / 60_000} min ago: probed again`,
        d.id,
      );
      probeAgain(d);
    }
  }

  private apply(): void {
    const next = this.departures.present(this.listedPeers);
    const { added, removed } = diffPeers(this.presentPeers, next);
    if (added.length === 0 && removed.length === 0) return;
    this.presentPeers = next;
    this.o.onPresent(next);
  }

  private stopWaiting(): void {
    this.stopWarning?.();
    this.stopWarning = null;
  }

  private waitForSelf(): void {
    if (this.stopWarning) return;
    const { self, logger, clock } = this.o;
    logger.info(
      { event: 'waiting-for-self', address: self.address, peers: this.listedPeers.length },
      `waiting for ${self.address} to appear among the endpoints before taking part`,
    );
    this.stopWarning = every(clock, SELF_WAIT_WARN_MS, () => {
      const peers = this.listedPeers.length;
      logger.warn(
        { event: 'waiting-for-self', address: self.address, peers },
        `still not listed after ${SELF_WAIT_WARN_MS / 1000} s more: ${self.address} is not among the ${peers} endpoints of service ${this.o.config.serviceName ?? ''} in ${this.o.config.namespace ?? ''}; check that the Service selects this pod, that it publishes not-ready addresses, that POD_IP is status.podIP, that CONTAINER_PORT is the Service's target port, and that the Role allows listing EndpointSlices`,
      );
    });
  }
}
