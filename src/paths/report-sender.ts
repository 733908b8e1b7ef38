// What a node tells its coordinator of its own paths (POST /paths/report): the paths whose state
// changed since its last report, not the whole list, and every path ("full") when the coordinator
// has none of them: a new coordinator, or one that missed a report (it says `resync`). A report
// with nothing in it still goes now and then, so the coordinator knows the paths it holds from
// this node are current. Pure: the caller sends, and says how it went.
import type { NodeRef } from '../wire/node-ref.js';
import type { PathReport, PathReportReply, ReportedPath } from '../wire/peer-messages.js';
import type { ProbedPath } from './pair-prober.js';

/** At most this many paths a report (schemas/path-report): the rest go in the next ones. */
export const MAX_REPORTED_PATHS = 1_000;

/** The coordinator a node reports to: its address, and the term. */
export interface ReportTarget {
  address: string;
  epoch: number;
}

/** A path as a report carries it. */
export function reportedPath(p: ProbedPath): ReportedPath {
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms * 10) / 10);
  return {
    to: p.to,
    state: p.state,
    since: Math.round(p.sinceMs),
    samples: p.stats.samples,
    loss_ratio: Math.round(p.stats.lossRatio * 1_000) / 1_000,
    p50_ms: round(p.stats.p50Ms),
    p99_ms: round(p.stats.p99Ms),
    ...(p.mtuSize !== undefined ? { mtu_size: p.mtuSize } : {}),
  };
}

export class ReportSender {
  /** Paths changed since the last report the coordinator took, by target. */
  private readonly changed = new Map<string, ProbedPath>();
  private target: ReportTarget | null = null;
  /** The next report replaces what the coordinator holds. */
  private full = true;
  private seq = 0;
  private lastSentMs = -Infinity;
  /** The report on its way, if one is: what it carried, to be sent again if it fails. */
  private inFlight: { report: PathReport; paths: ProbedPath[] } | null = null;

  constructor(
    private readonly o: {
      self: NodeRef;
      /** Every path known now (for a full report). */
      current: () => readonly ProbedPath[];
      /** A report with nothing new goes at least this often. */
      refreshMs: number;
    },
  ) {}

  /** A path changed state (the prober's onChange). */
  changedPath(path: ProbedPath): void {
    this.changed.set(path.to, path);
  }

  /** The coordinator to report to (null: none, or this node: nothing goes out). */
  reportTo(target: ReportTarget | null): void {
    const before = this.target;
    if (before?.address === target?.address && before?.epoch === target?.epoch) return;
    this.target = target;
    // Another term: its coordinator holds nothing of this node's paths yet.
    this.full = true;
    this.inFlight = null;
  }

  /**
   * The report to send now, and to whom, or null: nothing changed lately, one is on its way, or
   * there is no coordinator to report to.
   */
  next(now: number): { to: string; report: PathReport } | null {
    const target = this.target;
    if (!target || this.inFlight) return null;
    if (!this.full && this.changed.size === 0 && now - this.lastSentMs < this.o.refreshMs) {
      return null;
    }
    let paths: ProbedPath[];
    if (this.full) {
      // The paths as they are now; those changed meanwhile are in it.
      this.changed.clear();
      paths = [...this.o.current()];
    } else {
      paths = [...this.changed.values()];
      this.changed.clear();
    }
    // Over the bound: the rest stay changed, for the next reports.
    for (const rest of paths.splice(MAX_REPORTED_PATHS)) this.changed.set(rest.to, rest);
    const report: PathReport = {
      from: this.o.self,
      epoch: target.epoch,
      seq: this.seq++,
      full: this.full,
      paths: paths.map(reportedPath),
    };
    this.full = false;
    this.lastSentMs = now;
    this.inFlight = { report, paths };
    return { to: target.address, report };
  }

  /** How the report went: its reply, or null when it failed (no answer). */
  settled(report: PathReport, reply: PathReportReply | null): void {
    const flight = this.inFlight;
    if (flight?.report !== report) return; // from an earlier term
    this.inFlight = null;
    if (reply?.accepted && !reply.resync) return;
    if (reply?.resync) {
      this.full = true;
      return;
    }
    // Not taken (no answer, or the receiver does not lead that term): what it carried is still to
    // tell, but for paths that changed again since; the seq gap makes the coordinator ask for all,
    // should the report have reached it after all.
    for (const p of flight.paths) if (!this.changed.has(p.to)) this.changed.set(p.to, p);
  }
}
