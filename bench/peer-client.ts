// The benchmark behind knh's own HTTP client for peers (src/peer-client/): under the load a
// coordinator puts on it, a keep-alive GET /ping to every peer each second, knh's client against
// node:http with a keep-alive Agent and undici's Client.request and Client.dispatch, each in a fresh
// process of its own (bench/peer-client-load.ts) so that its CPU and memory are its alone. The
// peers are the scale bench's simulated ones (test/support/peer-simulator.ts) in one other
// process, answering /ping as a knh follower does. A section of docs/benchmarks.md.
//
// BENCH_PEER_CLIENT=0 skips it; BENCH_PEER_CLIENT_PEERS (default 5000) peers, each pinged once a
// second; BENCH_PEER_CLIENT_SECONDS (default 12) of window after BENCH_PEER_CLIENT_WARMUP_SECONDS
// (default 3) of warm-up; BENCH_PEER_CLIENT_NODE_OPTIONS replaces daemonset.yaml's NODE_OPTIONS
// for the clients (empty: Node's default heap). Alone: `npm run bench:peer-client`.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../src/config/duration.js';
import { simulatedAddress, SIMULATED_IP } from '../test/support/peer-simulator.js';
import { positiveInt, runSectionAlone } from './entry.js';
import { runLoad, type ClientKind, type Measured } from './peer-client-load.js';
import { SimulatorProcess } from './peer-sim-main.js';
import { openFilesLimit } from './proc-usage.js';
import { defaultOf, machineFacts, table } from './report.js';
import type { SectionResult } from './benchmarks-doc.js';
import { manifestNodeOptions } from './manifest.js';

const SECTION = '## Why knh has its own HTTP client for peers';

const CLIENTS: readonly { kind: ClientKind; name: string }[] = [
  { kind: 'node-http', name: '`node:http`, a keep-alive `Agent` per peer' },
  { kind: 'undici-request', name: 'undici `Client.request`, a `Client` per peer' },
  { kind: 'undici-dispatch', name: 'undici `Client.dispatch`, a bare handler' },
  { kind: 'knh', name: "knh's `peerClient` (src/peer-client/peer-client.ts)" },
];

const HEADER = [
  'Client, one per peer',
  'Sent',
  'Answered',
  'Failed',
  'CPU of one core',
  'CPU a request',
  'RSS max',
  "Servers' CPU",
  'Connections opened',
];

interface ClientRun {
  kind: ClientKind;
  name: string;
  measured: Measured | null;
  /** The servers over the window: their process's CPU (µs), the connections they accepted. */
  servers: { cpuUs: number; connections: number } | null;
  error: string | null;
}

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));
const count = (n: number) => n.toLocaleString('en-US');
const percent = (us: number, ms: number) => `${Math.round(us / 10 / ms)} %`;

/**
 * The servers' process holds a listening and an accepted socket per peer, and the client one
 * connection per peer (two while requests overlap): both inherit this process's limit.
 */
function checkOpenFiles(peers: number): void {
  const limit = openFilesLimit();
  const needed = 2 * peers + 1_000;
  if (limit !== null && limit < needed) {
    throw new Error(
      `the open-files limit is ${limit}; ${peers} peers need about ${needed} (raise it with ulimit -n, or set BENCH_PEER_CLIENT_PEERS lower)`,
    );
  }
}

/** One client in a fresh process, the servers' CPU and connections taken at its window's edges. */
async function measureClient(
  client: (typeof CLIENTS)[number],
  sim: SimulatorProcess,
  order: { addresses: string[]; timeoutMs: number; warmupMs: number; windowMs: number },
  nodeOptions: string,
  children: Set<ChildProcess>,
): Promise<ClientRun> {
  const run: ClientRun = { ...client, measured: null, servers: null, error: null };
  const serversNow = () =>
    sim.stats().then(
      (s) => ({ cpuUs: s.cpuUserUs + s.cpuSystemUs, connections: s.connections }),
      () => null,
    );
  const edges: { start?: ReturnType<typeof serversNow>; end?: ReturnType<typeof serversNow> } = {};
  try {
    run.measured = await runLoad(
      { kind: client.kind, ...order },
      {
        nodeOptions,
        onWindow: (edge) => {
          edges[edge] = serversNow();
        },
        children,
      },
    );
    const [start, end] = [await edges.start, await edges.end];
    if (start && end) {
      run.servers = {
        cpuUs: end.cpuUs - start.cpuUs,
        connections: end.connections - start.connections,
      };
    }
  } catch (err) {
    run.error = msg(err);
  }
  return run;
}

function failuresText(m: Measured): string {
  if (m.failed === 0) return '0';
  const why = Object.entries(m.failures)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([reason, n]) => `${reason} ${count(n)}`);
  return `${count(m.failed)} (${why.join(', ')})`;
}

function row(run: ClientRun): string[] {
  const m = run.measured;
  if (!m) {
    const blank = Array<string>(HEADER.length - 2).fill('—');
    return [run.name, `failed: ${run.error ?? 'no result'}`, ...blank];
  }
  return [
    run.name,
    `${count(m.sent)}${m.late > 0 ? ` (${count(m.late)} late, not sent)` : ''}`,
    count(m.answered),
    failuresText(m),
    percent(m.cpuUs, m.windowMs),
    m.sent > 0 ? `${Math.round(m.cpuUs / m.sent)} µs` : '—',
    `${Math.round(m.rssMaxBytes / 1e6)} MB`,
    run.servers ? percent(run.servers.cpuUs, m.windowMs) : '—',
    run.servers ? count(run.servers.connections) : '—',
  ].map((cell) => cell.replace(/\|/g, '\\|'));
}

