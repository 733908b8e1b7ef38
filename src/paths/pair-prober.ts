// A node's own probes of the paths from it: each round a rotating sample of the other nodes
// (pair-schedule.ts), each probe's outcome kept in that path's window (path-window.ts), and the
// path's state judged: failed (its latest probes all failed), mtu (small probes pass, full-size
// ones keep failing), degraded (degradation.ts), or ok. What changes is told as it changes, for the
// coordinator to localize (localize.ts).
import type { Clock } from '../core/clock.js';
import { evidenceOf } from '../core/evidence.js';
import type { Outcome, PathTransport, PeerTransport } from '../core/transport.js';
import { judgeDegradation, newDegradation, type DegradationRecord } from './degradation.js';
import { scaledDegradation, type PathDegradationSettings } from './defaults.js';
import { pairTargets, roundsToCover } from './pair-schedule.js';
import { NO_SAMPLES, PathWindow, type WindowStats } from './path-window.js';

/** A path's state as this node judges it; `unknown`: not probed lately enough to say (forgotten). */
export type PathCondition = 'ok' | 'failed' | 'degraded' | 'mtu' | 'unknown';

export interface ProbedPath {
  /** The peer at the end of the path from this node. */
  to: string;
  state: PathCondition;
  /** Since when it has been in this state. */
  sinceMs: number;
  /** Its window's figures at the last probe. */
  stats: WindowStats;
  /** mtu: the full-size probe's bytes of payload, which fail. */
  mtuSize?: number;
}

export interface PairProberOptions {
  /** This node's address. */
  self: string;
  transport: Pick<PeerTransport, 'ping'> & Partial<Pick<PathTransport, 'echo'>>;
  clock: Clock;
  /** Peers probed a round (the ring is covered in ceil((N − 1) / perRound) rounds). */
  perRound: number;
  /** How often rounds start (ms): with the nodes' number, how often one path is probed. */
  roundIntervalMs: number;
  /** As set; in a mesh whose paths are probed too seldom to fill a window, scaled (defaults.ts). */
  degradation: PathDegradationSettings;
  /** This many probes failing in a row make a path failed; one answer makes it work again. */
  failAfter: number;
  /**
   * MTU_PROBE_SIZE: a full-size probe of this many bytes each way goes with small ones that pass
   * (null: none; how often: fullSizeEveryRounds). This many failing in a row, while small probes
   * pass with little loss, make it `mtu`.
   */
  mtuProbeSize?: number | null;
  /**
   * A path's full-size probe goes with one of its small ones in this many rounds (1 or unset: with
   * every one), counted in the path's own probes (a path comes round once a cover of the ring:
   * one in ceil(this / rounds a cover) of them), not by the clock, which may step; and with each
   * while its full-size probes fail (until decided, and while `mtu`, to see it mend): an MTU
   * seldom changes, and the full-size probe is half of a path's requests and most of its bytes.
   */
  fullSizeEveryRounds?: number;
  /** Whether `to` answers full-size probes (a node of an older protocol does not). Default: yes. */
  echoes?: (to: string) => boolean;
  /**
   * A path changed state (`unknown`: forgotten), or its figures moved far enough to tell
   * (`figuresMoved`). Must not block.
   */
  onChange?: (path: ProbedPath) => void;
}

interface PathRecord {
  window: PathWindow;
  degradation: DegradationRecord;
  /** Probes failed in a row, up to now. */
  failing: number;
  /** When the probes failing in a row began failing. */
  failingSinceMs: number;
  /** Full-size probes failed in a row, up to now. */
  mtuFailing: number;
  /** Small probes that passed without a full-size one since its last (null: none sent yet). */
  sinceFull: number | null;
  lastProbedMs: number;
  report: ProbedPath | null;
  /** The figures last told (onChange). */
  told: WindowStats | null;
}

export class PairProber {
  private readonly paths = new Map<string, PathRecord>();
  private nodes: readonly string[] = [];
  private listed = new Set<string>();
  private round = 0;
  /** Where the next round's re-probes of failed paths start. */
  private failedTurn = 0;
  /** The degradation settings for the mesh's size now (setNodes). */
  private degradation: PathDegradationSettings;
  /** One of a path's passing small probes in this many takes a full-size one (setNodes). */
  private fullSizeEveryProbes = 1;

  constructor(private readonly o: PairProberOptions) {
    this.degradation = o.degradation;
  }

