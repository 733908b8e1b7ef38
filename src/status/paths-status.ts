// Builds the `paths` section of GET /status: on the coordinator every node's paths from its path
// book, nodes by nodes up to MATRIX_MAX_NODES and a summary per node beyond (a matrix of N² cells
// would be megabytes every poll), with the findings of its last localization; on any other node
// its own paths. Pure: O(nodes + paths held) a call.
import { StatsSum } from '../paths/merge-stats.js';
import type { ProbedPath } from '../paths/pair-prober.js';
import { roundsToCover } from '../paths/pair-schedule.js';
import { statsOf } from '../paths/path-book.js';
import type { Finding } from '../paths/path-state.js';
import type { WindowStats } from '../paths/path-window.js';
import { compareRank, type NodeRef } from '../wire/node-ref.js';
import type { ReportedPath } from '../wire/peer-messages.js';
import type {
  DirectionSummary,
  KnownPathState,
  MatrixRow,
  OwnPath,
  PathCounts,
  PathFinding,
  PathsNode,
  PathsSettings,
  PathsStatus,
} from './paths-types.js';

/** A mesh of at most this many nodes gets the matrix; a larger one the summary. */
export const MATRIX_MAX_NODES = 100;
/** A follower lists at most this many of its own paths, the worst first. */
export const OWN_PATHS_SHOWN = 100;
/** At most this many findings are listed (the most serious kinds come first). */
export const FINDINGS_SHOWN = 100;

export interface PathsFacts {
  /** PAIR_PROBES above 0. */
  enabled: boolean;
  role: 'follower' | 'candidate' | 'coordinator';
  coordinator: NodeRef | null;
  settings: Omit<PathsSettings, 'rounds_to_cover' | 'peers_per_round'>;
  /** Every node taking part, this one included, named; any order (shown in rank order). */
  nodes: readonly PathsNode[];
  /** The coordinator's path book: every path held, with its source. Read only while it leads. */
  book: Iterable<{ from: string; path: ReportedPath }>;
  /** The findings of the coordinator's last localization. */
  findings: readonly Finding[];
  /** This node's own paths. */
  own: readonly ProbedPath[];
}

/** A matrix cell's state, one character (paths-types.ts MatrixRow). */
const CODE: Record<KnownPathState, string> = { ok: 'o', degraded: 'd', mtu: 'm', failed: 'f' };
/** The worst first. */
const SEVERITY: Record<KnownPathState, number> = { failed: 0, mtu: 1, degraded: 2, ok: 3 };

/** Two significant digits: what a reader compares (a window's few samples say no more), in a few bytes a cell. */
const ms = (v: number | null) => (v === null ? null : Number(v.toPrecision(2)));
const ratio = (v: number) => Math.round(v * 1000) / 1000;
const known = (state: KnownPathState | 'unknown'): state is KnownPathState => state !== 'unknown';
const noCounts = (): PathCounts => ({ ok: 0, degraded: 0, mtu: 0, failed: 0 });

export function pathsStatus(f: PathsFacts): PathsStatus {
  if (!f.enabled) return { view: 'off' };
  const nodes = [...f.nodes].sort((a, b) => compareRank(a.address, b.address));
  const settings = {
    ...f.settings,
    // As pair-schedule.ts samples them: never more than the others there are.
    peers_per_round: Math.min(f.settings.probes_per_round, Math.max(0, nodes.length - 1)),
    rounds_to_cover: roundsToCover(nodes.length, f.settings.probes_per_round),
  };
  if (f.role !== 'coordinator') {
    const { counts, own } = ownPaths(f.own);
    return { view: 'own', settings, counts, coordinator: f.coordinator, own };
  }
  const findings = f.findings.slice(0, FINDINGS_SHOWN).map(findingView);
  const localized = { settings, nodes, findings, findings_total: f.findings.length };
  const at = new Map(nodes.map((n, i) => [n.address, i]));
  if (nodes.length <= MATRIX_MAX_NODES) {
    const { counts, matrix } = matrixOf(nodes.length, at, f.book);
    return { view: 'matrix', ...localized, counts, matrix };
  }
  const { counts, summary } = summaryOf(nodes.length, at, f.book);
  return { view: 'summary', ...localized, counts, summary };
}

