// The benchmark behind answering the read views before express (src/http/views.ts): a node's app
// (src/http/app.ts, every middleware of the peer port) serving GET /status of a 5,000-peer
// coordinator from its snapshot, either as an express route after the middlewares (as knh did
// before) or ahead of the app, read 100 times a second by a client on the pod's loopback (every
// read answered) and by one on another address (past the read limit, most refused with 429). Each
// server in a process of its own, whose CPU and event-loop use over the window are its alone; the
// kinds take turns, BENCH_VIEWS_REPEAT times each. Prints a section for docs/benchmarks.md.
//
// BENCH_VIEWS_SECONDS (default 10) of window after 2 s of warm-up; BENCH_VIEWS_PEERS (default
// 5000) peers in the status; BENCH_VIEWS_REPEAT (default 3). Alone: `npm run bench:views`.
import { fork, type ChildProcess } from 'node:child_process';
import type { RequestListener } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Router, type RequestHandler } from 'express';
import { buildApp, type NodeApi } from '../src/http/app.js';
import { statusViews } from '../src/http/routes/status.js';
import { DEFAULT_READ_RATE_LIMIT, isPodItself, RateLimiter } from '../src/http/rate-limit.js';
import { listen } from '../src/http/server.js';
import { answerSnapshot } from '../src/http/snapshot.js';
import { nodeStatus } from '../test/support/node-status.js';
import { CapturingLogger } from '../test/support/capturing-logger.js';
import { loadSchemas } from '../src/wire/schemas.js';
import { positiveInt, runSectionAlone } from './entry.js';
import { machineFacts, table } from './report.js';
import { askStatus, type ReadTally } from './status-reads.js';

type Served = 'route' | 'views';
type Reader = 'loopback' | 'network';

const SERVED: Record<Served, string> = {
  route: 'an express route, after the middlewares (before)',
  views: 'ahead of the app (`src/http/views.ts`)',
};
const READER: Record<Reader, string> = {
  loopback: "the pod's loopback (every read answered)",
  network: 'another address (over the read limit: 429)',
};
/** Any address but 127.0.0.1 is a client on the network to the read limit. */
const NETWORK_IP = '127.0.0.2';
const READS_PER_SECOND = 100;

/** The read limit as an express middleware, where it was before views.ts (the baseline). */
function limitedAsBefore(): RequestHandler {
  const limiter = new RateLimiter(DEFAULT_READ_RATE_LIMIT);
  return (req, res, next) => {
    const ip = req.socket.remoteAddress ?? '';
    if (isPodItself(ip) || limiter.take(ip, performance.now())) {
      next();
      return;
    }
    res.set('retry-after', '1');
    res.status(429).json({ error: 'too many reads of this view from this address; try again' });
  };
}

/** In the server's process: the app, serving the status one way or the other. */
async function serve(served: Served, peers: number): Promise<void> {
  const status = nodeStatus({ peerCount: peers });
  // Built once, in the warm-up: what is measured is the way to the snapshot, not its builds (a
  // large mesh's coordinator serves one for up to 10 s: src/http/snapshot.ts).
  const views = statusViews({ status: () => status, maxAgeMs: 60_000 });
  const logger = new CapturingLogger();
  const api = { ping: () => ({}) } as unknown as NodeApi;
  const schemas = loadSchemas();
  const app: RequestListener =
    served === 'views'
      ? buildApp({ api, schemas, logger, views })
      : buildApp({
          api,
          schemas,
          logger,
          routers: [
            views.reduce(
              (router, v) =>
                router.get(v.path, limitedAsBefore(), (req, res) =>
                  answerSnapshot(v.snapshot, req, res, v.headers),
                ),
              Router(),
            ),
          ],
        });
  const server = await listen(app, '127.0.0.1', 0);
  let from: { cpu: NodeJS.CpuUsage; elu: ReturnType<typeof performance.eventLoopUtilization> };
  process.on('message', (m: string) => {
    if (m === 'start') {
      from = { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() };
    } else if (m === 'stop') {
      const cpu = process.cpuUsage(from.cpu);
      const elu = performance.eventLoopUtilization(from.elu);
      process.send!({ cpuMs: (cpu.user + cpu.system) / 1000, busy: elu.utilization });
    }
  });
  process.send!({ port: server.port });
}

interface Measured extends ReadTally {
  served: Served;
  reader: Reader;
  cpuMsPerSecond: number;
  busy: number;
}

