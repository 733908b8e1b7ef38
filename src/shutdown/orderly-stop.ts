// A node's orderly stop (SIGTERM): it stops taking part, hands over or ends its term, tells every
// peer it is leaving, drains its webhooks within the grace period and closes its server.
import type { Reporter } from '../alerts/reporter.js';
import { waitAtMost, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerTransport } from '../core/transport.js';
import type { NodeRef } from '../wire/node-ref.js';
import { sayGoodbye } from './goodbye.js';

/** Something that stops, at once. */
interface Stops {
  stop(): void;
}

export interface StoppingNode {
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  health: Stops & { markStopping(): void };
  /** Closed first (discovery may call back until it stops); `present`: the peers to tell. */
  membership: { close(): void; readonly present: readonly string[] };
  /** The 1-second housekeeping. */
  stopTicking(): void;
  /** Ends this node's part in the election (a coordinator first shares what it holds). */
  leadership: { end(): Promise<{ epoch: number; wasStarted: boolean }> };
  transport: Pick<PeerTransport, 'leave'> & { closeIdle(): void };
  source: { stop(): Promise<void> };
  reporter: Pick<Reporter, 'flush'>;
  /** The webhook queues, drained within the grace period. */
  queues: readonly { drain(maxMs: number): Promise<unknown> }[];
  server: { close(): Promise<void> };
  loopLag: Stops;
  /** Pair probing: stops with the node's part in the mesh. */
  paths: Stops;
}

export async function orderlyStop(n: StoppingNode, graceMs: number): Promise<void> {
  const { clock, logger } = n;
  n.health.markStopping();
  logger.info({ event: 'stopping' }, 'stopping');
  n.membership.close();
  n.stopTicking();
  n.paths.stop();
  const { epoch, wasStarted } = await n.leadership.end();
  // Then every peer hears it is leaving: the next node takes over at once, nobody reports it.
  const peers = n.membership.present;
  if (wasStarted) await sayGoodbye(n.transport, peers, { from: n.self, epoch }, clock, logger);
  await n.source.stop();
  // Alerts still being shared with followers go to the queues first, then the queues drain.
  const deadline = clock.now() + graceMs;
  await waitAtMost(clock, n.reporter.flush(), graceMs);
  await Promise.all(n.queues.map((q) => q.drain(Math.max(0, deadline - clock.now()))));
  await n.server.close();
  n.transport.closeIdle();
  n.health.stop();
  n.loopLag.stop();
}
