// The coordinator's nodes out of sight (alerts/out-of-sight.ts), from what its peers' answers say
// of its signed messages (PeerStanding), told every second through the reporter like any finding,
// shared with the followers as alerts, and taken over by a successor.
import { alertOf } from '../alerts/lifecycle.js';
import { OutOfSight, sightPayload, type Sight, type SightInput } from '../alerts/out-of-sight.js';
import type { PeerStanding } from '../auth/peer-standing.js';
import type { Clock } from '../core/clock.js';
import type { PeerRecord } from '../prober/verdict.js';
import type { Alert } from '../wire/alert.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

export interface AuthFindingsOptions {
  standing: PeerStanding;
  clock: Clock;
  self: NodeRef;
  /** This node's term while it leads (its epoch), else null. */
  leading(): { epoch: number } | null;
  /** Whether discovery lists the address. */
  listed(address: string): boolean;
  /** The coordinator's verdict about a peer, if it has one. */
  record(address: string): PeerRecord | undefined;
  /** Its id and node name as discovery and the verdicts know them. */
  refOf(address: string): { id: string; node_name: string };
  /** Where the events go: the reporter (PEER_STATUS_URL, then every other receiver). */
  onFinding(payload: PeerStatusPayload): void;
}

export class AuthFindings {
  private readonly tracker = new OutOfSight();
  /** The opening event of each incident open here, by address: its alert is shared. */
  private readonly openings = new Map<string, PeerStatusPayload>();
  private wasLeading = false;

  constructor(private readonly o: AuthFindingsOptions) {}

  /** Once a second. */
  tick(): void {
    const { standing, clock } = this.o;
    const lead = this.o.leading();
    if (!lead) {
      // Its incidents are the next coordinator's now (shared with it as alerts).
      if (this.wasLeading) this.reset();
      return;
    }
    this.wasLeading = true;
    const now = clock.now();
    // Every peer refuses this node: it is the one out of sight (it does not lead for long).
    if (standing.unauthenticated(now) !== null) return;
    const { refusedBy, unsignedBy, unprovenBy } = standing.view(now);
    const changes = this.tracker.update({
      now,
      refusedBy: oneReasonEach(
        [...refusedBy, ...unsignedBy.map((u) => ({ ...u, reason: 'unsigned' as const }))],
        unprovenBy,
      ),
      offsetOf: (address) => standing.offsetOf(address),
      listed: (address) => this.o.listed(address),
      answers: (address) => this.o.record(address)?.health !== 'dead',
    });
    for (const c of changes) {
      const payload = this.payload(
        c.sight,
        lead.epoch,
        now,
        c.type === 'closed' ? c.why : undefined,
      );
      if (c.type === 'opened') this.openings.set(c.sight.address, payload);
      else this.openings.delete(c.sight.address);
      this.o.onFinding(payload);
    }
  }

  /** A predecessor's open incidents (its shared alerts): closed under their keys when over. */
  inherit(alerts: readonly Alert[]): void {
    const now = this.o.clock.now();
    this.tracker.inherit(alerts, now);
    const lead = this.o.leading();
    for (const sight of this.tracker.sights()) {
      if (!this.openings.has(sight.address)) {
        this.openings.set(sight.address, this.payload(sight, lead?.epoch ?? 1, now));
      }
    }
  }

  /** Whether the incident an event opened is still open here (one held for maintenance). */
  isOpen(payload: PeerStatusPayload): boolean {
    return this.openings.get(payload.peer.address)?.dedup_key === payload.dedup_key;
  }

  /** The incidents open here, as alerts: shared with the followers. */
  alerts(): Alert[] {
    return [...this.openings.values()].map(alertOf);
  }

  private reset(): void {
    this.wasLeading = false;
    this.tracker.reset();
    this.openings.clear();
  }

  private payload(
    sight: Sight,
    epoch: number,
    now: number,
    ended?: Parameters<typeof sightPayload>[0]['ended'],
  ): PeerStatusPayload {
    return sightPayload({
      sight,
      ...(ended ? { ended } : {}),
      coordinator: this.o.self,
      epoch,
      now,
      ref: this.o.refOf(sight.address),
      health: this.o.record(sight.address)?.health ?? 'unknown',
    });
  }
}

type Refusing = SightInput['refusedBy'][number];

/**
 * One entry a node: what it says of the coordinator's messages names the cause better than what
 * its probes show, when it says anything; the node is out of sight since the earlier of the two
 * (a restarted node is probed before it is sent a message).
 */
export function oneReasonEach(
  messages: readonly Refusing[],
  probes: readonly Refusing[],
): Refusing[] {
  const by = new Map<string, Refusing>();
  for (const r of messages) by.set(r.address, r);
  for (const p of probes) {
    const m = by.get(p.address);
    if (!m) by.set(p.address, p);
    else if (p.sinceMs < m.sinceMs) by.set(p.address, { ...m, sinceMs: p.sinceMs });
  }
  return [...by.values()];
}
