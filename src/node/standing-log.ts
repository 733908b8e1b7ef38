// What peers say of this node's signed messages, logged when it changes (checked once a second):
// every peer refusing them (it cannot lead, and is not ready), or peers' clocks far from this
// node's (its messages to them are then stamped in their time).
import type { PeerStanding } from '../auth/peer-standing.js';
import type { Logger } from '../core/logger.js';

export function standingLogger(standing: PeerStanding, logger: Logger): (now: number) => void {
  let refused = false;
  let skewed = false;
  return (now) => {
    const why = standing.unauthenticated(now);
    if ((why !== null) !== refused) {
      refused = why !== null;
      if (why) logger.warn({ event: 'peers-refuse-this-node', why }, why);
      else logger.info({ event: 'peers-take-this-node' }, "peers take this node's signed messages");
    }
    const { offsets } = standing.view(now);
    if (offsets.length > 0 === skewed) return;
    skewed = offsets.length > 0;
    if (!skewed) {
      logger.info({ event: 'peer-clocks-agree' }, "peers' clocks agree with this node's");
      return;
    }
    const largest = offsets.reduce((a, b) => (Math.abs(b.offsetMs) > Math.abs(a.offsetMs) ? b : a));
    logger.warn(
      { event: 'peer-clocks-off', peers: offsets.length, largest },
      `${offsets.length} peer(s) have clocks 2 s or more from this node's (largest ${Math.round(largest.offsetMs / 1000)} s, ${largest.address}): signed messages to them are stamped in their time; check NTP on whichever side is wrong`,
    );
  };
}
