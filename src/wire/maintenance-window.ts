// A maintenance window as it crosses the network (schemas/maintenance-window.schema.json).
// Maintenance windows as a replicated set: every node holds them, announcements and their replies
// carry them, and merging is a union by id in which a cancellation wins. So a window opened on any
// node reaches the coordinator within a heartbeat, and survives any coordinator change.

/** The wire form (schemas/maintenance-window.schema.json). Times are epoch milliseconds. */
export interface MaintenanceWindow {
  id: string;
  /** The whole mesh, or the nodes named in `nodes` (node name, id `name@ip`, or `ip:port`). */
  scope: 'mesh' | 'nodes';
  nodes: string[];
  starts: number;
  until: number;
  reason: string;
  /** Ended early (DELETE); kept until `until` so the cancellation reaches every node. */
  cancelled: boolean;
}

export interface PeerNames {
  address: string;
  id: string;
  nodeName: string;
}

export function wireWindow(w: MaintenanceWindow) {
  return {
    id: w.id,
    scope: w.scope,
    nodes: w.nodes,
    starts: new Date(w.starts).toISOString(),
    until: new Date(w.until).toISOString(),
    reason: w.reason,
  };
}
