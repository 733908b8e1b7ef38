// How long localizing path failures takes (src/paths/localize.ts) at 100, 500 and 1,000 nodes: a
// healthy mesh, a mesh with one fault of each kind, and a split, each as the coordinator would
// hand it over: every path known at 100 nodes, a sample of each node's paths above. A section of
// docs/benchmarks.md. Alone: `npm run bench:localize`; BENCH_LOCALIZE_RUNS calls timed (21).
import { fileURLToPath } from 'node:url';
import { localize, type Finding, type PathState } from '../src/paths/localize.js';
import { prng } from '../test/support/bully-cluster.js';
import { addresses } from '../test/support/path-mesh.js';
import { positiveInt, runMain } from './entry.js';
import { machineFacts, median, table } from './report.js';

const SECTION = '## Localizing path failures';

/** How many paths out of each node are known in a sparse mesh (a rotating sample, kept a while). */
const SAMPLE = 50;

interface Case {
  nodes: number;
  /** Known paths out of each node; null: all of them. */
  known: number | null;
  scenario: 'healthy' | 'faults' | 'split 60 % / 40 %';
}

const CASES: readonly Case[] = [100, 500, 1_000].flatMap((nodes) =>
  (['healthy', 'faults', 'split 60 % / 40 %'] as const).map((scenario) => ({
    nodes,
    known: nodes === 100 ? null : SAMPLE,
    scenario,
  })),
);
/** What a dense input would cost at 1,000 nodes: the coordinator is never handed this. */
const DENSE_1000: Case = { nodes: 1_000, known: null, scenario: 'faults' };

/**
 * Node numbers of the faults: 1 crashed (nobody reaches it, it reports nothing), 2 with egress
 * cut, the pairs 10 ↔ 11 and 12 ↔ 13 cut, 3 dropping full-size packets, 4 degraded.
 */
function stateOf(c: Case, f: number, t: number): PathState['state'] | 'mtu' {
  if (c.scenario === 'healthy') return 'ok';
  if (c.scenario !== 'faults') return f < c.nodes * 0.6 === t < c.nodes * 0.6 ? 'ok' : 'failed';
  if (f === 1) return 'unknown';
  if (t === 1 || f === 2) return 'failed';
  const pair = (a: number, b: number) => (f === a && t === b) || (f === b && t === a);
  if (pair(10, 11) || pair(12, 13)) return 'failed';
  if (f === 3 || t === 3) return 'mtu';
  return f === 4 || t === 4 ? 'degraded' : 'ok';
}

/** The input of a case; a sparse one samples `known` distinct targets a node, at random. */
function inputOf(c: Case): { nodes: string[]; paths: PathState[] } {
  const nodes = addresses(c.nodes);
  const random = prng(c.nodes);
  const paths: PathState[] = [];
  const add = (f: number, t: number) => {
    const state = stateOf(c, f, t);
    if (state === 'unknown') return;
    const [from, to] = [nodes[f]!, nodes[t]!];
    paths.push(state === 'mtu' ? { from, to, state, size: 1500 } : { from, to, state });
  };
  for (let f = 0; f < c.nodes; f++) {
    if (c.known === null) {
      for (let t = 0; t < c.nodes; t++) if (t !== f) add(f, t);
      continue;
    }
    const targets = new Set<number>();
    while (targets.size < c.known) {
      const t = Math.floor(random() * c.nodes);
      if (t !== f) targets.add(t);
    }
    targets.forEach((t) => add(f, t));
  }
  return { nodes, paths };
}

/** Milliseconds of each of `runs` calls, after 3 to warm up; and the last result. */
function time(input: ReturnType<typeof inputOf>, runs: number) {
  let findings: Finding[] = [];
  for (let i = 0; i < 3; i++) findings = localize(input);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    findings = localize(input);
    samples.push(performance.now() - start);
  }
  return { samples, findings };
}

/** "1 partition, 2 unreachable": the findings counted by kind, in their order. */
function summary(findings: readonly Finding[]): string {
  const counts = new Map<string, number>();
  for (const f of findings) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${n} ${kind}`).join(', ') || 'none';
}

const ms = (x: number) => `${x.toFixed(2)} ms`;

export function runLocalizeBench(progress: (text: string) => void): { markdown: string } {
  const runs = positiveInt('BENCH_LOCALIZE_RUNS', 21);
  const began = Date.now();
  const rows: string[][] = [];
  for (const c of [...CASES, DENSE_1000]) {
    const input = inputOf(c);
    const { samples, findings } = time(input, c === DENSE_1000 ? Math.min(runs, 5) : runs);
    const cells = [
      c.nodes.toLocaleString('en-US'),
      c.known === null ? 'all' : `${c.known} a node`,
      input.paths.length.toLocaleString('en-US'),
      c.scenario,
      summary(findings),
      ms(median(samples)),
      ms(Math.max(...samples)),
    ];
    progress(`localize: ${cells.join(' | ')}`);
    rows.push(cells);
  }
  const m = machineFacts();
  const markdown = [
    SECTION,
    '',
    `Produced by \`npm run bench:localize\` (or \`npm run bench\`; bench/localize.ts) on ${m.date} in ${((Date.now() - began) / 1000).toFixed(0)} s: ${m.nproc} CPUs (${m.cpu}), Node ${m.node}; load average ${m.load} at the end. One call of \`localize\` (src/paths/localize.ts) on one core, the input built beforehand; the median and the slowest of ${runs} calls after 3 to warm up (5 for the dense 1,000); the slowest include garbage collections and other processes' turns on the CPUs, the medians are the figures to read.`,
    '',
    `Inputs: at 100 nodes every ordered path is known; at 500 and 1,000 each node knows ${SAMPLE} random paths out of it (a rotating sample kept a while), so about as many into it. Faults: one node crashed (nobody reaches it, it reports nothing), one with its egress cut, two pairs cut from each other, one node dropping full-size packets, one degraded. The split cuts 60 % of the nodes from the other 40 %. The last row is the dense input at 1,000 nodes, a million paths: not what the coordinator will be handed, there for its cost.`,
    '',
    table(['Nodes', 'Paths known', 'Paths', 'Scenario', 'Findings', 'Median', 'Max'], rows),
    '',
    'The cost is linear in the paths given (a few passes over them, and a sort of what is found), so a sample of the paths costs the sample, whatever the mesh. In a sparse mesh, a cut pair is only found when the pair was sampled, and both of its ends need two known paths in the direction judged.',
    '',
  ].join('\n');
  return { markdown };
}

/** For bench.ts: a few seconds, so never skipped; no target to miss (the figures are information). */
export function localizeSection(progress: (text: string) => void): {
  markdown: string;
  missed: string[];
} {
  return { ...runLocalizeBench(progress), missed: [] };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runMain(() => {
    const result = runLocalizeBench((text) => process.stdout.write(`${text}\n`));
    process.stdout.write(`\n${result.markdown}`);
    return Promise.resolve(0);
  });
}
