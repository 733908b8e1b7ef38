// An election simulation at scale: the pure bully step() of every node, on simulated time, over an
// in-memory network that delays and counts every message. Models what the driver and the network
// add to the core: each node ticks every 100 ms (at its own phase), a candidate acts on the first
// answer from a higher-ranked peer, a sender puts its messages on the wire one after another
// (fan-out costs time), a crashed peer refuses at once and a black-holed one times out.
import { outranks, type NodeRef } from '../../src/wire/node-ref.js';
import {
  initialState,
  step,
  topRanked,
  SUCCESSORS,
  type ElectionEffect,
  type ElectionEvent,
  type ElectionState,
  type ElectionTiming,
} from '../../src/election/bully.js';
import type { AnnouncementReply, ElectionAnswer } from '../../src/wire/peer-messages.js';
import { FULL_VIEW_PEERS, LARGE_MESH_HEARTBEAT_EVERY } from '../../src/election/driver.js';
import { prng } from './bully-cluster.js';

export interface SimNetwork {
  /** One-way delay of a message, before jitter. */
  latencyMs: number;
  /** Up to this much more, uniformly. */
  jitterMs: number;
  /** Time a sender spends putting one message on the wire (a fan-out of N takes N × this). */
  sendCostMs: number;
  /** A request to a black-holed peer fails after this long (PROBE_TIMEOUT). */
  requestTimeoutMs: number;
}

export const DEFAULT_NETWORK: SimNetwork = {
  latencyMs: 0.5,
  jitterMs: 1,
  sendCostMs: 0.05,
  requestTimeoutMs: 1_000,
};

/** The driver's defaults: answers awaited PROBE_TIMEOUT + 500 ms. */
export const DEFAULT_TIMING: ElectionTiming = {
  heartbeatIntervalMs: 500,
  coordinatorTimeoutMs: 1_500,
  electionTimeoutMs: 1_000,
  answerTimeoutMs: 1_500,
};

const TICK_MS = 100;
/** The driver's wait for a new term's first announcement answers (CONFIRM_WAIT_MS). */
const CONFIRM_WAIT_MS = 300;

export interface MessageCounts {
  electionRequests: number;
  answers: number;
  /** Announcements other than the coordinator's periodic heartbeats. */
  announcements: number;
  heartbeats: number;
}

type Job = { at: number; seq: number; run: () => void };

/** A binary min-heap of jobs by time, then by insertion. */
class Agenda {
  private readonly heap: Job[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  add(at: number, run: () => void): void {
    const job = { at, seq: this.seq++, run };
    const h = this.heap;
    h.push(job);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  next(): Job | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }

  peek(): Job | undefined {
    return this.heap[0];
  }
}

function before(a: Job, b: Job): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export type Fault = 'crash' | 'blackhole';

export interface SimOptions {
  size: number;
  timing?: ElectionTiming;
  network?: SimNetwork;
  seed?: number;
}

/**
 * N nodes (10.x.y.z:8080, ranked by address) following the highest one, which names its
 * successors; then faults, and the simulated time until one coordinator is followed again.
 */
export class ElectionSim {
  readonly refs: NodeRef[];
  readonly counts: MessageCounts = {
    electionRequests: 0,
    answers: 0,
    announcements: 0,
    heartbeats: 0,
  };
  now = 0;
  private readonly states = new Map<string, ElectionState>();
  private readonly faults = new Map<string, Fault>();
  /** When each node's outgoing wire is free again. */
  private readonly wireFree = new Map<string, number>();
  private readonly agenda = new Agenda();
  private readonly random: () => number;
  private readonly timing: ElectionTiming;
  private readonly network: SimNetwork;
  /** Periodic heartbeats each coordinator sent (every LARGE_MESH_HEARTBEAT_EVERY-th goes to all). */
  private readonly heartbeatsSent = new Map<string, number>();
  /** When a node first led (the 'leading' effect), by address. */
  readonly ledAt = new Map<string, number>();

  constructor(opts: SimOptions) {
    this.timing = opts.timing ?? DEFAULT_TIMING;
    this.network = opts.network ?? DEFAULT_NETWORK;
    this.random = prng(opts.seed ?? 1);
    this.refs = Array.from({ length: opts.size }, (_, i) => {
      const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
      return { id: `node-${i}@${ip}`, address: `${ip}:8080` };
    });
    const addresses = this.refs.map((r) => r.address);
    const top = this.refs[this.refs.length - 1]!;
    // Steady state: the top node leads at epoch 1 and has named its successors; everyone follows.
    const successors = topRanked(
      addresses.filter((a) => a !== top.address),
      SUCCESSORS,
    );
    for (const ref of this.refs) {
      let s = step(initialState(ref, this.timing), {
        type: 'peers',
        now: 0,
        peers: addresses,
      }).state;
      s = { ...s, started: true };
      if (ref.address === top.address) {
        s = {
          ...s,
          role: 'coordinator',
          epoch: 1,
          coordinator: ref,
          leading: true,
          nextHeartbeatMs: 0,
        };
      } else {
        const seldom =
          opts.size - 1 > FULL_VIEW_PEERS && !successors.includes(ref.address)
            ? { heartbeatMs: this.timing.heartbeatIntervalMs * LARGE_MESH_HEARTBEAT_EVERY }
            : {};
        s = step(s, {
          type: 'announcement',
          now: 0,
          from: top,
          epoch: 1,
          successors,
          ...seldom,
        }).state;
      }
      this.states.set(ref.address, s);
    }
    for (const ref of this.refs) {
      // Each node's driver ticks at its own phase.
      this.agenda.add(this.random() * TICK_MS, () => this.tick(ref.address));
    }
  }

