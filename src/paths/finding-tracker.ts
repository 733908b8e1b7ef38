// Which findings of localization are open incidents: a finding opens once it has been found for
// `openAfterMs(finding)` without a break, and closes once it has gone unfound for `closeAfterMs`, so that a
// path on the edge of failing (under heavy loss one probe in many fails twice in a row) neither
// opens an incident at once nor opens and closes one every few seconds. Pure: time is given.
import type { Finding } from './path-state.js';

/** What a finding is about, whatever its details (witnesses, sides, sizes change while it lasts). */
export function findingId(f: Finding): string {
  switch (f.kind) {
    case 'partition':
      return 'partition';
    case 'unreachable':
    case 'egress-broken':
    case 'node-mtu':
    case 'node-degraded':
      return `${f.kind}:${f.node}`;
    case 'path-broken':
    case 'path-mtu':
    case 'path-degraded':
      return `${f.kind}:${f.from}->${f.to}`;
  }
}

export interface OpenFinding {
  id: string;
  /** As found when it opened; `latest`: as last found. */
  opened: Finding;
  latest: Finding;
  /** When it opened here. */
  openedMs: number;
}

export interface FindingChanges {
  opened: OpenFinding[];
  /** Closed: their problem is over (or their nodes left). */
  closed: OpenFinding[];
}

interface Track {
  /** Found without a break since; null while it is open. */
  firstMs: number;
  /** Last found. */
  lastMs: number;
  latest: Finding;
  open: OpenFinding | null;
}

export class FindingTracker {
  private readonly tracks = new Map<string, Track>();

  constructor(
    private readonly o: {
      /** How long a finding must be found without a break before it opens (by kind, say). */
      openAfterMs: (f: Finding) => number;
      closeAfterMs: number;
    },
  ) {}

  /** The findings of one localization, at `now`: what opens and what closes. */
  update(findings: readonly Finding[], now: number): FindingChanges {
    const seen = new Set<string>();
    const opened: OpenFinding[] = [];
    for (const f of findings) {
      const id = findingId(f);
      seen.add(id);
      let track = this.tracks.get(id);
      if (!track) {
        track = { firstMs: now, lastMs: now, latest: f, open: null };
        this.tracks.set(id, track);
      }
      track.lastMs = now;
      track.latest = f;
      if (track.open) track.open.latest = f;
      else if (now - track.firstMs >= this.o.openAfterMs(f)) {
        track.open = { id, opened: f, latest: f, openedMs: now };
        opened.push(track.open);
      }
    }
    const closed: OpenFinding[] = [];
    for (const [id, track] of this.tracks) {
      if (seen.has(id)) continue;
      if (!track.open) {
        // Not found this time: it must be found again without a break to open.
        this.tracks.delete(id);
      } else if (now - track.lastMs >= this.o.closeAfterMs) {
        this.tracks.delete(id);
        closed.push(track.open);
      }
    }
    return { opened, closed };
  }

  /** Every finding open now. */
  open(): OpenFinding[] {
    return [...this.tracks.values()].flatMap((t) => (t.open ? [t.open] : []));
  }

  isOpen(id: string): boolean {
    return this.tracks.get(id)?.open != null;
  }

  clear(): void {
    this.tracks.clear();
  }
}
