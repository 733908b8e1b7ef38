// Nodes out of sight: listed by discovery and answering, but refusing the coordinator's signed
// messages (another PEER_SECRET, a clock far off for a version that cannot stamp in its time), or
// taking them unsigned (no PEER_SECRET: nothing it says can be believed, and the mesh refuses what
// it sends), or answering its probes with no proof that it holds the secret (ping-signature.ts:
// another secret, none, or something else answering for its address): one warning incident a node, peer_unauthenticated, opened once it has done so for
// UNAUTHENTICATED_AFTER_MS, closed (peer_authenticated) when it takes them signed again or leaves.
// A node out of sight answers its probes: it is never dead for that, and never left unsaid. Pure.
import type { AuthRefusal, UnprovenPing } from '../core/transport.js';
import type { Alert } from '../wire/alert.js';
import { eventKey, incidentKey, incidentSubject } from '../wire/incident.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

/** Refusing this long makes a node out of sight: one refused message is retried, or a restart. */
export const UNAUTHENTICATED_AFTER_MS = 3_000;
/** A predecessor's incident this coordinator does not see for this long is over. */
export const INHERITED_GRACE_MS = 10_000;

/**
 * Why a node is out of sight: what it refused the coordinator's messages as, `unsigned`, or why
 * its answers to probes proved nothing.
 */
export type SightRefusal = AuthRefusal | 'unsigned' | UnprovenPing;

/** Refusals that say a node cannot authenticate the coordinator (not a busy or replayed one). */
const CANNOT_AUTHENTICATE: ReadonlySet<SightRefusal> = new Set<SightRefusal>([
  'missing',
  'malformed',
  'expired',
  'bad-signature',
  'unnamed',
  'unsigned',
  'ping-unsigned',
  'ping-bad-signature',
  'ping-other-node',
]);

export interface Sight {
  address: string;
  /** When it began refusing: the incident's identity. */
  startMs: number;
  refusal: string;
  /** Its clock's offset from the coordinator's, ms, when notable. */
  offsetMs: number | null;
  /** A predecessor's incident, not yet seen from here. */
  inherited: boolean;
  /** When this coordinator last saw it refuse (or inherited it). */
  seenMs: number;
}

export type SightEnd = 'takes' | 'left' | 'silent' | 'not-seen';

export type SightChange =
  { type: 'opened'; sight: Sight } | { type: 'closed'; sight: Sight; why: SightEnd };

export interface SightInput {
  now: number;
  /**
   * The peers whose last answer refused the coordinator's signed message, or took it unsigned
   * (PeerStanding).
   */
  refusedBy: readonly { address: string; reason: SightRefusal; sinceMs: number }[];
  /** A peer's clock offset, ms; 0 when not notable. */
  offsetOf(address: string): number;
  /** Whether discovery lists it. */
  listed(address: string): boolean;
  /** Whether it answers: not judged dead (a dead node's last refusal says nothing new). */
  answers(address: string): boolean;
}

export class OutOfSight {
  private readonly open = new Map<string, Sight>();

  update(input: SightInput): SightChange[] {
    const { now } = input;
    const changes: SightChange[] = [];
    const refusing = new Map<string, SightInput['refusedBy'][number]>();
    for (const r of input.refusedBy) {
      if (!CANNOT_AUTHENTICATE.has(r.reason) || !input.listed(r.address)) continue;
      if (input.answers(r.address)) refusing.set(r.address, r);
    }
    for (const [address, r] of refusing) {
      const offsetMs = input.offsetOf(address) || null;
      const known = this.open.get(address);
      if (known) {
        // A new object: what an earlier change handed out stays as it was told.
        this.open.set(address, {
          ...known,
          refusal: r.reason,
          offsetMs,
          inherited: false,
          seenMs: now,
        });
        continue;
      }
      if (now - r.sinceMs < UNAUTHENTICATED_AFTER_MS) continue;
      const sight: Sight = {
        address,
        startMs: r.sinceMs,
        refusal: r.reason,
        offsetMs,
        inherited: false,
        seenMs: now,
      };
      this.open.set(address, sight);
      changes.push({ type: 'opened', sight });
    }
    for (const [address, sight] of this.open) {
      if (refusing.has(address)) continue;
      let why: SightEnd;
      if (!input.listed(address)) why = 'left';
      else if (!input.answers(address)) why = 'silent';
      else if (!sight.inherited) why = 'takes';
      else if (now - sight.seenMs >= INHERITED_GRACE_MS) why = 'not-seen';
      else continue;
      this.open.delete(address);
      changes.push({ type: 'closed', sight, why });
    }
    return changes;
  }

