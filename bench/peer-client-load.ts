// One client of the peer-client bench (bench/peer-client.ts) under load, in a process of its own so
// that the CPU and memory measured are that client's alone: the child's entry (forked from
// `dist/bench/peer-client-load.js`) and the parent's handle to it. The child pings every peer once
// a second, evenly, through a warm-up and then a window, and reports what it saw in the window; it
// exits when its parent goes (the IPC channel closes), whatever happened to the parent.
import { fork, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { loadSchemas } from '../src/wire/schemas.js';
import { rssOf } from './proc-usage.js';
import type { PingClient, PingClientOptions } from './peer-clients/ping-client.js';

export type ClientKind = 'node-http' | 'undici-request' | 'undici-dispatch' | 'knh';

export interface LoadOrder {
  kind: ClientKind;
  addresses: string[];
  timeoutMs: number;
  warmupMs: number;
  windowMs: number;
}

/** What the child saw in the window. */
export interface LoadResult {
  sent: number;
  /** Requests not sent because the client had fallen more than a pacing slice behind. */
  late: number;
  answered: number;
  failed: number;
  /** Failures by why, in the window. */
  failures: Record<string, number>;
  cpuUs: number;
  windowMs: number;
}

type Report =
  | { type: 'window-start' | 'window-end' }
  | { type: 'result'; result: LoadResult }
  | { type: 'error'; error: string };

const ENTRY = fileURLToPath(import.meta.url);
/** The pacer's tick: what is due is sent every 5 ms. */
const TICK_MS = 5;
/** A tick sends at most this much of a second's requests: a client further behind skips the rest. */
const MAX_SLICE = 1 / 20;
const SAMPLE_MS = 200;

/** Loaded only for its own kind, so that no client's process holds another client's modules. */
async function clientOf(kind: ClientKind, options: PingClientOptions): Promise<PingClient> {
  switch (kind) {
    case 'node-http':
      return (await import('./peer-clients/node-http.js')).nodeHttpClient(options);
    case 'undici-request':
      return (await import('./peer-clients/undici.js')).undiciRequestClient(options);
    case 'undici-dispatch':
      return (await import('./peer-clients/undici.js')).undiciDispatchClient(options);
    case 'knh':
      return (await import('./peer-clients/knh.js')).knhClient(options);
  }
}

/**
 * Every peer once a second in order, evenly: each tick sends what is due by now. Resolves at the
 * window's end, once the requests still in flight have settled (or their timeout has passed twice).
 */
async function load(
  client: PingClient,
  order: LoadOrder,
  tell: (report: Report) => void,
): Promise<LoadResult> {
  const peers = order.addresses.length;
  const maxPerTick = Math.max(1, Math.ceil(peers * MAX_SLICE));
  const result: LoadResult = {
    sent: 0,
    late: 0,
    answered: 0,
    failed: 0,
    failures: {},
    cpuUs: 0,
    windowMs: 0,
  };
  let scheduled = 0;
  let inFlight = 0;
  let phase: 'warm-up' | 'window' | 'done' = 'warm-up';
  let windowStart = 0;
  let cpuStart = process.cpuUsage();
  const settle = (failure: string | null) => {
    inFlight--;
    if (phase !== 'window') return;
    if (failure === null) {
      result.answered++;
      return;
    }
    result.failed++;
    result.failures[failure] = (result.failures[failure] ?? 0) + 1;
  };
  const began = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      if (phase === 'warm-up' && now - began >= order.warmupMs) {
        phase = 'window';
        windowStart = now;
        cpuStart = process.cpuUsage();
        tell({ type: 'window-start' });
      }
      if (phase === 'window' && now - began >= order.warmupMs + order.windowMs) {
        const cpu = process.cpuUsage(cpuStart);
        result.cpuUs = cpu.user + cpu.system;
        result.windowMs = now - windowStart;
        phase = 'done';
        tell({ type: 'window-end' });
        clearInterval(timer);
        resolve();
        return;
      }
      const due = Math.floor(((now - began) * peers) / 1000);
      const skipped = Math.max(0, due - scheduled - maxPerTick);
      scheduled += skipped;
      if (phase === 'window') result.late += skipped;
      for (let n = Math.min(due - scheduled, maxPerTick); n > 0; n--) {
        const index = scheduled++ % peers;
        inFlight++;
        if (phase === 'window') result.sent++;
        client.ping(index).then(settle, (err: unknown) => settle(String(err)));
      }
    };
    const timer = setInterval(tick, TICK_MS);
  });
  for (let waited = 0; inFlight > 0 && waited < 2 * order.timeoutMs; waited += 50) await sleep(50);
  return result;
}

