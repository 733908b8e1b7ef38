// Prometheus metrics of peer messages refused at the HTTP edge, and whether peer authentication
// is on: an operator sees a node with another secret, or somebody knocking.
import { Counter, Gauge, type Registry } from 'prom-client';
import { AUTH_FAILURES } from '../auth/peer-auth.js';

/** Why a peer message was refused: an authentication failure, or who sent it. */
export const REFUSALS = [...AUTH_FAILURES, 'wrong-address', 'stranger'] as const;
export type Refusal = (typeof REFUSALS)[number];

export class PeerMessageMetrics {
  private readonly refused: Counter<'reason'>;

  constructor(registry: Registry, authEnabled: boolean) {
    this.refused = new Counter({
      name: 'knh_peer_messages_refused_total',
      help: 'Peer messages (election, announcement, leave, relayed probe) refused, by reason: an authentication failure (401), or a sender that is not the address it names or not a discovered peer (403).',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of REFUSALS) this.refused.inc({ reason }, 0);
    new Gauge({
      name: 'knh_peer_auth_enabled',
      help: '1 when peer messages are signed and checked with PEER_SECRET / PEER_SECRET_FILE, 0 when not.',
      registers: [registry],
    }).set(authEnabled ? 1 : 0);
  }

  refusedMessage(reason: Refusal): void {
    this.refused.inc({ reason });
  }
}
