// The coordinators this node knows led before it: a new coordinator takes a term's hand-over
// (wire/term-handover.ts) only from one of them.
//
// With one shared secret, any peer can put a `handover` in its reply to an announcement; one
// taken blindly sends the events it names (pages) and skips those it calls settled (silence).
// A node learns who led before it in two ways, and nothing else makes a peer a predecessor:
// - it followed that node: it took its announcement (or a higher-ranked peer vouched for it);
// - the refusals of its own announcement named that node as the coordinator of a newer term
//   (`stale-epoch`): how a node that has just started, or a coordinator whose partition healed,
//   learns whose term its own supersedes. Those refusals already hand it that term's verdicts and
//   events (delegate.mergeSuperseded), unchecked: a peer that names itself there could inject
//   as much through them (security.md says so).
// The sequences this serves, and what each is given:
// - the coordinator crashes: nothing is handed over (its followers' copies are: term-memory.ts);
// - a higher-ranked node starts (or restarts) while another leads: its first announcement is
//   refused naming that coordinator, which then takes its newer term and hands over;
// - two failovers in a row (A leads, B takes over and dies, C takes over): C followed A, and B if
//   B's announcement reached it; A may still be handing over (what B took of it died with B),
//   and is taken;
// - a healed partition: the side that held the newer epoch refuses the other coordinator's
//   heartbeat naming its own coordinator, which yields once that other one takes a newer term,
//   and is taken. When the yielding side held the older epoch, its followers take the new term
//   at once and nobody names its coordinator: that hand-over is refused (what its side found
//   about nodes still down, this node finds again with its own probes);
// - a node that knows no predecessor (it started with the mesh, or no refusal named anyone):
//   refused. A node taking over a running mesh hears of its coordinator from the refusals of
//   its first announcement, before its own term reaches that coordinator, so knowing none means
//   the term handed over is one it never heard of: a hand-over it cannot tell from an injection.
//   A page nobody can trust, or silence somebody chose, is worse than a term nobody named.
// An empty hand-over (nothing sent, in flight or unsent) carries nothing to refuse: the short
// terms of a mesh starting together end in them, and they are left out quietly.
import type { Logger } from '../core/logger.js';
import { WarnThrottle } from '../core/warn-throttle.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { AnnouncementReply } from '../wire/peer-messages.js';
import type { TermHandover } from '../wire/term-handover.js';
import { SUCCESSORS } from './bully.js';

/**
 * Predecessors remembered at most, the newest kept: a coordinator and the successors it names,
 * each of which may lead for a moment in turn when the top of the mesh fails together.
 */
export const MAX_PREDECESSORS = SUCCESSORS + 1;

/**
 * Why a hand-over is refused: its sender is no coordinator this node knows led before it, or it
 * names a term newer than this node's. The epoch a hand-over names is the one its sender held
 * when it stopped leading: its own term, or the newer one whose announcement ended it (this
 * node's); a node that took this node's term holds none newer.
 */
export const HANDOVER_REFUSALS = ['not-predecessor', 'newer-term'] as const;
export type HandoverRefusal = (typeof HANDOVER_REFUSALS)[number];

/**
 * Why a hand-over of `epoch` from the peer at `from` is refused by a coordinator of `ownEpoch`
 * knowing the predecessors `known` (addresses); null: it is taken. The epoch at which this node
 * knew a predecessor is no lower bound: learned second-hand (a vouched leader, a follower's
 * refusal) it may be newer than that node's own term.
 */
export function handoverRefusal(
  known: readonly string[],
  from: string,
  epoch: number,
  ownEpoch: number,
): HandoverRefusal | null {
  if (!known.includes(from)) return 'not-predecessor';
  if (epoch > ownEpoch) return 'newer-term';
  return null;
}

/**
 * The coordinators that `stale-epoch` refusals of this node's announcement name, oldest epoch
 * first: peers only (a name that is no peer could only push a real predecessor out), not `self`.
 */
export function leadersNamed(
  replies: readonly (AnnouncementReply | null)[],
  self: string,
  peers: ReadonlySet<string>,
): NodeRef[] {
  const newest = new Map<string, { node: NodeRef; epoch: number }>();
  for (const r of replies) {
    if (r?.reason !== 'stale-epoch' || !r.coordinator) continue;
    const c = r.coordinator;
    if (c.address === self || !peers.has(c.address)) continue;
    const seen = newest.get(c.address);
    if (!seen || r.epoch > seen.epoch) newest.set(c.address, { node: c, epoch: r.epoch });
  }
  return [...newest.values()].sort((a, b) => a.epoch - b.epoch).map((n) => n.node);
}

export interface PredecessorsOptions {
  logger: Logger;
  now(): number;
  /** Called synchronously for each hand-over refused (metrics); must not block. */
  onRefused?(reason: HandoverRefusal): void;
}

/** The predecessors this node knows (the most recently learned last), and the hand-overs it takes. */
export class Predecessors {
  private known: NodeRef[] = [];
  /** A refused hand-over comes again in every reply for a minute: one warning a reason per 10 s. */
  private readonly warnings: WarnThrottle;

  constructor(private readonly o: PredecessorsOptions) {
    this.warnings = new WarnThrottle(o.logger, () => o.now());
  }

  /** `node` led a term this node knows of (it followed it, or a refusal named it). */
  learn(node: NodeRef): void {
    this.known = [...this.known.filter((n) => n.address !== node.address), node].slice(
      -MAX_PREDECESSORS,
    );
  }

  /**
   * Refusals of this node's announcement as stale: the coordinators those peers follow led a term
   * this node's own supersedes (it just started, or its partition healed), and hand it over once
   * they take this node's newer one.
   */
  learnSuperseded(
    replies: readonly (AnnouncementReply | null)[],
    self: string,
    peers: readonly string[],
  ): void {
    for (const node of leadersNamed(replies, self, new Set(peers))) this.learn(node);
  }

  /**
   * Whether this node, leading `ownEpoch`, takes the hand-over in the reply of the peer at `from`
   * that accepted its term; a refusal of one that carries anything is logged with its source and
   * why, and counted.
   */
  admits(handover: TermHandover, from: string, ownEpoch: number): boolean {
    const reason = handoverRefusal(this.addresses, from, handover.epoch, ownEpoch);
    if (!reason) return true;
    const { settled, in_flight: inFlight, undelivered } = handover;
    if (settled.length + inFlight.length + undelivered.length === 0) return false;
    this.o.onRefused?.(reason);
    const why =
      reason === 'newer-term'
        ? `its term is newer than this node's (${ownEpoch})`
        : 'it is no coordinator this node knows led before it';
    this.warnings.warn(
      reason,
      {
        event: 'handover-refused',
        from,
        reason,
        epoch: handover.epoch,
        ownEpoch,
        predecessors: this.addresses,
        undelivered: undelivered.length,
        settled: settled.length,
        inFlight: inFlight.length,
      },
      `refused the hand-over of ${from}'s term ${handover.epoch}: ${why}`,
    );
    return false;
  }

  get addresses(): string[] {
    return this.known.map((n) => n.address);
  }
}
