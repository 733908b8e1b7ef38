// Which peers a node probes in a round, so that every ordered pair of nodes gets tested: each node
// walks the ring of all nodes from its own place, `perRound` peers a round, wrapping around. Every
// node starts at a different place, so in any round each node is the target of about `perRound`
// others: a node's load (probes out and in) is constant whatever the size of the mesh, and the
// whole ring is covered in ceil((N - 1) / perRound) rounds.

/**
 * The peers `self` probes in round `round` (0, 1, 2…): at most `perRound`, all distinct, never
 * `self`. `nodes`: every node, `self` included or not, in an order every node agrees on (rank).
 */
export function pairTargets(
  self: string,
  nodes: readonly string[],
  round: number,
  perRound: number,
): string[] {
  const at = nodes.indexOf(self);
  // The ring as seen from self: the nodes after it, then those before it (all, from the first,
  // when it is not listed: at is -1); read in place rather than copied, since every node of a mesh
  // of thousands works this out every round.
  const n = at < 0 ? nodes.length : nodes.length - 1;
  if (n === 0 || perRound <= 0) return [];
  const count = Math.min(perRound, n);
  const start = (((round * count) % n) + n) % n;
  const targets: string[] = [];
  for (let i = 0; i < count; i++) targets.push(nodes[(at + 1 + ((start + i) % n)) % nodes.length]!);
  return targets;
}

/** How many rounds it takes `self` to probe every other node once: the coverage of all pairs. */
export function roundsToCover(nodes: number, perRound: number): number {
  const others = Math.max(0, nodes - 1);
  if (others === 0) return 0;
  return Math.ceil(others / Math.max(1, Math.min(perRound, others)));
}
