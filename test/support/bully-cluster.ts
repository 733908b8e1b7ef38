// Whole bully clusters in memory: the pure step() of every node, messages delivered between them.
import type { NodeRef } from '../../src/wire/node-ref.js';
import {
  initialState,
  step,
  type ElectionEffect,
  type ElectionEvent,
  type ElectionState,
  type ElectionTiming,
  type StepResult,
} from '../../src/election/bully.js';

/** mulberry32: a small seeded PRNG, so every generated case can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

type Work =
  | { kind: 'event'; address: string; event: ElectionEvent }
  | { kind: 'effect'; address: string; effect: ElectionEffect };

export interface ClusterOptions {
  refs: readonly NodeRef[];
  timing: ElectionTiming;
  /** Picks which pending message goes next, so each seed interleaves messages differently. */
  random: () => number;
  /** Sees every transition, e.g. to check an invariant. */
  onStep?(before: ElectionState, result: StepResult, event: ElectionEvent): void;
}

/**
 * Requests and their replies travel together, as over HTTP: the receiver steps and replies at
 * once, and the sender sees the result as a later message. A crashed node, or one that has not
 * started yet (the driver answers 503 before start-up), gives no reply.
 */
export class Cluster {
  readonly refs: readonly NodeRef[];
  readonly crashed = new Set<string>();
  now = 0;
  private readonly states = new Map<string, ElectionState>();
  private readonly work: Work[] = [];

  constructor(private readonly opts: ClusterOptions) {
    this.refs = opts.refs;
    for (const ref of this.refs) this.states.set(ref.address, this.fresh(ref));
  }

  live(): NodeRef[] {
    return this.refs.filter((r) => !this.crashed.has(r.address));
  }

  state(ref: NodeRef): ElectionState {
    const s = this.states.get(ref.address);
    if (!s) throw new Error(`no node ${ref.address}`);
    return s;
  }

  /** Queues the start-up of `refs` in this order (messages may interleave between them). */
  start(refs: readonly NodeRef[]): void {
    for (const ref of refs) this.queue(ref.address, { type: 'start', now: this.now });
  }

  crash(ref: NodeRef): void {
    this.crashed.add(ref.address);
  }

  /** Brings `ref` back with a fresh state (epoch 0), as a restarted process, and starts it. */
  restart(ref: NodeRef): void {
    this.crashed.delete(ref.address);
    this.states.set(ref.address, this.fresh(ref));
    this.start([ref]);
  }

  /** Delivers every pending message, and those they cause, until none is left. */
  settle(): void {
    for (let n = 0; this.work.length > 0; n++) {
      if (n > 100_000) throw new Error('messages never settle');
      const [item] = this.work.splice(Math.floor(this.opts.random() * this.work.length), 1);
      if (item?.kind === 'event') this.apply(item.address, item.event);
      else if (item) this.execute(item.address, item.effect);
    }
  }

  /** Lets `ms` pass in ticks of `everyMs` to every live node, settling messages after each. */
  pass(ms: number, everyMs = 100): void {
    for (let t = 0; t < ms; t += everyMs) {
      this.now += everyMs;
      for (const ref of this.live()) this.queue(ref.address, { type: 'tick', now: this.now });
      this.settle();
    }
  }

  private fresh(ref: NodeRef): ElectionState {
    const peers = this.refs.map((r) => r.address);
    return step(initialState(ref, this.opts.timing), { type: 'peers', now: this.now, peers }).state;
  }

  private queue(address: string, event: ElectionEvent): void {
    this.work.push({ kind: 'event', address, event });
  }

  private answering(address: string): boolean {
    return !this.crashed.has(address) && this.states.get(address)?.started === true;
  }

  private apply(address: string, event: ElectionEvent): ElectionEffect[] {
    const before = this.states.get(address);
    if (!before || this.crashed.has(address)) return [];
    const result = step(before, event);
    this.opts.onStep?.(before, result, event);
    this.states.set(address, result.state);
    for (const effect of result.effects) this.work.push({ kind: 'effect', address, effect });
    return result.effects;
  }

  private execute(address: string, effect: ElectionEffect): void {
    const from = this.states.get(address)?.self;
    if (!from || this.crashed.has(address)) return;
    if (effect.type === 'send-election') {
      const request = { from, epoch: effect.epoch };
      const answers = effect.to
        .filter((to) => this.answering(to))
        .flatMap((to) =>
          this.apply(to, { type: 'election-request', now: this.now, request }).flatMap((e) =>
            e.type === 'reply-answer' ? [e.answer] : [],
          ),
        );
      this.queue(address, { type: 'election-result', now: this.now, round: effect.round, answers });
    } else if (effect.type === 'announce') {
      const replies = effect.to.map((to) => {
        // A crashed node's host refuses; one not started yet answers 503: both are heard.
        if (!this.answering(to)) return { address: to, reply: null, refused: true as const };
        const event = { type: 'announcement', now: this.now, from, epoch: effect.epoch } as const;
        const reply = this.apply(to, event).find((e) => e.type === 'reply-announcement');
        return { address: to, reply: reply?.type === 'reply-announcement' ? reply.reply : null };
      });
      const peers = this.states.get(address)?.peers.length ?? 0;
      this.queue(address, {
        type: 'announce-result',
        now: this.now,
        epoch: effect.epoch,
        replies,
        ...(effect.to.length < peers ? { partial: true as const } : {}),
      });
    }
    // The other effects are replies (delivered with their request) or only observed.
  }
}
