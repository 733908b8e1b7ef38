// The election at 100, 1,000 and 5,000 nodes after the coordinator fails: the pure election core of
// every node on simulated time over an in-memory network that counts messages
// (test/support/election-sim.ts). Alone: `node dist/bench/election-scale.js`.
import { fileURLToPath } from 'node:url';
import { runMain } from './entry.js';
import { table } from './report.js';
import type { SectionResult } from './benchmarks-doc.js';
import {
  DEFAULT_NETWORK,
  DEFAULT_TIMING,
  simulateFailover,
  type Fault,
  type FailoverResult,
} from '../test/support/election-sim.js';

const SECTION = '## Election at scale: simulated';

interface Case {
  size: number;
  fault: Fault;
  alsoFailing?: number;
  /** Whether the ≤ 10 × N target applies (the case: the coordinator fails). */
  target: boolean;
}

function sizes(): number[] {
  const raw = process.env.BENCH_ELECTION_SIZES ?? '100,1000,5000';
  return raw
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n >= 5);
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const size of sizes()) {
    out.push({ size, fault: 'crash', target: true }, { size, fault: 'blackhole', target: true });
  }
  const stress = Math.min(1_000, Math.max(...sizes()));
  out.push(
    { size: stress, fault: 'crash', alsoFailing: 1, target: false },
    { size: stress, fault: 'blackhole', alsoFailing: 3, target: false },
    // The top ranks failing together (a node pool or zone whose pod CIDRs rank highest).
    { size: stress, fault: 'blackhole', alsoFailing: Math.round(stress / 20) - 1, target: false },
  );
  return out;
}

const seconds = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(2)} s`);

function row(c: Case, r: FailoverResult): string[] {
  const perNode = r.electionMessages / r.size;
  const met = perNode <= 10 && r.agreedMs !== null;
  return [
    r.size.toLocaleString('en-US'),
    c.alsoFailing
      ? `coordinator and the next ${c.alsoFailing} ${c.fault === 'crash' ? 'crashed' : 'black-holed'}`
      : `coordinator ${c.fault === 'crash' ? 'crashed' : 'black-holed'}`,
    r.counts.electionRequests.toLocaleString('en-US'),
    r.counts.answers.toLocaleString('en-US'),
    r.counts.announcements.toLocaleString('en-US'),
    `${r.electionMessages.toLocaleString('en-US')} (${perNode.toFixed(2)} × N)`,
    seconds(r.newLeaderMs),
    seconds(r.agreedMs),
    c.target ? (met ? 'PASS' : '**FAIL**') : met ? 'info (≤ 10 × N)' : 'info',
  ];
}

export function runElectionScale(progress: (text: string) => void): {
  markdown: string;
  missed: string[];
} {
  const rows: string[][] = [];
  const missed: string[] = [];
  const began = Date.now();
  for (const c of cases()) {
    const r = simulateFailover(c.size, c.fault, { alsoFailing: c.alsoFailing ?? 0 });
    const cells = row(c, r);
    progress(
      `election simulation: ${cells.slice(0, 2).join(' nodes, ')}: ${cells[5]}, agreed ${cells[7]}`,
    );
    rows.push(cells);
    if (c.target && cells[8] !== 'PASS') missed.push(`election at ${c.size} nodes (${c.fault})`);
  }
  const t = DEFAULT_TIMING;
  const n = DEFAULT_NETWORK;
  const markdown = [
    SECTION,
    '',
    `Produced by \`npm run bench\` (bench/election-scale.ts) on ${new Date().toISOString()} in ${((Date.now() - began) / 1000).toFixed(0)} s: the pure election core (src/election/bully.ts) of every node on simulated time, over an in-memory network that delivers and counts every message (test/support/election-sim.ts). The mesh follows its top node, which has named its successors; then the fault, and the simulation runs until every live node follows one live, leading coordinator, and 5 s more to count stragglers.`,
    '',
    `Timing as the driver runs it: heartbeat ${t.heartbeatIntervalMs} ms, coordinator timeout ${t.coordinatorTimeoutMs} ms, election timeout ${t.electionTimeoutMs} ms, answers awaited ${t.answerTimeoutMs} ms (PROBE_TIMEOUT + 0.5 s); ticks every 100 ms at each node's own phase. Network: ${n.latencyMs} ms one way plus up to ${n.jitterMs} ms, ${n.sendCostMs} ms per message on the sender's wire (an announcement to 5,000 takes 250 ms to send), a crashed peer refuses at once, a black-holed one times out after ${n.requestTimeoutMs} ms. Election messages = election requests + answers + announcements other than heartbeats. Target: ≤ 10 × N after the coordinator fails; the bully election knh had before this asked every higher-ranked node, N(N − 1)/2 requests (4,950 at 100 nodes, 12.5 million at 5,000).`,
    '',
    table(
      [
        'Nodes',
        'Fault',
        'Election requests',
        'Answers',
        'Announcements',
        'Election messages',
        'New coordinator leads',
        'All follow it',
        'Result',
      ],
      rows,
    ),
    '',
    'Times run from the fault. The coordinator falls silent for COORDINATOR_TIMEOUT before anyone acts; the first successor then asks the old coordinator (refused at once, or a timeout when black-holed) and announces itself; the others, staggered behind it, hear that announcement before their turn. When the successors are gone too, the others wait SUCCESSORS steps plus log2 of their place, so the highest of them goes first: slower, still linear while few fail together. The last row is the weak spot: when the top 5% fail together, every survivor counts the dead among those above it, so the first of them waits longer, then works through the dead ranks a timeout per batch while others start too.',
    '',
  ].join('\n');
  return { markdown, missed };
}

/** For bench.ts: the section, or null markdown when skipped (its block keeps the last figures). */
export function electionScaleSection(progress: (text: string) => void): SectionResult {
  if (process.env.BENCH_ELECTION === '0') {
    progress('election simulation skipped: BENCH_ELECTION=0');
    return { markdown: null, missed: [] };
  }
  return runElectionScale(progress);
}

function main(): Promise<number> {
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
  const result = runElectionScale(progress);
  process.stdout.write(`\n${result.markdown}`);
  process.stdout.write(
    result.missed.length === 0 ? '\nall targets met\n' : `\nmissed: ${result.missed.join(', ')}\n`,
  );
  return Promise.resolve(0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runMain(main);
