// The peer-status events of the coordinator's findings about every node's paths (src/paths/): one
// opening an incident, one closing it, KNH's fields (the `peer` a finding is about, alive: it
// answers) plus the finding's own, at warning severity. Pure.
import type { OpenFinding } from '../paths/finding-tracker.js';
import type { Finding } from '../paths/path-state.js';
import type { WindowStats } from '../paths/path-window.js';
import { eventKey, incidentKey, incidentSubject } from '../wire/incident.js';
import type { NodeRef } from '../wire/node-ref.js';
import type {
  FindingFacts,
  OpeningEvent,
  PathFigures,
  PeerStatusEvent,
  PeerStatusPayload,
} from '../wire/webhooks.js';
import { RESOLVED_BY } from '../wire/webhooks.js';

/** At most this many witnesses are named (schemas/alert.schema.json takes 16). */
const MAX_WITNESSES = 16;

/** Findings that make events; `unreachable` is the coordinator's own verdict's (peer_dead). */
type Reported = Exclude<Finding, { kind: 'unreachable' }>;

const OPENING: Record<Reported['kind'], OpeningEvent> = {
  partition: 'partition',
  'egress-broken': 'egress_broken',
  'path-broken': 'path_broken',
  'node-mtu': 'peer_mtu',
  'path-mtu': 'path_mtu',
  'node-degraded': 'peer_degraded',
  'path-degraded': 'path_degraded',
};

export function reportsFinding(f: Finding): f is Reported {
  return f.kind !== 'unreachable';
}

/** What a finding's incident is about, as its dedup key names it. */
function subjectOf(f: Reported): string {
  switch (f.kind) {
    case 'partition':
      return incidentSubject.partition();
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

export function figuresOf(stats: WindowStats): PathFigures {
  return {
    samples: stats.samples,
    loss_ratio: Math.round(stats.lossRatio * 1_000) / 1_000,
    p50_ms: stats.p50Ms === null ? null : Math.round(stats.p50Ms * 10) / 10,
    p99_ms: stats.p99Ms === null ? null : Math.round(stats.p99Ms * 10) / 10,
  };
}

export interface FindingEventArgs {
  finding: OpenFinding;
  /** Opening or closing its incident. */
  closing: boolean;
  /** When its problem started (the incident's identity). */
  startMs: number;
  coordinator: NodeRef;
  epoch: number;
  now: number;
  /** A node's id and node name, by address. */
  refOf: (address: string) => { id: string; node_name: string };
  /** The figures to tell (degraded findings), as of now. */
  figures: WindowStats | null;
}

/** The event opening or closing a finding's incident. */
export function findingPayload(a: FindingEventArgs): PeerStatusPayload {
  const f = (a.closing ? a.finding.latest : a.finding.opened) as Reported;
  const opening = OPENING[f.kind];
  const event: PeerStatusEvent = a.closing ? RESOLVED_BY[opening] : opening;
  const about = f.kind === 'partition' ? a.coordinator.address : 'node' in f ? f.node : f.to;
  // A partition is about the mesh: its peer is the coordinator, as a cannot_judge's is.
  const ref =
    f.kind === 'partition'
      ? { id: a.coordinator.id, node_name: a.refOf(about).node_name }
      : a.refOf(about);
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    peer: {
      id: ref.id,
      address: about,
      alive: true,
      node_name: ref.node_name,
      health: 'alive',
      path_broken: f.kind === 'path-broken' && !a.closing,
      since: iso(a.startMs),
    },
    coordinator: a.coordinator.id,
    coordinator_address: a.coordinator.address,
    event,
    epoch: a.epoch,
    timestamp: iso(a.now),
    dedup_key: eventKey(incidentKey(subjectOf(f), a.startMs), event),
    severity: 'warning',
    reason: sentence(f, a.closing, (address) => a.refOf(address).node_name),
    ...('from' in f
      ? {
          path: {
            from: a.refOf(f.from).id,
            to: a.refOf(f.to).id,
            witnesses:
              f.kind === 'path-broken'
                ? f.witnesses.slice(0, MAX_WITNESSES).map((w) => a.refOf(w).id)
                : [],
          },
        }
      : {}),
    ...facts(f, a.figures),
  };
}

function facts(f: Reported, figures: WindowStats | null): FindingFacts {
  switch (f.kind) {
    case 'node-degraded':
    case 'path-degraded':
      return figures ? { figures: figuresOf(figures) } : {};
    case 'node-mtu':
    case 'path-mtu':
      return { mtu: { size: f.size } };
    case 'egress-broken':
      return { egress: { reaches: f.reaches, reached_by: f.reachedBy } };
    case 'partition':
      return { partition: { sides: f.sides } };
    default:
      return {};
  }
}

/** The sentence an operator reads, naming nodes as discovery names them. */
function sentence(f: Reported, closing: boolean, nameOf: (address: string) => string): string {
  const list = (nodes: readonly string[]) => nodes.map(nameOf).join(', ');
  switch (f.kind) {
    case 'partition':
      return closing
        ? 'the mesh is whole again'
        : `the mesh is split: ${f.sides.map((s) => `[${list(s)}]`).join(' cannot reach ')}`;
    case 'egress-broken': {
      const node = nameOf(f.node);
      return closing
        ? `${node} reaches its peers again`
        : `${node} reaches ${f.reaches.length === 0 ? 'no other node' : `only ${f.reaches.length} node(s)`} while ${f.reachedBy.length} reach it: its egress is broken`;
    }
    case 'path-broken':
      return closing
        ? `${nameOf(f.from)} reaches ${nameOf(f.to)} again`
        : `${nameOf(f.from)} cannot reach ${nameOf(f.to)}, though both reach the other nodes: the path between them is broken`;
    case 'node-mtu':
      return closing
        ? `full-size packets pass to and from ${nameOf(f.node)} again`
        : `packets of ${f.size} bytes of payload are dropped to and from ${nameOf(f.node)}, smaller ones pass (MTU)`;
    case 'path-mtu':
      return closing
        ? `full-size packets pass from ${nameOf(f.from)} to ${nameOf(f.to)} again`
        : `packets of ${f.size} bytes of payload are dropped from ${nameOf(f.from)} to ${nameOf(f.to)}, smaller ones pass (MTU)`;
    case 'node-degraded':
      return closing
        ? `${nameOf(f.node)}'s paths are healthy again`
        : `${nameOf(f.node)}'s paths lose probes or answer slowly: the node is degraded`;
    case 'path-degraded':
      return closing
        ? `the path from ${nameOf(f.from)} to ${nameOf(f.to)} is healthy again`
        : `the path from ${nameOf(f.from)} to ${nameOf(f.to)} loses probes or answers slowly: degraded`;
  }
}
