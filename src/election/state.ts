// The bully election's state, events and effects: the data the pure transitions in bully.ts work on.
import type { NodeRef } from '../wire/node-ref.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../wire/peer-messages.js';

export type Role = 'follower' | 'candidate' | 'coordinator';

export interface ElectionTiming {
  heartbeatIntervalMs: number;
  coordinatorTimeoutMs: number;
  electionTimeoutMs: number;
  /**
   * How long a candidate waits for the answers to its election messages: longer than the requests
   * themselves can take, so a black-holed higher peer never makes it give up and start over forever.
   */
  answerTimeoutMs: number;
}

export interface ElectionState {
  readonly self: NodeRef;
  readonly timing: ElectionTiming;
  /** Addresses of known peers, never including self. */
  readonly peers: readonly string[];
  readonly role: Role;
  /** The highest epoch (term) this node has seen or made. */
  readonly epoch: number;
  readonly coordinator: NodeRef | null;
  /**
   * The node known to lead the term of `epoch`: this node when it made the term, the announcer
   * whose announcement at that epoch it accepted. Null when the epoch was learned second-hand (an
   * election message): then nobody's announcement at that epoch is taken, so no two coordinators
   * ever lead one epoch (the announcer takes a newer one). Kept when the coordinator falls silent.
   */
  readonly termLeader: NodeRef | null;
  /** When the coordinator was last heard from (followers). */
  readonly lastHeardMs: number;
  /** Sequence number of this node's latest election, to drop answers to older ones. */
  readonly round: number;
  /** Candidate: awaiting answers, or an announcement after an answer. */
  readonly waiting: 'answers' | 'announcement' | null;
  /** Candidate: when to give up waiting and hold the election again. */
  readonly deadlineMs: number;
  /** Coordinator: when the next heartbeat announcement is due. */
  readonly nextHeartbeatMs: number;
  /**
   * Coordinator: its first announcement round came back without evidence of a newer epoch, so it
   * may act as leader (probe, alert). A node that restarted at epoch 0 learns the mesh's epoch
   * from the rejections first, and never reports under a stale one.
   */
  readonly leading: boolean;
  readonly started: boolean;
  /**
   * The peers the coordinator named as next in line (its highest-ranked peers it judges alive),
   * from its last announcement: they hold elections first when it falls silent.
   */
  readonly successors: readonly string[];
  /** Follower whose coordinator fell silent or left: when its staggered election is due. */
  readonly electionDueMs: number | null;
  /** Candidate: higher-ranked peers not yet asked in this election, highest first. */
  readonly pending: readonly string[];
  /** Candidate: how many of `pending` the next batch asks. */
  readonly batchSize: number;
  /**
   * Follower: how often its coordinator heartbeats it (0: every heartbeatIntervalMs). In a large
   * mesh, followers other than the successors hear less often, and wait that much longer.
   */
  readonly heartbeatEveryMs: number;
}

export type ElectionEvent =
  | { type: 'start'; now: number }
  | { type: 'tick'; now: number }
  | { type: 'peers'; now: number; peers: readonly string[] }
  | { type: 'election-request'; now: number; request: ElectionRequest }
  | { type: 'election-result'; now: number; round: number; answers: readonly ElectionAnswer[] }
  | {
      type: 'announcement';
      now: number;
      from: NodeRef;
      epoch: number;
      /** The successors the coordinator names (absent: none named). */
      successors?: readonly string[];
      /** How often the coordinator will heartbeat this follower (absent: heartbeatIntervalMs). */
      heartbeatMs?: number;
    }
  | {
      type: 'announce-result';
      now: number;
      epoch: number;
      /**
       * Each peer's reply; null when none came. `refused`: no reply, but the peer's host answered
       * (connection refused, an error status): nothing runs there that could hold another term.
       */
      replies: readonly { address: string; reply: AnnouncementReply | null; refused?: true }[];
      /**
       * The announcement went to some peers only (an asker, the successors): it confirms no term,
       * since the peers it missed may hold that epoch under another coordinator.
       */
      partial?: true;
    }
  /**
   * A probe from `from` (ip:port) carried its heartbeat for `epoch`, checked at the edge: the
   * coordinator this node follows is still there.
   */
  | { type: 'probe-heartbeat'; now: number; from: string; epoch: number }
  /** The coordinator's verdicts changed: announce now rather than at the next heartbeat. */
  | { type: 'share'; now: number }
  | { type: 'resign'; now: number };

export type ElectionEffect =
  | { type: 'send-election'; round: number; epoch: number; to: readonly string[] }
  /** `heartbeat`: the periodic one (a large mesh's driver sends most of them to the successors only). */
  | { type: 'announce'; epoch: number; to: readonly string[]; heartbeat?: true }
  | { type: 'reply-answer'; answer: ElectionAnswer }
  | { type: 'reply-announcement'; reply: AnnouncementReply }
  | { type: 'coordinator-changed'; coordinator: NodeRef | null; epoch: number; reason: string }
  /** This node's leadership is confirmed at `epoch`: start probing and reporting. */
  | { type: 'leading'; epoch: number }
  /**
   * A leading coordinator went on under a newer epoch of its own (it heard of a term at or above
   * its own): receivers are told the new term as they were told the first.
   */
  | { type: 'term-renewed'; epoch: number }
  | { type: 'election-started'; round: number; reason: string; to: readonly string[] }
  /** The coordinator fell silent or left: this node holds its election after `delayMs` (stagger). */
  | { type: 'election-deferred'; delayMs: number; reason: string };

export interface StepResult {
  state: ElectionState;
  effects: ElectionEffect[];
}

export function initialState(self: NodeRef, timing: ElectionTiming): ElectionState {
  return {
    self,
    timing,
    peers: [],
    role: 'follower',
    epoch: 0,
    coordinator: null,
    termLeader: null,
    lastHeardMs: 0,
    round: 0,
    waiting: null,
    deadlineMs: 0,
    nextHeartbeatMs: 0,
    leading: false,
    started: false,
    successors: [],
    electionDueMs: null,
    pending: [],
    batchSize: 0,
    heartbeatEveryMs: 0,
  };
}
