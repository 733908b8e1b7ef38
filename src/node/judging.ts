// Judging: the prober's rounds, and the reporter that turns their verdicts into webhooks (held
// during maintenance, shared with the successors before they go), and the verdicts as shared.
import { MaintenanceHold } from '../alerts/maintenance-hold.js';
import { Reporter } from '../alerts/reporter.js';
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerTransport } from '../core/transport.js';
import type { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import type { Notifier } from '../delivery/notifier.js';
import { SUCCESSORS, topRanked } from '../election/bully.js';
import type { EventLoopLag } from '../health/event-loop-lag.js';
import { type MaintenanceBook, pausing } from '../maintenance/windows.js';
import type { NodeMetrics } from '../metrics/node-metrics.js';
import { httpSanityCheck } from '../peer-client/sanity-check.js';
import { ProbeRounds } from '../prober/rounds.js';
import { LARGE_MESH_VIEW_AGE_MS, SharedViews } from '../prober/shared-views.js';
import type { EventLog } from '../status/event-log.js';
import { heldText, judgementEntry, sentEntry } from '../status/event-feed.js';
import { nodeNameOf, type NodeRef } from '../wire/node-ref.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';
import { SHARE_WAIT_MS } from './term-sharing.js';

/** The election's side of sharing verdicts, as the reporter needs it. */
export interface VerdictSharing {
  /** Sends the verdicts to the followers; resolves once they answered or `maxWaitMs` passed. */
  shareNow(maxWaitMs: number): Promise<void>;
  /** Over FULL_VIEW_PEERS peers: only the successors take the verdicts, at every heartbeat. */
  readonly largeMesh: boolean;
}

export interface JudgingOptions {
  config: Config;
  self: NodeRef;
  clock: Clock;
  logger: Logger;
  transport: Pick<PeerTransport, 'ping' | 'probeVia'>;
  /** When each peer last answered any request: evidence of life while it is suspect. */
  lastHeard: (address: string) => number | null;
  nodeNameOf: (address: string) => string | undefined;
  loopLag: EventLoopLag;
  notifier: Notifier;
  dispatcher: AlertDispatcher;
  book: MaintenanceBook;
  events: EventLog;
  metrics: NodeMetrics;
  sharing(): VerdictSharing;
  /** The User-Agent of the sanity check's requests. */
  userAgent: string;
  /** Whether the finding (pair probing) an event opened is still open. */
  findingOpen?: (payload: PeerStatusPayload) => boolean;
}

export interface Judging {
  rounds: ProbeRounds;
  reporter: Reporter;
  shared: SharedViews;
}

export function judging(o: JudgingOptions): Judging {
  const { config, self, clock, logger, events, metrics, dispatcher } = o;
  const shareVerdicts = () => o.sharing().shareNow(Math.min(SHARE_WAIT_MS, config.probeTimeoutMs));
  const reporter = new Reporter({
    onSent: (payload) => {
      dispatcher.onPeerStatus(payload);
      // Rare (an event goes out): the nodes a finding names are looked up as it comes.
      const entry = sentEntry(payload, () => [
        { ...self, node_name: nodeNameOf(self.id) },
        ...rounds.snapshot().map((r) => ({ id: r.id, address: r.address, node_name: r.nodeName })),
      ]);
      if (entry) events.add(entry.kind, entry.text, entry.peer);
    },
    notifier: o.notifier,
    clock,
    logger: logger.child({ component: 'reporter' }),
    self,
    clusterStatusIntervalMs: config.clusterStatusIntervalMs,
    startGraceMs: config.startGraceMs,
    flap: {
      recoveryHoldMs: config.recoveryHoldMs,
      windowMs: config.flapWindowMs,
      changes: config.flapChanges,
      stableMs: config.flapStableMs,
    },
    shareVerdicts,
    // A delivery: a large mesh's successors hear of it in the next heartbeat (HEARTBEAT_INTERVAL),
    // not in a megabyte announcement per webhook (a lost zone is a webhook per peer).
    shareSettled: () => {
      if (!o.sharing().largeMesh) void shareVerdicts();
    },
    hold: new MaintenanceHold((peer, now) => pausing(o.book.all(), peer, now)),
    // A predecessor's POST in flight when its term ended: its outcome comes within a webhook
    // timeout, told in a reply to one of the next heartbeats.
    handoverWaitMs: config.webhookTimeoutMs + 2_000,
    ...(o.findingOpen ? { findingOpen: o.findingOpen } : {}),
    onSuppressed: (payload, window) =>
      events.add(payload.event, heldText(payload, window), payload.peer.id, true),
  });
  const rounds: ProbeRounds = new ProbeRounds({
    self,
    loopLag: o.loopLag,
    transport: metrics.probes.instrument(o.transport),
    lastHeard: o.lastHeard,
    nodeNameOf: o.nodeNameOf,
    sanity: config.sanityCheckUrl
      ? httpSanityCheck(config.sanityCheckUrl, config.probeTimeoutMs, o.userAgent)
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
    onVerdictsChanged: (changes) => reporter.onVerdictsChanged(changes),
    onSelfSuspicion: (suspicion) => reporter.onSelfSuspicion(suspicion),
  });
  const shared = new SharedViews({
    clock,
    version: () => rounds.verdictsVersion,
    records: () => rounds.snapshot(),
    // A large mesh's successors get every verdict at each heartbeat: rebuilt on a change only.
    maxAgeMs: () => (o.sharing().largeMesh ? LARGE_MESH_VIEW_AGE_MS : 0),
    // Next in line: the highest-ranked peers not judged dead (a suspect one may only be slow, and
    // rank decides who would win: it keeps the verdicts it would need).
    successorsOf: (records) =>
      topRanked(
        records.filter((r) => r.health !== 'dead').map((r) => r.address),
        SUCCESSORS,
      ),
  });
  return { rounds, reporter, shared };
}
