// Prometheus metrics of peer messages refused at the HTTP edge, and whether peer authentication
// is on: an operator sees a node with another secret, or somebody knocking.
import { Counter, Gauge, type Registry } from 'prom-client';
import { AUTH_FAILURES } from '../auth/peer-auth.js';
import type { StandingView } from '../auth/peer-standing.js';

/** Why a peer message was refused: an authentication failure, or who sent it. */
export const REFUSALS = [...AUTH_FAILURES, 'wrong-address', 'stranger'] as const;
export type Refusal = (typeof REFUSALS)[number];

/** Who sent a body refused by its headers: a discovered peer's IP, or any other. */
export type BodySender = 'peer' | 'other';
/** Why: no room in its sender's budget now (503), over the limit (413), over others' (403). */
export type BodyRefusal = 'busy' | 'too-large' | 'peers-only';

export class PeerMessageMetrics {
  private readonly refused: Counter<'reason'>;
  private readonly bodies: Counter<'sender' | 'reason'>;

  /** `standing`: what peers said of this node's signed messages lately (null: no secret). */
  constructor(registry: Registry, authEnabled: boolean, standing?: () => StandingView | null) {
    this.refused = new Counter({
      name: 'knh_peer_messages_refused_total',
      help: 'Peer messages (election, announcement, leave, relayed probe) refused, by reason: an authentication failure (401), or a sender that is not the address it names or not a discovered peer (403).',
      labelNames: ['reason'],
      registers: [registry],
    });
    for (const reason of REFUSALS) this.refused.inc({ reason }, 0);
    this.bodies = new Counter({
      name: 'knh_request_bodies_refused_total',
      help: "Request bodies refused by their headers before a byte was read, by sender (peer: a discovered peer's IP; other: anyone else) and reason (busy: no room in the sender's budget now, 503; too-large: over the route's limit, 413; peers-only: over the small limit others may send, 403). Busy from peers means signed messages were turned away.",
      labelNames: ['sender', 'reason'],
      registers: [registry],
    });
    for (const sender of ['peer', 'other'] as const) {
      for (const reason of ['busy', 'too-large', 'peers-only'] as const) {
        this.bodies.inc({ sender, reason }, 0);
      }
    }
    new Gauge({
      name: 'knh_peer_auth_enabled',
      help: '1 when peer messages are signed and checked with PEER_SECRET / PEER_SECRET_FILE, 0 when not.',
      registers: [registry],
    }).set(authEnabled ? 1 : 0);
    new Gauge({
      name: 'knh_peers_refusing_this_node',
      help: "Peers whose last answer to one of this node's signed messages (within a minute) refused it as not authenticated, by the reason they gave (expired: this node's clock too far from theirs, sent again in their time; bad-signature: another PEER_SECRET). Every peer that answers refusing: this node cannot lead, and is not ready.",
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        setByReason(this, standing?.()?.refusedBy ?? []);
      },
    });
    new Gauge({
      name: 'knh_peers_answering_unproven',
      help: "Peers whose last answer to one of this node's probes (within a minute) did not prove them, by why: ping-unsigned (no signature from a node that ought to sign: no PEER_SECRET, or something else answers for its address), ping-bad-signature (another PEER_SECRET, or a forgery), ping-other-node (signed by a node naming another address). Such a peer is answered as alive and named out of sight (peer_unauthenticated).",
      labelNames: ['reason'],
      registers: [registry],
      collect() {
        setByReason(this, standing?.()?.unprovenBy ?? []);
      },
    });
    new Gauge({
      name: 'knh_peer_clock_offset_seconds',
      help: "How far a peer's wall clock is from this node's (positive: ahead), from the Date of its answers; only peers 2 s or more off (the Date header's resolution is a second). Signed messages to such a peer are stamped in its time.",
      labelNames: ['peer'],
      registers: [registry],
      collect() {
        this.reset();
        for (const o of standing?.()?.offsets ?? [])
          this.set({ peer: o.address }, o.offsetMs / 1000);
      },
    });
  }

  refusedMessage(reason: Refusal): void {
    this.refused.inc({ reason });
  }

  refusedBody(sender: BodySender, reason: BodyRefusal): void {
    this.bodies.inc({ sender, reason });
  }
}

/** Sets `gauge` to how many of `entries` give each reason (reasons no longer given: gone). */
function setByReason(gauge: Gauge<'reason'>, entries: readonly { reason: string }[]): void {
  gauge.reset();
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.reason, (counts.get(e.reason) ?? 0) + 1);
  for (const [reason, n] of counts) gauge.set({ reason }, n);
}
