// NodeStatus values for tests of GET /status and the page: a coordinator's view, built field by field.
import type {
  MaintenanceWindowView,
  NodeStatus,
  StatusEvent,
  StatusPeer,
} from '../../src/status/status-types.js';

/** A peer judged alive 90 s before `now`, probed 1 s before it. */
export function statusPeer(
  index: number,
  now: Date,
  overrides: Partial<StatusPeer> = {},
): StatusPeer {
  const name = `worker-${index}`;
  return {
    id: `${name}@10.0.0.${index}`,
    address: `10.0.0.${index}:8080`,
    node_name: name,
    state: 'alive',
    since: new Date(now.getTime() - 90_000).toISOString(),
    last_probe: new Date(now.getTime() - 1_000).toISOString(),
    latency_ms: 0.4 + index / 10,
    last_seen: null,
    last_failure: null,
    path_broken: false,
    alerted: false,
    in_maintenance: false,
    ...overrides,
  };
}

export function statusEvent(
  now: Date,
  secondsAgo: number,
  overrides: Partial<StatusEvent> = {},
): StatusEvent {
  return {
    time: new Date(now.getTime() - secondsAgo * 1_000).toISOString(),
    kind: 'coordinator',
    peer: null,
    text: 'worker-9 became coordinator (epoch 3)',
    suppressed: false,
    ...overrides,
  };
}

export function maintenanceWindow(
  now: Date,
  overrides: Partial<MaintenanceWindowView> = {},
): MaintenanceWindowView {
  return {
    id: 'mw-1',
    scope: 'mesh',
    nodes: [],
    starts: new Date(now.getTime() - 10 * 60_000).toISOString(),
    until: new Date(now.getTime() + 30 * 60_000).toISOString(),
    reason: 'kernel upgrade',
    ...overrides,
  };
}

/** worker-9, coordinator at epoch 3, with `peerCount` alive peers worker-1… and one event. */
export function nodeStatus(
  { now = new Date(), peerCount = 3 }: { now?: Date; peerCount?: number } = {},
  overrides: Partial<NodeStatus> = {},
): NodeStatus {
  const self = { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' };
  return {
    ...self,
    node_name: 'worker-9',
    version: '0.1.0',
    role: 'coordinator',
    epoch: 3,
    coordinator: self,
    now: now.toISOString(),
    ready: true,
    dry_run: false,
    view: { source: 'own', as_of: now.toISOString() },
    self_suspect: false,
    peers: Array.from({ length: peerCount }, (_, i) => statusPeer(i + 1, now)),
    events: [statusEvent(now, 120)],
    maintenance: [],
    paths: { view: 'off' },
    ...overrides,
  };
}
