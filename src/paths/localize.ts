// Localizing path failures: from the latest state of each ordered path (from → to) between nodes,
// which node, path or split of the mesh explains what fails, degrades or drops full-size packets.
//
// Words. A path is known unless it is 'unknown' or not given. It works when it is 'ok', 'degraded'
// or 'mtu' (the probe got through, small probes at least) and fails when 'failed'. "Most" of a
// node's paths: a strict majority of its known paths in the direction asked, of which there must
// be at least MIN_KNOWN (2): a node with fewer is not judged, and nothing is blamed on it. Paths an
// earlier rule explains are left out of every later rule's counts, so nothing is blamed twice.
// No node weighs more than another, the coordinator included (its own verdicts judge the dead).
//
// The rules, in this order:
// 0. Nodes the caller discounts (its verdicts do not hold them alive): their paths count for
//    nothing from rule 2 on (rule 1 still tells who nobody reaches).
// 1. unreachable {node}: no known path into it works. Whether it is dead is the coordinator's own
//    verdict (probes, retries, relays); this is for the caller to cross-check. Every path into or
//    out of it is explained.
// 2. partition {sides}: join the nodes left by every unexplained path that works, in either
//    direction. ≥ 2 groups of ≥ 2 nodes, with ≥ MIN_KNOWN failing paths known between every two
//    groups (groups with fewer between them are one side: nothing known separates them, as happens
//    when samples are sparse), and most known paths inside each side (≥ MIN_KNOWN) work. Every
//    path between sides is then explained. One direction is enough to join two nodes: a probe that
//    works from a to b carried packets both ways between them, so the network joins them, and the
//    other direction failing is a rule at one end (a policy, a firewall), not a split. Joining on
//    both directions only would also make a node whose egress is cut a "side" of its own.
//    Every known path between sides fails, by construction. A side that cannot report to the
//    caller has its paths out unknown once they are too old; its nodes then look unreachable (rule
//    1), which is all that can be told from the caller's side.
//    2b. Failing that, sides that some node reaches both of (the caller, usually: it hears from
//    both), which the rule above joins through it: the failing paths, as undirected edges, form a
//    component that 2-colours into two groups of ≥ 2 nodes, no known path between the groups
//    works (≥ MIN_KNOWN fail), and most known paths inside each work. A split into three or more
//    groups that a node bridges has odd cycles and is left to the later rules.
// 3. egress-broken {node, reaches, reachedBy}: most of its known paths out fail, and most of its
//    known paths in work. Its failing paths out are explained. `reaches`: the nodes it is known to
//    still reach (none when its egress is cut outright); `reachedBy`: those known to reach it.
// 4. path-broken {from, to, witnesses}: a failing path whose source reaches most of its known
//    targets and whose target is reached by most of its known sources: both ends otherwise fine.
//    `witnesses`: the nodes known to reach the target. Any other failing path is left unblamed:
//    its ends are not fine enough to tell the path from an end.
// 5. node-mtu {node, size}: most known paths into and out of it are 'mtu'; `size` is the smallest
//    size that failed on them. path-mtu {from, to, size}: every other 'mtu' path, neither end of
//    which is such a node.
// 6. node-degraded {node} and path-degraded {from, to}: the same with 'degraded'.
//
// Findings come by kind in this order: partition, unreachable, egress-broken, path-broken,
// node-mtu, path-mtu, node-degraded, path-degraded; each kind by node, or by from then to, in
// address order (code units); node lists are in address order, sides by their first node. The
// result depends only on the set of nodes and paths, not on their order.
//
// Cost, N nodes and P known paths: O(N log N + P + F log F + G²), F findings, G the groups of the
// partition rule (see partition.ts); memory O(N + P + G²). Figures: docs/benchmarks.md.
import { bridgedSides, partitionSides } from './partition.js';
import {
  explain,
  FAILED,
  indexPaths,
  MIN_KNOWN,
  most,
  pathsWhere,
  tally,
  workingLinks,
  type PathIndex,
} from './path-index.js';
import { degradedFindings, mtuFindings } from './path-quality.js';
import type { Finding, LocalizeInput } from './path-state.js';