  /**
   * Every node, in an order every node agrees on (rank); paths to nodes gone are forgotten. The
   * array is kept, not copied: the caller passes a new one for a change, and the same one, which
   * costs nothing here, while nothing changed.
   */
  setNodes(nodes: readonly string[]): void {
    if (nodes === this.nodes) return;
    this.nodes = nodes;
    this.listed = new Set(nodes);
    for (const to of [...this.paths.keys()]) {
      if (!this.listed.has(to)) this.forget(to);
    }
    const cover = roundsToCover(this.listed.size, this.o.perRound);
    this.fullSizeEveryProbes = Math.max(1, Math.ceil((this.o.fullSizeEveryRounds ?? 1) / cover));
    const scaled = scaledDegradation(this.o.degradation, cover * this.o.roundIntervalMs);
    if (scaled.pathWindowMs !== this.degradation.pathWindowMs) {
      for (const path of this.paths.values()) path.window.pathWindowMs = scaled.pathWindowMs;
    }
    this.degradation = scaled;
  }

  /** The degradation settings in force for the mesh's size now. */
  get settings(): PathDegradationSettings {
    return this.degradation;
  }

  /**
   * Probes this round's sample, and out of their turn (at most as many again) each path whose last
   * probe failed short of a verdict, then, taking turns, the failed ones: in a large mesh a path
   * comes round once a cover, and a broken one would otherwise take `failAfter` covers to be called
   * failed, and a node back up as long to be reached again on every path. Resolves once every
   * probe has answered or failed.
   */
  async probeRound(signal?: AbortSignal): Promise<void> {
    const targets = pairTargets(this.o.self, this.nodes, this.round++, this.o.perRound);
    const scheduled = new Set(targets);
    const room = () => targets.length < 2 * this.o.perRound;
    const failed: string[] = [];
    for (const [to, path] of this.paths) {
      if (!room()) break;
      if (scheduled.has(to)) continue;
      if (this.undecided(path)) targets.push(to);
      else if (path.failing >= this.o.failAfter) failed.push(to);
    }
    // The failed ones this round: a turn of them, from where the last round's left off.
    const start = failed.length > 0 ? this.failedTurn % failed.length : 0;
    for (let i = 0; i < failed.length && room(); i++) {
      targets.push(failed[(start + i) % failed.length]!);
      this.failedTurn++;
    }
    await Promise.all(targets.map((to) => this.probe(to, signal)));
  }

  /** Its last small or full-size probe failed, and not yet often enough in a row to decide. */
  private undecided(path: PathRecord): boolean {
    const { failAfter } = this.o;
    return (
      (path.failing > 0 && path.failing < failAfter) ||
      (path.mtuFailing > 0 && path.mtuFailing < failAfter)
    );
  }

  /** Every path probed and not forgotten, and its state. */
  reports(): ProbedPath[] {
    const reports: ProbedPath[] = [];
    for (const p of this.paths.values()) if (p.report) reports.push(p.report);
    return reports;
  }

  /** How many paths are known now (bounded by the nodes listed). */
  get size(): number {
    return this.paths.size;
  }

  /** Forgets the paths not probed for `maxAgeMs`: what they said is too old to count. */
  expire(maxAgeMs: number): void {
    const now = this.o.clock.now();
    for (const [to, path] of this.paths) {
      if (now - path.lastProbedMs > maxAgeMs) this.forget(to);
    }
  }

  private forget(to: string): void {
    const path = this.paths.get(to);
    this.paths.delete(to);
    if (path?.report) {
      this.o.onChange?.({ to, state: 'unknown', sinceMs: this.o.clock.now(), stats: NO_SAMPLES });
    }
  }

