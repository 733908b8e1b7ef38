// The hostile-clients benchmark: 5 real nodes, each on its own loopback IP, attacked from other
// loopback IPs with generated malformed requests to every endpoint (the fuzz test's generators,
// unsigned, badly signed and correctly signed), slowloris connections and a flood from 300
// clients; then counts what must stay 0: node processes that exited, coordinator changes, probe
// rounds that started late, peer_dead webhooks, 5xx answers. A section of docs/benchmarks.md.
//
// Run from bench.ts (BENCH_HOSTILE=0 skips it), or alone: `node dist/bench/hostile.js` prints the
// section, and with `--write` also puts it into its block of docs/benchmarks.md, the rest of the
// doc left as it is (bench/benchmarks-doc.ts).
// BENCH_HOSTILE_REQUESTS (default 20,000): requests in all, a fifth of them fuzz-generated.
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { format } from 'prettier';
import type { MeshNode } from '../src/demo/mesh.js';
import { loadSchemas } from '../src/wire/schemas.js';
import {
  flood,
  floodAnswerOk,
  floodRequest,
  pinger,
  send,
  slowloris,
  targetOf,
  type PingStats,
} from '../test/support/hostile-clients.js';
import { LoopbackIpsMesh, sampleOf } from '../test/support/loopback-ips-mesh.js';
import {
  localRequest,
  randomRequest,
  readRequest,
  replayRefusal,
  sign,
  signedPeerRequest,
  unsignedPeerRequest,
  type FuzzContext,
  type FuzzRequest,
} from '../test/support/malformed-requests.js';
import { positiveInt, runMain } from './entry.js';
import { bodyFloodPhase } from './body-flood.js';
import { machineFacts, table } from './report.js';
import { checkBenchmarksDoc, writeSections, type SectionResult } from './benchmarks-doc.js';

const NODES = 5;
const SEED = 20261122;
const SECTION = '## Hostile clients: malformed input, slow clients, floods';

export interface HostileRow {
  name: string;
  /** null: informational. */
  target: number | null;
  value: number;
  note?: string;
}

export interface HostileBenchResult {
  rows: HostileRow[];
  markdown: string;
  /** Names of the rows over their target. */
  missed: string[];
}

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Fuzz-generated requests, sent `concurrency` at a time to the coordinator and a follower. */
async function fuzzPhase(
  fx: LoopbackIpsMesh,
  targets: MeshNode[],
  count: number,
  unexpected: Map<string, number>,
): Promise<{ sent: number; serverErrors: number }> {
  const ctx: FuzzContext = {
    schemas: loadSchemas(),
    peerSecret: fx.peerSecret,
    peers: fx.nodes.map((n) => n.address),
  };
  const kinds = [
    unsignedPeerRequest(ctx),
    localRequest(ctx),
    readRequest(ctx),
    randomRequest(ctx),
    ...(fx.peerSecret === null ? [] : [signedPeerRequest(ctx)]),
  ];
  const arb = fc.oneof(...kinds);
  let sent = 0;
  let serverErrors = 0;
  const note = (what: string) => unexpected.set(what, (unexpected.get(what) ?? 0) + 1);
  // Generated a batch at a time: some bodies are megabytes.
  for (let batch = 0; sent < count; batch++) {
    const requests = fc.sample(arb, { seed: SEED + batch, numRuns: Math.min(100, count - sent) });
    await Promise.all(
      [0, 1, 2, 3].map(async (worker) => {
        for (let i = worker; i < requests.length; i += 4) {
          const generated = requests[i] as FuzzRequest;
          const node = targets[i % targets.length] as MeshNode;
          const req = sign(generated, fx.peerSecret, node.address);
          const copies = req.replay ? 2 : 1;
          for (let copy = 0; copy < copies; copy++) {
            const answer = await send(targetOf(node.address), req, { timeoutMs: 8_000 });
            sent++;
            if (answer.status !== null && answer.status >= 500) serverErrors++;
            if (answer.error === 'timeout') note(`${generated.kind}: no answer within 8 s`);
            else if (answer.status === null) continue;
            else if (
              copy === 1 &&
              answer.status !== replayRefusal(req.path, req.body?.length ?? 0)
            ) {
              note(`${generated.kind}, replayed: ${answer.status}`);
            } else if (copy === 0 && !generated.allowed(answer.status)) {
              note(`${generated.kind}: ${answer.status} (expected ${generated.expects})`);
            }
          }
        }
      }),
    );
  }
  return { sent, serverErrors };
}

