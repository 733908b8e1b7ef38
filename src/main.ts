// Composition root: config → adapters → wiring → start; signals and orderly shutdown.
import { hostname } from 'node:os';
import { AlertHold } from './alerts/alert-hold.js';
import { outbound } from './node/outbound.js';
import { Reporter } from './alerts/reporter.js';
import { isJudgementEvent } from './wire/webhooks.js';
import { loadConfig, type Config } from './config/load.js';
import { processLogger } from './logging.js';
import { waitAtMost, type Clock, type TimerHandle } from './core/clock.js';
import type { Logger } from './core/logger.js';
import { systemClock } from './core/system-clock.js';
import { Departures } from './discovery/departures.js';
import { diffPeers } from './discovery/diff.js';
import type { PeerSource } from './discovery/peer-source.js';
import { staticPeers } from './discovery/static.js';
import { ElectionDriver } from './election/driver.js';
import { EventLoopLag, LAG_DEFAULTS } from './health/event-loop-lag.js';
import { HealthManager } from './health/health-manager.js';
import { healthRoutes } from './http/routes/health.js';
import { PeerAuth } from './auth/peer-auth.js';
import { secretFileSource } from './auth/peer-secret.js';
import { buildApp } from './http/app.js';
import { peerClient } from './peer-client/peer-client.js';
import { httpSanityCheck } from './peer-client/sanity-check.js';
import { leaveRouter } from './http/routes/leave.js';
import { listen } from './http/server.js';
import { maintenanceRouter } from './http/routes/maintenance.js';
import { MaintenanceBook, pausing } from './maintenance/windows.js';
import { NodeMetrics } from './metrics/node-metrics.js';
import { Relay } from './prober/relay.js';
import { overloadPatienceMs } from './prober/policy.js';
import { ProbeRounds } from './prober/rounds.js';
import { LARGE_MESH_VIEW_AGE_MS, SharedViews } from './prober/shared-views.js';
import { toView } from './prober/verdict.js';
import type { PeerView } from './wire/peer-view.js';
import { SUCCESSORS, topRanked } from './election/bully.js';
import { assembleStatus } from './status/assemble.js';
import { EventLog } from './status/event-log.js';
import { statusRouter } from './http/routes/status.js';
import { sayGoodbye } from './shutdown/goodbye.js';
import { succession } from './alerts/succession.js';
import { testAlertRouter } from './http/routes/test-alert.js';
import { judgementEntry, viewChanges } from './status/event-feed.js';
import { loadSchemas } from './wire/schemas.js';

export const VERSION = '0.1.0';