  get top(): NodeRef {
    return this.refs[this.refs.length - 1]!;
  }

  state(address: string): ElectionState {
    const s = this.states.get(address);
    if (!s) throw new Error(`no node ${address}`);
    return s;
  }

  fail(address: string, fault: Fault): void {
    this.faults.set(address, fault);
  }

  /** Runs simulated time until `until` (ms). */
  runUntil(until: number): void {
    for (let job = this.agenda.peek(); job && job.at <= until; job = this.agenda.peek()) {
      this.agenda.next();
      this.now = job.at;
      job.run();
    }
    this.now = until;
  }

  /** Every live node follows (or is) the same coordinator, and it is live: that one, else null. */
  agreed(): NodeRef | null {
    let agreed: string | null = null;
    let ref: NodeRef | null = null;
    for (const [address, s] of this.states) {
      if (this.faults.has(address)) continue;
      const c = s.coordinator;
      if (!c || this.faults.has(c.address)) return null;
      if (s.role === 'coordinator' ? !s.leading : s.role !== 'follower') return null;
      if (agreed === null) {
        agreed = c.address;
        ref = c;
      } else if (agreed !== c.address) return null;
    }
    return ref;
  }

  /** Steps time in `stepMs` until agreed() names a coordinator; returns when, or null by `limitMs`. */
  runUntilAgreed(limitMs: number, stepMs = 10): number | null {
    for (let t = this.now; t <= limitMs; t += stepMs) {
      this.runUntil(t);
      if (this.agreed()) return t;
    }
    return null;
  }

  private answering(address: string): boolean {
    return !this.faults.has(address);
  }

  private tick(address: string): void {
    if (this.faults.get(address) !== 'crash') {
      this.apply(address, { type: 'tick', now: this.now }, true);
    }
    this.agenda.add(this.now + TICK_MS, () => this.tick(address));
  }

  private apply(address: string, event: ElectionEvent, ticked = false): ElectionEffect[] {
    if (this.faults.has(address)) return [];
    const before = this.state(address);
    const result = step(before, event);
    this.states.set(address, result.state);
    const heartbeat = ticked && before.role === 'coordinator';
    for (const effect of result.effects) this.execute(address, effect, heartbeat);
    return result.effects;
  }

  /** When `from` can put its next message on the wire, and that message's arrival time. */
  private send(from: string): { arrives: number } {
    const free = Math.max(this.now, this.wireFree.get(from) ?? 0) + this.network.sendCostMs;
    this.wireFree.set(from, free);
    return { arrives: free + this.delay() };
  }

  private delay(): number {
    return this.network.latencyMs + this.random() * this.network.jitterMs;
  }

  /** The time a request to `to` sent now resolves at the sender, and whether it was answered. */
  /** `refused`: a crashed node's host answers the connection with a refusal. */
  private requestOutcome(
    to: string,
    arrives: number,
  ): { answered: boolean; at: number; refused?: true } {
    const fault = this.faults.get(to);
    if (fault === 'blackhole')
      return { answered: false, at: this.now + this.network.requestTimeoutMs };
    if (fault === 'crash') return { answered: false, at: arrives + this.delay(), refused: true };
    return { answered: true, at: arrives };
  }

