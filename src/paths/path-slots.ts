// Reported paths held compactly: one slot a path in typed arrays, its target's address interned,
// rather than an object of seven boxed fields each: a large mesh's coordinator holds N × 2 ×
// PAIR_PROBES of them (report-policy.ts). What it saves: docs/benchmarks.md.
import { DEGRADED, FAILED, MTU, OK } from './path-index.js';
import type { ReportedPath } from '../wire/peer-messages.js';
import type { WindowStats } from './path-window.js';

/** A held path's state: path-index.ts's codes ('unknown' is never held). */
export type HeldState = typeof OK | typeof FAILED | typeof DEGRADED | typeof MTU;

const CODES: Record<Exclude<ReportedPath['state'], 'unknown'>, HeldState> = {
  ok: OK,
  failed: FAILED,
  degraded: DEGRADED,
  mtu: MTU,
};
const STATES = ['ok', 'failed', 'degraded', 'mtu'] as const;

export function codeOf(state: Exclude<ReportedPath['state'], 'unknown'>): HeldState {
  return CODES[state];
}

export class PathSlots {
  private capacity = 0;
  private to: string[] = [];
  private state = new Uint8Array(0);
  private since = new Float64Array(0);
  private samples = new Uint32Array(0);
  /** Loss ratio, p50 and p99 (ms); NaN for a latency not known (null). */
  private loss = new Float32Array(0);
  private p50 = new Float32Array(0);
  private p99 = new Float32Array(0);
  private mtu = new Uint16Array(0);
  private readonly free: number[] = [];
  private used = 0;
  /** One string per address, whoever reported it. */
  private readonly names = new Map<string, string>();

  /** Stores `p` in `slot` (from `alloc`), its target interned. */
  set(slot: number, p: ReportedPath & { state: Exclude<ReportedPath['state'], 'unknown'> }): void {
    this.to[slot] = this.intern(p.to);
    this.state[slot] = CODES[p.state];
    this.since[slot] = p.since;
    this.samples[slot] = p.samples;
    this.loss[slot] = p.loss_ratio;
    this.p50[slot] = p.p50_ms ?? NaN;
    this.p99[slot] = p.p99_ms ?? NaN;
    this.mtu[slot] = p.mtu_size ?? 0;
  }

  alloc(): number {
    const slot = this.free.pop() ?? this.used++;
    if (slot >= this.capacity) this.grow(Math.max(64, this.capacity * 2));
    return slot;
  }

  release(slot: number): void {
    this.to[slot] = '';
    this.free.push(slot);
  }

  /** Forgets every slot, and the interned names. */
  clear(): void {
    this.capacity = 0;
    this.used = 0;
    this.free.length = 0;
    this.to = [];
    this.names.clear();
    this.grow(0);
  }

  /** Forgets the interned names of the addresses not `listed` (nodes gone). */
  keepNames(listed: ReadonlySet<string>): void {
    for (const name of this.names.keys()) if (!listed.has(name)) this.names.delete(name);
  }

  targetOf(slot: number): string {
    return this.to[slot]!;
  }

  stateOf(slot: number): HeldState {
    return this.state[slot] as HeldState;
  }

  sinceOf(slot: number): number {
    return this.since[slot]!;
  }

  mtuOf(slot: number): number {
    return this.mtu[slot]!;
  }

  /** The figures of the path in `slot`, as a window's. */
  statsOf(slot: number): WindowStats {
    const samples = this.samples[slot]!;
    const loss = round(this.loss[slot]!);
    const ms = (v: number) => (Number.isNaN(v) ? null : round(v));
    return {
      samples,
      failures: Math.round(loss * samples),
      lossRatio: loss,
      p50Ms: ms(this.p50[slot]!),
      p99Ms: ms(this.p99[slot]!),
    };
  }

  /** The path in `slot`, as its report told it (figures to float precision). */
  path(slot: number): ReportedPath {
    const ms = (v: number) => (Number.isNaN(v) ? null : round(v));
    return {
      to: this.to[slot]!,
      state: STATES[this.state[slot]!]!,
      since: this.since[slot]!,
      samples: this.samples[slot]!,
      loss_ratio: round(this.loss[slot]!),
      p50_ms: ms(this.p50[slot]!),
      p99_ms: ms(this.p99[slot]!),
      ...(this.state[slot] === MTU ? { mtu_size: this.mtu[slot]! } : {}),
    };
  }

  private intern(address: string): string {
    let name = this.names.get(address);
    if (name === undefined) {
      name = address;
      this.names.set(address, name);
    }
    return name;
  }

  private grow(capacity: number): void {
    const copy = <T extends Uint8Array | Float64Array | Uint32Array | Float32Array | Uint16Array>(
      from: T,
      make: (n: number) => T,
    ): T => {
      const to = make(capacity);
      to.set(from.subarray(0, Math.min(from.length, capacity)));
      return to;
    };
    this.state = copy(this.state, (n) => new Uint8Array(n));
    this.since = copy(this.since, (n) => new Float64Array(n));
    this.samples = copy(this.samples, (n) => new Uint32Array(n));
    this.loss = copy(this.loss, (n) => new Float32Array(n));
    this.p50 = copy(this.p50, (n) => new Float32Array(n));
    this.p99 = copy(this.p99, (n) => new Float32Array(n));
    this.mtu = copy(this.mtu, (n) => new Uint16Array(n));
    this.capacity = capacity;
  }
}

/** A float32's value back to the reported precision (they are rounded to 0.1 ms, or 0.001). */
function round(v: number): number {
  return Math.round(v * 1_000) / 1_000;
}
