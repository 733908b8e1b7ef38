// The coordinator's book of every node's paths, as their reports told them (report-sender.ts): the
// latest state of each path a node probes, kept while the node keeps reporting. What localization
// reads, and what the status page's matrix shows. Memory O(paths reported), held compactly
// (path-slots.ts); time O(paths the node had and paths in its report) to take one.
import type { PathReport, PathReportReply, ReportedPath } from '../wire/peer-messages.js';
import { StatsSum } from './merge-stats.js';
import { NO_SAMPLES, type WindowStats } from './path-window.js';
import type { Finding, LocalizeInput, PathState } from './path-state.js';
import { byText, DEGRADED, FAILED, MTU, type PathIndex } from './path-index.js';
import { PathSlots, type HeldState } from './path-slots.js';

interface Sender {
  /** The seq of the last report taken. */
  seq: number;
  heardMs: number;
  /**
   * Its paths' slots (each one's target: PathSlots.targetOf). An array, not a map by target: a
   * large mesh's coordinator holds one for each of thousands of nodes, of 20 to 40 paths, and a
   * Map's hash table of that many takes several times an array's memory (bench/path-memory.ts).
   * Looked up by target only when a finding opens or closes.
   */
  paths: number[];
}

/** A reported path's figures, as a window's. */
export function statsOf(p: ReportedPath): WindowStats {
  return {
    samples: p.samples,
    failures: Math.round(p.loss_ratio * p.samples),
    lossRatio: p.loss_ratio,
    p50Ms: p.p50_ms,
    p99Ms: p.p99_ms,
  };
}

export class PathBook {
  private readonly senders = new Map<string, Sender>();
  private readonly slots = new PathSlots();
  /** index()'s names of the last array of nodes, and its arrays (grown, never shrunk). */
  private indexed: { nodes: readonly string[]; names: string[]; ids: Map<string, number> } | null =
    null;
  private indexBuffers = {
    from: new Int32Array(0),
    to: new Int32Array(0),
    state: new Uint8Array(0),
    size: new Uint16Array(0),
  };
  private changes = 0;
  /** nodeSums' results, each until the book changes. */
  private readonly sums = new Map<
    HeldState | 'all',
    { version: number; byNode: Map<string, { sum: StatsSum; earliest: number }> }
  >();

  /** Counts every change to the paths held: the same count, the same paths. */
  get version(): number {
    return this.changes;
  }

  /** A report from a node of this term (the caller checked the term). */
  take(report: PathReport, now: number): PathReportReply {
    const address = report.from.address;
    let sender = this.senders.get(address);
    if (report.full) {
      if (sender) this.drop(sender);
      sender = { seq: report.seq, heardMs: now, paths: [] };
      this.senders.set(address, sender);
    } else if (!sender || report.seq !== sender.seq + 1) {
      // Nothing to change from, or a report missed: what the book holds of it may be wrong.
      if (sender) this.forget(address, sender);
      return { accepted: true, resync: true };
    }
    sender.seq = report.seq;
    sender.heardMs = now;
    if (report.full || report.paths.length > 0) this.changes++;
    if (report.paths.length === 0) return { accepted: true, resync: false };
    // By target while the report is taken (a report may name a path twice: the last one counts),
    // then held as an array again, in the map's order (a path forgotten and told again goes last).
    const byTarget = new Map<string, number>();
    for (const slot of sender.paths) byTarget.set(this.slots.targetOf(slot), slot);
    for (const p of report.paths) {
      const held = byTarget.get(p.to);
      if (p.state === 'unknown' || p.to === address) {
        if (held === undefined) continue;
        this.slots.release(held);
        byTarget.delete(p.to);
        continue;
      }
      const slot = held ?? this.slots.alloc();
      this.slots.set(slot, { ...p, state: p.state });
      if (held === undefined) byTarget.set(this.slots.targetOf(slot), slot);
    }
    sender.paths = [...byTarget.values()];
    return { accepted: true, resync: false };
  }

