// Gathers the facts readiness and liveness are judged on, from the node's parts and the process.
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import {
  DEFAULT_THRESHOLDS,
  liveness,
  readiness,
  type HealthThresholds,
  type Verdict,
} from './checks.js';
import { EventLoopLag, LAG_DEFAULTS, type EventLoopLagOptions } from './event-loop-lag.js';

/** The election driver's part (ElectionDriver satisfies it). */
export interface ElectionProgress {
  readonly started: boolean;
  readonly lastTickAt: number | null;
}

/** The prober's part (ProbeRounds satisfies it): it runs only while this node leads. */
export interface ProberProgress {
  readonly running: boolean;
  readonly lastRoundAt: number | null;
}

export interface HealthManagerOptions {
  /** The clock the election and the prober stamp their progress with. */
  clock: Clock;
  logger: Logger;
  selfAddress: string;
  discoverySynced(): boolean;
  /** Whether discovery lists this node's own address (with static discovery: once loaded). */
  selfListed(): boolean;
  /** Why this node's peers all refuse its signed messages, or null (default: never). */
  unauthenticated?(): string | null;
  election: ElectionProgress;
  prober: ProberProgress;
  /** The bound on the election driver's tick interval, ms (it ticks every ≤100 ms). */
  electionTickMs?: number;
  /** ELECTION_COOLDOWN_PERIOD: the interval of probe rounds, ms. */
  roundIntervalMs: number;
  /** MAX_MEMORY_USAGE in MiB; null: no memory check. */
  maxMemoryMiB: number | null;
  /** Resident set size, bytes. */
  rssBytes?: () => number;
  thresholds?: HealthThresholds;
  eventLoop?: EventLoopLagOptions;
  /**
   * A lag meter the node already runs (the prober's overload guard's), read over the last
   * `eventLoop.windowMs` (default 10 s) rather than a second timer; its owner starts and stops it.
   */
  lag?: EventLoopLag;
}

/** What the health routes call. */
export interface HealthReport {
  readiness(): Verdict;
  liveness(): Verdict;
}

export class HealthManager implements HealthReport {
  private listening = false;
  private stopping = false;
  private readonly lag: EventLoopLag;
  /** Whether this manager made `lag` (and so starts and stops it). */
  private readonly ownsLag: boolean;
  /** The window liveness reads the lag over, ms. */
  private readonly lagWindowMs: number;
  /** The failing checks last reported by each endpoint, to log changes rather than every probe. */
  private readonly lastFailing = { readiness: '', liveness: '' };

  constructor(private readonly opts: HealthManagerOptions) {
    this.ownsLag = !opts.lag;
    this.lag = opts.lag ?? new EventLoopLag(opts.eventLoop);
    this.lagWindowMs = opts.eventLoop?.windowMs ?? LAG_DEFAULTS.windowMs;
  }

  /** Starts measuring event-loop lag (its timer is unref'd). */
  start(): void {
    if (this.ownsLag) this.lag.start();
  }

  /** Clears the timers; safe to call twice. */
  stop(): void {
    if (this.ownsLag) this.lag.stop();
  }

  /** The HTTP server is bound. */
  markListening(): void {
    this.listening = true;
  }

  /** Shutdown has begun: not ready from now on, whatever else holds. */
  markStopping(): void {
    this.stopping = true;
  }

  readiness(): Verdict {
    const { opts } = this;
    const verdict = readiness({
      discoverySynced: opts.discoverySynced(),
      selfAddress: opts.selfAddress,
      selfListed: opts.selfListed(),
      listening: this.listening,
      stopping: this.stopping,
      unauthenticated: opts.unauthenticated?.() ?? null,
    });
    this.logChange('readiness', verdict);
    return verdict;
  }

  liveness(): Verdict {
    const { opts } = this;
    const verdict = liveness(
      {
        election: {
          active: opts.election.started,
          lastProgressAt: opts.election.lastTickAt,
          intervalMs: opts.electionTickMs ?? 100,
        },
        prober: {
          active: opts.prober.running,
          lastProgressAt: opts.prober.lastRoundAt,
          intervalMs: opts.roundIntervalMs,
        },
        eventLoop: {
          maxLagMs: this.lag.maxLagWithinMs(this.lagWindowMs),
          windowMs: this.lagWindowMs,
        },
        memory: {
          rssBytes: (opts.rssBytes ?? (() => process.memoryUsage.rss()))(),
          limitMiB: opts.maxMemoryMiB,
        },
      },
      opts.clock.now(),
      opts.thresholds ?? DEFAULT_THRESHOLDS,
    );
    this.logChange('liveness', verdict);
    return verdict;
  }

  private logChange(kind: 'readiness' | 'liveness', verdict: Verdict): void {
    const failing = verdict.checks.filter((c) => !c.ok);
    const key = failing.map((c) => c.name).join(',');
    if (key === this.lastFailing[kind]) return;
    this.lastFailing[kind] = key;
    const fields = { event: `${kind}-changed`, failing: failing.map((c) => c.name) };
    if (failing.length === 0) this.opts.logger.info(fields, `${kind}: every check passes`);
    else
      this.opts.logger[kind === 'liveness' ? 'warn' : 'info'](
        fields,
        `${kind} failing: ${failing.map((c) => `${c.name} (${c.detail})`).join('; ')}`,
      );
  }
}
