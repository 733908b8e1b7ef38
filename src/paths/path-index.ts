// The known paths of a mesh as a sparse index: nodes numbered in address order, one entry a known
// path, and per-node counts over any subset of the paths. Memory and time O(N + P): only what was
// tested is held, never an N × N matrix.
import type { PathState } from './path-state.js';

/** A known path's state; anything but FAILED got through. */
export const OK = 0;
export const FAILED = 1;
export const DEGRADED = 2;
export const MTU = 3;

/** Fewer known paths than this (in the direction asked) and a node is not judged. */
export const MIN_KNOWN = 2;

/** `part` is a strict majority of `whole`, and `whole` is enough to judge by. */
export function most(part: number, whole: number): boolean {
  return whole >= MIN_KNOWN && part * 2 > whole;
}

/** Plain code-unit order: the same on every machine, whatever its locale. */
export function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface PathIndex {
  /** Node addresses in ascending order; a node's number is its place here. */
  readonly names: readonly string[];
  /** Path p goes from node from[p] to node to[p], in state state[p]. */
  readonly from: Int32Array;
  readonly to: Int32Array;
  readonly state: Uint8Array;
  /** For an MTU path, the size that failed (at most 9,000: schemas/path-report); 0 otherwise. */
  readonly size: Uint16Array;
}

/**
 * Numbers the nodes and keeps the known paths between them. Unknown paths, a node's path to itself
 * and paths naming a node not listed (one that just left) are dropped; a path given twice is a
 * caller's error, as its latest state would then depend on the order.
 */
export function indexPaths(nodes: readonly string[], paths: Iterable<PathState>): PathIndex {
  const names = [...new Set(nodes)].sort(byText);
  const ids = new Map(names.map((name, i) => [name, i]));
  const list = Array.isArray(paths) ? (paths as readonly PathState[]) : [...paths];
  const from = new Int32Array(list.length);
  const to = new Int32Array(list.length);
  const state = new Uint8Array(list.length);
  const size = new Uint16Array(list.length);
  let count = 0;
  // Paths usually come grouped by source: its number is looked up once a group.
  let source: string | undefined;
  let f: number | undefined;
  for (const path of list) {
    if (path.from !== source) [source, f] = [path.from, ids.get(path.from)];
    const t = ids.get(path.to);
    if (f === undefined || t === undefined || f === t) continue;
    from[count] = f;
    to[count] = t;
    state[count] = codeOf(path);
    size[count++] = path.state === 'mtu' ? path.size : 0;
  }
  refuseTwice(names, from.subarray(0, count), to.subarray(0, count));
  // Unknown paths were kept until now only to be checked for duplicates.
  let known = 0;
  for (let p = 0; p < count; p++) {
    if (state[p] === UNKNOWN) continue;
    from[known] = from[p]!;
    to[known] = to[p]!;
    state[known] = state[p]!;
    size[known++] = size[p]!;
  }
  return {
    names,
    from: from.subarray(0, known),
    to: to.subarray(0, known),
    state: state.subarray(0, known),
    size: size.subarray(0, known),
  };
}

const UNKNOWN = 255;

function codeOf(path: PathState): number {
  switch (path.state) {
    case 'ok':
      return OK;
    case 'failed':
      return FAILED;
    case 'degraded':
      return DEGRADED;
    case 'mtu':
      return MTU;
    case 'unknown':
      return UNKNOWN;
  }
}

/** Throws on a path given twice: in each source's group, each target is stamped with the source. */
function refuseTwice(names: readonly string[], from: Int32Array, to: Int32Array) {
  const { start, order } = groupBy(from, names.length);
  const stamp = new Int32Array(names.length).fill(-1);
  for (let f = 0; f < names.length; f++) {
    for (let i = start[f]!; i < start[f + 1]!; i++) {
      const t = to[order[i]!]!;
      if (stamp[t] === f)
        throw new Error(`localize: the path ${names[f]} → ${names[t]} given twice`);
      stamp[t] = f;
    }
  }
}

/**
 * The paths `p` that `include` keeps, grouped by node `keys[p]` with a counting sort, O(N + P) on
 * typed arrays (several times faster than a Set or arrays of arrays): the group of node k is
 * order[start[k]] … order[start[k + 1] - 1].
 */
