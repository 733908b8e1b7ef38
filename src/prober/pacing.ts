// A large round's probes go out evenly over the first half of the interval (each peer at the same
// place in every round, so each is still probed once an interval) rather than all at once, and a
// bounded number at a time.
import type { Clock } from '../core/clock.js';

/** Rounds over more peers than this are paced. */
export const PACE_ABOVE_PEERS = 64;
/** Direct probes of one round in flight at once, at most (a black-holed peer holds one a timeout). */
export const MAX_PROBES_IN_FLIGHT = 1_024;
/** How often a paced round launches the probes that are due. */
const PACE_TICK_MS = 10;

export interface PacedRound {
  clock: Clock;
  intervalMs: number;
  /** When the round started. */
  started: number;
  signal: AbortSignal;
  /**
   * The round's targets not launched yet: filled here, and a target taken out meanwhile (probed
   * early, or the term stopped) is skipped.
   */
  queued: Set<string>;
  launch(address: string): Promise<void>;
}

/**
 * Launches the targets evenly over half the interval, target i at i/n of it, never more than
 * MAX_PROBES_IN_FLIGHT at once; resolves when every probe has answered or failed.
 */
export async function paced(targets: readonly string[], r: PacedRound): Promise<void> {
  const { clock, signal, queued } = r;
  const spreadMs = r.intervalMs / 2;
  for (const address of targets) queued.add(address);
  // Probes counted rather than kept in a list: a round's 5,000 promises would all outlive the
  // young generation, to be collected from the old.
  let open = 0;
  let allDone: (() => void) | null = null;
  let failure: { err: unknown } | null = null;
  const ended = () => {
    if (--open === 0) allDone?.();
  };
  const failed = (err: unknown) => {
    failure ??= { err };
    ended();
  };
  let next = 0;
  while (next < targets.length && !signal.aborted) {
    // Those due before the next tick go now (at the defaults, 5,000 peers: 100 a tick).
    const until = clock.now() - r.started + PACE_TICK_MS;
    const due = Math.min(targets.length, Math.ceil((until / spreadMs) * targets.length));
    while (next < due && open < MAX_PROBES_IN_FLIGHT) {
      const address = targets[next++]!;
      if (!queued.delete(address)) continue; // probed early (probeSoon), or stopped
      open++;
      r.launch(address).then(ended, failed);
    }
    if (next < targets.length) {
      try {
        await clock.sleep(PACE_TICK_MS, signal);
      } catch {
        break;
      }
    }
  }
  if (open > 0) await new Promise<void>((resolve) => (allDone = resolve));
  if (failure) throw (failure as { err: unknown }).err;
}
