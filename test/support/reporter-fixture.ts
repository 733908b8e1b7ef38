// The reporter as its tests drive it: a fake clock and poster, the real queues, a leadership whose
// records and self-suspicion the test sets, and shares held until released.
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import { Reporter, type Leadership } from '../../src/alerts/reporter.js';
import type { AlertHold } from '../../src/alerts/alert-hold.js';
import type { RoundReport, SelfSuspicion } from '../../src/prober/rounds.js';
import {
  answered,
  attemptFailed,
  confirm,
  newRecord,
  type Judgement,
  type PeerRecord,
  type Withhold,
} from '../../src/prober/verdict.js';
import { CapturingLogger } from './capturing-logger.js';
import { FakeClock } from './fake-clock.js';
import { FakePoster, type Answer, type PostCall } from './fake-poster.js';
import { PEER_URL, testNotifier } from './test-notifier.js';

export const SELF = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
export const UNHEALTHY = 1_000;

export interface SetupOptions {
  intervalMs?: number;
  /** Hold each share until released (default), or resolve at once. */
  holdShares?: boolean;
  answer?: (call: PostCall, index: number) => Answer;
  clock?: FakeClock;
  poster?: FakePoster;
  self?: typeof SELF;
  /** Maintenance: alerts about paused nodes held back. */
  hold?: AlertHold;
}

export function setupReporter({
  intervalMs = 60_000,
  holdShares = true,
  answer,
  clock = new FakeClock(),
  poster = new FakePoster(clock, answer),
  self = SELF,
  hold,
}: SetupOptions = {}) {
  const logger = new CapturingLogger();
  const order: string[] = [];
  const notifier = testNotifier(poster, clock, logger);
  const shares: (() => void)[] = [];
  /** What the other receivers (the dispatcher) heard, in order. */
  const fed: PeerStatusPayload[] = [];
  const reporter = new Reporter({
    onSent: (payload) => fed.push(payload),
    notifier,
    clock,
    logger,
    self,
    clusterStatusIntervalMs: intervalMs,
    ...(hold ? { hold } : {}),
    shareVerdicts: () => {
      order.push('share');
      if (!holdShares) return Promise.resolve();
      return new Promise((resolve) => shares.push(resolve));
    },
  });
  let records: PeerRecord[] = [];
  let suspicion: SelfSuspicion = { suspect: false, unreachable: 0, silent: 0, considered: 0 };
  const leadership: Leadership = {
    epoch: () => 3,
    records: () => records,
    sanity: () => 'not-configured',
    selfSuspicion: () => suspicion,
  };
  const posted = () => poster.calls.map((c) => c.body as PeerStatusPayload | ClusterStatusPayload);
  const peerPosts = () =>
    poster.calls.filter((c) => c.url === PEER_URL).map((c) => c.body as PeerStatusPayload);
  return {
    clock,
    logger,
    poster,
    reporter,
    leadership,
    order,
    fed,
    posted,
    peerPosts,
    lead: (
      inherited: PeerStatusPayload[] = [],
      options?: Parameters<Reporter['startLeading']>[2],
    ) => reporter.startLeading(leadership, inherited, options),
    setRecords: (r: PeerRecord[]) => (records = r),
    setSuspicion: (s: SelfSuspicion) => (suspicion = s),
    /** Releases every share waiting so far. */
    release: () => shares.splice(0).forEach((resolve) => resolve()),
  };
}

export const round = (n: number, changed = 0, membership = 0): RoundReport => ({
  round: n,
  probed: 1,
  changed,
  membership,
  durationMs: 1,
  sanity: 'not-configured',
});

const refused = { latencyMs: 1, detail: 'refused' };

export const alive = (address: string, id: string, now: number) =>
  answered(newRecord(address, 0), { latencyMs: 1, id, nodeName: id.split('@')[0] ?? '' }, now);

/** The confirmation of a peer whose probes have failed since `failedAt`, at failedAt + 1 s. */
export function confirmed(
  record: PeerRecord,
  failedAt: number,
  { reachedBy = [] as string[], withhold = null as Withhold } = {},
): { suspected: Judgement; verdict: Judgement } {
  const suspected = attemptFailed(record, refused, failedAt, failedAt + 1);
  const verdict = confirm(
    suspected.record,
    { reachedBy, unhealthyMs: UNHEALTHY, withhold },
    failedAt + UNHEALTHY,
  );
  return { suspected, verdict };
}

/** A peer_dead another coordinator decided (for 10.0.0.1). */
export function deadAlertFrom(coordinator: typeof SELF): PeerStatusPayload {
  const { verdict } = confirmed(alive('10.0.0.1:8080', 'a@10.0.0.1', 1).record, 1_000);
  return peerStatusPayload({
    record: verdict.record,
    event: 'peer_dead',
    incidentMs: verdict.incidentMs ?? 0,
    coordinator,
    epoch: 2,
    now: 2_000,
  });
}
