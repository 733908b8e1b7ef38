// Builds GET /status from what the node holds: its own verdicts when it leads, else the ones its
// coordinator last announced; peers nobody has judged yet are unknown, peers that left are `left`.
import type { BuildInfo } from '../build-info.js';
import type { Departed } from '../discovery/departures.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import { pausing } from '../maintenance/windows.js';
import { type MaintenanceWindow, wireWindow } from '../wire/maintenance-window.js';
import { MAX_FAILURE_CHARS, provisionalId, type PeerRecord } from '../prober/verdict.js';
import type { PeerView } from '../wire/peer-view.js';
import type { PathsStatus } from './paths-types.js';
import type { AuthenticationStatus, NodeStatus, StatusEvent, StatusPeer } from './status-types.js';

export interface StatusFacts {
  self: NodeRef;
  nodeName: string;
  build: BuildInfo;
  role: NodeStatus['role'];
  epoch: number;
  coordinator: NodeRef | null;
  ready: boolean;
  dryRun: boolean;
  /** This node's verdicts while it leads. */
  own: readonly PeerRecord[] | null;
  selfSuspect: boolean | null;
  /** The coordinator's last announced verdicts, and when they came. */
  followed: { views: readonly PeerView[]; atMs: number } | null;
  /** Every peer address discovery lists (self excluded). */
  discovered: readonly string[];
  /** The node an address runs on, as discovery names it. */
  nodeNameOf?: (address: string) => string | undefined;
  departed: readonly Departed[];
  windows: readonly MaintenanceWindow[];
  events: StatusEvent[];
  /** Pair probing's section, built apart (paths-status.ts). */
  paths: PathsStatus;
  /** With a peer secret: how peers take this node's signed messages. */
  authentication?: AuthenticationStatus;
  now: number;
}

const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());

function fromRecord(r: PeerRecord): Omit<StatusPeer, 'in_maintenance'> {
  return {
    id: r.id,
    address: r.address,
    node_name: r.nodeName,
    state: r.health,
    since: r.health === 'unknown' && r.lastProbeMs === null ? null : iso(r.sinceMs),
    last_probe: iso(r.lastProbeMs),
    latency_ms: r.lastLatencyMs === null ? null : Math.round(r.lastLatencyMs * 10) / 10,
    ...(r.unreachableSinceMs === null
      ? { last_seen: null, last_failure: null }
      : {
          last_seen: iso(r.lastSeenMs),
          last_failure: r.lastFailure?.slice(0, MAX_FAILURE_CHARS) ?? null,
        }),
    path_broken: r.brokenPath !== null,
    alerted: r.alerted,
  };
}

function fromView(v: PeerView): Omit<StatusPeer, 'in_maintenance'> {
  return {
    id: v.id,
    address: v.address,
    node_name: v.node_name,
    state: v.health,
    since: iso(v.since),
    last_probe: iso(v.last_probe),
    latency_ms: v.latency_ms ?? null,
    last_seen: iso(v.last_seen),
    last_failure: v.last_failure ?? null,
    path_broken: v.path_broken ?? false,
    alerted: v.alerted,
  };
}

export function assembleStatus(f: StatusFacts): NodeStatus {
  const peers = new Map<string, Omit<StatusPeer, 'in_maintenance'>>();
  if (f.own) for (const r of f.own) peers.set(r.address, fromRecord(r));
  else if (f.followed) {
    for (const v of f.followed.views) {
      if (v.address !== f.self.address) peers.set(v.address, fromView(v));
    }
  }
  // The coordinator is a peer too, and alive as far as a follower hearing it knows.
  const c = f.coordinator;
  if (!f.own && c && c.address !== f.self.address && !peers.has(c.address)) {
    peers.set(c.address, {
      ...blank(c.address, { id: c.id }),
      state: 'alive',
      since: iso(f.followed?.atMs),
    });
  }
  for (const address of f.discovered) {
    if (!peers.has(address))
      peers.set(address, blank(address, { nodeName: f.nodeNameOf?.(address) }));
  }
  for (const d of f.departed) {
    peers.set(d.address, { ...blank(d.address, { id: d.id }), state: 'left', since: iso(d.atMs) });
  }
  const windows = f.windows;
  return {
    id: f.self.id,
    address: f.self.address,
    node_name: f.nodeName,
    version: f.build.version,
    revision: f.build.revision,
    role: f.role,
    epoch: f.epoch,
    coordinator: f.coordinator,
    now: new Date(f.now).toISOString(),
    ready: f.ready,
    dry_run: f.dryRun,
    view: f.own
      ? { source: 'own', as_of: iso(f.now) }
      : f.followed
        ? { source: 'coordinator', as_of: iso(f.followed.atMs) }
        : { source: 'none', as_of: null },
    self_suspect: f.own ? f.selfSuspect : null,
    peers: [...peers.values()].map((p) => ({
      ...p,
      in_maintenance:
        pausing(windows, { address: p.address, id: p.id, nodeName: p.node_name }, f.now) !== null,
    })),
    events: f.events,
    maintenance: windows.map(wireWindow),
    paths: f.paths,
    ...(f.authentication ? { authentication: f.authentication } : {}),
  };
}

/** A peer this node has no verdict on: named by `id`, else by its node's name or its IP. */
function blank(
  address: string,
  { id, nodeName }: { id?: string; nodeName?: string | undefined } = {},
): Omit<StatusPeer, 'in_maintenance'> {
  id ??= provisionalId(address, nodeName);
  return {
    id,
    address,
    node_name: nodeNameOf(id),
    state: 'unknown',
    since: null,
    last_probe: null,
    latency_ms: null,
    last_seen: null,
    last_failure: null,
    path_broken: false,
    alerted: false,
  };
}