/** The paths of the book between two of the nodes (at: a node's place), each with its places. */
function* between(
  at: ReadonlyMap<string, number>,
  book: PathsFacts['book'],
): Generator<{ from: number; to: number; state: KnownPathState; path: ReportedPath }> {
  for (const { from, path } of book) {
    const f = at.get(from);
    const t = at.get(path.to);
    const state = path.state;
    if (f === undefined || t === undefined || f === t || !known(state)) continue;
    yield { from: f, to: t, state, path };
  }
}

function matrixOf(
  size: number,
  at: ReadonlyMap<string, number>,
  book: PathsFacts['book'],
): { counts: PathCounts; matrix: MatrixRow[] } {
  const counts = noCounts();
  const rows = Array.from({ length: size }, () => ({
    states: new Array<string>(size).fill('-'),
    p50_ms: new Array<number | null>(size).fill(null),
    p99_ms: new Array<number | null>(size).fill(null),
    loss_ratio: new Array<number | null>(size).fill(null),
  }));
  for (const { from, to, state, path } of between(at, book)) {
    const row = rows[from]!;
    row.states[to] = CODE[state];
    row.p50_ms[to] = ms(path.p50_ms);
    row.p99_ms[to] = ms(path.p99_ms);
    row.loss_ratio[to] = ratio(path.loss_ratio);
    counts[state]++;
  }
  return { counts, matrix: rows.map((r) => ({ ...r, states: r.states.join('') })) };
}

/** A node's paths in one direction, summed as they come. */
class Direction {
  private readonly counts = noCounts();
  private readonly figures = new StatsSum();

  add(state: KnownPathState, stats: WindowStats): void {
    this.counts[state]++;
    this.figures.add(stats);
  }

  get summary(): DirectionSummary {
    const { ok, failed, degraded, mtu } = this.counts;
    const s = this.figures.stats;
    return {
      known: ok + failed + degraded + mtu,
      failed,
      degraded,
      mtu,
      loss_ratio: s.samples === 0 ? null : ratio(s.lossRatio),
      p50_ms: ms(s.p50Ms),
      p99_ms: ms(s.p99Ms),
    };
  }
}

function summaryOf(
  size: number,
  at: ReadonlyMap<string, number>,
  book: PathsFacts['book'],
): { counts: PathCounts; summary: { out: DirectionSummary; in: DirectionSummary }[] } {
  const counts = noCounts();
  const out = Array.from({ length: size }, () => new Direction());
  const into = Array.from({ length: size }, () => new Direction());
  for (const { from, to, state, path } of between(at, book)) {
    const stats = statsOf(path);
    out[from]!.add(state, stats);
    into[to]!.add(state, stats);
    counts[state]++;
  }
  return { counts, summary: out.map((o, i) => ({ out: o.summary, in: into[i]!.summary })) };
}

function ownPaths(paths: readonly ProbedPath[]): { counts: PathCounts; own: OwnPath[] } {
  const counts = noCounts();
  const listed: { state: KnownPathState; p: ProbedPath }[] = [];
  for (const p of paths) {
    const state = p.state;
    if (!known(state)) continue;
    counts[state]++;
    listed.push({ state, p });
  }
  listed.sort((a, b) => SEVERITY[a.state] - SEVERITY[b.state] || compareRank(a.p.to, b.p.to));
  const own = listed.slice(0, OWN_PATHS_SHOWN).map(({ state, p }) => ({
    to: p.to,
    state,
    since: new Date(p.sinceMs).toISOString(),
    samples: p.stats.samples,
    loss_ratio: ratio(p.stats.lossRatio),
    p50_ms: ms(p.stats.p50Ms),
    p99_ms: ms(p.stats.p99Ms),
    ...(p.mtuSize === undefined ? {} : { mtu_size: p.mtuSize }),
  }));
  return { counts, own };
}

function findingView(f: Finding): PathFinding {
  switch (f.kind) {
    case 'partition':
      return { kind: f.kind, nodes: [], sides: f.sides };
    case 'unreachable':
    case 'egress-broken':
    case 'node-degraded':
      return { kind: f.kind, nodes: [f.node] };
    case 'node-mtu':
      return { kind: f.kind, nodes: [f.node], size: f.size };
    case 'path-broken':
    case 'path-degraded':
      return { kind: f.kind, nodes: [f.from, f.to], from: f.from, to: f.to };
    case 'path-mtu':
      return { kind: f.kind, nodes: [f.from, f.to], from: f.from, to: f.to, size: f.size };
  }
}
