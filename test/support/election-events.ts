// The events a test hands the bully election's pure step(), built by name so a test reads as what
// happens to the node (a tick at 1.5 s, an announcement from D at epoch 3) rather than as a record.
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { ElectionEffect, ElectionEvent, StepResult } from '../../src/election/bully.js';
import type { AnnouncementReply, ElectionAnswer } from '../../src/wire/peer-messages.js';

type Event<T extends ElectionEvent['type']> = Extract<ElectionEvent, { type: T }>;
type EffectOf<T extends ElectionEffect['type']> = Extract<ElectionEffect, { type: T }>;

export const addresses = (...nodes: NodeRef[]): string[] => nodes.map((n) => n.address);

/** The effects of `type` a step produced, in order. */
export function effectsOf<T extends ElectionEffect['type']>(
  result: StepResult,
  type: T,
): EffectOf<T>[] {
  return result.effects.filter((e): e is EffectOf<T> => e.type === type);
}

export const tick = (now: number): Event<'tick'> => ({ type: 'tick', now });

/** Discovery lists `nodes` as the peers at `now`. */
export const peerList = (now: number, ...nodes: NodeRef[]): Event<'peers'> => ({
  type: 'peers',
  now,
  peers: addresses(...nodes),
});

/** What an announcement may tell a follower besides who leads: its successors, its heartbeat. */
export type Told = Pick<Event<'announcement'>, 'successors' | 'heartbeatMs'>;

/** `from` announces itself coordinator at `epoch`, telling what `told` says. */
export const announcement = (
  from: NodeRef,
  epoch: number,
  now: number,
  told: Told = {},
): Event<'announcement'> => ({ type: 'announcement', now, from, epoch, ...told });

/** The replies to this node's announcement at `epoch`. */
export const announceResult = (
  epoch: number,
  replies: Event<'announce-result'>['replies'],
  now: number,
): Event<'announce-result'> => ({ type: 'announce-result', now, epoch, replies });

/** The answers to this node's election `round`. */
export const electionResult = (
  round: number,
  answers: readonly ElectionAnswer[],
  now: number,
): Event<'election-result'> => ({ type: 'election-result', now, round, answers });

/** `from` asks this node whether a higher-ranked node is alive, at `epoch`. */
export const electionRequest = (
  from: NodeRef,
  epoch: number,
  now: number,
): Event<'election-request'> => ({
  type: 'election-request',
  now,
  request: { from, epoch },
});

/** A refusal of an announcement, naming the epoch and coordinator the refuser holds to. */
export const refusal = (
  reason: AnnouncementReply['reason'],
  epoch: number,
  coordinator: NodeRef | null,
): AnnouncementReply => ({ accepted: false, reason, epoch, coordinator });

/** The answer `from` gives an election message, vouching for `leader` (null: none). */
export const answer = (from: NodeRef, epoch: number, leader: NodeRef | null): ElectionAnswer => ({
  type: 'answer',
  from,
  epoch,
  coordinator: leader,
});
