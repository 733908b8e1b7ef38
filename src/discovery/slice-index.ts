// The peers of a Service's EndpointSlices, kept per slice and updated one slice at a time; pure.
//
// At 5,000 nodes a Service has ~50 slices of ~100 endpoints and most changes touch one of them, so
// each change costs the size of that slice, not of the whole Service. Every address carries the
// number of slices listing it: while Kubernetes moves an endpoint from one slice to another it may
// list it in both, and the address stays a peer until the last slice drops it.
import { peersFromSlice, type SliceLike } from './endpoint-slices.js';

interface Contribution {
  addresses: readonly string[];
  nodeNames: ReadonlyMap<string, string>;
  podNames: ReadonlyMap<string, string>;
  terminating: number;
  notReady: number;
  resourceVersion: string | undefined;
}

export interface SliceTotals {
  slices: number;
  /** Distinct addresses over all slices. */
  peers: number;
  terminating: number;
  notReady: number;
}

/** `namespace/name`: how the API, and the informer's cache, tell slices apart. */
export function sliceKey(slice: SliceLike): string {
  return `${slice.metadata?.namespace ?? ''}/${slice.metadata?.name ?? ''}`;
}

export class SliceIndex {
  private readonly slices = new Map<string, Contribution>();
  /** How many slices list each address; an address is present while that is above 0. */
  private readonly refs = new Map<string, number>();
  /** The node each present address runs on, as the slice that last listed it named it. */
  private readonly names = new Map<string, string>();
  /** The pod behind each present address, likewise. */
  private readonly pods = new Map<string, string>();
  private terminating = 0;
  private notReady = 0;
  /** The sorted addresses as last built. */
  private sorted: readonly string[] = [];
  /** Addresses whose presence differs from `sorted` (one that went and came back is not here). */
  private readonly toggled = new Set<string>();

  /** `fallbackPort`: CONTAINER_PORT, for slices that name no usable port. */
  constructor(private readonly fallbackPort: number) {}

  /**
   * Adds or replaces a slice, whatever came before (safe to repeat, in any order); costs the size
   * of the old and new slice. True when some address appeared or disappeared.
   */
  upsert(slice: SliceLike): boolean {
    const key = sliceKey(slice);
    const old = this.slices.get(key);
    const resourceVersion = slice.metadata?.resourceVersion;
    // The same resourceVersion is the same object (a relist, a replayed event): nothing to do.
    if (old && resourceVersion !== undefined && old.resourceVersion === resourceVersion)
      return false;
    const next = peersFromSlice(slice, this.fallbackPort);
    let changed = false;
    // The new contribution first: an address in both never drops to 0, even for a moment.
    for (const a of next.addresses) changed = this.count(a, 1) || changed;
    if (old) changed = this.drop(old) || changed;
    for (const [address, name] of next.nodeNames) this.names.set(address, name);
    for (const [address, name] of next.podNames) this.pods.set(address, name);
    this.slices.set(key, { ...next, resourceVersion });
    this.terminating += next.terminating;
    this.notReady += next.notReady;
    return changed;
  }

  /** Removes a slice (by namespace/name; its contents are not read). True when addresses went. */
  remove(slice: SliceLike): boolean {
    const key = sliceKey(slice);
    const old = this.slices.get(key);
    if (!old) return false;
    this.slices.delete(key);
    return this.drop(old);
  }

  /** Makes the index hold exactly `slices` (after a relist); unchanged slices cost nothing. */
  replaceAll(slices: readonly SliceLike[]): boolean {
    const keep = new Set<string>();
    let changed = false;
    for (const slice of slices) {
      keep.add(sliceKey(slice));
      changed = this.upsert(slice) || changed;
    }
    for (const key of [...this.slices.keys()]) {
      if (keep.has(key)) continue;
      const old = this.slices.get(key);
      this.slices.delete(key);
      if (old) changed = this.drop(old) || changed;
    }
    return changed;
  }

  /**
   * Every address, sorted, without duplicates. The same array until an address appears or
   * disappears, so a caller can compare by identity; rebuilt in O(peers + changes·log changes).
   */
  addresses(): readonly string[] {
    if (this.toggled.size === 0) return this.sorted;
    // A toggled address absent from `sorted` has appeared; one in it has gone.
    const added = [...this.toggled].filter((a) => this.refs.has(a)).sort();
    const kept = this.sorted.filter((a) => !this.toggled.has(a));
    this.toggled.clear();
    this.sorted = merge(kept, added);
    return this.sorted;
  }

  /** The Kubernetes node `address` runs on, if a slice listing it names one. */
  nodeName(address: string): string | undefined {
    return this.names.get(address);
  }

  /** The pod behind `address`, if a slice listing it names one. */
  podName(address: string): string | undefined {
    return this.pods.get(address);
  }

  totals(): SliceTotals {
    return {
      slices: this.slices.size,
      peers: this.refs.size,
      terminating: this.terminating,
      notReady: this.notReady,
    };
  }

  private drop(old: Contribution): boolean {
    let changed = false;
    for (const a of old.addresses) changed = this.count(a, -1) || changed;
    this.terminating -= old.terminating;
    this.notReady -= old.notReady;
    return changed;
  }

  /** Moves an address's count by `delta`; true when it appeared or disappeared. */
  private count(address: string, delta: 1 | -1): boolean {
    const n = (this.refs.get(address) ?? 0) + delta;
    if (n > 0) this.refs.set(address, n);
    else {
      this.refs.delete(address);
      this.names.delete(address);
      this.pods.delete(address);
    }
    const flipped = (delta === 1 && n === 1) || (delta === -1 && n === 0);
    if (!flipped) return false;
    // Two flips cancel: the address is as `sorted` has it again.
    if (!this.toggled.delete(address)) this.toggled.add(address);
    return true;
  }
}

/** Merges two sorted lists of distinct strings into one, in the order of `Array#sort`. */
function merge(a: readonly string[], b: readonly string[]): string[] {
  if (b.length === 0) return [...a];
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as string;
    const y = b[j] as string;
    if (x < y) {
      out.push(x);
      i++;
    } else {
      out.push(y);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++] as string);
  while (j < b.length) out.push(b[j++] as string);
  return out;
}
