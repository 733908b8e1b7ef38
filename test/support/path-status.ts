// Pair probing as GET /status tells it, for tests of the `paths` section and of the page: nodes,
// their reported paths in a real PathBook, the findings the real localizer makes of them, and the
// facts src/status/paths-status.ts builds the section from.
import type { ProbedPath } from '../../src/paths/pair-prober.js';
import { localize } from '../../src/paths/localize.js';
import { PathBook } from '../../src/paths/path-book.js';
import { pathsStatus, type PathsFacts } from '../../src/status/paths-status.js';
import type { PathsNode, PathsStatus } from '../../src/status/paths-types.js';
import type { ReportedPath } from '../../src/wire/peer-messages.js';
import { addresses } from './path-mesh.js';

type State = ReportedPath['state'];

/** A path as a node reports it: ok paths answer in 0.4 ms, degraded ones lose 30 % and crawl. */
export function reportedPath(to: string, state: State, over: Partial<ReportedPath> = {}) {
  const answered = state !== 'failed';
  return {
    to,
    state,
    since: Date.UTC(2026, 0, 1),
    samples: 10,
    loss_ratio: state === 'failed' ? 1 : state === 'degraded' ? 0.3 : 0,
    p50_ms: answered ? (state === 'degraded' ? 120 : 0.4) : null,
    p99_ms: answered ? (state === 'degraded' ? 650 : 1.2) : null,
    ...(state === 'mtu' ? { mtu_size: 1_400 } : {}),
    ...over,
  } satisfies ReportedPath;
}

/** A path as this node's prober holds it. */
export function probedPath(to: string, state: Exclude<State, 'unknown'>, sinceMs = 0): ProbedPath {
  const r = reportedPath(to, state);
  const failures = Math.round(r.loss_ratio * r.samples);
  return {
    to,
    state,
    sinceMs,
    stats: {
      samples: r.samples,
      failures,
      lossRatio: r.loss_ratio,
      p50Ms: r.p50_ms,
      p99Ms: r.p99_ms,
    },
    ...(state === 'mtu' ? { mtuSize: 1_400 } : {}),
  };
}

/** `count` nodes worker-1… at 10.0.x.y:8080 (test/support/path-mesh.ts's addresses). */
export function pathsNodes(count: number): PathsNode[] {
  return addresses(count).map((address, i) => {
    const ip = address.replace(/:\d+$/, '');
    return { address, id: `worker-${i + 1}@${ip}`, node_name: `worker-${i + 1}` };
  });
}

/**
 * Every node's full report in a real PathBook: each path `stateOf(from, to)` (null: not reported).
 */
export function bookOf(
  nodes: readonly string[],
  stateOf: (from: string, to: string) => State | null,
): PathBook {
  const book = new PathBook();
  for (const from of nodes) {
    const paths = nodes.flatMap((to) => {
      const state = to === from ? null : stateOf(from, to);
      return state === null ? [] : [reportedPath(to, state)];
    });
    book.take({ from: { id: `n@${from}`, address: from }, epoch: 1, seq: 0, full: true, paths }, 0);
  }
  return book;
}

/** The facts of a coordinator with pair probing at its defaults, holding nothing yet. */
export function pathsFacts(over: Partial<PathsFacts> = {}): PathsFacts {
  return {
    enabled: true,
    role: 'coordinator',
    coordinator: { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' },
    settings: {
      probes_per_round: 20,
      round_ms: 1_000,
      window_ms: 10_000,
      degraded_loss_ratio: 0.1,
      degraded_latency_ms: 400,
      mtu_probe_size: 1_400,
    },
    nodes: pathsNodes(3),
    book: [],
    findings: [],
    own: [],
    ...over,
  };
}

/**
 * A coordinator's section for a mesh of `count` nodes whose paths are `stateOf`, with the
 * findings the localizer makes of them: what a real coordinator would answer.
 */
export function coordinatorPaths(
  count: number,
  stateOf: (from: string, to: string) => State | null,
): PathsStatus {
  const nodes = pathsNodes(count);
  const all = nodes.map((n) => n.address);
  const book = bookOf(all, stateOf);
  return pathsStatus(
    pathsFacts({ nodes, book: book.entries(), findings: localize(book.input(all)) }),
  );
}
