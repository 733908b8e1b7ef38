// The bully order knh should elect by, computed from the mesh's ports independently of knh's code.
import type { MeshNode } from '../../src/demo/mesh.js';

/**
 * `nodes` from the highest bully rank to the lowest. Rank is the IP, then the port; every mesh node
 * listens on 127.0.0.1, so it is the port. Computed here, independently of knh's ranking code.
 */
export function byRank(nodes: readonly MeshNode[]): MeshNode[] {
  const ips = new Set(nodes.map((n) => n.address.replace(/:\d+$/, '')));
  if (ips.size !== 1) throw new Error(`expected one IP in the mesh, got ${[...ips].join(', ')}`);
  return [...nodes].sort((a, b) => b.port - a.port);
}

/** The node that should lead among `nodes`. */
export function highestRanked(nodes: readonly MeshNode[]): MeshNode {
  const best = byRank(nodes)[0];
  if (!best) throw new Error('no nodes to rank');
  return best;
}

/** The node least likely to matter to the election: never the coordinator nor its successor. */
export function lowestRanked(nodes: readonly MeshNode[]): MeshNode {
  const worst = byRank(nodes).at(-1);
  if (!worst) throw new Error('no nodes to rank');
  return worst;
}