  private execute(address: string, effect: ElectionEffect, heartbeat: boolean): void {
    const self = this.state(address).self;
    if (effect.type === 'leading' && !this.ledAt.has(address)) this.ledAt.set(address, this.now);
    if (effect.type === 'send-election') {
      const request = { from: self, epoch: effect.epoch };
      const answers: ElectionAnswer[] = [];
      let open = effect.to.length;
      let decided = false;
      const decide = () => {
        if (decided) return;
        decided = true;
        this.apply(address, {
          type: 'election-result',
          now: this.now,
          round: effect.round,
          answers: [...answers],
        });
      };
      if (open === 0) decide();
      for (const to of effect.to) {
        this.counts.electionRequests++;
        const { arrives } = this.send(address);
        const outcome = this.requestOutcome(to, arrives);
        if (!outcome.answered) {
          this.agenda.add(outcome.at, () => {
            if (--open === 0) decide();
          });
          continue;
        }
        this.agenda.add(arrives, () => {
          const reply = this.apply(to, { type: 'election-request', now: this.now, request }).find(
            (e) => e.type === 'reply-answer',
          );
          this.counts.answers++;
          this.agenda.add(this.now + this.delay(), () => {
            if (reply?.type === 'reply-answer') {
              answers.push(reply.answer);
              if (outranks(reply.answer.from.address, self.address)) decide();
            }
            if (--open === 0) decide();
          });
        });
      }
    } else if (effect.type === 'announce') {
      const s = this.state(address);
      // The real coordinator names the highest-ranked peers it judges alive.
      const successors = topRanked(
        s.peers.filter((p) => !this.faults.has(p)),
        SUCCESSORS,
      );
      // As the driver does in a large mesh: most heartbeats go to the successors only, and the
      // others are told how seldom they hear.
      const large = s.peers.length > FULL_VIEW_PEERS;
      let targets = effect.to;
      if (effect.heartbeat && large) {
        const n = (this.heartbeatsSent.get(address) ?? 0) + 1;
        this.heartbeatsSent.set(address, n);
        if (n % LARGE_MESH_HEARTBEAT_EVERY !== 0)
          targets = targets.filter((a) => successors.includes(a));
      }
      const heartbeatMs = (to: string) =>
        large && !successors.includes(to)
          ? { heartbeatMs: this.timing.heartbeatIntervalMs * LARGE_MESH_HEARTBEAT_EVERY }
          : {};
      const replies = new Map<string, AnnouncementReply | null>();
      const refused = new Set<string>();
      let open = targets.length;
      let settledEarly = false;
      const settle = (which: string[]) =>
        this.apply(address, {
          type: 'announce-result',
          now: this.now,
          epoch: effect.epoch,
          replies: which.map((a) => ({
            address: a,
            reply: replies.get(a) ?? null,
            ...(refused.has(a) ? { refused: true as const } : {}),
          })),
          ...(targets.length < (this.states.get(address)?.peers.length ?? 0)
            ? { partial: true as const }
            : {}),
        });
      const done = () => {
        if (--open > 0) return;
        if (!settledEarly) settle([...targets]);
        else settle(targets.filter((a) => !early.has(a)));
      };
      const early = new Set<string>();
      this.agenda.add(this.now + CONFIRM_WAIT_MS, () => {
        if (open === 0) return;
        settledEarly = true;
        for (const a of replies.keys()) early.add(a);
        settle([...early]);
      });
      for (const to of targets) {
        if (heartbeat) this.counts.heartbeats++;
        else this.counts.announcements++;
        const { arrives } = this.send(address);
        const outcome = this.requestOutcome(to, arrives);
        if (!outcome.answered) {
          this.agenda.add(outcome.at, () => {
            replies.set(to, null);
            if (outcome.refused) refused.add(to);
            done();
          });
          continue;
        }
        this.agenda.add(arrives, () => {
          const reply = this.apply(to, {
            type: 'announcement',
            now: this.now,
            from: self,
            epoch: effect.epoch,
            successors,
            ...heartbeatMs(to),
          }).find((e) => e.type === 'reply-announcement');
          this.agenda.add(this.now + this.delay(), () => {
            replies.set(to, reply?.type === 'reply-announcement' ? reply.reply : null);
            done();
          });
        });
      }
    }
  }
}

export interface FailoverResult {
  size: number;
  fault: string;
  /** Simulated ms from the fault to the new coordinator leading. */
  newLeaderMs: number | null;
  /** Simulated ms from the fault until every live node follows it. */
  agreedMs: number | null;
  coordinator: string | null;
  counts: MessageCounts;
  /** Election requests + answers + non-heartbeat announcements. */
  electionMessages: number;
}

/**
 * Runs a mesh of `size` steadily for a while, then applies `fault` to the coordinator (and
 * `alsoFailing` more of the next-ranked nodes), and measures until one coordinator is agreed plus
 * `quietMs` (to count stragglers' messages too).
 */
export function simulateFailover(
  size: number,
  fault: Fault,
  { alsoFailing = 0, seed = 1, quietMs = 5_000, limitMs = 30_000 } = {},
): FailoverResult {
  const sim = new ElectionSim({ size, seed });
  sim.runUntil(1_000 + 137);
  const at = sim.now;
  const failed = sim.refs.slice(sim.refs.length - 1 - alsoFailing);
  for (const ref of failed) sim.fail(ref.address, fault);
  const before = { ...sim.counts };
  sim.ledAt.clear();
  const agreedAt = sim.runUntilAgreed(at + limitMs);
  sim.runUntil((agreedAt ?? sim.now) + quietMs);
  const counts: MessageCounts = {
    electionRequests: sim.counts.electionRequests - before.electionRequests,
    answers: sim.counts.answers - before.answers,
    announcements: sim.counts.announcements - before.announcements,
    heartbeats: sim.counts.heartbeats - before.heartbeats,
  };
  const coordinator = sim.agreed();
  const led = coordinator ? sim.ledAt.get(coordinator.address) : undefined;
  return {
    size,
    fault: alsoFailing > 0 ? `${fault} of the top ${alsoFailing + 1}` : fault,
    newLeaderMs: led === undefined ? null : led - at,
    agreedMs: agreedAt === null ? null : agreedAt - at,
    coordinator: coordinator?.address ?? null,
    counts,
    electionMessages: counts.electionRequests + counts.answers + counts.announcements,
  };
}
