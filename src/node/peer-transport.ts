// The peer client as a node uses it: every answer is evidence of the peer's life, a failed request
// gets the peer probed at once, and while the node leads each probe is also the peer's heartbeat.
import type { PeerAuth } from '../auth/peer-auth.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Role } from '../election/bully.js';
import { peerClient, type PeerClient } from '../peer-client/peer-client.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { SchemaRegistry } from '../wire/schemas.js';

export interface NodeTransport {
  transport: PeerClient;
  /** When the peer last answered any request: evidence of life while it is suspect. */
  lastHeard: (address: string) => number | null;
  /** A peer no longer listed. */
  forget: (address: string) => void;
}

export function nodeTransport(o: {
  config: Config;
  self: NodeRef;
  schemas: SchemaRegistry;
  auth: PeerAuth | null;
  clock: Clock;
  userAgent: string;
  election(): { role: Role; epoch: number; announceTo(address: string): void };
  /** Probes the peer now rather than at the next round. */
  probeSoon(address: string): void;
}): NodeTransport {
  const heard = new Map<string, number>();
  const transport = peerClient({
    schemas: o.schemas,
    auth: o.auth,
    ownIp: o.config.podIp,
    timeoutMs: o.config.probeTimeoutMs,
    self: o.self,
    now: () => o.clock.now(),
    userAgent: o.userAgent,
    onAnswer: (address) => heard.set(address, o.clock.now()),
    // A failed heartbeat to a live peer gets it probed at once, not at the next round.
    onFailure: (address) => o.probeSoon(address),
    // While leading, each probe is also the peer's heartbeat (a large mesh announces seldom).
    heartbeat: () => {
      const { role, epoch } = o.election();
      return role === 'coordinator' ? { epoch, from: o.self.address } : null;
    },
    onHeartbeatRefused: (address) => o.election().announceTo(address),
  });
  return {
    transport,
    lastHeard: (address) => heard.get(address) ?? null,
    forget: (address) => heard.delete(address),
  };
}
