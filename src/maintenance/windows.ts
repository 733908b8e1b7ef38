import type { Logger } from '../core/logger.js';
import { wireWindow, type MaintenanceWindow, type PeerNames } from '../wire/maintenance-window.js';

/** At most this many windows are held and shared: a bound on what a peer can make us store. */
export const MAX_WINDOWS = 50;
/** The longest a window may last; one heard that lasts longer, or ends further ahead, is ignored. */
export const MAX_WINDOW_MS = 7 * 24 * 3_600_000;
/** Clock skew between nodes tolerated on windows heard from peers. */
const SKEW_MS = 10 * 60_000;
/** How long after its end a window is still held (so late merges do not revive it). */
const KEEP_AFTER_END_MS = 60_000;

export function isActive(w: MaintenanceWindow, now: number): boolean {
  return !w.cancelled && w.starts <= now && now < w.until;
}

export function covers(w: MaintenanceWindow, peer: PeerNames): boolean {
  if (w.scope === 'mesh') return true;
  return w.nodes.some((n) => n === peer.nodeName || n === peer.id || n === peer.address);
}

/**
 * The names among `names` (node names, ids `name@ip`, addresses `ip:port`) that match none of
 * `known`: a window naming them would pause nothing about them.
 */
export function unknownNames(names: readonly string[], known: readonly PeerNames[]): string[] {
  const matched = new Set(known.flatMap((k) => [k.nodeName, k.id, k.address]));
  return names.filter((n) => !matched.has(n));
}

/** The active window that pauses alerts about `peer`, if any (the one ending last). */
export function pausing(
  windows: readonly MaintenanceWindow[],
  peer: PeerNames,
  now: number,
): MaintenanceWindow | null {
  let best: MaintenanceWindow | null = null;
  for (const w of windows) {
    if (isActive(w, now) && covers(w, peer) && (!best || w.until > best.until)) best = w;
  }
  return best;
}

/**
 * The union of both sets by id, a cancellation winning; windows long over are dropped, and past
 * MAX_WINDOWS the ones ending first go. Returns the same array when nothing changed.
 */
export function mergeWindows(
  mine: readonly MaintenanceWindow[],
  theirs: readonly MaintenanceWindow[],
  now: number,
): readonly MaintenanceWindow[] {
  const byId = new Map(mine.map((w) => [w.id, w]));
  let changed = false;
  for (const w of theirs) {
    const known = byId.get(w.id);
    if (!known) {
      if (w.until + KEEP_AFTER_END_MS <= now || !plausible(w, now)) continue;
      byId.set(w.id, w);
      changed = true;
    } else if (w.cancelled && !known.cancelled) {
      byId.set(w.id, { ...known, cancelled: true });
      changed = true;
    }
  }
  const kept = [...byId.values()].filter((w) => w.until + KEEP_AFTER_END_MS > now);
  if (kept.length !== byId.size) changed = true;
  if (kept.length > MAX_WINDOWS) {
    // Over the bound: ended and cancelled windows go first, then those ending first. A running
    // window is never pushed out by one heard later (the newest go instead).
    const rank = (w: MaintenanceWindow) => (isActive(w, now) ? (mine.includes(w) ? 2 : 1) : 0);
    kept.sort((a, b) => rank(b) - rank(a) || b.until - a.until);
    kept.length = MAX_WINDOWS;
    changed = true;
  }
  // The cap may have dropped just what was heard: then nothing changed after all.
  if (changed && kept.length === mine.length && kept.every((w) => mine.includes(w))) return mine;
  return changed ? kept : mine;
}

/** A window as any node could have opened it: at most MAX_WINDOW_MS long, not far in the future. */
function plausible(w: MaintenanceWindow, now: number): boolean {
  return (
    w.starts <= w.until &&
    w.until - w.starts <= MAX_WINDOW_MS &&
    w.starts <= now + SKEW_MS &&
    w.until <= now + MAX_WINDOW_MS + SKEW_MS
  );
}

/** One node's copy of the set, with what changed for whoever shows or logs it. */
export class MaintenanceBook {
  private windows: readonly MaintenanceWindow[] = [];

  constructor(
    /** `from`: the peer whose announcement or reply brought the change (absent: made here). */
    private readonly onChange: (
      added: MaintenanceWindow[],
      ended: MaintenanceWindow[],
      from?: string,
    ) => void = () => {},
  ) {}

  all(): readonly MaintenanceWindow[] {
    return this.windows;
  }

  active(now: number): MaintenanceWindow[] {
    return this.windows.filter((w) => isActive(w, now));
  }

  /**
   * Merges windows heard from the peer at `from` (or, without it, opened here); returns whether
   * anything changed.
   */
  merge(theirs: readonly MaintenanceWindow[], now: number, from?: string): boolean {
    const before = this.windows;
    const after = mergeWindows(before, theirs, now);
    if (after === before) return false;
    this.windows = after;
    const old = new Map(before.map((w) => [w.id, w]));
    const added = after.filter((w) => !old.has(w.id) && !w.cancelled);
    const ended = after.filter((w) => w.cancelled && old.get(w.id)?.cancelled === false);
    if (added.length > 0 || ended.length > 0) this.onChange(added, ended, from);
    return true;
  }

  /** Cancels a window by id; false when there is no such window still running. */
  cancel(id: string, now: number): MaintenanceWindow | null {
    const w = this.windows.find((x) => x.id === id);
    if (!w || w.cancelled || w.until <= now) return null;
    const cancelled = { ...w, cancelled: true };
    this.merge([cancelled], now);
    return cancelled;
  }

  /** Drops windows long over; the caller runs it now and then. */
  prune(now: number): void {
    this.merge([], now);
  }
}

/** Logs windows first heard from the peer at `from` (opened or ended elsewhere), naming it. */
export function logWindowsHeard(
  logger: Logger,
  from: string,
  added: readonly MaintenanceWindow[],
  ended: readonly MaintenanceWindow[],
): void {
  for (const w of added) {
    logger.warn(
      { event: 'maintenance-heard', from, window: wireWindow(w) },
      `maintenance window ${w.id} heard from ${from}: alerts about ${w.scope === 'mesh' ? 'every node' : w.nodes.join(', ')} are held until ${new Date(w.until).toISOString()} (${w.reason})`,
    );
  }
  for (const w of ended) {
    logger.info(
      { event: 'maintenance-heard-ended', from, window: wireWindow(w) },
      `maintenance window ${w.id} ended, as heard from ${from}`,
    );
  }
}
