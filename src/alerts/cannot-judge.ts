// The coordinator's alert about itself when it cannot judge the mesh: most of its peers are silent
// to it and their verdicts are withheld, so it cannot tell their failure from its own side of the
// network being cut off (docs/detection.md). Opened when the first verdict is withheld so, resolved
// when it reaches most of its peers again, or by the next coordinator. Pure: facts and time given.
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import { silentNow, suspicionCounts, type PeerRecord } from '../prober/verdict.js';
import { judgementPayload } from './payloads.js';
import { incidentOf } from '../wire/incident.js';
import {
  MAX_LISTED_UNREACHABLE,
  type JudgementFacts,
  type PeerStatusPayload,
} from '../wire/webhooks.js';

/** Peers named in the sentence of a cannot_judge event; the payload lists more. */
const NAMED_IN_TEXT = 5;

export class CannotJudge {
  private opening: PeerStatusPayload | null = null;
  /** Relays that could not reach the silent peers either, over this incident. */
  private readonly corroborators = new Set<string>();

  constructor(private readonly self: NodeRef) {}

  /** The opening event of the incident open now: shared with followers, a successor resolves it. */
  get open(): PeerStatusPayload | null {
    return this.opening;
  }

  /**
   * A verdict was withheld for self-suspicion: the opening event, if the incident opens now.
   * `records`: the peers alerts may be sent about (those under maintenance left out): when none of
   * them is silent, there is nothing to say.
   */
  withheld(
    corroboratedBy: readonly string[],
    records: readonly PeerRecord[],
    epoch: number,
    now: number,
  ): PeerStatusPayload | null {
    for (const id of corroboratedBy) this.corroborators.add(id);
    if (this.opening) return null;
    const facts = factsOf(records, [...this.corroborators]);
    if (facts.unreachable_count === 0) return null;
    this.opening = judgementPayload({
      event: 'cannot_judge',
      subject: this.self,
      coordinator: this.self,
      sinceMs: now,
      epoch,
      now,
      facts,
      reason: cannotJudgeText(this.self, facts),
    });
    return this.opening;
  }

  /** This node no longer suspects itself: the resolution, if an incident was open. */
  judgingAgain(
    records: readonly PeerRecord[],
    epoch: number,
    now: number,
  ): PeerStatusPayload | null {
    const opening = this.opening;
    if (!opening) return null;
    this.reset();
    const facts = factsOf(records, []);
    const name = nodeNameOf(this.self.id);
    return resolution(opening, {
      coordinator: this.self,
      epoch,
      now,
      facts,
      reason: `knh can judge the mesh again: coordinator ${name} reaches ${facts.reaches} of ${facts.peers} peers`,
    });
  }

  /** The term ended: what is open is the next coordinator's to resolve (it was shared). */
  reset(): void {
    this.opening = null;
    this.corroborators.clear();
  }

  /** Whether `payload` belongs to the incident open now. */
  isOpen(payload: PeerStatusPayload): boolean {
    return this.opening !== null && incidentOf(this.opening) === incidentOf(payload);
  }
}

/**
 * The resolution a new coordinator sends for its predecessor's open incident: whoever leads now
 * judges with its own eyes (and opens an incident of its own if it cannot either).
 */
export function resolveInherited(
  opening: PeerStatusPayload,
  by: { coordinator: NodeRef; epoch: number; now: number; records: readonly PeerRecord[] },
): PeerStatusPayload {
  const facts = factsOf(by.records, []);
  const was = opening.peer.node_name;
  return resolution(opening, {
    ...by,
    facts,
    reason: `knh can judge the mesh again: ${nodeNameOf(by.coordinator.id)} leads now, in place of ${was}, and reaches ${facts.reaches} of ${facts.peers} peers`,
  });
}

function resolution(
  opening: PeerStatusPayload,
  r: { coordinator: NodeRef; epoch: number; now: number; facts: JudgementFacts; reason: string },
): PeerStatusPayload {
  return judgementPayload({
    event: 'can_judge',
    subject: { id: opening.peer.id, address: opening.peer.address },
    sinceMs: Date.parse(opening.peer.since),
    ...r,
  });
}

/** What the coordinator sees now: whom it reaches, who is silent, who corroborates it. */
export function factsOf(records: readonly PeerRecord[], corroboratedBy: string[]): JudgementFacts {
  const considered = records.filter(suspicionCounts);
  const silent = considered.filter(silentNow);
  return {
    reaches: considered.length - silent.length,
    peers: considered.length,
    unreachable: silent
      .slice(0, MAX_LISTED_UNREACHABLE)
      .map((r) => ({ id: r.id, address: r.address, node_name: r.nodeName })),
    unreachable_count: silent.length,
    corroborated_by: corroboratedBy,
  };
}

function cannotJudgeText(self: NodeRef, facts: JudgementFacts): string {
  const name = nodeNameOf(self.id);
  const names = facts.unreachable.slice(0, NAMED_IN_TEXT).map((p) => p.node_name || p.id);
  const more = facts.unreachable_count - names.length;
  const silent = more > 0 ? `${names.join(', ')} and ${more} more` : names.join(', ');
  const corroborated =
    facts.corroborated_by.length > 0
      ? `, and ${facts.corroborated_by.map(nodeNameOf).join(', ')} cannot reach them either`
      : ', and no peer it reaches could check them';
  return (
    `knh cannot judge the mesh: coordinator ${name} reaches ${facts.reaches} of ${facts.peers} peers; ` +
    `${silent} do not answer it${corroborated}: either they failed or ${name}'s side of the ` +
    `network is cut off from them, and knh cannot tell which`
  );
}