export interface RunningNode {
  readonly port: number;
  /** Stops taking part, drains webhooks within `graceMs`, closes the server. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

export interface NodeDeps {
  logger: Logger;
  clock?: Clock;
  peerSource?: PeerSource;
}

/** How long a peer that left in order is left alone before it is probed again. */
const DEPARTED_FOR_MS = 5 * 60_000;

/** How long a node waits to see its own address among the peers before it says why. */
const SELF_WAIT_WARN_MS = 30_000;

async function peerSourceFor(config: Config, clock: Clock, logger: Logger): Promise<PeerSource> {
  if (config.discovery === 'static') return staticPeers(config.peers);
  // Loaded only when used: the client library takes about half a second to load.
  const { kubernetesPeers, loadKubeConfig } = await import('./discovery/kubernetes.js');
  return kubernetesPeers({
    kubeConfig: loadKubeConfig(config.kubeconfig),
    // loadConfig guarantees both with DISCOVERY=kubernetes.
    namespace: config.namespace ?? '',
    serviceName: config.serviceName ?? '',
    port: config.port,
    clock,
    logger,
  });
}

/** Peer authentication from PEER_SECRET / PEER_SECRET_FILE; null (and a warning) without. */
function peerAuthFor(config: Config, clock: Clock, logger: Logger): PeerAuth | null {
  const initial = config.peerSecrets;
  if (initial === null) {
    logger.warn(
      { event: 'peer-auth-off' },
      'peer authentication is off: election messages and announcements are taken from any discovered peer IP unsigned; set PEER_SECRET_FILE (a mounted Secret) or PEER_SECRET on every node',
    );
    return null;
  }
  const file = config.peerSecretFile;
  const secrets = file
    ? secretFileSource({
        path: file,
        initial,
        now: () => clock.now(),
        onError: (error) =>
          logger.warn({ event: 'peer-secret-unreadable', error }, 'keeping the last peer secrets'),
        onChange: (count) =>
          logger.info({ event: 'peer-secret-changed', secrets: count }, 'peer secrets reloaded'),
      })
    : () => initial;
  return new PeerAuth({ secrets, now: () => clock.now(), maxSkewMs: config.peerAuthMaxSkewMs });
}

export async function startNode(config: Config, deps: NodeDeps): Promise<RunningNode> {
  const { logger } = deps;
  const clock = deps.clock ?? systemClock;
  const source = deps.peerSource ?? (await peerSourceFor(config, clock, logger));
  /** The node an address runs on, as discovery names it (the prober and the status page). */
  const nodeNameOf = (address: string) => source.nodeName?.(address);
  const schemas = loadSchemas();
  const self = { id: config.id, address: config.address };
  const events = new EventLog(() => clock.now());
  const book = new MaintenanceBook((added, ended) => {
    for (const w of added) {
      const what = w.scope === 'mesh' ? 'the whole mesh' : w.nodes.join(', ');
      events.add(
        'maintenance',
        `alerts paused for ${what} until ${new Date(w.until).toISOString()}: ${w.reason}`,
      );
    }
    for (const w of ended) events.add('maintenance', `maintenance window ${w.id} ended early`);
  });
  const hold = new AlertHold((peer, now) => pausing(book.all(), peer, now));
  // Messages a leaving node sent just before its leave may still arrive for a request timeout.
  const departures = new Departures(2 * config.probeTimeoutMs + 1_000, DEPARTED_FOR_MS);
  /** The coordinator's last announced verdicts (a follower's status page shows them). */
  let followed: { views: PeerView[]; atMs: number } | null = null;
  /** A maintenance window changed here since this node last replied to an announcement. */
  let windowsToTell = false;
  // When each peer last answered any request: evidence of life while it is suspect.
  const heard = new Map<string, number>();
  const auth = peerAuthFor(config, clock, logger);
  const transport = peerClient({
    schemas,
    auth,
    ownIp: config.podIp,
    timeoutMs: config.probeTimeoutMs,
    onAnswer: (address) => heard.set(address, clock.now()),
    // A failed heartbeat to a live peer gets it probed at once, not at the next round.
    onFailure: (address) => rounds.probeSoon(address),
    // While leading, each probe is also the peer's heartbeat (a large mesh announces seldom).
    heartbeat: () =>
      election.role === 'coordinator' ? { epoch: election.epoch, from: self.address } : null,
    onHeartbeatRefused: (address) => election.announceTo(address),
  });
  const { notifier, dispatcher } = outbound({
    config,
    schemas,
    clock,
    logger,
    userAgent: `knh/${VERSION}`,
    onSettled: (kind, outcome) => metrics.webhooks.settled(kind, outcome),
  });
  // Bounded well below a probe round, so a slow follower never holds an alert up for long.
  const shareVerdicts = () => election.shareNow(Math.min(300, config.probeTimeoutMs));
  const reporter = new Reporter({
    onSent: (payload) => {
      dispatcher.onPeerStatus(payload);
      // The status page's feed shows what this coordinator says of its own judging.
      if (isJudgementEvent(payload.event)) {
        events.add(payload.event, payload.reason ?? payload.event, payload.peer.id);
      }
    },
    notifier,
    clock,
    logger: logger.child({ component: 'reporter' }),
    self,
    clusterStatusIntervalMs: config.clusterStatusIntervalMs,
    startGraceMs: config.startGraceMs,
    shareVerdicts,
    // A delivery: a large mesh's successors hear of it in the next heartbeat (HEARTBEAT_INTERVAL),
    // not in a megabyte announcement per webhook (a lost zone of 1,666 peers is 1,666 webhooks).
    shareSettled: () => {
      if (!election.largeMesh) void shareVerdicts();
    },
    hold,
    // A predecessor's POST in flight when its term ended: its outcome comes within a webhook
    // timeout, told in a reply to one of the next heartbeats.
    handoverWaitMs: config.webhookTimeoutMs + 2_000,
    onSuppressed: (payload, window) =>
      events.add(
        payload.event,
        window
          ? `${payload.event} for ${payload.peer.id} held: maintenance (${window.reason}) until ${new Date(window.until).toISOString()}`
          : `${payload.event} for ${payload.peer.id}: resolves an alert held during maintenance; neither sent`,
        payload.peer.id,
        true,
      ),
  });
  const metrics: NodeMetrics = new NodeMetrics({
    version: VERSION,
    peerAuth: auth !== null,
    perPeerLimit: config.metricsPerPeerLimit,
    cacheMs: 1_000,
    records: () => (rounds.running ? rounds.snapshot() : []),
    selfSuspicion: () => (rounds.running ? rounds.selfSuspicion : null),
    election: () => election,
    webhooksPending: () => notifier.pending + dispatcher.pending,
  });
  // How late the event loop runs: an overloaded coordinator's own timeouts decide nothing, and
  // liveness reads it too (over its own 10 s).
  const loopLag = new EventLoopLag({
    sampleMs: 50,
    windowMs: Math.max(LAG_DEFAULTS.windowMs, overloadPatienceMs(config) + config.probeTimeoutMs),
  });
  const rounds = new ProbeRounds({
    self,
    loopLag,
    transport: metrics.probes.instrument(transport),
    lastHeard: (address) => heard.get(address) ?? null,
    nodeNameOf,
    sanity: config.sanityCheckUrl
      ? httpSanityCheck(config.sanityCheckUrl, config.probeTimeoutMs)
      : null,
    clock,
    logger: logger.child({ component: 'prober' }),
    policy: config,
    intervalMs: config.roundIntervalMs,
    onJudgement: (j) => {
      metrics.detection.transition(j.transition);
      reporter.onJudgement(j);
      const entry = judgementEntry(j);
      if (entry) events.add(entry.kind, entry.text, entry.peer);
    },
    onRound: (r) => {
      metrics.probes.roundEnded(r);
      reporter.onRound(r);
    },
    onRoundStart: (lateByMs) => metrics.probes.roundStarted(lateByMs, config.roundIntervalMs),
    onVerdictsChanged: () => reporter.onVerdictsChanged(),
    onSelfSuspicion: (suspicion) => reporter.onSelfSuspicion(suspicion),
  });
  const shared = new SharedViews({
    clock,
    version: () => rounds.verdictsVersion,
    records: () => rounds.snapshot(),
    // A large mesh's successors get every verdict at each heartbeat: rebuilt on a change only.
    maxAgeMs: () => (election.largeMesh ? LARGE_MESH_VIEW_AGE_MS : 0),
    // Next in line: the highest-ranked peers not judged dead (a suspect one may only be slow, and
    // rank decides who would win: it keeps the verdicts it would need).
    successorsOf: (records) =>
      topRanked(
        records.filter((r) => r.health !== 'dead').map((r) => r.address),
        SUCCESSORS,
      ),
  });
  const election: ElectionDriver = new ElectionDriver({
    self,
    // Election messages time out after PROBE_TIMEOUT; their answers are awaited a little longer.
    timing: { ...config, answerTimeoutMs: config.probeTimeoutMs + 500 },
    transport,
    takesHeartbeats: (address) => transport.takesHeartbeats(address),
    protocolOf: (address) => transport.protocolOf(address),
    probeEveryMs: config.roundIntervalMs,
    clock,
    logger: logger.child({ component: 'election' }),
    // Until it probes, a new coordinator passes on what it inherited rather than an empty view.
    view: () => (rounds.running ? shared.views() : election.inherited(clock.now())),
    successors: () => (rounds.running ? shared.successors() : topRanked(present, SUCCESSORS)),
    undelivered: () => {
      const own = reporter.undelivered();
      if (rounds.running) return own;
      const keys = new Set(own.map((p) => p.dedup_key));
      return [...election.inheritedUndelivered().filter((p) => !keys.has(p.dedup_key)), ...own];
    },
    cannotJudge: () =>
      rounds.running ? reporter.cannotJudgeOpen() : election.inheritedCannotJudge(),
    handover: () => reporter.handOver(),
    onTermHandover: (handover) => reporter.takeHandover(handover),
    onElectionStarted: () => metrics.election.electionStarted(),
    onCoordinatorChanged: (change) => {
      metrics.election.coordinatorChanged();
      const c = change.coordinator;
      events.add(
        'coordinator',
        c
          ? `coordinator is ${change.isSelf ? 'this node' : c.id}`
          : 'no coordinator: election under way',
        c?.id ?? null,
      );
      followed = null;
      if (change.isSelf) return; // duties start once leadership is confirmed (onLeading)
      if (rounds.running) election.keepOwnView(rounds.snapshot().map(toView));
      // Another node leads: what this one has not sent of its term is that node's to send, unless
      // it is of the previous protocol (it takes no hand-over): then this one still sends it.
      const successor = change.coordinator;
      const protocol = change.protocol ?? (successor ? transport.protocolOf(successor.address) : 2);
      const end = successor && protocol < 2 ? 'drain' : 'hand-over';
      reporter.stopLeading(end);
      dispatcher.stopLeading(end);
      rounds.stop();
    },
    maintenance: () => [...book.all()],
    // A follower hands on what its coordinator shared (to a restarted node taking over).
    alerts: () =>
      !dispatcher.enabled ? [] : rounds.running ? dispatcher.shared() : election.inheritedAlerts(),
    onMaintenance: (windows) => book.merge(windows, clock.now()),
    onFollowedView: (views) => {
      if (views === null) {
        followed = null; // a large mesh: the map is on the coordinator's status page
        return;
      }
      for (const e of viewChanges(followed?.views ?? views, views))
        events.add(e.kind, e.text, e.peer);
      followed = { views, atMs: clock.now() };
    },
    onHandover: (views, undelivered, cannotJudge) => {
      rounds.adopt(views);
      reporter.resend(undelivered);
      if (cannotJudge) reporter.resolveCannotJudge(cannotJudge);
      const own = views.find((v) => v.address === self.address);
      if (own?.health === 'dead' && own.alerted) reporter.selfRecovered(own);
    },
    onTermRenewed: () => reporter.termRenewed(election.termConfirmed),
    onLeading: () => {
      rounds.start(election.inherited(clock.now()), election.firstRoundAfter);
      // The alerts still firing at the other receivers: as the predecessor shared them (with their
      // grouped pages), and any other peer inherited dead whose peer_dead went out (one still
      // undelivered or held comes through the reporter when it goes). First, so that the
      // reporter's re-sends below find them and do not page again.
      const { carried, over } = succession({
        inherited: election.inheritedAlerts(),
        records: rounds.snapshot(),
        undelivered: election.inheritedUndelivered(),
        cannotJudge: election.inheritedCannotJudge(),
        self,
        epoch: election.epoch,
        now: clock.now(),
      });
      dispatcher.startLeading(carried);
      dispatcher.resolveInherited(over);
      reporter.startLeading(
        {
          epoch: () => election.epoch,
          records: () => rounds.snapshot(),
          sanity: () => rounds.sanity,
          selfSuspicion: () => rounds.selfSuspicion,
        },
        election.inheritedUndelivered(),
        { cannotJudge: election.inheritedCannotJudge(), ready: election.termConfirmed },
      );
      // This node was reported dead and is back (a restart): it resolves its own incident.
      const own = election.inheritedSelf();
      if (own?.health === 'dead' && own.alerted) reporter.selfRecovered(own);
    },
  });

  /** Every peer discovery lists (self excluded); `present`: those not departed, which take part. */
  let peers: readonly string[] = [];
  /** The same, to look up (5,000 peers). */
  let discovered = new Set<string>();
  let stopping: Promise<void> | null = null;
  let present: readonly string[] = [];
  const applyMembership = () => {
    const next = departures.present(peers);
    const { added, removed } = diffPeers(present, next);
    if (added.length === 0 && removed.length === 0) return;
    present = next;
    rounds.setPeers(next);
    election.setPeers(next);
    dispatcher.reconcile(next);
  };
  /** A departed peer that speaks again (it restarted) takes part again. */
  const returned = (address: string) => {
    if (!departures.spoke(address, clock.now())) return;
    events.add('returned', `${address} is back after leaving`, address);
    applyMembership();
  };
  const relay = new Relay({
    transport,
    clock,
    policy: config,
    isPeer: (address) => discovered.has(address),
    maxTimeoutMs: 2 * config.probeTimeoutMs,
  });
  /** Whether discovery lists this node's own address (static discovery: once loaded). */
  let selfListed = false;
  const health = new HealthManager({
    clock,
    logger: logger.child({ component: 'health' }),
    selfAddress: self.address,
    discoverySynced: () => source.synced?.() ?? true,
    selfListed: () => selfListed,
    election,
    prober: rounds,
    roundIntervalMs: config.roundIntervalMs,
    maxMemoryMiB: config.maxMemoryMiB,
    lag: loopLag,
  });
  const app = buildApp({
    schemas,
    logger: logger.child({ component: 'http' }),
    auth,
    selfAddress: self.address,
    isPeer: (address) => discovered.has(address),
    onRefused: (reason) => metrics.peerMessages.refusedMessage(reason),
    now: () => clock.now(),
    api: {
      ping: () => ({
        id: self.id,
        address: self.address,
        node_name: config.nodeName,
        role: election.role,
        epoch: election.epoch,
        coordinator: election.coordinator,
      }),
      election: (request) => {
        returned(request.from.address);
        return election.handleElection(request);
      },
      announcement: (announcement, protocol) => {
        returned(announcement.from.address);
        const reply = election.handleAnnouncement(announcement, protocol);
        if (reply) windowsToTell = false; // the reply carries every window this node holds
        return reply;
      },
      // Taken, and (a window opened here waits for a reply to an announcement) nothing to tell.
      heartbeat: ({ from, epoch }) => election.handleProbeHeartbeat(from, epoch) && !windowsToTell,
      probe: (request) => relay.handle(request),
      metrics: () => metrics.render(),
    },
    routers: [
      healthRoutes(health),
      leaveRouter({
        schemas,
        auth,
        logger: logger.child({ component: 'http' }),
        onLeave: (notice) => {
          if (!departures.mark(notice.from, peers, clock.now())) return false;
          logger.info(
            { event: 'peer-left', peer: notice.from.id, peerAddress: notice.from.address },
            `${notice.from.id} is shutting down: no longer probed or elected, not reported dead`,
          );
          events.add(
            'left',
            `${notice.from.id} shut down in order (not reported dead)`,
            notice.from.id,
          );
          applyMembership();
          return true;
        },
      }),
      testAlertRouter({
        logger: logger.child({ component: 'receivers' }),
        send: () => dispatcher.sendTest(),
      }),
      maintenanceRouter({
        book,
        schemas,
        logger: logger.child({ component: 'maintenance' }),
        now: () => clock.now(),
        // A coordinator tells the mesh at once; a follower's reply to the next announcement
        // carries it, and until then its answers to probes ask for one.
        onChanged: () => {
          windowsToTell = true;
          void election.shareNow(300);
        },
      }),
      statusRouter({
        schemas,
        logger: logger.child({ component: 'http' }),
        status: () =>
          assembleStatus({
            self,
            nodeName: config.nodeName,
            version: VERSION,
            role: election.role,
            epoch: election.epoch,
            coordinator: election.coordinator,
            ready: health.readiness().ok,
            dryRun: config.dryRun,
            own: rounds.running ? rounds.snapshot() : null,
            selfSuspect: rounds.running ? rounds.selfSuspicion.suspect : null,
            followed: election.role === 'coordinator' ? null : followed,
            discovered: peers,
            nodeNameOf,
            departed: departures.list(),
            windows: book.active(clock.now()),
            events: events.recent(),
            now: clock.now(),
          }),
      }),
    ],
  });
  const server = await listen(app, config.listenHost, config.port);
  health.markListening();
  health.start();
  loopLag.start();
  logger.info(
    { event: 'listening', address: self.address, listen: `${config.listenHost}:${server.port}` },
    `knh ${VERSION} node ${self.id} listening`,
  );

  // Kubernetes: take part only while this pod is listed, so that every peer can reach it too
  // (KNH waited the same way), and step out when its endpoint leaves (deleted, terminating), so a
  // pod on its way out never leads alongside its successor. Static: PEERS may leave it out.
  const mustSeeSelf = config.discovery === 'kubernetes';
  let waitWarning: TimerHandle | null = null;
  const waitForSelf = () => {
    if (waitWarning) return;
    logger.info(
      { event: 'waiting-for-self', address: self.address, peers: peers.length },
      `waiting for ${self.address} to appear among the endpoints before taking part`,
    );
    const warn = () => {
      waitWarning = clock.setTimeout(() => {
        logger.warn(
          { event: 'waiting-for-self', address: self.address, peers: peers.length },
          `still not listed after ${SELF_WAIT_WARN_MS / 1000} s more: ${self.address} is not among the ${peers.length} endpoints of service ${config.serviceName ?? ''} in ${config.namespace ?? ''}; check that the Service selects this pod, that it publishes not-ready addresses, that POD_IP is status.podIP, that CONTAINER_PORT is the Service's target port, and that the Role allows listing EndpointSlices`,
        );
        warn();
      }, SELF_WAIT_WARN_MS);
    };
    warn();
  };
  const stopWaiting = () => {
    if (waitWarning) clock.clearTimeout(waitWarning);
    waitWarning = null;
  };
  // Armed before discovery starts: an API that never answers must not leave the node silent.
  if (mustSeeSelf) waitForSelf();
  await source.start((addresses) => {
    const next = addresses.filter((a) => a !== self.address);
    const { added, removed } = diffPeers(peers, next);
    metrics.peersListed({ added, removed }, next.length);
    peers = next;
    discovered = new Set(next);
    transport.keepOnly(discovered);
    if (added.length > 0 || removed.length > 0) {
      logger.info(
        { event: 'peers-changed', added, removed, peers: next.length },
        `peers: ${next.length} (+${added.length} -${removed.length})`,
      );
      for (const address of added) departures.clear(address);
      applyMembership();
      for (const gone of removed) heard.delete(gone);
    }
    const listed = !mustSeeSelf || addresses.includes(self.address);
    selfListed = listed;
    if (listed && !election.started) {
      stopWaiting();
      election.start();
    } else if (!listed && election.started) {
      logger.warn(
        { event: 'left-endpoints', address: self.address },
        `${self.address} is no longer among the endpoints (being removed?): stepping out of the election`,
      );
      // A coordinator's last announcement carries its latest verdicts, undelivered events and
      // windows to its successor (sent now; stop() does not cancel requests under way).
      dispatcher.flushNow();
      void election.shareNow(300);
      // A node leaving the endpoints may never hear who leads next, so nobody would take a
      // hand-over: what its term decided still goes out from here (ended before the election
      // stops, so that stopping is no hand-over, which would withdraw it).
      reporter.stopLeading('drain');
      dispatcher.stopLeading('drain');
      election.stop();
      waitForSelf();
    } else if (!listed) {
      waitForSelf();
    }
  });

  // Alerts held for maintenance go out once their window is over (and still open); old windows go.
  let maintenanceTimer: TimerHandle | null = null;
  const maintenanceTick = () => {
    maintenanceTimer = clock.setTimeout(() => {
      book.prune(clock.now());
      reporter.releaseHeld();
      // A node gone longer than DEPARTED_FOR_MS is probed again, as the live node it last was.
      const expired = departures.expire(clock.now());
      if (expired.length > 0) {
        applyMembership();
        for (const d of expired) {
          events.add(
            'returned',
            `${d.id} left ${DEPARTED_FOR_MS / 60_000} min ago: probed again`,
            d.id,
          );
          rounds.presumeAlive(d.address, d.id, d.atMs);
        }
      }
      maintenanceTick();
    }, 1_000);
  };
  maintenanceTick();

  return {
    port: server.port,
    stop: (graceMs = 5_000) =>
      (stopping ??= (async () => {
        health.markStopping();
        logger.info({ event: 'stopping' }, 'stopping');
        stopWaiting();
        if (maintenanceTimer) clock.clearTimeout(maintenanceTimer);
        // A coordinator first hands its latest verdicts, undelivered events and windows over.
        // What is in the receivers' grouping window goes out first, so what it shares is as sent.
        dispatcher.flushNow();
        if (election.role === 'coordinator') await election.shareNow(300);
        const epoch = election.epoch;
        const wasStarted = election.started;
        // Its term ends by its own leaving: what it decided still goes out, drained below. (Ended
        // first, so that stopping the election is no hand-over, which would withdraw it.)
        reporter.stopLeading('drain');
        dispatcher.stop();
        election.stop();
        rounds.stop();
        // Then every peer hears it is leaving: the next node takes over at once, nobody reports it.
        if (wasStarted) await sayGoodbye(transport, present, { from: self, epoch }, clock, logger);
        await source.stop();
        // Alerts still being shared with followers go to the queues first, then the queues drain.
        const deadline = clock.now() + graceMs;
        await waitAtMost(clock, reporter.flush(), graceMs);
        await Promise.all([
          notifier.drain(Math.max(0, deadline - clock.now())),
          dispatcher.drain(Math.max(0, deadline - clock.now())),
        ]);
        await server.close();
        transport.closeIdle();
        health.stop();
        loopLag.stop();
      })()),
  };
}

/** `knh` with no subcommand: one node configured from the environment, until SIGTERM/SIGINT. */
export async function runFromEnv(env: NodeJS.ProcessEnv): Promise<number> {
  const loaded = loadConfig(env, { hostname: hostname() });
  if (!loaded.ok) {
    process.stderr.write(
      `knh: invalid settings, not starting:\n${loaded.errors.map((e) => `  - ${e}`).join('\n')}\n`,
    );
    return 2;
  }
  const config = loaded.config;
  const { logger, settle } = processLogger(config.logLevel, { node: config.id });
  let node: RunningNode;
  try {
    node = await startNode(config, { logger });
  } catch (err) {
    logger.fatal({ err }, `cannot start: ${(err as Error).message}`);
    await settle(1_000);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const shutdown = (signal: string) => {
      logger.info({ signal }, `received ${signal}, shutting down`);
      void node
        .stop(config.shutdownGraceMs)
        .then(() => logger.info({ event: 'stopped' }, 'stopped'))
        .then(() => settle(1_000))
        .then(() => resolve(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
