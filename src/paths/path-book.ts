// The coordinator's book of every node's paths, as their reports told them (report-sender.ts): the
// latest state of each path a node probes, kept while the node keeps reporting. What localization
// reads, and what the status page's matrix shows. Memory O(paths reported), held compactly
// (path-slots.ts); time O(paths in a report) to take one.
import type { PathReport, PathReportReply, ReportedPath } from '../wire/peer-messages.js';
import { mergeStats } from './merge-stats.js';
import type { WindowStats } from './path-window.js';
import type { Finding, LocalizeInput, PathState } from './path-state.js';
import { byText, type PathIndex } from './path-index.js';
import { PathSlots } from './path-slots.js';

interface Sender {
  /** The seq of the last report taken. */
  seq: number;
  heardMs: number;
  /** Its paths' slots, by target. */
  paths: Map<string, number>;
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
  private changes = 0;

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
      sender = { seq: report.seq, heardMs: now, paths: new Map() };
      this.senders.set(address, sender);
    } else if (!sender || report.seq !== sender.seq + 1) {
      // Nothing to change from, or a report missed: what the book holds of it may be wrong.
      if (sender) this.forget(address, sender);
      return { accepted: true, resync: true };
    }
    sender.seq = report.seq;
    sender.heardMs = now;
    if (report.full || report.paths.length > 0) this.changes++;
    for (const p of report.paths) {
      const held = sender.paths.get(p.to);
      if (p.state === 'unknown' || p.to === address) {
        if (held === undefined) continue;
        this.slots.release(held);
        sender.paths.delete(p.to);
        continue;
      }
      const slot = held ?? this.slots.alloc();
      this.slots.set(slot, { ...p, state: p.state });
      if (held === undefined) sender.paths.set(this.slots.targetOf(slot), slot);
    }
    return { accepted: true, resync: false };
  }

  /** Forgets the nodes not listed, and those that have not reported for `staleMs`. */
  prune(listed: ReadonlySet<string>, now: number, staleMs: number): void {
    for (const [address, sender] of this.senders) {
      if (!listed.has(address) || now - sender.heardMs > staleMs) this.forget(address, sender);
    }
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
    for (const s of this.senders.values()) paths += s.paths.size;
    return { nodes: this.senders.size, paths };
  }

  /** Every path the book holds, with its source: what the status page's matrix shows. */
  *entries(): Generator<{ from: string; path: ReportedPath }> {
    for (const [from, sender] of this.senders) {
      for (const slot of sender.paths.values()) yield { from, path: this.slots.path(slot) };
    }
  }

  /** When `address` last reported (epoch ms), if the book holds its paths. */
  heardMs(address: string): number | undefined {
    return this.senders.get(address)?.heardMs;
  }

  /** The path from → to as last reported, if it is known. */
  path(from: string, to: string): ReportedPath | undefined {
    const slot = this.senders.get(from)?.paths.get(to);
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
            for (const slot of sender.paths.values()) {
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
   * a path: what the coordinator localizes each round.
   */
  index(nodes: readonly string[]): PathIndex {
    const names = [...new Set(nodes)].sort(byText);
    const ids = new Map(names.map((name, i) => [name, i]));
    let count = 0;
    for (const [from, sender] of this.senders) if (ids.has(from)) count += sender.paths.size;
    const from = new Int32Array(count);
    const to = new Int32Array(count);
    const state = new Uint8Array(count);
    const size = new Float64Array(count);
    let p = 0;
    for (const [source, sender] of this.senders) {
      const f = ids.get(source);
      if (f === undefined) continue;
      for (const [target, slot] of sender.paths) {
        const t = ids.get(target);
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
    for (const slot of sender.paths.values()) this.slots.release(slot);
  }

  /** Every known path into or out of `node` in `state`, with its source and target. */
  pathsAt(node: string, state: ReportedPath['state']): { from: string; path: ReportedPath }[] {
    const found: { from: string; path: ReportedPath }[] = [];
    for (const [from, sender] of this.senders) {
      for (const slot of sender.paths.values()) {
        const p = this.slots.path(slot);
        if (p.state === state && (from === node || p.to === node)) found.push({ from, path: p });
      }
    }
    return found;
  }

  /** The figures a finding carries: its path's, or a node's paths' merged (those in its state). */
  figuresOf(finding: Finding): WindowStats | null {
    switch (finding.kind) {
      case 'path-degraded':
      case 'path-mtu':
      case 'path-broken': {
        const p = this.path(finding.from, finding.to);
        return p ? statsOf(p) : null;
      }
      case 'node-degraded':
        return mergeStats(this.pathsAt(finding.node, 'degraded').map((f) => statsOf(f.path)));
      case 'node-mtu':
        return mergeStats(this.pathsAt(finding.node, 'mtu').map((f) => statsOf(f.path)));
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
    const earliest = (paths: readonly ReportedPath[]) =>
      paths.length === 0 ? null : Math.min(...paths.map((p) => p.since));
    switch (finding.kind) {
      case 'path-broken':
      case 'path-degraded':
      case 'path-mtu':
        return this.path(finding.from, finding.to)?.since ?? null;
      case 'node-degraded':
        return earliest(this.pathsAt(finding.node, 'degraded').map((f) => f.path));
      case 'node-mtu':
        return earliest(this.pathsAt(finding.node, 'mtu').map((f) => f.path));
      case 'egress-broken': {
        const out = this.senders.get(finding.node)?.paths.values() ?? [];
        return earliest(
          [...out].map((slot) => this.slots.path(slot)).filter((p) => p.state === 'failed'),
        );
      }
      case 'partition': {
        const sideOf = new Map<string, number>();
        finding.sides.forEach((side, s) => side.forEach((n) => sideOf.set(n, s)));
        const across: ReportedPath[] = [];
        for (const [from, sender] of this.senders) {
          const s = sideOf.get(from);
          if (s === undefined) continue;
          for (const slot of sender.paths.values()) {
            const p = this.slots.path(slot);
            const t = sideOf.get(p.to);
            if (p.state === 'failed' && t !== undefined && t !== s) across.push(p);
          }
        }
        return earliest(across);
      }
      case 'unreachable':
        return null;
    }
  }
}
