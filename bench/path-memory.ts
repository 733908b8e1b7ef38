// What pair probing holds in a coordinator's heap at 1,000 and 5,000 nodes, measured alone and so
// the same on a fast machine or a slow one: its book of every node's reports (each node's next
// PAIR_PROBES paths, as report-policy.ts has them told, every one working), with the index that
// localization reads, and its own pair prober's records of every path from it, each probed as
// often as a window holds. The scale bench's RSS includes these, and V8's headroom over them. A
// section of docs/benchmarks.md. Alone: `npm run bench:path-memory` (`node
// dist/bench/path-memory.js --write`), which also puts it into its block of the doc.
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import {
  DEFAULT_PATH_DEGRADATION,
  PAIR_FAIL_AFTER,
  scaledDegradation,
} from '../src/paths/defaults.js';
import { PairProber } from '../src/paths/pair-prober.js';
import { roundsToCover } from '../src/paths/pair-schedule.js';
import { PathBook } from '../src/paths/path-book.js';
import { reportPolicy } from '../src/paths/report-policy.js';
import type { ReportedPath } from '../src/wire/peer-messages.js';
import { FakeClock } from '../test/support/fake-clock.js';
import { answer, pingResponse } from '../test/support/pings.js';
import { addresses } from '../test/support/path-mesh.js';
import { checkBenchmarksDoc, prettyMarkdown, writeSections } from './benchmarks-doc.js';
import { runMain } from './entry.js';
import { machineFacts, median, table } from './report.js';

const SECTION = "## Pair probing's memory in the coordinator";
/** PAIR_PROBES's default, and MTU_PROBE_SIZE's. */
const PER_ROUND = 20;
const MTU_PROBE_SIZE = 1_400;
const SIZES = [1_000, 5_000];
/** Each measurement this many times, in a fresh heap state each (the median is shown). */
const RUNS = 3;

/** V8's full collection, exposed when first asked for (not on import: bench.ts imports this). */
let collect: (() => void) | null = null;
function gc(): void {
  if (!collect) {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  }
  collect();
}

/** Bytes of heap and array buffers that what `build` returns holds, once garbage is collected. */
async function held(build: () => Promise<unknown>): Promise<number> {
  const used = () => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const kept = await build();
  const after = used();
  // Read after the measurement, so that what was built is alive until then.
  if (kept === undefined) throw new Error('nothing built');
  return after - before;
}

/** The book of a coordinator of `nodes`, each of which has reported in full, and its index. */
function filledBook(nodes: readonly string[]): PathBook {
  const book = new PathBook();
  nodes.forEach((from, seq) => {
    const policy = reportPolicy(from, nodes, PER_ROUND);
    const paths: ReportedPath[] = [...policy.sample].map((to, i) => ({
      to,
      state: 'ok',
      since: 1_790_000_000_000 + seq,
      samples: 5,
      loss_ratio: 0,
      p50_ms: 0.4 + (i % 7) / 10,
      p99_ms: 1.3 + (i % 5) / 10,
    }));
    book.take(
      { from: { id: `n${seq}@${from}`, address: from }, epoch: 1, seq: 0, full: true, paths },
      0,
    );
  });
  book.index(nodes);
  return book;
}

/**
 * The first node's pair prober after every path from it was probed as many times as its window
 * holds (minSamples, scaled to the mesh: defaults.ts), small and full-size probes answered.
 */
async function probedProber(nodes: readonly string[]): Promise<PairProber> {
  const clock = new FakeClock();
  const self = nodes[0]!;
  const prober = new PairProber({
    self,
    clock,
    perRound: PER_ROUND,
    roundIntervalMs: 1_000,
    degradation: DEFAULT_PATH_DEGRADATION,
    failAfter: PAIR_FAIL_AFTER,
    mtuProbeSize: MTU_PROBE_SIZE,
    transport: {
      ping: (to) => Promise.resolve(answer(pingResponse(to, 'n'), 0.4 + (clock.now() % 7) / 10)),
      echo: () => Promise.resolve({ ok: true, value: undefined, latencyMs: 0.6 }),
    },
  });
  prober.setNodes(nodes);
  const cover = roundsToCover(nodes.length, PER_ROUND);
  const windowMs = scaledDegradation(DEFAULT_PATH_DEGRADATION, cover * 1_000).pathWindowMs;
  const rounds = Math.ceil(windowMs / 1_000);
  for (let i = 0; i < rounds; i++) {
    await prober.probeRound();
    clock.advance(1_000);
  }
  return prober;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export async function runPathMemoryBench(
  progress: (text: string) => void,
): Promise<{ markdown: string }> {
  const began = Date.now();
  const rows: string[][] = [];
  for (const size of SIZES) {
    const nodes = addresses(size);
    const books: number[] = [];
    const probers: number[] = [];
    let paths = 0;
    let probed = 0;
    for (let run = 0; run < RUNS; run++) {
      books.push(
        await held(() => {
          const book = filledBook(nodes);
          paths = book.size.paths;
          return Promise.resolve(book);
        }),
      );
      probers.push(
        await held(async () => {
          const prober = await probedProber(nodes);
          probed = prober.size;
          return prober;
        }),
      );
    }
    const [book, prober] = [median(books), median(probers)];
    const cells = [
      size.toLocaleString('en-US'),
      paths.toLocaleString('en-US'),
      mb(book),
      `${Math.round(book / paths)} B`,
      probed.toLocaleString('en-US'),
      mb(prober),
      `${Math.round(prober / probed)} B`,
    ];
    progress(`path memory: ${cells.join(' | ')}`);
    rows.push(cells);
  }
  const m = machineFacts();
  const markdown = [
    SECTION,
    '',
    `Produced by \`npm run bench:path-memory\` (or \`npm run bench\`; bench/path-memory.ts) on ${m.date} in ${((Date.now() - began) / 1000).toFixed(0)} s: Node ${m.node}. What the coordinator's pair-probing state holds, alone: V8's heap in use plus array buffers, after two full garbage collections, less the same before it was built; the median of ${RUNS} builds. The book has taken one full report from every node, of its next ${PER_ROUND} nodes' paths (PAIR_PROBES; at 1,000 nodes and above, src/paths/report-policy.ts), all working, and built the index localization reads. The prober (the coordinator's own, src/paths/pair-prober.ts) has probed each path from it, small and full-size (${MTU_PROBE_SIZE.toLocaleString('en-US')} bytes), as often as its window holds at that size. Machine-independent, unlike the scale bench's RSS, which holds these and the headroom V8 keeps over them.`,
    '',
    table(
      [
        'Nodes',
        'Paths in the book',
        'Book',
        'Book: a path',
        "Prober's paths",
        'Prober',
        'Prober: a path',
      ],
      rows,
    ),
    '',
  ].join('\n');
  return { markdown };
}

/** For bench.ts: seconds, so never skipped; no target (the scale bench judges the RSS). */
export async function pathMemorySection(
  progress: (text: string) => void,
): Promise<{ markdown: string; missed: string[] }> {
  return { ...(await runPathMemoryBench(progress)), missed: [] };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runMain(async () => {
    const write = process.argv.includes('--write');
    if (write) checkBenchmarksDoc(['path-memory']);
    const { markdown } = await runPathMemoryBench((text) => process.stdout.write(`${text}\n`));
    process.stdout.write(`\n${await prettyMarkdown(markdown)}`);
    if (write) await writeSections({ 'path-memory': markdown });
    return 0;
  });
}
