// Whether the mesh is split into sides that cannot reach each other, from the paths that work.
// The rule and why it joins on one direction are in localize.ts (rule 2).
import { FAILED, MIN_KNOWN, most, type PathIndex } from './path-index.js';

/** Union-find over 0..n-1, with path halving. */
class Groups {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  root(i: number): number {
    const parent = this.parent;
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  }
  join(a: number, b: number): void {
    const ra = this.root(a);
    const rb = this.root(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  /** The classes of `members` (in ascending order), each ascending, ordered by their first member. */
  classes(members: Iterable<number>): number[][] {
    const byRoot = new Map<number, number[]>();
    for (const m of members) {
      const r = this.root(m);
      const list = byRoot.get(r);
      if (list) list.push(m);
      else byRoot.set(r, [m]);
    }
    return [...byRoot.values()];
  }
}

/**
 * The sides of a partition, each a list of node numbers (ascending, sides by their first node), or
 * null when the paths show none. Paths `explained` already, and nodes `excluded` (unreachable),
 * take no part. Time O(N + P + G²) and memory O(N + G²), G the groups of two or more nodes (one
 * or two unless the mesh is shattered; at most N / 2).
 */
export function partitionSides(
  index: PathIndex,
  explained: Uint8Array,
  excluded: Uint8Array,
): number[][] | null {
  const n = index.names.length;
  const { from, to, state } = index;
  const joined = new Groups(n);
  for (let p = 0; p < from.length; p++) {
    if (!explained[p] && state[p] !== FAILED) joined.join(from[p]!, to[p]!);
  }
  const all = Array.from({ length: n }, (_, i) => i).filter((i) => !excluded[i]);
  const groups = joined.classes(all).filter((g) => g.length >= 2);
  if (groups.length < 2) return null;

  const groupOf = new Int32Array(n).fill(-1);
  groups.forEach((g, gi) => g.forEach((m) => (groupOf[m] = gi)));
  // Failing paths known between each two groups (no path between groups works: they would be one),
  // counted up to MIN_KNOWN: G × G bytes.
  const count = groups.length;
  const between = new Uint8Array(count * count);
  for (let p = 0; p < from.length; p++) {
    const a = groupOf[from[p]!]!;
    const b = groupOf[to[p]!]!;
    if (explained[p] || a < 0 || b < 0 || a === b) continue;
    const key = Math.min(a, b) * count + Math.max(a, b);
    if (between[key]! < MIN_KNOWN) between[key]!++;
  }
  // Groups that too few failures separate are one side: no evidence splits them (sparse samples).
  const merged = new Groups(count);
  for (let a = 0; a < count; a++) {
    for (let b = a + 1; b < count; b++) if (between[a * count + b]! < MIN_KNOWN) merged.join(a, b);
  }
  const sides = merged
    .classes(groups.keys())
    .map((gs) => gs.flatMap((g) => groups[g]!).sort((x, y) => x - y))
    .sort((x, y) => x[0]! - y[0]!);
  if (sides.length < 2) return null;
  return sidesWorkWithin(index, explained, sides) ? sides : null;
}

/** Most of the known paths inside each side work: each side is a working network of its own. */
function sidesWorkWithin(index: PathIndex, explained: Uint8Array, sides: number[][]): boolean {
  const sideOf = new Int32Array(index.names.length).fill(-1);
  sides.forEach((side, s) => side.forEach((m) => (sideOf[m] = s)));
  const known = new Int32Array(sides.length);
  const working = new Int32Array(sides.length);
  const { from, to, state } = index;
  for (let p = 0; p < from.length; p++) {
    const s = sideOf[from[p]!]!;
    if (explained[p] || s < 0 || s !== sideOf[to[p]!]) continue;
    known[s]!++;
    if (state[p] !== FAILED) working[s]!++;
  }
  return sides.every((_, s) => most(working[s]!, known[s]!));
}

/**
 * Rule 2b: two groups that cannot reach each other while some node reaches both (the coordinator,
 * often: it hears from both sides). The failing paths, taken as undirected edges, must form a
 * component that splits in two (2-colouring, no odd cycle) into groups of ≥ 2 nodes, with no known
 * path between the groups working and ≥ MIN_KNOWN failing, and most known paths inside each group
 * working. Of several such components, the one with the most nodes. Time O(N + P) to find the
 * components, and O(P) more for each that splits in two with ≥ 2 nodes a side (one, or none, in
 * all but a shattered mesh); memory O(N + P).
 */
export function bridgedSides(
  index: PathIndex,
  explained: Uint8Array,
  excluded: Uint8Array,
): number[][] | null {
  const n = index.names.length;
  const { from, to, state } = index;
  const edges: number[][] = Array.from({ length: n }, () => []);
  for (let p = 0; p < from.length; p++) {
    const [f, t] = [from[p]!, to[p]!];
    if (explained[p] || state[p] !== FAILED || excluded[f] || excluded[t]) continue;
    edges[f]!.push(t);
    edges[t]!.push(f);
  }
  const colour = new Int8Array(n).fill(-1);
  let best: number[][] | null = null;
  for (let start = 0; start < n; start++) {
    if (colour[start] !== -1 || edges[start]!.length === 0) continue;
    const parts = twoColour(edges, colour, start);
    if (!parts || parts[0].length < 2 || parts[1].length < 2) continue;
    const size = parts[0].length + parts[1].length;
    if (best && best[0]!.length + best[1]!.length >= size) continue;
    const sides = parts.map((p) => p.sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
    if (apart(index, explained, sides) && sidesWorkWithin(index, explained, sides)) best = sides;
  }
  return best;
}

/** The two colours of `start`'s component, or null when it has an odd cycle. */
function twoColour(
  edges: number[][],
  colour: Int8Array,
  start: number,
): [number[], number[]] | null {
  const parts: [number[], number[]] = [[], []];
  let odd = false;
  colour[start] = 0;
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const u = queue[head]!;
    parts[colour[u]!]!.push(u);
    for (const v of edges[u]!) {
      if (colour[v] === -1) {
        colour[v] = 1 - colour[u]!;
        queue.push(v);
      } else if (colour[v] === colour[u]) odd = true;
    }
  }
  return odd ? null : parts;
}

/** No known path between the two sides works, and at least MIN_KNOWN fail. */
function apart(index: PathIndex, explained: Uint8Array, sides: number[][]): boolean {
  const sideOf = new Int32Array(index.names.length).fill(-1);
  sides.forEach((side, s) => side.forEach((m) => (sideOf[m] = s)));
  const { from, to, state } = index;
  let failing = 0;
  for (let p = 0; p < from.length; p++) {
    const [a, b] = [sideOf[from[p]!]!, sideOf[to[p]!]!];
    if (explained[p] || a < 0 || b < 0 || a === b) continue;
    if (state[p] !== FAILED) return false;
    failing++;
  }
  return failing >= MIN_KNOWN;
}