  /** Forgets the nodes not listed, and those that have not reported for `staleMs`. */
  prune(listed: ReadonlySet<string>, now: number, staleMs: number): void {
    // forEach: no entry array for each of thousands of senders, every round.
    this.senders.forEach((sender, address) => {
      if (!listed.has(address) || now - sender.heardMs > staleMs) this.forget(address, sender);
    });
    this.slots.keepNames(listed);
  }

  clear(): void {
    this.senders.clear();
    this.slots.clear();
    this.changes++;
  }

  /** The nodes reporting, and how many paths the book holds. */
  get size(): { nodes: number; paths: number } {
    let paths = 0;
    for (const s of this.senders.values()) paths += s.paths.length;
    return { nodes: this.senders.size, paths };
  }

  /** Every path the book holds, with its source: what the status page's matrix shows. */
  *entries(): Generator<{ from: string; path: ReportedPath }> {
    for (const [from, sender] of this.senders) {
      for (const slot of sender.paths) yield { from, path: this.slots.path(slot) };
    }
  }

  /** When `address` last reported (epoch ms), if the book holds its paths. */
  heardMs(address: string): number | undefined {
    return this.senders.get(address)?.heardMs;
  }

  /** The path from → to as last reported, if it is known. */
  path(from: string, to: string): ReportedPath | undefined {
    const slot = this.slotOf(from, to);
    return slot === undefined ? undefined : this.slots.path(slot);
  }

  /** What localization reads: every path known between `nodes`. */
  input(nodes: readonly string[]): LocalizeInput {
    const { senders, slots } = this;
    return {
      nodes,
      paths: {
        *[Symbol.iterator](): Iterator<PathState> {
          for (const [from, sender] of senders) {
            for (const slot of sender.paths) {
              const p = slots.path(slot);
              if (p.state === 'mtu') {
                yield { from, to: p.to, state: 'mtu', size: p.mtu_size ?? 0 };
              } else if (p.state !== 'unknown') {
                yield { from, to: p.to, state: p.state };
              }
            }
          }
        },
      },
    };
  }

  /**
   * The same as `indexPaths(input(nodes))` (path-index.ts), built from the slots without an object
   * a path: what the coordinator localizes each round. Its arrays are the book's own, reused by
   * the next call (valid until then), rather than made anew every few seconds for every path
   * held. The names are sorted again only for another array of nodes.
   */
  index(nodes: readonly string[]): PathIndex {
    if (this.indexed?.nodes !== nodes) {
      const names = [...new Set(nodes)].sort(byText);
      this.indexed = { nodes, names, ids: new Map(names.map((name, i) => [name, i])) };
    }
    const { names, ids } = this.indexed;
    let count = 0;
    this.senders.forEach((sender, source) => {
      if (ids.has(source)) count += sender.paths.length;
    });
    if (this.indexBuffers.from.length < count) {
      const room = Math.max(count, Math.ceil(this.indexBuffers.from.length * 1.5));
      this.indexBuffers = {
        from: new Int32Array(room),
        to: new Int32Array(room),
        state: new Uint8Array(room),
        size: new Uint16Array(room),
      };
    }
    const { from, to, state, size } = this.indexBuffers;
    let p = 0;
    for (const [source, sender] of this.senders) {
      const f = ids.get(source);
      if (f === undefined) continue;
      for (const slot of sender.paths) {
        const t = ids.get(this.slots.targetOf(slot));
        if (t === undefined || t === f) continue;
        from[p] = f;
        to[p] = t;
        state[p] = this.slots.stateOf(slot);
        size[p++] = this.slots.mtuOf(slot);
      }
    }
    return {
      names,
      from: from.subarray(0, p),
      to: to.subarray(0, p),
      state: state.subarray(0, p),
      size: size.subarray(0, p),
    };
  }

  private forget(address: string, sender: Sender): void {
    this.drop(sender);
    this.senders.delete(address);
    this.changes++;
  }

  private drop(sender: Sender): void {
    for (const slot of sender.paths) this.slots.release(slot);
  }