export async function runHostileBench({
  requests = 20_000,
  progress = () => undefined,
}: { requests?: number; progress?: (text: string) => void } = {}): Promise<HostileBenchResult> {
  const facts = machineFacts();
  const began = Date.now();
  const fx = await LoopbackIpsMesh.start({ size: NODES });
  try {
    const lead = await fx.settled();
    const coordinator = lead.coordinator;
    const follower = fx.nodes.find((n) => n !== coordinator) as MeshNode;
    progress(`hostile: mesh settled under ${coordinator.name} (epoch ${lead.epoch})`);
    const lateOf = async () => {
      const texts = await Promise.all(fx.nodes.map((n) => fx.metrics(n)));
      return texts.reduce((sum, t) => sum + (sampleOf(t, 'knh_probe_rounds_late_total') ?? 0), 0);
    };
    const lateBefore = await lateOf();
    let coordinatorChanges = 0;
    const onLog = (n: MeshNode, l: { event?: string }) => {
      if (l.event !== 'coordinator-changed') return;
      coordinatorChanges++;
      // Which node saw it, and what it said: a change under attack is what this bench exists for.
      progress(`hostile: ${n.name} logged a coordinator change: ${JSON.stringify(l)}`);
    };
    fx.mesh.on('log', onLog);
    const attackers = Array.from({ length: 10 }, (_, i) => `${fx.prefix}${101 + i}`);
    const target = targetOf(coordinator.address);
    const ping = pinger(target, { localAddress: `${fx.prefix}200` });
    const unexpected = new Map<string, number>();
    let stats: PingStats;
    let fuzzed: { sent: number; serverErrors: number };
    let slow = 0;
    let slowOpen = 0;
    let slowest = 0;
    let flooded = {
      sent: 0,
      serverErrors: 0,
      elapsedMs: 0,
      byStatus: {} as Record<string, number>,
    };
    try {
      const fuzzCount = Math.round(requests / 5);
      fuzzed = await fuzzPhase(fx, [coordinator, follower], fuzzCount, unexpected);
      progress(`hostile: ${fuzzed.sent} fuzz-generated requests sent`);
      const [headers, body] = await Promise.all([
        slowloris({
          target,
          mode: 'headers',
          connections: 200,
          sources: attackers.slice(0, 8),
          maxMs: 12_000,
        }),
        slowloris({
          target,
          mode: 'body',
          connections: 50,
          sources: attackers.slice(8, 10),
          maxMs: 16_000,
        }),
      ]);
      slow = headers.opened + body.opened;
      slowOpen = headers.stillOpen + body.stillOpen;
      slowest = Math.max(...headers.closedAfterMs, ...body.closedAfterMs);
      progress(
        `hostile: slowloris: ${slow} connections, all closed by the node after at most ${slowest} ms (${slowOpen} left open)`,
      );
      const result = await flood({
        target,
        requests: Math.max(0, requests - fuzzed.sent - slow),
        concurrency: 300,
        sources: attackers.slice(0, 6),
        make: floodRequest,
        maxMs: 120_000,
        timeoutMs: 14_000,
        onAnswer: (_i, req, answer) => {
          if (answer.error === 'timeout') {
            unexpected.set('flood: no answer', (unexpected.get('flood: no answer') ?? 0) + 1);
          } else if (!floodAnswerOk(req, answer.status)) {
            const what = `flood ${req.method} ${req.path.slice(0, 40)}: ${answer.status}`;
            unexpected.set(what, (unexpected.get(what) ?? 0) + 1);
          }
        },
      });
      flooded = {
        sent: result.sent,
        serverErrors: Object.entries(result.byStatus)
          .filter(([s]) => s.startsWith('5'))
          .reduce((n, [, c]) => n + c, 0),
        elapsedMs: result.elapsedMs,
        byStatus: result.byStatus,
      };
      progress(
        `hostile: flood: ${result.sent} requests in ${result.elapsedMs} ms: ${JSON.stringify(result.byStatus)}`,
      );
    } finally {
      stats = await ping.stop();
    }
    // A few rounds for anything the attack set off (an election, a late round) to show.
    await new Promise((r) => setTimeout(r, 3_000));
    fx.mesh.off('log', onLog);
    const crashed = fx.exited().length;
    const late = (await lateOf()) - lateBefore;
    const after = await fx.waitForLeader(5_000).catch(() => null);
    const epochChanged = after === null || after.epoch !== lead.epoch ? 1 : 0;
    if (epochChanged) {
      progress(
        `hostile: after the attack ${after === null ? 'no leader within 5 s' : `${after.coordinator.name} leads epoch ${after.epoch}`} (before: ${coordinator.name}, epoch ${lead.epoch})`,
      );
    }
    const dead = fx.deadReports().length;
    const sentAll = fuzzed.sent + slow + flooded.sent;
    const serverErrors = fuzzed.serverErrors + flooded.serverErrors;
    const wrong = [...unexpected.values()].reduce((a, b) => a + b, 0);
    const sorted = [...stats.samples].sort((a, b) => a - b);
    const rows: HostileRow[] = [
      {
        name: 'Malformed requests sent (fuzz-generated / slowloris connections / flood)',
        target: null,
        value: sentAll,
        note: `${fuzzed.sent} / ${slow} / ${flooded.sent}`,
      },
      { name: 'Crashes: node processes that exited', target: 0, value: crashed },
      {
        name: 'Coordinator changes caused (log lines and epoch)',
        target: 0,
        value: coordinatorChanges + epochChanged,
      },
      {
        name: 'Probe rounds started late (`knh_probe_rounds_late_total`, all nodes)',
        target: 0,
        value: late,
      },
      { name: 'peer_dead webhooks', target: 0, value: dead },
      { name: '5xx answers', target: 0, value: serverErrors },
      {
        name: 'Answers other than what the request deserves (a 2xx to a changing request…)',
        target: 0,
        value: wrong,
        ...(wrong > 0
          ? {
              note: [...unexpected.entries()]
                .map(([k, v]) => `${k} ×${v}`)
                .join('; ')
                .slice(0, 400),
            }
          : {}),
      },
      {
        name: 'Slowloris connections still open after the timeouts (+ 2 s)',
        target: 0,
        value: slowOpen,
        note: `last closed after ${(slowest / 1000).toFixed(1)} s`,
      },
      {
        name: 'GET /ping of the coordinator during the attack, slowest (ms)',
        target: null,
        value: Math.round(stats.maxMs),
        note: `${stats.count} pings, ${stats.failed} failed, median ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms`,
      },
    ];
    // Last: it kills the coordinator.
    const bodyFlood = await bodyFloodPhase(fx, coordinator, progress);
    rows.push(...bodyFlood.rows);
    const missed = rows.filter((r) => r.target !== null && r.value > r.target).map((r) => r.name);
    const seconds = Math.round((Date.now() - began) / 1000);
    const markdown = `${SECTION}

Produced by \`npm run bench\` (bench/hostile.ts; alone: \`node dist/bench/hostile.js --write\`) on ${facts.date}: ${NODES} knh processes on loopback, each on its own IP (127.X.Y.2–6, default settings, a random PEER_SECRET), attacked from other loopback IPs. ${facts.nproc} CPUs (${facts.cpu}), Node ${facts.node}, ${facts.os}; load average at start ${facts.load}. Whole run: ${seconds} s.

${table(
  ['Measurement', 'Target', 'Result'],
  rows.map((r) => [
    r.name,
    r.target === null ? '—' : String(r.target),
    `${r.target === null ? '' : r.value <= r.target ? 'PASS: ' : '**FAIL**: '}${r.value}${r.note ? ` (${r.note.replace(/\|/g, '\\|')})` : ''}`,
  ]),
)}

In order: ${fuzzed.sent} requests generated by the fuzz test's generators (test/support/malformed-requests.ts, seed ${SEED}) to the coordinator and a follower, 4 at a time: every endpoint, garbage bodies (fc.json, fc.anything, random bytes, truncated JSON, deep nesting, huge strings and numbers, unknown fields, valid messages with one field mutated), odd content types and encodings, unsigned and badly signed peer messages, correctly signed garbage, replays; then 200 connections dripping their headers and 50 dripping their body, a byte every 250 ms, from 10 IPs; then a flood of ${flooded.sent} requests from 300 clients on 6 IPs (malformed bodies to every POST route, bodies over their limit (64 KiB; 4 MiB on /coordinator) sent or only announced, GET /status, /metrics, /ping, unknown paths); each IP past 100 requests a second (200 at once) is answered 429 and disconnected. Last, the body flood (bench/body-flood.ts): from IPs that are not peers, every node gets 6 connections at a time each declaring a 4 MiB POST /coordinator and 32 each declaring a 64 KiB POST /election, with fresh, well-formed x-knh-auth headers signed with another secret, their bodies never sent, each opened again as soon as it is closed; 3 s in, a follower is killed, once it is reported the coordinator, and the flood goes on for 15 s more. A round is late when it starts more than max(100 ms, half of ELECTION_COOLDOWN_PERIOD) after the previous one's start plus the interval.
`;
    return { rows, markdown, missed };
  } finally {
    await fx.stop();
  }
}