/** One server in a fresh process, read for `seconds` after 2 s of warm-up. */
async function measure(
  served: Served,
  reader: Reader,
  o: { peers: number; seconds: number },
  children: Set<ChildProcess>,
): Promise<Measured> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', served, String(o.peers)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.add(child);
  try {
    const next = () =>
      new Promise<Record<string, number>>((resolve, reject) => {
        child.once('message', (m) => resolve(m as Record<string, number>));
        child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
      });
    const { port } = await next();
    const measured: Measured = {
      served,
      reader,
      cpuMsPerSecond: 0,
      busy: 0,
      byStatus: {},
      bodyBytes: 0,
    };
    const from = reader === 'network' ? NETWORK_IP : undefined;
    const readFor = async (ms: number, into: Measured) => {
      const t0 = Date.now();
      const inFlight: Promise<void>[] = [];
      for (let i = 0; i < (ms / 1_000) * READS_PER_SECOND; i++) {
        await sleep(Math.max(0, t0 + (i * 1_000) / READS_PER_SECOND - Date.now()));
        inFlight.push(askStatus(`127.0.0.1:${port}`, from, into));
      }
      await Promise.all(inFlight);
      return Date.now() - t0;
    };
    // Warm-up: the first build (its schema compiled), the JIT, a connection kept alive.
    await readFor(2_000, { ...measured, byStatus: {} });
    child.send('start');
    const windowMs = await readFor(o.seconds * 1_000, measured);
    const stopped = next();
    child.send('stop');
    const { cpuMs, busy } = await stopped;
    measured.cpuMsPerSecond = cpuMs! / (windowMs / 1_000);
    measured.busy = busy!;
    return measured;
  } finally {
    child.kill('SIGKILL');
    children.delete(child);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function viewsSection(progress: (text: string) => void) {
  const peers = positiveInt('BENCH_VIEWS_PEERS', 5_000);
  const seconds = positiveInt('BENCH_VIEWS_SECONDS', 10);
  const repeat = positiveInt('BENCH_VIEWS_REPEAT', 3);
  const facts = machineFacts();
  const children = new Set<ChildProcess>();
  process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
  const runs: Measured[] = [];
  for (let r = 0; r < repeat; r++) {
    for (const reader of ['loopback', 'network'] as const) {
      for (const served of ['route', 'views'] as const) {
        const m = await measure(served, reader, { peers, seconds }, children);
        runs.push(m);
        progress(
          `views: ${served}, ${reader}: ${Math.round(m.cpuMsPerSecond)} ms of CPU a second, event loop ${Math.round(m.busy * 100)} % busy; ${JSON.stringify(m.byStatus)}`,
        );
      }
    }
  }
  const rows: string[][] = [];
  for (const reader of ['loopback', 'network'] as const) {
    for (const served of ['route', 'views'] as const) {
      const of = runs.filter((m) => m.served === served && m.reader === reader);
      const cpu = of.map((m) => m.cpuMsPerSecond);
      const last = of[of.length - 1]!;
      rows.push([
        READER[reader],
        SERVED[served],
        Object.entries(last.byStatus)
          .map(([s, n]) => `${n} × ${s}`)
          .join(', '),
        `${Math.round(median(cpu))} (${Math.round(Math.min(...cpu))}–${Math.round(Math.max(...cpu))})`,
        `${Math.round((median(cpu) * 1_000) / READS_PER_SECOND)} µs`,
        `${Math.round(median(of.map((m) => m.busy)) * 100)} %`,
      ]);
    }
  }
  const bodyKiB = Math.round((runs.find((m) => m.bodyBytes > 0)?.bodyBytes ?? 0) / 1024);
  const markdown = `## Why the read views are answered before express

Produced by \`npm run bench:views\` (bench/views.ts, not part of \`npm run bench\`) on ${facts.date}: a node's app (src/http/app.ts, every middleware of the peer port) serving \`GET /status\` of a coordinator of ${peers.toLocaleString('en-US')} peers (test/support/node-status.ts, no paths section) from its snapshot (built once, in the warm-up), ${bodyKiB} KiB gzipped, read ${READS_PER_SECOND} times a second for ${seconds} s after 2 s of warm-up, gzip asked and the body not decoded; each server in a process of its own, the kinds taking turns, ${repeat} runs each. ${facts.nproc} CPUs (${facts.cpu}), Node ${facts.node}, ${facts.os}; load average at start ${facts.load}.

${table(['Reader', 'The view served', "Answers (the last run's)", "Server's CPU, ms a second: median (min–max)", 'CPU a read', 'Event loop busy (median)'], rows)}
`;
  return { markdown, missed: [] };
}

if (process.argv[2] === '--serve') {
  void serve(process.argv[3] as Served, Number(process.argv[4]));
} else {
  runSectionAlone(viewsSection);
}