  /** The slot of the path from → to, if the book holds it. */
  private slotOf(from: string, to: string): number | undefined {
    const { slots } = this;
    return this.senders.get(from)?.paths.find((slot) => slots.targetOf(slot) === to);
  }

  /**
   * The figures a finding carries: its path's, or a node's paths' merged (those in its state; all
   * of them for a closing: the node's figures as it is over).
   */
  figuresOf(finding: Finding, { closing = false } = {}): WindowStats | null {
    switch (finding.kind) {
      case 'path-degraded':
      case 'path-mtu':
      case 'path-broken': {
        const slot = this.slotOf(finding.from, finding.to);
        return slot === undefined ? null : this.slots.statsOf(slot);
      }
      case 'node-degraded':
      case 'node-mtu': {
        const state = closing ? 'all' : finding.kind === 'node-mtu' ? MTU : DEGRADED;
        return this.nodeSums(state).get(finding.node)?.sum.stats ?? NO_SAMPLES;
      }
      default:
        return null;
    }
  }

  /**
   * When a finding's problem started, by the reports (the nodes' clocks): the earliest `since` of
   * the paths it explains, so that another coordinator, told the same paths, names the same
   * incident. Null when none is known (then the caller's clock decides).
   */
  startOf(finding: Finding): number | null {
    switch (finding.kind) {
      case 'path-broken':
      case 'path-degraded':
      case 'path-mtu': {
        const slot = this.slotOf(finding.from, finding.to);
        return slot === undefined ? null : this.slots.sinceOf(slot);
      }
      case 'node-degraded':
      case 'node-mtu': {
        const state = finding.kind === 'node-mtu' ? MTU : DEGRADED;
        return this.nodeSums(state).get(finding.node)?.earliest ?? null;
      }
      case 'egress-broken': {
        let earliest: number | null = null;
        for (const slot of this.senders.get(finding.node)?.paths ?? []) {
          if (this.slots.stateOf(slot) !== FAILED) continue;
          earliest = Math.min(earliest ?? Infinity, this.slots.sinceOf(slot));
        }
        return earliest;
      }
      case 'partition': {
        const sideOf = new Map<string, number>();
        finding.sides.forEach((side, s) => side.forEach((n) => sideOf.set(n, s)));
        let earliest: number | null = null;
        for (const [from, sender] of this.senders) {
          const s = sideOf.get(from);
          if (s === undefined) continue;
          for (const slot of sender.paths) {
            const t = sideOf.get(this.slots.targetOf(slot));
            if (this.slots.stateOf(slot) !== FAILED || t === undefined || t === s) continue;
            earliest = Math.min(earliest ?? Infinity, this.slots.sinceOf(slot));
          }
        }
        return earliest;
      }
      case 'unreachable':
        return null;
    }
  }

  /**
   * Every node's paths in `state` (or all), in and out, summed up, and the earliest since: one
   * pass over the book for every node at once, kept until the book changes (a round's findings
   * about many nodes read it once).
   */
  private nodeSums(state: HeldState | 'all'): Map<string, { sum: StatsSum; earliest: number }> {
    const cached = this.sums.get(state);
    if (cached?.version === this.changes) return cached.byNode;
    const byNode = new Map<string, { sum: StatsSum; earliest: number }>();
    const add = (node: string, slot: number) => {
      let entry = byNode.get(node);
      if (!entry) {
        entry = { sum: new StatsSum(), earliest: Infinity };
        byNode.set(node, entry);
      }
      entry.sum.add(this.slots.statsOf(slot));
      entry.earliest = Math.min(entry.earliest, this.slots.sinceOf(slot));
    };
    for (const [from, sender] of this.senders) {
      for (const slot of sender.paths) {
        if (state !== 'all' && this.slots.stateOf(slot) !== state) continue;
        add(from, slot);
        add(this.slots.targetOf(slot), slot);
      }
    }
    this.sums.set(state, { version: this.changes, byNode });
    return byNode;
  }
}
