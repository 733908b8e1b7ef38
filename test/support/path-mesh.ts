// Path states of a test mesh for src/paths/localize.ts: which ordered paths are known and how they
// fare, set by the faults a test names (a cut pair, a cut egress, a crash, a split).
import type { LocalizeInput, PathState } from '../../src/paths/localize.js';

/** `count` node addresses, 10.0.x.y:8080 from 10.0.0.1 on. */
export function addresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `10.0.${(i + 1) >> 8}.${(i + 1) & 255}:8080`);
}

type State = Exclude<PathState['state'], 'mtu'> | { mtu: number };

export class PathMesh {
  private readonly paths = new Map<string, PathState>();

  /** Every ordered path known and ok (`dense`), or none known until set. */
  constructor(
    readonly nodes: readonly string[],
    { dense = true } = {},
  ) {
    if (!dense) return;
    for (const from of nodes) for (const to of nodes) if (from !== to) this.set(from, to, 'ok');
  }

  set(from: string, to: string, state: State): this {
    const path: PathState =
      typeof state === 'string' ? { from, to, state } : { from, to, state: 'mtu', size: state.mtu };
    this.paths.set(`${from} ${to}`, path);
    return this;
  }

  /** `node`'s paths out (`direction` 'out'), in, or both, in `state`. */
  each(node: string, direction: 'out' | 'in' | 'both', state: State): this {
    for (const other of this.nodes) {
      if (other === node) continue;
      if (direction !== 'in') this.set(node, other, state);
      if (direction !== 'out') this.set(other, node, state);
    }
    return this;
  }

  /** Neither of `a`, `b` reaches the other. */
  cut(a: string, b: string): this {
    return this.set(a, b, 'failed').set(b, a, 'failed');
  }

  /** A crashed node: nobody reaches it, and it reports nothing. */
  crash(node: string): this {
    return this.each(node, 'in', 'failed').each(node, 'out', 'unknown');
  }

  /** No node of one side reaches any of the other. */
  split(one: readonly string[], other: readonly string[]): this {
    for (const a of one) for (const b of other) this.cut(a, b);
    return this;
  }

  input(): LocalizeInput {
    return { nodes: this.nodes, paths: [...this.paths.values()] };
  }
}