export type { Finding, LocalizeInput, PathState } from './path-state.js';

/** The findings that explain the paths of `input`; pure. */
export function localize(input: LocalizeInput, discounted?: ReadonlySet<string>): Finding[] {
  return localizeIndex(indexPaths(input.nodes, input.paths), discounted);
}

/**
 * The same, from the paths indexed already (path-book.ts builds the index from its slots).
 * `discounted`: nodes the caller's own verdicts do not hold alive (dead, suspect, not judged yet,
 * back too lately for their paths to have been probed again): after rule 1, no path into or out of
 * one counts for anything, so that a node's paths to the dead never make it egress-broken, one
 * side of a partition, or degraded.
 */
export function localizeIndex(index: PathIndex, discounted?: ReadonlySet<string>): Finding[] {
  const { names, from, to, state } = index;
  const explained = new Uint8Array(from.length);
  const findings: Finding[] = [];

  // 1. Nobody reaches it.
  const whole = tally(index, explained);
  const unreachable = new Uint8Array(names.length);
  names.forEach((_, n) => {
    if (whole.inKnown[n]! >= MIN_KNOWN && whole.inWorking[n] === 0) unreachable[n] = 1;
  });
  explain(index, explained, (f, t) => unreachable[f] === 1 || unreachable[t] === 1);
  if (discounted && discounted.size > 0) {
    const out = new Uint8Array(names.length);
    names.forEach((name, n) => {
      if (discounted.has(name)) out[n] = 1;
    });
    explain(index, explained, (f, t) => out[f] === 1 || out[t] === 1);
  }

  // 2. Sides that cannot reach each other, joined by no working path or only through a bridge.
  const sides =
    partitionSides(index, explained, unreachable) ?? bridgedSides(index, explained, unreachable);
  if (sides) {
    const sideOf = new Int32Array(names.length).fill(-1);
    sides.forEach((side, s) => side.forEach((m) => (sideOf[m] = s)));
    findings.push({ kind: 'partition', sides: sides.map((side) => side.map((m) => names[m]!)) });
    explain(
      index,
      explained,
      (f, t) => sideOf[f]! >= 0 && sideOf[t]! >= 0 && sideOf[f] !== sideOf[t],
    );
  }
  names.forEach((node, n) => {
    if (unreachable[n]) findings.push({ kind: 'unreachable', node });
  });

  // From here on only failing paths are explained: who reaches whom no longer changes.
  const links = workingLinks(index, explained);

  // 3. It reaches few while others reach it.
  const split = tally(index, explained);
  const egress = new Uint8Array(names.length);
  names.forEach((node, n) => {
    const failing = split.outKnown[n]! - split.outWorking[n]!;
    if (!most(failing, split.outKnown[n]!) || !most(split.inWorking[n]!, split.inKnown[n]!)) return;
    egress[n] = 1;
    findings.push({
      kind: 'egress-broken',
      node,
      reaches: links.reaches(n),
      reachedBy: links.reachedBy(n),
    });
  });
  explain(index, explained, (f, _t, p) => egress[f] === 1 && state[p] === FAILED);

  // 4. One path failing between two ends otherwise fine.
  const counts = tally(index, explained);
  const broken = pathsWhere(
    index,
    explained,
    (p) =>
      state[p] === FAILED &&
      most(counts.outWorking[from[p]!]!, counts.outKnown[from[p]!]!) &&
      most(counts.inWorking[to[p]!]!, counts.inKnown[to[p]!]!),
  );
  const witnesses = new Map<number, string[]>();
  for (const p of broken) {
    const t = to[p]!;
    const w = witnesses.get(t) ?? links.reachedBy(t);
    witnesses.set(t, w);
    findings.push({
      kind: 'path-broken',
      from: names[from[p]!]!,
      to: names[t]!,
      witnesses: [...w],
    });
  }

  // 5, 6. Full-size packets dropped; slow or lossy paths.
  findings.push(...mtuFindings(index, explained, counts));
  findings.push(...degradedFindings(index, explained, counts));
  return findings;
}
