// The node's HTTP API: the peer messages (ping, election, announcement, probe heartbeats, relayed
// probes, leaves), and the operator's routes (health, metrics, status, maintenance, a test alert).
import type { Express } from 'express';
import { hostname } from 'node:os';
import type { PeerAuth } from '../auth/peer-auth.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import type { HealthManager } from '../health/health-manager.js';
import { buildApp } from '../http/app.js';
import { healthRoutes } from '../http/routes/health.js';
import { leaveRouter } from '../http/routes/leave.js';
import { maintenanceRouter } from '../http/routes/maintenance.js';
import { statusRouter } from '../http/routes/status.js';
import { testAlertRouter } from '../http/routes/test-alert.js';
import type { MaintenanceBook } from '../maintenance/windows.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import type { ProbeRounds } from '../prober/rounds.js';
import type { Relay } from '../prober/relay.js';
import { provisionalId } from '../prober/verdict.js';
import { assembleStatus } from '../status/assemble.js';
import type { EventLog } from '../status/event-log.js';
import { pathsStatus } from '../status/paths-status.js';
import type { PathsStatus } from '../status/paths-types.js';
import type { AuthenticationStatus } from '../status/status-types.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { SchemaRegistry } from '../wire/schemas.js';
import type { Leadership } from './leadership.js';
import type { Membership } from './membership.js';
import type { PathProbing } from './path-probing.js';

