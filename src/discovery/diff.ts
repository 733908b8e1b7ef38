// A pure diff of two peer lists, so one owner applies additions and removals.

export interface PeerDiff {
  added: string[];
  removed: string[];
}

export function diffPeers(previous: readonly string[], next: readonly string[]): PeerDiff {
  const before = new Set(previous);
  const after = new Set(next);
  return {
    added: next.filter((a) => !before.has(a)),
    removed: previous.filter((a) => !after.has(a)),
  };
}
