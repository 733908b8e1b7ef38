// Which findings of localization are open incidents: a finding opens once it has been found for
// `openAfterMs(finding)` without a break, and closes once it has gone unfound for `closeAfterMs`, so that a
// path on the edge of failing (under heavy loss one probe in many fails twice in a row) neither
// opens an incident at once nor opens and closes one every few seconds. Pure: time is given.
import { incidentSubject } from '../wire/incident.js';
import type { Finding } from './path-state.js';

/**
 * What a finding is about, whatever its details (witnesses, sides, sizes change while it lasts):
 * its incident's subject (wire/incident.ts), so that a successor knows a finding by the incident
 * its predecessor opened.
 */
export function findingId(f: Finding): string {
  switch (f.kind) {
    case 'partition':
      return incidentSubject.partition();
    case 'unreachable':
      return `unreachable:${f.node}`;
    case 'egress-broken':
      return incidentSubject.node('egress', f.node);
    case 'node-mtu':
      return incidentSubject.node('mtu', f.node);
    case 'node-degraded':
      return incidentSubject.node('degraded', f.node);
    case 'path-broken':
      return incidentSubject.path(f.from, f.to);
    case 'path-mtu':
      return incidentSubject.pathOf('mtu', f.from, f.to);
    case 'path-degraded':
      return incidentSubject.pathOf('degraded', f.from, f.to);
  }
}

/**
 * The finding an incident's subject names (findingId's inverse), with the details its alert told
 * (`details`), or null for a subject that is no finding's. What an inherited incident is tracked
 * by until it is found again or over.
 */
export function findingOfSubject(
  subject: string,
  details: {
    sides?: string[][];
    reaches?: string[];
    reachedBy?: string[];
    size?: number;
  } = {},
): Finding | null {
  if (subject === incidentSubject.partition()) {
    return { kind: 'partition', sides: details.sides ?? [] };
  }
  const kind = /^(degraded|mtu|egress):/.exec(subject)?.[1];
  const rest = kind ? subject.slice(kind.length + 1) : subject;
  const arrow = rest.indexOf('->');
  const [from, to] = arrow < 0 ? [rest, ''] : [rest.slice(0, arrow), rest.slice(arrow + 2)];
  if (!kind) return arrow < 0 ? null : { kind: 'path-broken', from, to, witnesses: [] };
  const size = details.size ?? 0;
  if (arrow < 0) {
    if (kind === 'egress') {
      const { reaches = [], reachedBy = [] } = details;
      return { kind: 'egress-broken', node: from, reaches, reachedBy };
    }
    return kind === 'mtu'
      ? { kind: 'node-mtu', node: from, size }
      : { kind: 'node-degraded', node: from };
  }
  if (kind === 'mtu') return { kind: 'path-mtu', from, to, size };
  return kind === 'degraded' ? { kind: 'path-degraded', from, to } : null;
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
  /** Found without a break since. */
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

  /**
   * The findings of one localization, at `now`: what opens and what closes. With `opening` false
   * nothing opens (the caller does not trust its view yet), though how long each was found counts.
   */
  update(findings: readonly Finding[], now: number, { opening = true } = {}): FindingChanges {
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
      else if (opening && now - track.firstMs >= this.o.openAfterMs(f)) {
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

  /**
   * Takes `finding` as open since `openedMs` (an incident a predecessor opened), and as found until
   * `foundUntilMs`: unless found again, it closes `closeAfterMs` after that. Nothing if it is open.
   */
  adopt(finding: Finding, openedMs: number, foundUntilMs: number): OpenFinding | null {
    const id = findingId(finding);
    if (this.tracks.get(id)?.open) return null;
    const open = { id, opened: finding, latest: finding, openedMs };
    this.tracks.set(id, { firstMs: openedMs, lastMs: foundUntilMs, latest: finding, open });
    return open;
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
