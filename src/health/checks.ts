// Readiness and liveness of this node: pure verdicts over observed facts and the current time.

export interface Check {
  name: string;
  ok: boolean;
  /** One human sentence: what was seen, and the bound it was held to. */
  detail: string;
}

export interface Verdict {
  ok: boolean;
  /** Every check, passing or not, in a fixed order. */
  checks: Check[];
}

/** What readiness looks at: can this node do its job? */
export interface ReadinessFacts {
  /** The peer list is current: the Kubernetes watch is up, or the static list is loaded. */
  discoverySynced: boolean;
  /** This node's own address (POD_IP:CONTAINER_PORT). */
  selfAddress: string;
  /** Whether discovery lists that address (always, with static discovery): peers can reach it. */
  selfListed: boolean;
  /** The HTTP server is bound: peers' elections, announcements and probes reach the node. */
  listening: boolean;
  /** Shutdown has begun (SIGTERM): the node is leaving and must not be counted on. */
  stopping: boolean;
  /**
   * Why every peer that answered lately refused this node's signed messages (another secret), or
   * null: such a node takes part in nothing, and `kubectl get pods` should show it.
   */
  unauthenticated: string | null;
}

/** A loop that shows it is alive by making progress (an election tick, a probe round). */
export interface LoopFacts {
  /** Whether the loop should be running now; a loop that is off by design passes. */
  active: boolean;
  /** When it last made progress, ms on the same clock as `now`; null if it never has. */
  lastProgressAt: number | null;
  /** How often it progresses while active, ms (an upper bound is fine). */
  intervalMs: number;
}

/** What liveness looks at: are the node's own parts working? */
export interface LivenessFacts {
  election: LoopFacts;
  prober: LoopFacts;
  /** The largest event-loop lag seen over the last `windowMs`, ms. */
  eventLoop: { maxLagMs: number; windowMs: number };
  /** Resident set size now, bytes; the limit in MiB, or null when MAX_MEMORY_USAGE is off. */
  memory: { rssBytes: number; limitMiB: number | null };
}

export interface HealthThresholds {
  /** A loop counts as stalled after this many of its intervals without progress... */
  stallIntervals: number;
  /** ...but never sooner than this: a loop only a few intervals late is slow, not dead. */
  minStallMs: number;
  /** Event-loop lag above this fails liveness. */
  maxEventLoopLagMs: number;
}

/**
 * - Loops: stalled after max(10 s, 10 intervals) without progress. The election driver ticks every
 *   ≤100 ms, so 10 s is a hundred missed ticks; probe rounds (1 s by default) get ten. Lateness
 *   that small comes from a slow machine; a loop that far behind has stopped.
 * - Event loop: 2 s of lag. GC pauses and busy moments are tens to hundreds of ms; 2 s already
 *   exceeds COORDINATOR_TIMEOUT's default (1.5 s), so followers would be holding elections.
 * Each of these fails only while the cause lasts (lag: for the monitor's window after it); the
 * liveness probe's failureThreshold decides how long that may go on before a restart.
 */
export const DEFAULT_THRESHOLDS: HealthThresholds = {
  stallIntervals: 10,
  minStallMs: 10_000,
  maxEventLoopLagMs: 2_000,
};

const MIB = 1024 * 1024;

export function readiness(facts: ReadinessFacts): Verdict {
  return verdict([
    {
      name: 'discovery',
      ok: facts.discoverySynced,
      detail: facts.discoverySynced
        ? 'peer list synced'
        : 'peer list not synced: waiting for the first list, or the watch is down and reconnecting',
    },
    {
      name: 'self',
      ok: facts.selfListed,
      detail: facts.selfListed
        ? `${facts.selfAddress} is among the peers`
        : `${facts.selfAddress} is not among the discovered endpoints yet`,
    },
    {
      name: 'listening',
      ok: facts.listening,
      detail: facts.listening ? 'HTTP server listening' : 'HTTP server not listening yet',
    },
    {
      name: 'shutdown',
      ok: !facts.stopping,
      detail: facts.stopping ? 'shutting down' : 'running',
    },
    {
      name: 'peer-auth',
      ok: facts.unauthenticated === null,
      detail: facts.unauthenticated ?? "no peer refuses this node's signed messages",
    },
  ]);
}

export function liveness(
  facts: LivenessFacts,
  now: number,
  thresholds: HealthThresholds = DEFAULT_THRESHOLDS,
): Verdict {
  const { eventLoop, memory } = facts;
  const lagOk = eventLoop.maxLagMs <= thresholds.maxEventLoopLagMs;
  const rssMiB = memory.rssBytes / MIB;
  const memoryOk = memory.limitMiB === null || rssMiB <= memory.limitMiB;
  return verdict([
    loopCheck('election', facts.election, now, thresholds, {
      idle: 'not taking part (not listed among the endpoints yet, or stopping)',
      progress: 'tick',
    }),
    loopCheck('prober', facts.prober, now, thresholds, {
      idle: 'not leading: only the coordinator probes',
      progress: 'round',
    }),
    {
      name: 'event-loop',
      ok: lagOk,
      detail: `lag at most ${Math.round(eventLoop.maxLagMs)} ms over the last ${seconds(eventLoop.windowMs)} (limit ${thresholds.maxEventLoopLagMs} ms)`,
    },
    {
      name: 'memory',
      ok: memoryOk,
      detail:
        memory.limitMiB === null
          ? `rss ${rssMiB.toFixed(1)} MiB, no limit (MAX_MEMORY_USAGE is off)`
          : `rss ${rssMiB.toFixed(1)} MiB, limit ${memory.limitMiB} MiB (MAX_MEMORY_USAGE)`,
    },
  ]);
}

/** How long `loop` may go without progress before it counts as stalled, ms. */
export function stallAfterMs(loop: LoopFacts, thresholds: HealthThresholds): number {
  return Math.max(thresholds.minStallMs, thresholds.stallIntervals * loop.intervalMs);
}

function loopCheck(
  name: string,
  loop: LoopFacts,
  now: number,
  thresholds: HealthThresholds,
  words: { idle: string; progress: string },
): Check {
  if (!loop.active) return { name, ok: true, detail: words.idle };
  const limit = stallAfterMs(loop, thresholds);
  if (loop.lastProgressAt === null)
    return { name, ok: false, detail: `active but no ${words.progress} yet` };
  const age = Math.max(0, now - loop.lastProgressAt);
  const bound = `(stalled after ${seconds(limit)})`;
  return age <= limit
    ? { name, ok: true, detail: `last ${words.progress} ${seconds(age)} ago ${bound}` }
    : { name, ok: false, detail: `no ${words.progress} for ${seconds(age)} ${bound}` };
}

function verdict(checks: Check[]): Verdict {
  return { ok: checks.every((c) => c.ok), checks };
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))} s`;
}
