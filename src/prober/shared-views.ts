// The verdicts as the coordinator shares them (announcements), rebuilt when one changes rather
// than at every heartbeat.
//
// A large mesh's coordinator sends its successors every verdict at each heartbeat, twice a second:
// at 5,000 peers, 5,000 views and 2 MB of JSON. Between verdict changes the same views go again
// (the same array: the election driver then sends the same announcement, serialized once). Their
// latencies, last-probe times and the failures of peers not answering, which change at every probe
// and are shown only on followers' status pages, are refreshed every `maxAgeMs()`. The successors (next in line) are worked out
// once per change too: rank and health decide them, not latencies.
import type { Clock } from '../core/clock.js';
import { toView, type PeerRecord } from './verdict.js';
import type { PeerView } from '../wire/peer-view.js';

/** A large mesh: how old the shared latencies may get while no verdict changes (10 heartbeats). */
export const LARGE_MESH_VIEW_AGE_MS = 5_000;

export interface SharedViewsOptions {
  clock: Clock;
  /** Changes whenever `records()` would show a verdict otherwise (ProbeRounds.verdictsVersion). */
  version: () => number;
  records: () => readonly PeerRecord[];
  /** How old the views' latencies may get while no verdict changes (0: rebuilt at every call). */
  maxAgeMs: () => number;
  /** The successors among the records (highest-ranked not dead, say). */
  successorsOf: (records: readonly PeerRecord[]) => string[];
}

export class SharedViews {
  private built: { version: number; atMs: number; views: PeerView[] } | null = null;
  private picked: { version: number; successors: string[] } | null = null;

  constructor(private readonly opts: SharedViewsOptions) {}

  /** The views; the same array as the last call's while no verdict changed and it is fresh. */
  views(): PeerView[] {
    const version = this.opts.version();
    const now = this.opts.clock.now();
    const last = this.built;
    if (last && last.version === version && now - last.atMs < this.opts.maxAgeMs()) {
      return last.views;
    }
    const views = this.opts.records().map(toView);
    this.built = { version, atMs: now, views };
    return views;
  }

  /** The successors, worked out again only when a verdict changed. */
  successors(): string[] {
    const version = this.opts.version();
    if (this.picked?.version !== version) {
      this.picked = { version, successors: this.opts.successorsOf(this.opts.records()) };
    }
    return [...this.picked.successors];
  }
}