function groupBy(
  keys: Int32Array,
  n: number,
  include: (p: number) => boolean = () => true,
): { start: Int32Array; order: Int32Array } {
  const start = new Int32Array(n + 1);
  for (let p = 0; p < keys.length; p++) if (include(p)) start[keys[p]! + 1]!++;
  for (let k = 0; k < n; k++) start[k + 1]! += start[k]!;
  const order = new Int32Array(start[n]!);
  const next = start.slice(0, n);
  for (let p = 0; p < keys.length; p++) if (include(p)) order[next[keys[p]!]!++] = p;
  return { start, order };
}

/** Per node, counts over the paths counted: out of it, into it, and touching it in a state. */
export interface Tally {
  outKnown: Int32Array;
  outWorking: Int32Array;
  inKnown: Int32Array;
  inWorking: Int32Array;
  /** Paths into or out of the node that are DEGRADED, and MTU. */
  degraded: Int32Array;
  mtu: Int32Array;
}

/** Counts the paths not yet `explained` (1: an earlier rule accounts for it). */
export function tally(index: PathIndex, explained: Uint8Array): Tally {
  const n = index.names.length;
  const t: Tally = {
    outKnown: new Int32Array(n),
    outWorking: new Int32Array(n),
    inKnown: new Int32Array(n),
    inWorking: new Int32Array(n),
    degraded: new Int32Array(n),
    mtu: new Int32Array(n),
  };
  const { from, to, state } = index;
  for (let p = 0; p < from.length; p++) {
    if (explained[p]) continue;
    const f = from[p]!;
    const d = to[p]!;
    const s = state[p]!;
    t.outKnown[f]!++;
    t.inKnown[d]!++;
    if (s !== FAILED) {
      t.outWorking[f]!++;
      t.inWorking[d]!++;
    }
    const touching = s === DEGRADED ? t.degraded : s === MTU ? t.mtu : null;
    if (touching) {
      touching[f]!++;
      touching[d]!++;
    }
  }
  return t;
}

/** Marks explained every unexplained path for which `test` holds. */
export function explain(
  index: PathIndex,
  explained: Uint8Array,
  test: (from: number, to: number, p: number) => boolean,
): void {
  for (let p = 0; p < index.from.length; p++) {
    if (!explained[p] && test(index.from[p]!, index.to[p]!, p)) explained[p] = 1;
  }
}

/** The unexplained paths for which `test` holds, by from then to. */
export function pathsWhere(
  index: PathIndex,
  explained: Uint8Array,
  test: (p: number) => boolean,
): number[] {
  const out: number[] = [];
  for (let p = 0; p < index.from.length; p++) if (!explained[p] && test(p)) out.push(p);
  const n = index.names.length;
  const key = (p: number) => index.from[p]! * n + index.to[p]!;
  return out.sort((a, b) => key(a) - key(b));
}

/** The node numbers for which `test` holds, ascending (a Set keeps insertion order). */
export function nodesWhere(index: PathIndex, test: (n: number) => boolean): Set<number> {
  const out = new Set<number>();
  for (let n = 0; n < index.names.length; n++) if (test(n)) out.add(n);
  return out;
}

/** Who is known to reach whom over the unexplained working paths, each list in address order. */
export interface Links {
  reaches(n: number): string[];
  reachedBy(n: number): string[];
}

/** Grouped once, when first asked (healthy meshes never ask), rather than a pass per node asked. */
export function workingLinks(index: PathIndex, explained: Uint8Array): Links {
  const n = index.names.length;
  const working = (p: number) => !explained[p] && index.state[p] !== FAILED;
  let out: ReturnType<typeof groupBy> | undefined;
  let into: ReturnType<typeof groupBy> | undefined;
  // Node numbers follow address order, so sorting numbers sorts addresses.
  const named = ({ start, order }: ReturnType<typeof groupBy>, other: Int32Array, k: number) =>
    Array.from(order.subarray(start[k], start[k + 1]), (p) => other[p]!)
      .sort((a, b) => a - b)
      .map((m) => index.names[m]!);
  return {
    reaches: (k) => named((out ??= groupBy(index.from, n, working)), index.to, k),
    reachedBy: (k) => named((into ??= groupBy(index.to, n, working)), index.from, k),
  };
}
