// What a node's HTTP routes are built from: the parts of the node they call into.
import type { PeerAuth } from '../auth/peer-auth.js';
import type { BuildInfo } from '../build-info.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import type { HealthManager } from '../health/health-manager.js';
import type { MaintenanceBook } from '../maintenance/windows.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { ProbeRounds } from '../prober/rounds.js';
import type { Relay } from '../prober/relay.js';
import type { EventLog } from '../status/event-log.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { SchemaRegistry } from '../wire/schemas.js';
import type { Leadership } from './leadership.js';
import type { Membership } from './membership.js';
import type { PathProbing } from './path-probing.js';

export interface NodeApiParts {
  config: Config;
  build: BuildInfo;
  self: NodeRef;
  schemas: SchemaRegistry;
  auth: PeerAuth | null;
  clock: Clock;
  logger: Logger;
  leadership: Leadership;
  membership: Membership;
  rounds: ProbeRounds;
  relay: Relay;
  metrics: NodeMetrics;
  health: HealthManager;
  dispatcher: AlertDispatcher;
  book: MaintenanceBook;
  events: EventLog;
  /** The node an address runs on, as discovery names it. */
  nodeNameOf: (address: string) => string | undefined;
  paths: PathProbing;
}
