// What a node tells its coordinator of its own paths (POST /paths/report): the paths whose state
// changed since its last report, not the whole list, and every path ("full") when the coordinator
// has none of them: a new coordinator, or one that missed a report (it says `resync`). A report
// with nothing in it still goes now and then, so the coordinator knows the paths it holds from
// this node are current. Which paths are told at all is the caller's choice (`keeps`: in a large
// mesh, a sample and whatever is not ok), and how often reports may go (`pace`). Pure: the caller
// sends, and says how it went.
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
  /** Paths to tell since the last report the coordinator took, by target, as they are to be told. */
  private readonly changed = new Map<string, ProbedPath>();
  /** The targets of the paths the coordinator holds from this node (as far as this node knows). */
  private readonly held = new Set<string>();
  private target: ReportTarget | null = null;
  /** The next report replaces what the coordinator holds. */
  private full = true;
  private seq = 0;
  private lastSentMs = -Infinity;
  /** No report goes before this (a new coordinator's first are spread: `pace`). */
  private notBeforeMs = -Infinity;
  private gapMs = 0;
  private spreadMs = 0;
  private refreshMs: number;
  /** The report on its way, if one is: what it carried, to be sent again if it fails. */
  private inFlight: { report: PathReport; paths: ProbedPath[] } | null = null;

  constructor(
    private readonly o: {
      self: NodeRef;
      /** Every path known now (for a full report). */
      current: () => readonly ProbedPath[];
      /** A report with nothing new goes at least this often (until `pace` says otherwise). */
      refreshMs: number;
      /** Whether a path is told (default: all). One not told is, once, `unknown` if it was held. */
      keeps?: (path: ProbedPath) => boolean;
      /** In [0, 1): spreads a new coordinator's first reports from every node (`pace`). */
      random?: () => number;
    },
  ) {
    this.refreshMs = o.refreshMs;
  }

  /**
   * How often reports may go: at most one each `gapMs`, and one at least each `refreshMs` (the
   * coordinator's intake is bounded, so a large mesh spaces its nodes' reports); a new
   * coordinator's first, at random within `spreadMs`.
   */
  pace({ gapMs, refreshMs, spreadMs }: { gapMs: number; refreshMs: number; spreadMs: number }) {
    this.gapMs = gapMs;
    this.refreshMs = refreshMs;
    this.spreadMs = spreadMs;
  }

  /** A path changed, or is to be judged again for `keeps` (the sample moved). */
  changedPath(path: ProbedPath): void {
    if (this.keeps(path)) this.changed.set(path.to, path);
    else if (this.held.has(path.to) || this.changed.has(path.to)) {
      this.changed.set(path.to, { ...path, state: 'unknown' });
    }
  }

  /** The coordinator to report to (null: none, or this node: nothing goes out). */
  reportTo(target: ReportTarget | null, now = 0): void {
    const before = this.target;
    if (before?.address === target?.address && before?.epoch === target?.epoch) return;
    this.target = target;
    // Another term: its coordinator holds nothing of this node's paths yet.
    this.full = true;
    this.inFlight = null;
    this.notBeforeMs = now + Math.floor((this.o.random ?? Math.random)() * this.spreadMs);
  }

  /**
   * The report to send now, and to whom, or null: nothing changed lately, one is on its way, too
   * soon after the last, or there is no coordinator to report to.
   */
  next(now: number): { to: string; report: PathReport } | null {
    const target = this.target;
    if (!target || this.inFlight || now < this.notBeforeMs) return null;
    if (now - this.lastSentMs < this.gapMs) return null;
    if (!this.full && this.changed.size === 0 && now - this.lastSentMs < this.refreshMs) {
      return null;
    }
    const { report, paths } = this.compose(target, now);
    this.inFlight = { report, paths };
    return { to: target.address, report };
  }

  /**
   * A full report for the coordinator that asked for one (its reports from this node stopped
   * coming: POST /paths/pull), taken as sent and accepted: the reports after it change it. A
   * report on its way is superseded: what it carried is in this one.
   */
  pulled(target: ReportTarget, now: number): PathReport {
    this.reportTo(target, now);
    this.inFlight = null;
    this.full = true;
    return this.compose(target, now).report;
  }

  /** The next report: every path (full), or what changed; marks its paths as held. */
  private compose(target: ReportTarget, now: number): { report: PathReport; paths: ProbedPath[] } {
    let paths: ProbedPath[];
    if (this.full) {
      // The paths as they are now; those changed meanwhile are in it.
      this.changed.clear();
      this.held.clear();
      paths = this.o.current().filter((p) => this.keeps(p));
    } else {
      paths = [...this.changed.values()];
      this.changed.clear();
    }
    // Over the bound: the rest stay changed, for the next reports.
    for (const rest of paths.splice(MAX_REPORTED_PATHS)) this.changed.set(rest.to, rest);
    for (const p of paths) {
      if (p.state === 'unknown') this.held.delete(p.to);
      else this.held.add(p.to);
    }
    const report: PathReport = {
      from: this.o.self,
      epoch: target.epoch,
      seq: this.seq++,
      full: this.full,
      paths: paths.map(reportedPath),
    };
    this.full = false;
    this.lastSentMs = now;
    return { report, paths };
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

  private keeps(path: ProbedPath): boolean {
    return path.state !== 'unknown' && (this.o.keeps?.(path) ?? true);
  }
}
