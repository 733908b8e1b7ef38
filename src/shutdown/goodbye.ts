// On SIGTERM a node tells every peer it is leaving (POST /leave), so that a coordinator's successor
// takes over at once and nobody reports the node dead. Bounded: a peer that cannot be reached is
// not waited for past GOODBYE_WAIT_MS.
import { waitAtMost, type Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { LeaveNotice } from '../wire/peer-messages.js';
import type { PeerTransport } from '../core/transport.js';

export const GOODBYE_WAIT_MS = 1_000;

export async function sayGoodbye(
  transport: Pick<PeerTransport, 'leave'>,
  peers: readonly string[],
  notice: LeaveNotice,
  clock: Clock,
  logger: Logger,
): Promise<void> {
  if (peers.length === 0) return;
  let told = 0;
  const all = Promise.all(
    peers.map(async (address) => {
      const outcome = await transport.leave(address, notice);
      if (outcome.ok) told++;
    }),
  );
  await waitAtMost(clock, all, GOODBYE_WAIT_MS);
  logger.info(
    { event: 'left', told, peers: peers.length },
    `told ${told} of ${peers.length} peers this node is leaving`,
  );
}
