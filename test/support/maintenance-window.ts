// Maintenance windows as the book, the hold and the routes see them: one builder, so a test spells
// out only what its behaviour turns on (its scope, its nodes, when it ends, whether it is cancelled).
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';

const MIN = 60_000;

/** Window `id` over the whole mesh (unless `over` names nodes), open for 30 minutes from `starts`. */
export function maintenanceWindow(
  id: string,
  starts: number,
  over: Partial<MaintenanceWindow> = {},
): MaintenanceWindow {
  return {
    id,
    scope: 'mesh',
    nodes: [],
    starts,
    until: starts + 30 * MIN,
    reason: 'node upgrades',
    cancelled: false,
    ...over,
  };
}