  /** A predecessor's open incidents: open here until seen over (or not seen for a while). */
  inherit(alerts: readonly Alert[], now: number): void {
    for (const a of alerts) {
      if (a.kind !== 'peer_unauthenticated' || this.open.has(a.peer.address)) continue;
      this.open.set(a.peer.address, {
        address: a.peer.address,
        startMs: a.startsAt,
        refusal: a.facts?.auth?.refusal ?? 'unknown',
        offsetMs: a.facts?.auth?.offset_ms ?? null,
        inherited: true,
        seenMs: now,
      });
    }
  }

  sights(): Sight[] {
    return [...this.open.values()];
  }

  reset(): void {
    this.open.clear();
  }
}

/** Why a node refuses, in the words an operator acts on. */
function cause(s: Sight): string {
  const off = s.offsetMs;
  const clock =
    off === null
      ? ''
      : `its clock is ${Math.round(Math.abs(off) / 1000)} s ${off > 0 ? 'ahead of' : 'behind'} the coordinator's`;
  switch (s.refusal) {
    case 'bad-signature':
      return 'it holds another PEER_SECRET';
    case 'expired':
      return clock || 'its clock is too far from the coordinator’s';
    case 'missing':
      return 'it has PEER_SECRET set and the coordinator has not';
    case 'unsigned':
      return 'it has no PEER_SECRET set, and the coordinator has: the mesh refuses what it sends';
    case 'ping-unsigned':
      return 'its answers to probes are not signed: it has no PEER_SECRET, or something else answers for its address';
    case 'ping-bad-signature':
      return 'its answers to probes are signed with another PEER_SECRET, or something else answers for its address';
    case 'ping-other-node':
      return 'another node answers its probes for it: something relays them from its address';
    default:
      return clock || 'its knh version or settings differ';
  }
}

/** What the node does that puts it out of sight. */
function what(refusal: string): string {
  if (refusal === 'unsigned') return "answers this coordinator's signed messages unsigned";
  if (refusal.startsWith('ping-')) return `answers this coordinator's probes unproven (${refusal})`;
  return `refuses this coordinator's signed messages (${refusal})`;
}

const ENDED: Record<SightEnd, (name: string) => string> = {
  takes: (n) => `${n} takes the coordinator's signed messages again`,
  left: (n) => `${n} left the mesh`,
  silent: (n) => `${n} no longer answers: it is judged dead (its peer_dead says so)`,
  'not-seen': (n) => `${n} no longer refuses this coordinator's signed messages`,
};

/** The event opening (peer_unauthenticated) or closing (peer_authenticated) a sight's incident. */
export function sightPayload(args: {
  sight: Sight;
  /** Closing it, and why it is over. */
  ended?: SightEnd;
  coordinator: NodeRef;
  epoch: number;
  now: number;
  ref: { id: string; node_name: string };
  /** Its verdict's health, as the coordinator's probes say. */
  health: PeerStatusPayload['peer']['health'];
}): PeerStatusPayload {
  const { sight, ended, ref } = args;
  const event = ended ? 'peer_authenticated' : 'peer_unauthenticated';
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    peer: {
      id: ref.id,
      address: sight.address,
      // Its host and its knh answer; KNH's receivers page on alive: false, and this is a warning.
      alive: true,
      node_name: ref.node_name,
      health: args.health,
      path_broken: false,
      since: iso(sight.startMs),
    },
    coordinator: args.coordinator.id,
    coordinator_address: args.coordinator.address,
    event,
    epoch: args.epoch,
    timestamp: iso(args.now),
    dedup_key: eventKey(
      incidentKey(incidentSubject.node('auth', sight.address), sight.startMs),
      event,
    ),
    severity: 'warning',
    reason: ended
      ? ended === 'takes' && sight.refusal.startsWith('ping-')
        ? `${ref.node_name} answers the coordinator's probes signed again`
        : ENDED[ended](ref.node_name)
      : `${ref.node_name} ${what(sight.refusal)}: ${cause(sight)}; ${sight.refusal.startsWith('ping-') ? 'something answers, but nothing says it is knh with the secret' : 'it answers, but takes no part in elections, verdicts or pair probing'}`,
    auth: { refusal: sight.refusal, offset_ms: sight.offsetMs },
  };
}
