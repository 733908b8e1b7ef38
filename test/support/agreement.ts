// Whether a mesh has settled, for the test fixtures: one coordinator agreed on in every /ping
// answer, and a cluster status from it listing every peer alive.
import type { ClusterStatusPayload } from '../../src/wire/webhooks.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';

/**
 * The epoch all answered with, if every node answered, all follow `expectedAddress` as
 * coordinator at one epoch above `epochAbove`, and exactly that node says it is coordinator;
 * undefined otherwise.
 */
export function agreedEpoch(
  answers: readonly (PingResponse | null)[],
  expectedAddress: string,
  epochAbove: number,
): number | undefined {
  const got = answers.filter((p): p is PingResponse => p !== null);
  if (got.length !== answers.length) return undefined;
  const epochs = new Set(got.map((p) => p.epoch));
  const leaders = got.filter((p) => p.role === 'coordinator');
  const agreed =
    got.every((p) => p.coordinator?.address === expectedAddress) &&
    epochs.size === 1 &&
    leaders.length === 1 &&
    leaders[0]?.address === expectedAddress;
  const epoch = got[0]?.epoch ?? 0;
  return agreed && epoch > epochAbove ? epoch : undefined;
}

/**
 * A cluster status of `coordinatorAddress` in `epoch` or a later term of its own, listing all
 * `peers` others, alive. Later: the pings may agree on a term its leader has not confirmed yet,
 * which it then renews under a newer epoch on a late rejection, never posting the first.
 */
export function listsEveryPeerAlive(
  b: ClusterStatusPayload,
  coordinatorAddress: string,
  epoch: number,
  peers: number,
): boolean {
  return (
    b.coordinator_address === coordinatorAddress &&
    b.epoch >= epoch &&
    b.peer_map.length === peers &&
    b.peer_map.every((p) => p.alive)
  );
}
