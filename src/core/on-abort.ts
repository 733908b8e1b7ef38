// Many listeners on one AbortSignal, each added and removed in O(1). Node's EventTarget looks
// through every listener already added for a duplicate, and a coordinator's term signal has a
// thousand probes in flight on it, and at scale that search was a measurable share of the
// coordinator's CPU.
const listeners = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `listener` once when `signal` aborts; returns what removes it. */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let set = listeners.get(signal);
  if (!set) {
    const created = new Set<() => void>();
    listeners.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        listeners.delete(signal);
        for (const l of [...created]) l();
      },
      { once: true },
    );
    set = created;
  }
  const own = set;
  own.add(listener);
  return () => own.delete(listener);
}
