// The reporter as its tests drive it: a fake clock and poster, the real queues, a leadership whose
// records and self-suspicion the test sets, and shares held until released.
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import { Reporter } from '../../src/alerts/reporter.js';
import type { FlapSettings } from '../../src/alerts/flap-damper.js';
import type { TermView } from '../../src/alerts/term-view.js';
import type { MaintenanceHold } from '../../src/alerts/maintenance-hold.js';
import type { RoundReport, SelfSuspicion } from '../../src/prober/rounds.js';
import type { Judgement, PeerRecord } from '../../src/prober/verdict.js';
import { CapturingLogger } from './capturing-logger.js';
import { FakeClock } from './fake-clock.js';
import { FakePoster, type Answer, type PostCall } from './fake-poster.js';
import { PEER_URL, testNotifier } from './test-notifier.js';
import { alive, confirmed, upRecord } from './verdicts.js';
import { deadPayload } from './alerts.js';

export const SELF = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };

export interface SetupOptions {
  intervalMs?: number;
  /** Hold each share until released (default), or resolve at once. */
  holdShares?: boolean;
  answer?: (call: PostCall, index: number) => Answer;
  clock?: FakeClock;
  poster?: FakePoster;
  self?: typeof SELF;
  /** Maintenance: alerts about paused nodes held back. */
  hold?: MaintenanceHold;
  /** Flap damping (default: none). */
  flap?: FlapSettings;
}

export interface Suppressed {
  event: string;
  key: string;
  window: string | null;
}

export function setupReporter({
  intervalMs = 60_000,
  holdShares = true,
  answer,
  clock = new FakeClock(),
  poster = new FakePoster(clock, answer),
  self = SELF,
  hold,
  flap,
}: SetupOptions = {}) {
  const logger = new CapturingLogger();
  const order: string[] = [];
  const notifier = testNotifier(poster, clock, logger);
  const shares: (() => void)[] = [];
  /** What the other receivers (the dispatcher) heard, in order. */
  const fed: PeerStatusPayload[] = [];
  /** What the hold kept back (with its window) or cancelled (window null), in order. */
  const suppressed: Suppressed[] = [];
  const reporter = new Reporter({
    onSent: (payload) => fed.push(payload),
    notifier,
    clock,
    logger,
    self,
    clusterStatusIntervalMs: intervalMs,
    ...(hold ? { hold } : {}),
    ...(flap ? { flap } : {}),
    onSuppressed: (payload, window) =>
      suppressed.push({ event: payload.event, key: payload.dedup_key, window: window?.id ?? null }),
    shareVerdicts: () => {
      order.push('share');
      if (!holdShares) return Promise.resolve();
      return new Promise((resolve) => shares.push(resolve));
    },
  });
  let records: PeerRecord[] = [];
  let suspicion: SelfSuspicion = { suspect: false, unreachable: 0, silent: 0, considered: 0 };
  const leadership: TermView = {
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
    suppressed,
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

/** The death of peer `name`@`ip`: alive at 1, its probes failing from 1 s, dead at 2 s. */
export function peerDeath(ip = '10.0.0.1', name = 'a'): Judgement {
  return confirmed(alive(`${ip}:8080`, `${name}@${ip}`, 1).record, 1_000).verdict;
}

/** The peer_dead another coordinator decided for peerDeath() (a@10.0.0.1 dead at 2 s). */
export function deadAlertFrom(coordinator: typeof SELF): PeerStatusPayload {
  return deadPayload(upRecord('a', '10.0.0.1', 1), 2_000, { coordinator, epoch: 2 });
}