  private async probe(to: string, signal?: AbortSignal): Promise<void> {
    const { clock, transport } = this.o;
    const atMs = clock.now();
    const size = this.o.mtuProbeSize ?? null;
    const outcome = await transport.ping(to, signal);
    // The full-size probe after the small one, on the connection it leaves open: sent together,
    // one of them would open a connection of its own each round, and under loss a lost SYN costs
    // a second. Only a path that passes small probes can tell anything by a full-size one.
    const sendFull =
      outcome.ok &&
      size !== null &&
      transport.echo &&
      !signal?.aborted &&
      (this.o.echoes?.(to) ?? true) &&
      this.fullSizeDue(this.paths.get(to));
    const full = sendFull ? await transport.echo!(to, size, signal) : null;
    // Stopped meanwhile, or the node left the list: the outcome says nothing of the path now.
    if (signal?.aborted || !this.listed.has(to)) return;
    const path = this.pathTo(to, atMs);
    if (outcome.ok) path.sinceFull = sendFull ? 0 : (path.sinceFull ?? 0) + 1;
    path.lastProbedMs = atMs;
    if (outcome.ok && path.failing >= this.o.failAfter) {
      // Back from failed: the outage's failures were told as such, and are no loss to hold
      // against the path from now on (it would be called degraded for a window after). What came
      // before them still counts: loss that fails a few probes in a row now and then is loss.
      path.window.dropSince(path.failingSinceMs);
      if (path.degradation.health === 'healthy') {
        path.degradation = { ...path.degradation, turningSinceMs: null };
      }
    }
    if (!outcome.ok && path.failing === 0) path.failingSinceMs = atMs;
    // A refusal came back from the peer's host: the path carried it, so it is no loss of the
    // path's (a pod restarting refuses a probe or two); it still counts towards failed, since the
    // peer cannot be reached there (a policy that rejects is a broken path too).
    const refusal = !outcome.ok && evidenceOf(outcome.reason) === 'refusal';
    if (!refusal) {
      path.window.record({
        atMs,
        ok: outcome.ok,
        latencyMs: outcome.ok ? outcome.latencyMs : null,
      });
    }
    path.failing = outcome.ok ? 0 : path.failing + 1;
    if (full) path.mtuFailing = fullSizeFailed(full) ? path.mtuFailing + 1 : 0;
    const now = clock.now();
    const stats = path.window.stats(now);
    path.degradation = judgeDegradation(path.degradation, stats, now, this.degradation).record;
    const state = this.stateOf(path, stats);
    const before = path.report;
    const changed = before?.state !== state;
    path.report = {
      to,
      state,
      sinceMs: changed ? now : (before?.sinceMs ?? now),
      stats,
      ...(state === 'mtu' && size !== null ? { mtuSize: size } : {}),
    };
    // Compared with the figures last told, not with every small step since.
    if (changed || !path.told || figuresMoved(path.told, stats)) {
      path.told = stats;
      this.o.onChange?.(path.report);
    }
  }

  /** Whether a path's small probe that passed takes a full-size one along (fullSizeEveryRounds). */
  private fullSizeDue(path: PathRecord | undefined): boolean {
    if (!path || path.sinceFull === null || path.mtuFailing > 0) return true;
    return path.sinceFull + 1 >= this.fullSizeEveryProbes;
  }

  private stateOf(path: PathRecord, stats: WindowStats): PathCondition {
    if (path.failing >= this.o.failAfter) return 'failed';
    // Full-size probes lost as often as small ones are loss, not an MTU: only a path that passes
    // small probes well and keeps failing full-size ones drops full-size packets.
    if (
      path.mtuFailing >= this.o.failAfter &&
      path.failing === 0 &&
      stats.lossRatio < this.degradation.degradedLossRatio
    ) {
      return 'mtu';
    }
    return path.degradation.health === 'degraded' ? 'degraded' : 'ok';
  }

  private pathTo(to: string, now: number): PathRecord {
    let path = this.paths.get(to);
    if (!path) {
      path = {
        window: new PathWindow(this.degradation),
        degradation: newDegradation(now),
        failing: 0,
        failingSinceMs: now,
        mtuFailing: 0,
        sinceFull: null,
        lastProbedMs: now,
        report: null,
        told: null,
      };
      this.paths.set(to, path);
    }
    return path;
  }
}

/**
 * A full-size probe that did not get through: timed out, reset or cut short. One refused or
 * answered with an error status got through the network (a peer of an older protocol has no
 * echo: 404), so it says nothing of the path's packet size.
 */
function fullSizeFailed(outcome: Outcome<void>): boolean {
  if (outcome.ok) return false;
  return (
    outcome.reason !== 'refused' && outcome.reason !== 'http-status' && outcome.reason !== 'aborted'
  );
}

/**
 * Whether a path's figures moved far enough from those last told to tell again: its median
 * latency halved or doubled (and by a millisecond at least: a loopback's 0.2 ms against 0.4 ms is
 * noise), or its loss ratio by 5 points. What the status page's matrix shows stays near the truth
 * without a report for every probe.
 */
export function figuresMoved(told: WindowStats, now: WindowStats): boolean {
  if (Math.abs(now.lossRatio - told.lossRatio) >= 0.05) return true;
  const [a, b] = [told.p50Ms, now.p50Ms];
  if (a === null || b === null) return a !== b;
  return Math.abs(a - b) >= 1 && (b >= 2 * a || a >= 2 * b);
}
