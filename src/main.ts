// Composition root: a node's parts built from its settings and wired together, then started.
// What each part does lives in its own module: judging (node/judging.ts), terms and the election
// (node/leadership.ts), peers (node/membership.ts), the HTTP API (node/api.ts), the orderly stop
// (shutdown/orderly-stop.ts); the process around it in run-from-env.ts.
import { BUILD, describeBuild, userAgentOf, type BuildInfo } from './build-info.js';
import type { Config } from './config/load.js';
import { every, type Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { systemClock } from './core/system-clock.js';
import type { PeerSource } from './discovery/peer-source.js';
import { EventLoopLag, LAG_DEFAULTS } from './health/event-loop-lag.js';
import { HealthManager } from './health/health-manager.js';
import { logWindowsHeard, MaintenanceBook } from './maintenance/windows.js';
import { NodeMetrics } from './metrics/node-metrics.js';
import { nodeApps } from './node/api.js';
import { judging } from './node/judging.js';
import { openListeners } from './node/listeners.js';
import { Leadership } from './node/leadership.js';
import { Membership } from './node/membership.js';
import { outbound } from './node/outbound.js';
import { peerAuthFor } from './node/peer-auth-for.js';
import { standingLogger } from './node/standing-log.js';
import { peerSourceFor } from './node/peer-source-for.js';
import { PathProbing } from './node/path-probing.js';
import { nodeTransport } from './node/peer-transport.js';
import { overloadPatienceMs } from './prober/policy.js';
import { Relay } from './prober/relay.js';
import { orderlyStop } from './shutdown/orderly-stop.js';
import { EventLog } from './status/event-log.js';
import { windowChanges } from './status/event-feed.js';
import { loadSchemas } from './wire/schemas.js';
import type { Alert } from './wire/alert.js';
import { AuthFindings } from './node/auth-findings.js';
import { nodeNameOf as nodeNameRef } from './wire/node-ref.js';

export interface RunningNode {
  readonly port: number;
  /** Stops taking part, drains webhooks within `graceMs`, closes the server. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export interface NodeDeps {
  logger: Logger;
  clock?: Clock;
  peerSource?: PeerSource;
  /** Which knh this is (default: this program's build). */
  build?: BuildInfo;
}

export async function startNode(config: Config, deps: NodeDeps): Promise<RunningNode> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const build = deps.build ?? BUILD;
  const userAgent = userAgentOf(build);
  const source = deps.peerSource ?? (await peerSourceFor(config, clock, logger, userAgent));
  const nodeNameOf = (address: string) => source.nodeName?.(address);
  // This node's own pod by POD_NAME, which outside Kubernetes no EndpointSlice names.
  const podNameOf = (address: string) =>
    (address === config.address ? config.podName : null) ?? source.podName?.(address);
  const self = { id: config.id, address: config.address };
  const events = new EventLog(() => clock.now());
  const book = new MaintenanceBook((added, ended, from) => {
    for (const e of windowChanges(added, ended)) events.add(e.kind, e.text);
    // Any node holding the secret can open a window for the mesh: each is on record by its source.
    if (from !== undefined) logWindowsHeard(logger, from, added, ended);
  });
  const base = { config, self, clock, logger, schemas: loadSchemas(), events, book };
  const auth = peerAuthFor(config, clock, logger);
  const { transport, lastHeard, forget } = nodeTransport({
    ...base,
    auth,
    userAgent,
    election: () => election,
    probeSoon: (address) => rounds.probeSoon(address),
  });
  const onSettled: Parameters<typeof outbound>[0]['onSettled'] = (kind, outcome) =>
    metrics.webhooks.settled(kind, outcome);
  const { notifier, dispatcher } = outbound({
    ...base,
    userAgent,
    onSettled,
    podNameOf,
  });
  const metrics: NodeMetrics = new NodeMetrics({
    build,
    self: { ...self, nodeName: config.nodeName },
    peerAuth: auth !== null,
    standing: () => auth?.standing.view(clock.now()) ?? null,
    perPeerLimit: config.metricsPerPeerLimit,
    perPathLimit: config.metricsPerPathLimit,
    cacheMs: 1_000,
    records: () => (rounds.running ? rounds.snapshot() : []),
    selfSuspicion: () => (rounds.running ? rounds.selfSuspicion : null),
    eventLoopLagMs: () => loopLag.maxLagWithinMs(LAG_DEFAULTS.windowMs),
    election: () => election,
    webhooksPending: () => notifier.pending + dispatcher.pending,
    ownPaths: () => paths.prober.reports(),
    meshPeers: () => membership.present.length,
    pathFindings: () => (election.role === 'coordinator' ? paths.findings : []),
    nodeOf: (address) => rounds.record(address)?.nodeName ?? nodeNameOf(address),
  });
  // How late the event loop runs: an overloaded coordinator's own timeouts decide nothing, and
  // liveness reads it too (over its own 10 s).
  const loopLag = new EventLoopLag({
    sampleMs: LAG_DEFAULTS.sampleMs,
    preciseSampleMs: 50,
    windowMs: Math.max(LAG_DEFAULTS.windowMs, overloadPatienceMs(config) + config.probeTimeoutMs),
  });
  const parts = { ...base, transport, metrics, notifier, dispatcher };
  const sharing = () => election;
  const { rounds, reporter, shared } = judging({
    ...parts,
    lastHeard,
    nodeNameOf,
    loopLag,
    sharing,
    userAgent,
    findingOpen: (payload) => paths.isOpen(payload) || (authFindings?.isOpen(payload) ?? false),
  });
  const present = () => membership.present;
  // Nodes whose signed messages and this coordinator's are refused (another secret, a clock far
  // off): warnings of their own, told like the findings of pair probing.
  const authFindings: AuthFindings | null = auth
    ? new AuthFindings({
        standing: auth.standing,
        clock,
        self,
        leading: (): { epoch: number } | null =>
          election.claimedRole === 'coordinator' ? { epoch: election.epoch } : null,
        listed: (address) => membership.isPeer(address),
        record: (address) => rounds.record(address),
        refOf: (address) => {
          const r = rounds.record(address);
          const id = r?.id ?? address;
          return { id, node_name: r?.nodeName || nodeNameOf(address) || nodeNameRef(id) };
        },
        onFinding: (payload) => reporter.onFinding(payload),
      })
    : null;
  const findings = {
    get enabled(): boolean {
      return paths.enabled;
    },
    authJudged: authFindings !== null,
    inherit: (...a: Parameters<PathProbing['inherit']>): void => {
      if (paths.enabled) paths.inherit(...a);
      authFindings?.inherit(a[0]);
    },
    alerts: (): readonly Alert[] => [...paths.openAlerts(), ...(authFindings?.alerts() ?? [])],
  };
  const leadership = new Leadership({ ...parts, rounds, reporter, shared, present, findings });
  const { election } = leadership;
  const membership: Membership = new Membership({
    ...base,
    onListed: ({ added, removed }, discovered) => {
      metrics.peersListed({ added, removed }, discovered.size);
      transport.keepOnly(discovered);
      for (const gone of removed) forget(gone);
    },
    onPresent: (next) => {
      rounds.setPeers(next);
      election.setPeers(next);
      dispatcher.reconcile(next);
    },
    onSelfListed: (listed) => leadership.listed(listed),
  });
  const paths: PathProbing = new PathProbing({
    ...base,
    transport,
    election: () => election,
    present,
    reporter,
    protocolOf: (address) => transport.protocolOf(address),
    verdictOf: (address) => {
      const r = rounds.record(address);
      return r && { id: r.id, health: r.health, pathBroken: r.brokenPath !== null };
    },
  });
  const isPeer = (address: string) => membership.isPeer(address);
  const maxTimeoutMs = 2 * config.probeTimeoutMs;
  const relay = new Relay({ transport, clock, policy: config, isPeer, maxTimeoutMs });
  const health = new HealthManager({
    clock,
    logger: logger.child({ component: 'health' }),
    selfAddress: self.address,
    discoverySynced: () => source.synced?.() ?? true,
    selfListed: () => membership.listsSelf,
    unauthenticated: () => auth?.standing.unauthenticated(clock.now()) ?? null,
    election,
    prober: rounds,
    roundIntervalMs: config.roundIntervalMs,
    maxMemoryMiB: config.maxMemoryMiB,
    lag: loopLag,
  });
  const api = { ...parts, auth, leadership, membership, rounds, relay, health, nodeNameOf, paths };
  const server = await openListeners(nodeApps({ ...api, build }), config);
  health.markListening();
  health.start();
  loopLag.start();
  logger.info(
    {
      event: 'listening',
      address: self.address,
      version: build.version,
      revision: build.revision,
      listen: `${config.listenHost}:${server.port}`,
      ...(server.operator ? { operatorListen: server.operator } : {}),
    },
    `${describeBuild(build)} node ${self.id} listening${server.operator ? `; operator views on ${server.operator}` : ''}`,
  );
  membership.start();
  await source.start((addresses) => membership.update(addresses));
  paths.start();
  // Alerts held for maintenance go out once their window is over (and still open); old windows
  // go; a node gone longer than DEPARTED_FOR_MS is probed again, as the live node it last was.
  const standingLog = auth ? standingLogger(auth.standing, logger) : null;
  const stopTicking = every(clock, 1_000, () => {
    book.prune(clock.now());
    standingLog?.(clock.now());
    authFindings?.tick();
    reporter.releaseHeld();
    membership.expireDepartures((d) => rounds.presumeAlive(d.address, d.id, d.atMs));
  });
  const queues = [notifier, dispatcher];
  const node = {
    ...parts,
    source,
    reporter,
    server,
    health,
    loopLag,
    membership,
    leadership,
    paths,
  };
  let stopping: Promise<void> | null = null;
  return {
    port: server.port,
    stop: (graceMs = 5_000) =>
      (stopping ??= orderlyStop({ ...node, stopTicking, queues }, graceMs)),
  };
}