export interface NodeApiParts {
  config: Config;
  version: string;
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

export function nodeApi(p: NodeApiParts): Express {
  const { self, schemas, auth, clock, leadership, membership } = p;
  const { election } = leadership;
  const http = p.logger.child({ component: 'http' });
  const paths = pathsOncePerRound(p);
  // What an operator's change may name in its Host beside loopback (operator-guard.ts).
  const ownNames = [p.config.podIp, hostname(), p.config.podName].filter(
    (n): n is string => typeof n === 'string' && n !== '',
  );
  return buildApp({
    schemas,
    logger: http,
    auth,
    selfAddress: self.address,
    isPeer: (address) => membership.isPeer(address),
    isPeerIp: (ip) => membership.isPeerIp(ip),
    onRefused: (reason) => p.metrics.peerMessages.refusedMessage(reason),
    onBodyRefused: (sender, reason) => p.metrics.peerMessages.refusedBody(sender, reason),
    now: () => clock.now(),
    api: {
      ping: () => ({
        id: self.id,
        address: self.address,
        node_name: p.config.nodeName,
        role: election.claimedRole,
        epoch: election.epoch,
        coordinator: election.coordinator,
      }),
      election: (request) => {
        membership.spoke(request.from.address);
        return election.handleElection(request);
      },
      announcement: (announcement, protocol) => {
        membership.spoke(announcement.from.address);
        return leadership.announcement(announcement, protocol);
      },
      heartbeat: ({ from, epoch }) => leadership.heartbeat(from, epoch),
      probe: (request) => p.relay.handle(request),
      metrics: () => p.metrics.render(),
      echo: (b) => p.paths.echo(b),
      pathReport: (b) => p.paths.report(b),
      pathPull: (b) => p.paths.pulled(b),
    },
    routers: [
      healthRoutes(p.health),
      leaveRouter({
        schemas,
        auth,
        logger: http,
        onLeave: (notice) => membership.leave(notice.from),
      }),
      testAlertRouter({
        logger: p.logger.child({ component: 'receivers' }),
        ownNames,
        send: () => p.dispatcher.sendTest(),
      }),
      maintenanceRouter({
        book: p.book,
        schemas,
        logger: p.logger.child({ component: 'maintenance' }),
        now: () => clock.now(),
        onChanged: () => leadership.windowsChanged(),
        ownNames,
        // Every node the status page names: itself, its peers (by their verdicts, the
        // coordinator's, or discovery), and those that left.
        knownNodes: () => {
          const status = nodeStatus(p, paths());
          return [status, ...status.peers].map((n) => ({
            address: n.address,
            id: n.id,
            nodeName: n.node_name,
          }));
        },
      }),
      statusRouter({
        schemas,
        logger: http,
        status: () => nodeStatus(p, paths()),
        now: () => clock.now(),
      }),
    ],
  });
}

/** GET /status: its own verdicts while it leads, else those its coordinator last announced. */
function nodeStatus(p: NodeApiParts, paths: PathsStatus) {
  const { election, sharing } = p.leadership;
  const { rounds, clock } = p;
  return assembleStatus({
    self: p.self,
    nodeName: p.config.nodeName,
    version: p.version,
    role: election.claimedRole,
    epoch: election.epoch,
    coordinator: election.coordinator,
    ready: p.health.readiness().ok,
    dryRun: p.config.dryRun,
    own: rounds.running ? rounds.snapshot() : null,
    selfSuspect: rounds.running ? rounds.selfSuspicion.suspect : null,
    followed: election.role === 'coordinator' ? null : sharing.followed,
    discovered: p.membership.peers,
    nodeNameOf: p.nodeNameOf,
    departed: p.membership.departed(),
    windows: p.book.active(clock.now()),
    events: p.events.recent(),
    paths,
    ...(p.auth ? { authentication: authenticationSection(p.auth, clock.now()) } : {}),
    now: clock.now(),
  });
}

/** What peers said of this node's signed messages: /status's `authentication`. */
function authenticationSection(auth: PeerAuth, now: number): AuthenticationStatus {
  const v = auth.standing.view(now);
  return {
    unauthenticated: auth.standing.unauthenticated(now),
    last_accepted: v.lastAcceptedMs === null ? null : new Date(v.lastAcceptedMs).toISOString(),
    refused_by: v.refusedBy.map((r) => ({
      address: r.address,
      reason: r.reason,
      since: new Date(r.sinceMs).toISOString(),
      at: new Date(r.atMs).toISOString(),
    })),
    clock_offsets: v.offsets.map((o) => ({ address: o.address, offset_ms: o.offsetMs })),
  };
}

/**
 * The paths section, built at most once a round in a term: the paths change once a round, and
 * summing up every path the coordinator holds (N² up to 100 nodes) takes the coordinator's event
 * loop long enough that a page polling it, or several, must not do it each time.
 */
function pathsOncePerRound(p: NodeApiParts): () => PathsStatus {
  let built: { atMs: number; epoch: number; role: string; section: PathsStatus } | null = null;
  return () => {
    const { epoch, role } = p.leadership.election;
    const now = p.clock.now();
    if (
      built?.epoch !== epoch ||
      built.role !== role ||
      now - built.atMs >= p.config.roundIntervalMs
    ) {
      built = { atMs: now, epoch, role, section: pathsSection(p) };
    }
    return built.section;
  };
}

/** The paths section: every node's paths while this node leads, else its own. */
function pathsSection(p: NodeApiParts): PathsStatus {
  const { config, self, rounds, paths } = p;
  const { election } = p.leadership;
  const leads = election.role === 'coordinator';
  const named = (address: string) => {
    if (address === self.address) return { address, id: self.id, node_name: config.nodeName };
    const r = rounds.record(address);
    const id = r?.id ?? provisionalId(address, p.nodeNameOf(address));
    return { address, id, node_name: r?.nodeName ?? nodeNameOf(id) };
  };
  return pathsStatus({
    enabled: paths.enabled,
    role: election.role,
    coordinator: election.coordinator,
    settings: {
      probes_per_round: config.pairProbes,
      round_ms: config.roundIntervalMs,
      window_ms: paths.prober.settings.pathWindowMs,
      degraded_loss_ratio: config.degradedLossRatio,
      degraded_latency_ms: config.degradedLatencyMs,
      mtu_probe_size: config.mtuProbeSize,
    },
    nodes: [self.address, ...p.membership.present].map(named),
    book: leads ? paths.book.entries() : [],
    findings: leads ? paths.findings : [],
    own: leads ? [] : paths.prober.reports(),
  });
}