/** The clients' heap: as deployed (daemonset.yaml sizes it for the pod), unless told otherwise. */
function clientNodeOptions(): { value: string; text: string } {
  const told = process.env.BENCH_PEER_CLIENT_NODE_OPTIONS;
  if (told === undefined) {
    const value = manifestNodeOptions();
    return { value, text: `daemonset.yaml's NODE_OPTIONS \`${value}\`, as knh runs` };
  }
  return {
    value: told,
    text:
      told === ''
        ? "Node's default heap: BENCH_PEER_CLIENT_NODE_OPTIONS empty"
        : `BENCH_PEER_CLIENT_NODE_OPTIONS \`${told}\``,
  };
}

export async function runPeerClientBench({
  peers = 5_000,
  windowSeconds = 12,
  warmupSeconds = 3,
  progress = () => undefined,
}: {
  peers?: number;
  windowSeconds?: number;
  warmupSeconds?: number;
  progress?: (text: string) => void;
} = {}): Promise<{ runs: ClientRun[]; markdown: string; missed: string[] }> {
  checkOpenFiles(peers);
  const facts = machineFacts();
  const began = Date.now();
  const timeoutMs = parseDuration(defaultOf('PROBE_TIMEOUT')) ?? 1_000;
  const nodeOptions = clientNodeOptions();
  const children = new Set<ChildProcess>();
  let sim: SimulatorProcess | null = null;
  // Whatever happens (an error, Ctrl-C and process.exit), no client or server process outlives us.
  const killAll = () => {
    children.forEach((c) => c.kill('SIGKILL'));
    sim?.kill();
  };
  process.on('exit', killAll);
  const runs: ClientRun[] = [];
  try {
    progress(`peer client: starting ${count(peers)} servers`);
    const started = await SimulatorProcess.start({ count: peers, secret: null, others: [] });
    sim = started.sim;
    const addresses = Array.from({ length: peers }, (_, i) =>
      simulatedAddress(i, started.firstPort),
    );
    const order = {
      addresses,
      timeoutMs,
      warmupMs: warmupSeconds * 1_000,
      windowMs: windowSeconds * 1_000,
    };
    for (const client of CLIENTS) {
      const run = await measureClient(client, sim, order, nodeOptions.value, children);
      runs.push(run);
      const m = run.measured;
      progress(
        m
          ? `peer client ${run.kind}: sent ${m.sent}, answered ${m.answered}, failed ${m.failed}, CPU ${percent(m.cpuUs, m.windowMs)}, RSS max ${Math.round(m.rssMaxBytes / 1e6)} MB`
          : `peer client ${run.kind}: failed: ${run.error}`,
      );
    }
  } finally {
    await sim?.stop();
    process.off('exit', killAll);
  }
  const missed = runs.filter((r) => r.measured === null).map((r) => `peer client: ${r.kind}`);
  const markdown = `${SECTION}

Produced by \`npm run bench\` (bench/peer-client.ts; alone: \`npm run bench:peer-client\`) on ${facts.date}. ${count(peers)} servers in one process on ${SIMULATED_IP}, a port each: the scale bench's simulated peers (test/support/peer-simulator.ts), whose \`node:http\` server answers \`GET /ping\` as a knh follower does. Each client in turn, in a fresh process of its own (${nodeOptions.text}), sends ${count(peers)} keep-alive \`GET /ping\` a second, to each peer once a second, evenly (every 5 ms, what is due; a client more than 50 ms behind skips the rest: late, not sent), with knh's request headers, each bounded by PROBE_TIMEOUT's default (${timeoutMs / 1000} s), and judges every answer as knh's client judges a ping's (a 2xx whose body is a valid ping-response), so that the clients differ in their HTTP alone. After a ${warmupSeconds} s warm-up, a ${windowSeconds} s window: the requests sent in it, and those answered (accepted) and failed in it; the client process's CPU over it (\`process.cpuUsage\`), as % of one core and per request sent; its RSS at most (VmRSS sampled every 200 ms, from its start to the window's end); the servers' process's CPU over the window, and the connections they accepted in it (with keep-alive, none unless a client opens more). ${facts.nproc} CPUs (${facts.cpu}), Node ${facts.node}, ${facts.os}; load average at start ${facts.load}. Whole run: ${Math.round((Date.now() - began) / 1000)} s.

${table(HEADER, runs.map(row))}
`;
  return { runs, markdown, missed };
}

/** For bench.ts: the section, or null markdown when skipped (its block keeps the last figures). */
export async function peerClientSection(progress: (text: string) => void): Promise<SectionResult> {
  if (process.env.BENCH_PEER_CLIENT === '0') {
    progress('peer client bench skipped: BENCH_PEER_CLIENT=0');
    return { markdown: null, missed: [] };
  }
  try {
    const result = await runPeerClientBench({
      peers: positiveInt('BENCH_PEER_CLIENT_PEERS', 5_000),
      windowSeconds: positiveInt('BENCH_PEER_CLIENT_SECONDS', 12),
      warmupSeconds: positiveInt('BENCH_PEER_CLIENT_WARMUP_SECONDS', 3),
      progress,
    });
    return { markdown: result.markdown, missed: result.missed };
  } catch (err) {
    progress(`peer client bench failed: ${msg(err)}`);
    return { markdown: `${SECTION}\n\nFailed: ${msg(err)}.\n`, missed: ['peer client'] };
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  runSectionAlone(peerClientSection);
}
