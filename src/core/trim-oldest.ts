// Bounded memories of keys: the oldest (first inserted) go first.

/** Drops the oldest entries of `entries` (insertion order) until at most `max` are left. */
export function trimOldest(entries: Set<string> | Map<string, unknown>, max: number): void {
  for (const key of entries.keys()) {
    if (entries.size <= max) return;
    entries.delete(key);
  }
}
