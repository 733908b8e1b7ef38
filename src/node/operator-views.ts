// The operator's routes of a node (status page and /status, maintenance, test alert) and what they
// show: served on the peer port, or on OPERATOR_LISTEN's listener (node/api.ts decides).
import type { Router } from 'express';
import { hostname } from 'node:os';
import type { PeerAuth } from '../auth/peer-auth.js';
import { maintenanceRouter } from '../http/routes/maintenance.js';
import { statusViews } from '../http/routes/status.js';
import type { View } from '../http/views.js';
import { testAlertRouter } from '../http/routes/test-alert.js';
import { provisionalId } from '../prober/verdict.js';
import { assembleStatus } from '../status/assemble.js';
import { pathsStatus } from '../status/paths-status.js';
import type { PathsStatus } from '../status/paths-types.js';
import type { AuthenticationStatus } from '../status/status-types.js';
import { nodeNameOf } from '../wire/node-ref.js';
import type { NodeApiParts } from './api-parts.js';

/** The operator's views, and the routers of its changes (each router guards its own). */
export function operatorViews(p: NodeApiParts): { views: View[]; routers: Router[] } {
  const { schemas, clock, leadership } = p;
  const paths = pathsOncePerRound(p);
  // What an operator's change may name in its Host beside loopback (operator-guard.ts).
  const ownNames = [p.config.podIp, hostname(), p.config.podName].filter(
    (n): n is string => typeof n === 'string' && n !== '',
  );
  const routers = [
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
  ];
  const views = statusViews({
    schemas,
    logger: p.logger.child({ component: 'http' }),
    status: () => nodeStatus(p, paths()),
    now: () => clock.now(),
  });
  return { views, routers };
}

/** GET /status: its own verdicts while it leads, else those its coordinator last announced. */
function nodeStatus(p: NodeApiParts, paths: PathsStatus) {
  const { election, sharing } = p.leadership;
  const { rounds, clock } = p;
  return assembleStatus({
    self: p.self,
    nodeName: p.config.nodeName,
    build: p.build,
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