async function main(): Promise<number> {
  const write = process.argv.includes('--write');
  if (write) checkBenchmarksDoc(['hostile']);
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
  const result = await runHostileBench({
    requests: positiveInt('BENCH_HOSTILE_REQUESTS', 20_000),
    progress,
  });
  process.stdout.write(
    `\n${await format(result.markdown, { parser: 'markdown', printWidth: 100 })}`,
  );
  if (write) {
    await writeSections({ hostile: result.markdown });
    process.stdout.write('\nWritten to docs/benchmarks.md\n');
  }
  process.stdout.write(
    result.missed.length === 0
      ? '\nall targets met\n'
      : `\n${result.missed.length} target(s) missed:\n${result.missed.map((m) => `  FAIL  ${m}`).join('\n')}\n`,
  );
  return 0;
}

/** For bench.ts: the section, or null markdown when skipped (its block keeps the last figures). */
export async function hostileSection(progress: (text: string) => void): Promise<SectionResult> {
  if (process.env.BENCH_HOSTILE === '0') {
    progress('hostile-clients bench skipped: BENCH_HOSTILE=0');
    return { markdown: null, missed: [] };
  }
  try {
    const result = await runHostileBench({
      requests: positiveInt('BENCH_HOSTILE_REQUESTS', 20_000),
      progress,
    });
    return { markdown: result.markdown, missed: result.missed };
  } catch (err) {
    progress(`hostile-clients bench failed: ${msg(err)}`);
    return { markdown: `${SECTION}\n\nFailed: ${msg(err)}.\n`, missed: ['hostile clients'] };
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) runMain(main);