/** The child's side: one order, one result, then exit. */
function serve(): void {
  const tell = (report: Report) => process.send?.(report);
  // Once the last report has gone: the parent sees the exit only after its message.
  const last = (report: Report) => process.send?.(report, () => process.disconnect());
  process.once('message', (order: LoadOrder) => {
    const run = async (): Promise<LoadResult> => {
      const options = { addresses: order.addresses, timeoutMs: order.timeoutMs };
      const client = await clientOf(order.kind, { ...options, schemas: loadSchemas() });
      try {
        return await load(client, order, tell);
      } finally {
        await client.close();
      }
    };
    run().then(
      (result) => last({ type: 'result', result }),
      (err: unknown) =>
        last({
          type: 'error',
          error: err instanceof Error ? (err.stack ?? err.message) : String(err),
        }),
    );
  });
  // The parent is gone, or done with us: so is this process, whatever it still holds open.
  process.once('disconnect', () => process.exit(0));
}

/** The result, and the child's RSS at most (VmRSS every 200 ms, from its start to its result). */
export interface Measured extends LoadResult {
  rssMaxBytes: number;
}

/**
 * Forks a fresh child for `order`, with `nodeOptions` as its NODE_OPTIONS, and waits for its
 * result; `onWindow` hears the window open and close. The child is killed if it has not reported
 * within the run's length plus 30 s, and in any case before this returns. `children` holds it
 * meanwhile, for the caller to kill on exit.
 */
export async function runLoad(
  order: LoadOrder,
  {
    nodeOptions,
    onWindow,
    children,
  }: {
    nodeOptions: string;
    onWindow: (edge: 'start' | 'end') => void;
    children: Set<ChildProcess>;
  },
): Promise<Measured> {
  const child = fork(ENTRY, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  children.add(child);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)),
  );
  let rssMaxBytes = 0;
  const sampler = setInterval(() => {
    const rss = child.pid === undefined ? null : rssOf(child.pid);
    if (rss !== null) rssMaxBytes = Math.max(rssMaxBytes, rss);
  }, SAMPLE_MS);
  let timer: NodeJS.Timeout | undefined;
  try {
    const reported = new Promise<LoadResult>((resolve, reject) => {
      child.on('message', (report: Report) => {
        if (report.type === 'result') resolve(report.result);
        else if (report.type === 'error') reject(new Error(`${order.kind}: ${report.error}`));
        else onWindow(report.type === 'window-start' ? 'start' : 'end');
      });
      void exited.then((how) => reject(new Error(`${order.kind}: the client exited (${how})`)));
      const limitMs = order.warmupMs + order.windowMs + 30_000;
      timer = setTimeout(
        () => reject(new Error(`${order.kind}: no result within ${limitMs / 1000} s`)),
        limitMs,
      );
    });
    child.send(order);
    const result = await reported;
    return { ...result, rssMaxBytes };
  } finally {
    clearTimeout(timer);
    clearInterval(sampler);
    // It exits by itself once it has reported; otherwise, or if it lingers, it is killed.
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.disconnect();
      await exited;
    }
    clearTimeout(kill);
    children.delete(child);
  }
}

if (process.argv[1] === ENTRY && process.send) serve();
