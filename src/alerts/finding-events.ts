// The peer-status events of the coordinator's findings about every node's paths (src/paths/): one
// opening an incident, one closing it, KNH's fields (the `peer` a finding is about, alive: it
// answers) plus the finding's own, at warning severity. Pure.
import { findingId, type OpenFinding } from '../paths/finding-tracker.js';
import type { Finding } from '../paths/path-state.js';
import type { WindowStats } from '../paths/path-window.js';
import { eventKey, incidentKey } from '../wire/incident.js';
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
  /** Closing: the nodes it names that left the mesh (it is over for want of them). */
  gone?: readonly string[];
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
    dedup_key: eventKey(incidentKey(findingId(f), a.startMs), event),
    severity: 'warning',
    reason:
      a.closing && a.gone && a.gone.length > 0
        ? `no longer judged: ${names(a.gone, (n) => a.refOf(n).node_name)} left the mesh`
        : sentence(f, a.closing, (address) => a.refOf(address).node_name),
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

/** At most this many nodes are named in a sentence (a side of a partition may hold thousands). */
const NAMED = 10;
/** And at most this many sides of a partition. */
const SIDES_NAMED = 3;

/** Nodes by name, the first NAMED of them, and how many more. */
function names(nodes: readonly string[], nameOf: (address: string) => string): string {
  const shown = nodes.slice(0, NAMED).map(nameOf).join(', ');
  return nodes.length > NAMED ? `${shown} and ${nodes.length - NAMED} more` : shown;
}

/** The sentence an operator reads, naming nodes as discovery names them. */
function sentence(f: Reported, closing: boolean, nameOf: (address: string) => string): string {
  const list = (nodes: readonly string[]) => names(nodes, nameOf);
  switch (f.kind) {
    case 'partition':
      return closing
        ? 'the mesh is whole again'
        : `the mesh is split: ${f.sides
            .slice(0, SIDES_NAMED)
            .map((s) => `[${list(s)}]`)
            .join(
              ' cannot reach ',
            )}${f.sides.length > SIDES_NAMED ? ` and ${f.sides.length - SIDES_NAMED} more sides` : ''}`;
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
        : `probes carrying ${f.size} bytes of payload each way fail to and from ${nameOf(f.node)} while small ones pass: full-size packets are dropped (MTU)`;
    case 'path-mtu':
      return closing
        ? `full-size packets pass from ${nameOf(f.from)} to ${nameOf(f.to)} again`
        : `probes carrying ${f.size} bytes of payload each way fail from ${nameOf(f.from)} to ${nameOf(f.to)} while small ones pass: full-size packets are dropped (MTU)`;
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
