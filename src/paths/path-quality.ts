// Rules 5 and 6 of localize.ts: paths that drop full-size packets (MTU) or work slowly or lossily
// (degraded), blamed on a node when most of its paths are so, else named path by path.
import {
  DEGRADED,
  most,
  MTU,
  nodesWhere,
  pathsWhere,
  type PathIndex,
  type Tally,
} from './path-index.js';
import type { Finding } from './path-state.js';

/** node-mtu and path-mtu; a node's size is the smallest that failed on its paths. */
export function mtuFindings(index: PathIndex, explained: Uint8Array, counts: Tally): Finding[] {
  const { names, from, to, size } = index;
  const smallest = new Float64Array(names.length).fill(Infinity);
  return byNodeElsePath(index, explained, counts, MTU, {
    seen: (p) => {
      for (const n of [from[p]!, to[p]!]) smallest[n] = Math.min(smallest[n]!, size[p]!);
    },
    node: (n) => ({ kind: 'node-mtu', node: names[n]!, size: smallest[n]! }),
    path: (p) => ({ kind: 'path-mtu', from: names[from[p]!]!, to: names[to[p]!]!, size: size[p]! }),
  });
}

/** node-degraded and path-degraded. */
export function degradedFindings(
  index: PathIndex,
  explained: Uint8Array,
  counts: Tally,
): Finding[] {
  const { names, from, to } = index;
  return byNodeElsePath(index, explained, counts, DEGRADED, {
    node: (n) => ({ kind: 'node-degraded', node: names[n]! }),
    path: (p) => ({ kind: 'path-degraded', from: names[from[p]!]!, to: names[to[p]!]! }),
  });
}

/**
 * A node most of whose known paths (in and out, as `counts` counts them) are in `state` is named once;
 * every other path in `state` is named unless one of its ends is such a node.
 */
function byNodeElsePath(
  index: PathIndex,
  explained: Uint8Array,
  counts: Tally,
  state: typeof MTU | typeof DEGRADED,
  make: { seen?: (p: number) => void; node: (n: number) => Finding; path: (p: number) => Finding },
): Finding[] {
  const { from, to } = index;
  const paths = pathsWhere(index, explained, (p) => index.state[p] === state);
  if (make.seen) paths.forEach(make.seen);
  const touching = state === MTU ? counts.mtu : counts.degraded;
  const known = (n: number) => counts.outKnown[n]! + counts.inKnown[n]!;
  const blamed = nodesWhere(index, (n) => most(touching[n]!, known(n)));
  const out = [...blamed].map(make.node);
  for (const p of paths) if (!blamed.has(from[p]!) && !blamed.has(to[p]!)) out.push(make.path(p));
  return out;
}
