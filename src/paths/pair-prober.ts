// A node's own probes of the paths from it: each round a rotating sample of the other nodes
// (pair-schedule.ts), each probe's outcome kept in that path's window (path-window.ts), and the
// path's state judged: failed (its latest probes all failed), degraded (degradation.ts), or ok.
// What changes is told as it changes, for the coordinator to localize (localize.ts).
import type { Clock } from '../core/clock.js';
import type { PeerTransport } from '../core/transport.js';
import { judgeDegradation, newDegradation, type DegradationRecord } from './degradation.js';
import type { PathDegradationSettings } from './defaults.js';
import { pairTargets } from './pair-schedule.js';
import { PathWindow, type WindowStats } from './path-window.js';

/** A path's state as this node judges it. */
export type PathCondition = 'ok' | 'failed' | 'degraded';

export interface PathReport {
  /** The peer at the end of the path from this node. */
  to: string;
  state: PathCondition;
  /** Since when it has been in this state. */
  sinceMs: number;
  /** Its window's figures at the last probe. */
  stats: WindowStats;
}

export interface PairProberOptions {
  /** This node's address. */
  self: string;
  transport: Pick<PeerTransport, 'ping'>;
  clock: Clock;
  /** Peers probed a round (the ring is covered in ceil((N − 1) / perRound) rounds). */
  perRound: number;
  degradation: PathDegradationSettings;
  /** This many probes failing in a row make a path failed; one answer makes it work again. */
  failAfter: number;
  /** A path changed state. Must not block. */
  onChange?: (report: PathReport) => void;
}

interface PathRecord {
  window: PathWindow;
  degradation: DegradationRecord;
  /** Probes failed in a row, up to now. */
  failing: number;
  report: PathReport | null;
}

export class PairProber {
  private readonly paths = new Map<string, PathRecord>();
  private nodes: readonly string[] = [];
  private round = 0;

  constructor(private readonly o: PairProberOptions) {}

  /** Every node, in an order every node agrees on (rank); paths to nodes gone are forgotten. */
  setNodes(nodes: readonly string[]): void {
    this.nodes = [...nodes];
    const listed = new Set(nodes);
    for (const to of [...this.paths.keys()]) if (!listed.has(to)) this.paths.delete(to);
  }

  /** Probes this round's sample; resolves once every probe has answered or failed. */
  async probeRound(signal?: AbortSignal): Promise<void> {
    const targets = pairTargets(this.o.self, this.nodes, this.round++, this.o.perRound);
    await Promise.all(targets.map((to) => this.probe(to, signal)));
  }

  /** Every path probed so far, and its state. */
  reports(): PathReport[] {
    return [...this.paths.values()].flatMap((p) => (p.report ? [p.report] : []));
  }

  private async probe(to: string, signal?: AbortSignal): Promise<void> {
    const { clock, transport } = this.o;
    const atMs = clock.now();
    const outcome = await transport.ping(to, signal);
    // Stopped meanwhile, or the node left the list: the outcome says nothing of the path now.
    if (signal?.aborted || !this.nodes.includes(to)) return;
    const path = this.pathTo(to, atMs);
    path.window.record({ atMs, ok: outcome.ok, latencyMs: outcome.latencyMs });
    path.failing = outcome.ok ? 0 : path.failing + 1;
    const now = clock.now();
    const stats = path.window.stats(now);
    path.degradation = judgeDegradation(path.degradation, stats, now, this.o.degradation).record;
    const state: PathCondition =
      path.failing >= this.o.failAfter
        ? 'failed'
        : path.degradation.health === 'degraded'
          ? 'degraded'
          : 'ok';
    const before = path.report;
    const changed = before?.state !== state;
    path.report = { to, state, sinceMs: changed ? now : (before?.sinceMs ?? now), stats };
    if (changed) this.o.onChange?.(path.report);
  }

  private pathTo(to: string, now: number): PathRecord {
    let path = this.paths.get(to);
    if (!path) {
      path = {
        window: new PathWindow(this.o.degradation),
        degradation: newDegradation(now),
        failing: 0,
        report: null,
      };
      this.paths.set(to, path);
    }
    return path;
  }
}
