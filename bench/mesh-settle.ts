// The mesh-size benchmark (issue "Scale to 5,000 nodes"): a real mesh of 50 knh processes on this
// machine, started one at a time in a random order, must settle within 3 s after the last one has
// started; then its coordinator is crashed (SIGKILL) and the 49 others must follow a successor
// within 3 s. Counts the elections and election messages each phase cost and the coordinator's
// CPU. A section of docs/benchmarks.md.
//
// Run from bench.ts (BENCH_MESH=0 skips it), or alone: `node dist/bench/mesh-settle-main.js`.
// BENCH_REPEAT (default 3 here) fresh meshes; BENCH_MESH_SIZE (default 50) nodes each;
// BENCH_MESH_STAGGER_MS (default 200): least time between two spawns; BENCH_MESH_STARTING
// (default 1): processes starting up at once (the next is spawned when one is listening).
// A failed run leaves every node's log lines in test-output/bench/ (every run: BENCH_MESH_EVIDENCE=1).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { compareRank } from '../src/wire/node-ref.js';
import type { PingResponse } from '../src/wire/peer-messages.js';
import { LocalMesh, type LogLine, type MeshNode } from '../src/demo/mesh.js';
import { allAlive, clusterStatusOf } from '../src/demo/received-webhooks.js';
import { Receiver, type ReceivedWebhook } from '../src/demo/webhook-sink.js';
import { loadSchemas } from '../src/wire/schemas.js';
import { agreedEpoch } from '../test/support/agreement.js';
import { pingNode, sampleOf } from '../test/support/loopback-ips-mesh.js';
import { meshPorts } from '../test/support/mesh-ports.js';
import { positiveInt } from './entry.js';
import { rssOf } from './proc-usage.js';
import { machineFacts, median, passed, resultsTable, table, type Row } from './report.js';
import type { SectionResult } from './benchmarks-doc.js';

/** Where a failed run leaves its evidence: every node's log lines and the webhooks. */
const EVIDENCE_DIR = fileURLToPath(new URL('../../test-output/bench/', import.meta.url));
const SECTION = '## Mesh of 50 on loopback: settling and a crashed coordinator';
/** The issue's targets: settled, and a successor followed and reporting, within 3 s. */
const TARGET_MS = 3_000;
/** Bound on one process's start-up (spawn → `listening`), on a loaded 2-CPU machine. */
const STARTUP_WAIT_MS = 30_000;
/** Bound on settling and on a takeover: ten times the target, so a slow run is measured. */
const SETTLE_WAIT_MS = 30_000;
/** After settling, the mesh is left alone this long (the coordinator's CPU while leading). */
const QUIET_MS = 3_000;
/** Runs tried again, in all, because a node did not start. */
const MAX_START_FAILURES = 2;
/** How often the CPU time of every node (and of the machine) is read from /proc. */
const CPU_SAMPLE_MS = 100;
/** Linux's USER_HZ: the unit of utime/stime in /proc/<pid>/stat (100 on every Linux port). */
const CLOCK_TICKS = 100;
/** /ping sweeps that check an agreement the logs show are at least this far apart. */
const SWEEP_MS = 250;

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** An election count in words, for the progress lines. */
const said = (c: ElectionCount) =>
  `${c.elections} elections (${c.deferred} deferred), ${c.sent} election messages sent, ${c.received} received`;

/** Bounded: resolves when `p` settles or after `ms`, never rejects. */
const bounded = (p: Promise<unknown>, ms = 10_000) =>
  Promise.race([p.catch(() => undefined), sleep(ms)]);

interface CpuSample {
  atMs: number;
  /** utime + stime of each node process, in clock ticks, by pid. */
  ticks: Map<number, number>;
  /** The machine's busy and total time (/proc/stat, first line), in clock ticks over all CPUs. */
  busy: number;
  total: number;
}

/** CPU time of the node processes and of the whole machine, sampled from /proc (Linux). */
class CpuSampler {
  readonly available = existsSync('/proc/stat');
  private samples: CpuSample[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly pids: () => number[]) {}

  start(): void {
    if (!this.available || this.timer) return;
    this.samples = [];
    this.sample();
    this.timer = setInterval(() => this.sample(), CPU_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** CPUs `pid` used on average from `fromMs` to `toMs` (1 = one CPU all the time); null: unknown. */
  process(pid: number | undefined, fromMs: number, toMs: number): number | null {
    const w = this.window(fromMs, toMs);
    if (!w || pid === undefined) return null;
    const a = w.from.ticks.get(pid);
    const b = w.to.ticks.get(pid);
    if (a === undefined || b === undefined) return null;
    return (b - a) / CLOCK_TICKS / ((w.to.atMs - w.from.atMs) / 1000);
  }

  /** CPUs busy on the whole machine (every process, other users' included) over that span. */
  machine(fromMs: number, toMs: number): number | null {
    const w = this.window(fromMs, toMs);
    if (!w || w.to.total === w.from.total) return null;
    return ((w.to.busy - w.from.busy) / (w.to.total - w.from.total)) * availableParallelism();
  }

  /** The samples enclosing [fromMs, toMs]: the last one at or before, the first one at or after. */
  private window(fromMs: number, toMs: number): { from: CpuSample; to: CpuSample } | null {
    const before = this.samples.filter((s) => s.atMs <= fromMs).at(-1) ?? this.samples[0];
    const after = this.samples.find((s) => s.atMs >= toMs) ?? this.samples.at(-1);
    return before && after && after.atMs > before.atMs ? { from: before, to: after } : null;
  }

  private sample(): void {
    const ticks = new Map<number, number>();
    for (const pid of this.pids()) {
      try {
        // pid (comm) state ppid …: utime and stime are the 12th and 13th fields after the ')'.
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks.set(pid, Number(fields[11]) + Number(fields[12]));
      } catch {
        // The process has just exited.
      }
    }
    const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .split(/\s+/)
      .slice(1)
      .map(Number)
      .filter((n) => Number.isFinite(n));
    const total = cpu.slice(0, 8).reduce((sum, n) => sum + n, 0); // user … steal
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0); // idle + iowait
    this.samples.push({ atMs: Date.now(), ticks, busy: total - idle, total });
  }
}

/**
 * Loaded into every node (NODE_OPTIONS=--import): writes one line on stderr for each POST /election
 * the node's HTTP server receives, before anything else looks at it. Nothing in knh counts election
 * messages at the receiving side, and its log lines may not name every message it sends.
 */
const RECEIVED_MARK = 'knh-bench:election-request';
const COUNT_RECEIVED = `import http from 'node:http';
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (event, req, ...rest) {
  if (event === 'request' && req.method === 'POST' && req.url === '/election') {
    process.stderr.write('${RECEIVED_MARK} ' + Date.now() + '\\n');
  }
  return emit.call(this, event, req, ...rest);
};
`;
const NODE_OPTIONS = `--import=data:text/javascript;base64,${Buffer.from(COUNT_RECEIVED).toString('base64')}`;

/** An `election-*` log line: when, whether it starts an election, how many peers it asks. */
interface ElectionLine {
  atMs: number;
  kind: 'started' | 'deferred' | 'other';
  /** The length of its `to` list (election messages sent); null: it has none. */
  sent: number | null;
}

export interface ElectionCount {
  /** `election-started` lines: elections held. */
  elections: number;
  /** `election-deferred` lines: elections put off (waiting for a successor to announce itself). */
  deferred: number;
  /** Election messages sent: the lengths of the `to` lists of every `election-*` line. */
  sent: number;
  /** POST /election requests the nodes received (not those to a node down or not yet up). */
  received: number;
  /** `election-started` lines without a `to` list (a changed log format): nothing counted sent. */
  unknown: number;
}

/** When each coordinator-changed line of a node was logged, and whom it named. */
interface Follow {
  atMs: number;
  address: string | null;
}

export interface MeshRunResult {
  run: number;
  /** Why the run stopped early, if it did. */
  error: string | null;
  /** It stopped because a node did not start (then the run is tried again with a fresh mesh). */
  startFailed: boolean;
  /** First spawn → the last node logging `listening`. */
  startupMs: number | null;
  /** Spawn → `listening` of each node. */
  nodeStartupMs: number[];
  /** Where the highest-ranked node came in the start order (1 = first). */
  topPosition: number;
  /** The last node listening → settled (all follow the top node, its full cluster status). */
  settleMs: number | null;
  /** The last node listening → the last node starting to follow the top node. */
  settleFollowMs: number | null;
  /** The last node listening → the top node's cluster status with every peer alive. */
  settleStatusMs: number | null;
  /** First spawn → settled. */
  startElections: ElectionCount | null;
  /** The last node listening → settled. */
  settleElections: ElectionCount | null;
  /** The sum of every node's knh_elections_total, read after the quiet period. */
  metricsElections: number | null;
  /** The election log lines up to that read, to compare with the metrics. */
  loggedElectionsAtRead: number | null;
  /** CPUs used by the top node / the whole machine from the last node listening to settled. */
  coordinatorCpu: number | null;
  machineCpu: number | null;
  /** CPUs used by the coordinator / all 50 nodes in the quiet period after settling. */
  leadingCpu: number | null;
  meshCpu: number | null;
  /** The followers' CPU (median) in the same window, and their RSS (median) at its end. */
  follower: { cpu: number; rssBytes: number } | null;
  /** SIGKILL of the coordinator → the 49 others following the successor, and its cluster status. */
  takeoverMs: number | null;
  takeoverFollowMs: number | null;
  takeoverStatusMs: number | null;
  takeoverElections: ElectionCount | null;
  /** CPUs used by the successor / the machine from the kill to the takeover. */
  successorCpu: number | null;
  takeoverMachineCpu: number | null;
}

function emptyResult(run: number, topPosition: number): MeshRunResult {
  return {
    run,
    error: null,
    startFailed: false,
    startupMs: null,
    nodeStartupMs: [],
    topPosition,
    settleMs: null,
    settleFollowMs: null,
    settleStatusMs: null,
    startElections: null,
    settleElections: null,
    metricsElections: null,
    loggedElectionsAtRead: null,
    coordinatorCpu: null,
    machineCpu: null,
    leadingCpu: null,
    meshCpu: null,
    follower: null,
    takeoverMs: null,
    takeoverFollowMs: null,
    takeoverStatusMs: null,
    takeoverElections: null,
    successorCpu: null,
    takeoverMachineCpu: null,
  };
}

/** A random 127.X.Y. prefix: away from 127.0.0.x and from other meshes, so none hears another. */
function randomPrefix(): string {
  const x = 16 + Math.floor(Math.random() * 200);
  const y = 1 + Math.floor(Math.random() * 250);
  return `127.${x}.${y}.`;
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Time of a log line (the node's own clock: the same machine's). */
const timeOf = (line: LogLine) => Date.parse(line.time);

export interface MeshSettleOptions {
  size: number;
  repeat: number;
  staggerMs: number;
  starting: number;
  progress: (text: string) => void;
}

/** One fresh mesh: start, settle, quiet period, SIGKILL of the coordinator, takeover, stop. */
class MeshRun {
  readonly mesh: LocalMesh;
  readonly result: MeshRunResult;
  private readonly nodes: MeshNode[];
  private readonly order: MeshNode[];
  private readonly top: MeshNode;
  private readonly successor: MeshNode;
  private readonly follows = new Map<MeshNode, Follow[]>();
  private readonly listeningAt = new Map<MeshNode, number>();
  private readonly elections: ElectionLine[] = [];
  /** When each POST /election was received (any node). */
  private readonly received: number[] = [];
  /** Per node: the start of a stderr line not yet ended. */
  private readonly stderrRest = new Map<MeshNode, string>();
  private readonly killed = new Set<MeshNode>();
  private readonly cpu: CpuSampler;

  constructor(
    private readonly receiver: Receiver,
    private readonly opts: MeshSettleOptions,
    run: number,
    prefix: string,
    port: number,
  ) {
    const hosts = Array.from({ length: opts.size }, (_, i) => `${prefix}${i + 2}`);
    this.mesh = new LocalMesh({
      size: opts.size,
      hosts,
      maxLogLines: 1_000,
      env: {
        NODE_OPTIONS,
        PEER_STATUS_URL: receiver.url('/peer'),
        CLUSTER_STATUS_URL: receiver.url('/cluster'),
      },
    });
    // LocalMesh.start() spawns every node at once; these are started one by one with startNode(),
    // so the node list (and with it PEERS, the same for all) is filled in here.
    hosts.forEach((host, i) =>
      this.mesh.nodes.push({
        index: i + 1,
        name: `node-${i + 1}`,
        host,
        address: `${host}:${port}`,
        port,
        process: null,
        logs: [],
      }),
    );
    this.nodes = this.mesh.nodes;
    const ranked = [...this.nodes].sort((a, b) => compareRank(b.address, a.address));
    this.top = ranked[0] as MeshNode;
    this.successor = ranked[1] as MeshNode;
    this.order = shuffled(this.nodes);
    this.result = emptyResult(run, this.order.indexOf(this.top) + 1);
    this.cpu = new CpuSampler(() =>
      this.nodes.flatMap((n) => (n.process?.pid === undefined ? [] : [n.process.pid])),
    );
    this.mesh.on('log', (node: MeshNode, line: LogLine) => this.onLog(node, line));
    this.mesh.on('exit', (node: MeshNode, code: number | null, signal: string | null) => {
      if (!this.killed.has(node)) {
        // Its last words: the error it stopped on is logged on stdout, as every line is.
        const last = node.logs.slice(-2).map((l) => JSON.stringify(l).slice(0, 600));
        this.opts.progress(
          `  ${node.name} exited by itself (code ${code}, signal ${signal}); last log lines: ${last.join(' ')}`,
        );
      }
    });
    this.mesh.on('stderr', (node: MeshNode, text: string) => this.onStderr(node, text));
  }

  private onLog(node: MeshNode, line: LogLine): void {
    switch (line.event) {
      case 'listening':
        this.listeningAt.set(node, timeOf(line));
        return;
      case 'coordinator-changed': {
        const address = line.coordinatorAddress;
        const list = this.follows.get(node) ?? [];
        list.push({ atMs: timeOf(line), address: typeof address === 'string' ? address : null });
        this.follows.set(node, list);
        return;
      }
    }
    if (typeof line.event === 'string' && line.event.startsWith('election-')) {
      const to = line.to;
      const kinds = { 'election-started': 'started', 'election-deferred': 'deferred' } as const;
      this.elections.push({
        atMs: timeOf(line),
        kind: kinds[line.event as keyof typeof kinds] ?? 'other',
        sent: Array.isArray(to) ? to.length : null,
      });
    }
  }

  /** Counts the instrumentation's lines; anything else a node writes on stderr is shown. */
  private onStderr(node: MeshNode, text: string): void {
    const lines = `${this.stderrRest.get(node) ?? ''}${text}`.split('\n');
    this.stderrRest.set(node, lines.pop() ?? '');
    for (const l of lines) {
      if (l.startsWith(`${RECEIVED_MARK} `))
        this.received.push(Number(l.slice(RECEIVED_MARK.length + 1)));
      else if (l.trim() !== '') this.opts.progress(`  ${node.name} stderr: ${l.slice(0, 500)}`);
    }
  }

  private count(fromMs: number, toMs: number): ElectionCount {
    const lines = this.elections.filter((e) => e.atMs >= fromMs && e.atMs <= toMs);
    const started = lines.filter((e) => e.kind === 'started');
    return {
      elections: started.length,
      deferred: lines.filter((e) => e.kind === 'deferred').length,
      sent: lines.reduce((sum, e) => sum + (e.sent ?? 0), 0),
      received: this.received.filter((t) => t >= fromMs && t <= toMs).length,
      unknown: started.filter((e) => e.sent === null).length,
    };
  }

  async run(): Promise<MeshRunResult> {
    const r = this.result;
    this.cpu.start();
    try {
      const { firstSpawnMs, lastListeningMs } = await this.startAll().catch((err: unknown) => {
        r.startFailed = true;
        throw err;
      });
      const settled = await this.settle(this.nodes, this.top, lastListeningMs, 0, true);
      r.settleMs = settled.atMs - lastListeningMs;
      r.settleFollowMs = settled.followMs - lastListeningMs;
      r.settleStatusMs = settled.statusMs - lastListeningMs;
      r.startElections = this.count(firstSpawnMs, settled.atMs);
      r.settleElections = this.count(lastListeningMs, settled.atMs);
      r.coordinatorCpu = this.cpu.process(this.top.process?.pid, lastListeningMs, settled.atMs);
      r.machineCpu = this.cpu.machine(lastListeningMs, settled.atMs);
      this.opts.progress(
        `  settled ${r.settleMs} ms after the last node listened (all following ${this.top.name} at ${r.settleFollowMs} ms, its full cluster status at ${r.settleStatusMs} ms, epoch ${settled.epoch}); ${said(r.startElections)} since the first spawn`,
      );

      const quietFrom = Date.now();
      await sleep(QUIET_MS);
      const quietTo = Date.now();
      r.leadingCpu = this.cpu.process(this.top.process?.pid, quietFrom, quietTo);
      const pids = this.nodes.map((n) => n.process?.pid);
      const perNode = pids.map((pid) => this.cpu.process(pid, quietFrom, quietTo));
      r.meshCpu = perNode.every((c) => c !== null)
        ? perNode.reduce<number>((sum, c) => sum + (c ?? 0), 0)
        : null;
      const followers = this.nodes.filter((n) => n !== this.top).map((n) => n.process?.pid);
      const cpus = followers.map((pid) => this.cpu.process(pid, quietFrom, quietTo));
      const rss = followers.map((pid) => (pid === undefined ? null : rssOf(pid)));
      if (cpus.every((c) => c !== null) && rss.every((b) => b !== null)) {
        r.follower = { cpu: median(cpus), rssBytes: median(rss) };
      }
      await this.readElectionMetrics();

      await this.crashCoordinator(settled.epoch);
      if (process.env.BENCH_MESH_EVIDENCE === '1') {
        this.opts.progress(`  the nodes' logs: ${this.saveEvidence()}`);
      }
    } catch (err) {
      r.error = msg(err);
      this.opts.progress(`  run ${r.run}: ${r.error}`);
      this.opts.progress(`  the nodes' logs: ${this.saveEvidence()}`);
    } finally {
      this.cpu.stop();
    }
    return r;
  }

  /** Spawns the nodes in `order`: at most `starting` at once, `staggerMs` apart at least. */
  private async startAll(): Promise<{ firstSpawnMs: number; lastListeningMs: number }> {
    const { staggerMs, starting, progress, size } = this.opts;
    progress(
      `  spawning ${size} nodes on ${this.nodes[0]?.host ?? ''}… (one port ${this.top.port}), ${this.top.name} (the top) is #${this.result.topPosition} in the order`,
    );
    const firstSpawnMs = Date.now();
    let lastSpawnMs = 0;
    const inFlight = new Set<Promise<void>>();
    const startupMs: number[] = [];
    // A holder, not a variable: the failure is set in a callback, which narrowing does not see.
    const failed: { error: Error | null } = { error: null };
    for (const [i, node] of this.order.entries()) {
      while (inFlight.size >= starting) await Promise.race(inFlight);
      if (failed.error) throw failed.error;
      const wait = lastSpawnMs + staggerMs - Date.now();
      if (wait > 0) await sleep(wait);
      lastSpawnMs = Date.now();
      const spawnMs = lastSpawnMs;
      this.mesh.startNode(node.index);
      const up: Promise<void> = this.listening(node)
        .then(
          (line) => {
            startupMs.push(timeOf(line) - spawnMs);
          },
          (err: unknown) => {
            failed.error = new Error(`${node.name} did not start: ${msg(err)}`);
          },
        )
        .finally(() => inFlight.delete(up));
      inFlight.add(up);
      if ((i + 1) % 10 === 0 || i + 1 === size) {
        progress(`  spawned ${i + 1}/${size} after ${Date.now() - firstSpawnMs} ms`);
      }
    }
    await Promise.all(inFlight);
    if (failed.error) throw failed.error;
    const lastListeningMs = Math.max(...this.listeningAt.values());
    this.result.nodeStartupMs = startupMs;
    this.result.startupMs = lastListeningMs - firstSpawnMs;
    progress(
      `  all ${size} listening after ${this.result.startupMs} ms (spawn → listening: median ${median(startupMs)} ms, max ${Math.max(...startupMs)} ms)`,
    );
    return { firstSpawnMs, lastListeningMs };
  }

  /** Node `node`'s `listening` line; rejects if it exits first or is not up within the bound. */
  private listening(node: MeshNode): Promise<LogLine> {
    const child = node.process;
    let onExit = () => undefined as void;
    const exited = new Promise<never>((_, reject) => {
      onExit = () => reject(new Error(`${node.name} exited while starting`));
      child?.once('exit', onExit);
    });
    const up = this.mesh.waitForLog(node.index, (l) => l.event === 'listening', STARTUP_WAIT_MS);
    return Promise.race([up, exited]).finally(() => child?.off('exit', onExit));
  }

  /**
   * Waits until every node of `among` follows `leader` (their latest coordinator-changed line names
   * it), the receiver has a cluster status from `leader` received since `sinceMs` (listing every
   * other node of `among` alive, if `fullStatus`), and a /ping sweep confirms it: every node answers,
   * all name `leader` at one epoch above `epochAbove`, only `leader` says it is coordinator, and the
   * cluster status is of that epoch. The moments come from the log lines and the receiver, not from
   * the sweep, so polling does not add to them.
   */
  private async settle(
    among: readonly MeshNode[],
    leader: MeshNode,
    sinceMs: number,
    epochAbove: number,
    fullStatus: boolean,
  ): Promise<{ atMs: number; followMs: number; statusMs: number; epoch: number }> {
    const deadline = Date.now() + SETTLE_WAIT_MS;
    const statusOk = (w: ReceivedWebhook, epoch?: number) => {
      const c = clusterStatusOf(w);
      return (
        c !== null &&
        w.receivedMs >= sinceMs &&
        c.coordinator_address === leader.address &&
        (!fullStatus || allAlive(c, among.length - 1)) &&
        (epoch === undefined || c.epoch === epoch)
      );
    };
    let lastSweep = 0;
    let seen = '';
    while (Date.now() < deadline) {
      const latest = among.map((n) => this.follows.get(n)?.at(-1));
      const following = latest.filter(
        (f): f is Follow => f !== undefined && f.address === leader.address,
      );
      const status = this.receiver.received.find((w) => statusOk(w));
      seen = `${following.length}/${among.length} following ${leader.name}, ${status ? 'a' : 'no'} cluster status from it`;
      if (following.length === among.length && status && Date.now() - lastSweep >= SWEEP_MS) {
        lastSweep = Date.now();
        const answers: (PingResponse | null)[] = await Promise.all(among.map((n) => pingNode(n)));
        const epoch = agreedEpoch(answers, leader.address, epochAbove);
        const confirmed =
          epoch === undefined ? undefined : this.receiver.received.find((w) => statusOk(w, epoch));
        if (epoch !== undefined && confirmed) {
          // The latest lines again: a node may have changed its mind during the sweep.
          const times = among.map((n) => this.follows.get(n)?.at(-1));
          if (times.every((f) => f?.address === leader.address)) {
            const followMs = Math.max(...times.map((f) => f?.atMs ?? 0));
            const statusMs = confirmed.receivedMs;
            return { atMs: Math.max(followMs, statusMs), followMs, statusMs, epoch };
          }
        }
        const silent = answers.filter((a) => a === null).length;
        const others = answers.filter((a) => a && a.coordinator?.address !== leader.address);
        seen += `; last /ping sweep: ${silent} silent, ${others.length} naming another coordinator, epochs ${[...new Set(answers.map((a) => a?.epoch))].join(',')}`;
      }
      await sleep(50);
    }
    // Whom the others follow instead, and how many elections they held meanwhile.
    const named = new Map<string, number>();
    for (const n of among) {
      const address = this.follows.get(n)?.at(-1)?.address ?? null;
      const name = address === null ? 'none' : (this.mesh.byAddress(address)?.name ?? address);
      named.set(name, (named.get(name) ?? 0) + 1);
    }
    const followed = [...named].map(([name, count]) => `${name} ×${count}`).join(', ');
    const held = this.count(sinceMs, Date.now());
    throw new Error(
      `not settled within ${SETTLE_WAIT_MS / 1000} s: ${seen}; latest coordinator-changed lines name ${followed}; ${said(held)} meanwhile`,
    );
  }

  /** Sums knh_elections_total over the nodes (from process start), next to the logged count. */
  private async readElectionMetrics(): Promise<void> {
    const texts = await Promise.all(
      this.nodes.map(async (n) => {
        try {
          const res = await fetch(`http://${n.address}/metrics`, {
            signal: AbortSignal.timeout(5_000),
          });
          return res.ok ? await res.text() : null;
        } catch {
          return null;
        }
      }),
    );
    const readMs = Date.now();
    const values = texts.map((t) => (t === null ? undefined : sampleOf(t, 'knh_elections_total')));
    if (values.every((v) => v !== undefined)) {
      this.result.metricsElections = values.reduce<number>((sum, v) => sum + (v ?? 0), 0);
    }
    this.result.loggedElectionsAtRead = this.count(0, readMs).elections;
  }

  private async crashCoordinator(settledEpoch: number): Promise<void> {
    const r = this.result;
    const survivors = this.nodes.filter((n) => n !== this.top);
    const killedMs = Date.now();
    this.killed.add(this.top);
    await bounded(this.mesh.kill(this.top.index, 'SIGKILL'));
    const taken = await this.settle(survivors, this.successor, killedMs, settledEpoch, false);
    r.takeoverMs = taken.atMs - killedMs;
    r.takeoverFollowMs = taken.followMs - killedMs;
    r.takeoverStatusMs = taken.statusMs - killedMs;
    r.takeoverElections = this.count(killedMs, taken.atMs);
    r.successorCpu = this.cpu.process(this.successor.process?.pid, killedMs, taken.atMs);
    r.takeoverMachineCpu = this.cpu.machine(killedMs, taken.atMs);
    this.opts.progress(
      `  ${this.top.name} killed: all ${survivors.length} following ${this.successor.name} after ${r.takeoverFollowMs} ms, its cluster status after ${r.takeoverStatusMs} ms; ${said(r.takeoverElections)}`,
    );
  }

  /** Every node's kept log lines and the webhooks, in test-output/bench/; returns the file. */
  private saveEvidence(): string {
    mkdirSync(EVIDENCE_DIR, { recursive: true });
    const file = `${EVIDENCE_DIR}mesh-settle-${new Date().toISOString().replace(/[:.]/g, '-')}-run-${this.result.run}.log`;
    const parts = [
      '== webhooks',
      ...this.receiver.received.map(
        (w) => `${new Date(w.receivedMs).toISOString()} ${w.path} ${JSON.stringify(w.body)}`,
      ),
      ...this.nodes.flatMap((n) => [
        `== ${n.name} ${n.address}`,
        ...n.logs.map((l) => JSON.stringify(l)),
      ]),
    ];
    writeFileSync(file, `${parts.join('\n')}\n`);
    return file;
  }

  /** Kills every node (SIGKILL), bounded; never throws. */
  async stop(): Promise<void> {
    for (const n of this.nodes) this.killed.add(n);
    await bounded(this.mesh.stop());
  }

  /** Synchronous: for process exit and signals. */
  killNow(): void {
    for (const n of this.nodes) {
      this.killed.add(n);
      n.process?.kill('SIGKILL');
    }
  }
}

export interface MeshSettleResult {
  rows: Row[];
  runs: MeshRunResult[];
  markdown: string;
  missed: string[];
}

const secs = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`);
const pct = (cpus: number | null) => (cpus === null ? '—' : `${Math.round(cpus * 100)} %`);
const counted = (c: ElectionCount | null) =>
  c === null
    ? '—'
    : `${c.elections} / ${c.sent} / ${c.received}${c.deferred > 0 ? `, ${c.deferred} deferred` : ''}${c.unknown > 0 ? ` (${c.unknown} without a \`to\` list)` : ''}`;

function runsTable(runs: readonly MeshRunResult[], size: number): string {
  return table(
    [
      'Run',
      'Top node started',
      'Start-up (each: median / max)',
      'Settle: follow / status',
      'Elections / messages sent / received: first spawn → settled (last start → settled)',
      'knh_elections_total, summed',
      'Coordinator CPU settling (machine)',
      `Coordinator CPU leading ${size - 1} (all ${size} nodes)`,
      'A follower (median): CPU, RSS',
      'Takeover: follow / status',
      'Elections / messages sent / received: kill → takeover',
      'Successor CPU (machine)',
    ],
    runs.map((r) => [
      `${r.run}${r.error ? ` (stopped: ${r.error.replace(/\|/g, '\\|').slice(0, 200)})` : ''}`,
      `#${r.topPosition} of ${size}`,
      r.startupMs === null
        ? '—'
        : `${secs(r.startupMs)} (${secs(median(r.nodeStartupMs))} / ${secs(Math.max(...r.nodeStartupMs))})`,
      `${secs(r.settleFollowMs)} / ${secs(r.settleStatusMs)}`,
      r.startElections === null
        ? '—'
        : `${counted(r.startElections)} (${counted(r.settleElections)})`,
      r.metricsElections === null
        ? '—'
        : `${r.metricsElections}${r.loggedElectionsAtRead !== null && r.loggedElectionsAtRead !== r.metricsElections ? ` (${r.loggedElectionsAtRead} logged)` : ''}`,
      `${pct(r.coordinatorCpu)} (${r.machineCpu === null ? '—' : `${r.machineCpu.toFixed(1)} CPUs`})`,
      `${pct(r.leadingCpu)} (${pct(r.meshCpu)})`,
      r.follower ? `${pct(r.follower.cpu)}, ${Math.round(r.follower.rssBytes / 1e6)} MB` : '—',
      `${secs(r.takeoverFollowMs)} / ${secs(r.takeoverStatusMs)}`,
      counted(r.takeoverElections),
      `${pct(r.successorCpu)} (${r.takeoverMachineCpu === null ? '—' : `${r.takeoverMachineCpu.toFixed(1)} CPUs`})`,
    ]),
  );
}

/** Runs the benchmark: `repeat` fresh meshes. Every node is killed before it returns or throws. */
export async function runMeshSettleBench(opts: MeshSettleOptions): Promise<MeshSettleResult> {
  const { size, repeat, staggerMs, starting, progress } = opts;
  // Nodes on 127.X.Y.2 … 127.X.Y.(size + 1).
  if (size < 3 || size > 253) throw new Error(`BENCH_MESH_SIZE=${size}: 3 to 253 nodes`);
  const facts = machineFacts();
  const began = Date.now();
  const receiver = await new Receiver({ schemas: loadSchemas(), maxKept: 50_000 }).start();
  let current: MeshRun | null = null;
  // Whatever happens (an error, Ctrl-C), no node process outlives the bench.
  const killAll = () => current?.killNow();
  const onSignal = (signal: NodeJS.Signals) => {
    killAll();
    // Alone (bench.ts has handlers of its own that exit), exit as the signal would have.
    if (process.listenerCount(signal) === 1) process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const signals = ['SIGINT', 'SIGTERM'] as const;
  process.on('exit', killAll);
  for (const signal of signals) process.on(signal, onSignal);
  const runs: MeshRunResult[] = [];
  let startFailures = 0;
  try {
    while (runs.length < repeat) {
      const run = runs.length + 1;
      const prefix = randomPrefix();
      const port = (await meshPorts(1, `${prefix}2`))[0] as number;
      current = new MeshRun(receiver, opts, run, prefix, port);
      progress(`mesh run ${run}/${repeat}: ${size} nodes, started one at a time in a random order`);
      let result: MeshRunResult;
      try {
        result = await current.run();
      } finally {
        await current.stop();
        current = null;
      }
      await sleep(1_000);
      // A node that did not start (a port taken meanwhile, dist/ rebuilt under it): a fresh mesh.
      if (result.startFailed && startFailures < MAX_START_FAILURES) {
        startFailures++;
        progress(`  a node did not start; run ${run} again with a fresh mesh`);
        continue;
      }
      runs.push(result);
    }
  } finally {
    killAll();
    await bounded(receiver.close());
    process.off('exit', killAll);
    for (const signal of signals) process.off(signal, onSignal);
  }

  const sample = (pick: (r: MeshRunResult) => number | null) => runs.map(pick);
  const spacing = `${starting === 1 ? 'one at a time' : `at most ${starting} at a time`}, at least ${staggerMs} ms apart`;
  const rows: Row[] = [
    {
      kind: 'timing',
      name: `Mesh of ${size} settled: last process listening → all ${size} follow the top node and its cluster_status lists ${size - 1}/${size - 1} alive`,
      targetMs: TARGET_MS,
      knh: '—',
      samples: sample((r) => r.settleMs),
    },
    {
      kind: 'timing',
      name: `… start-up: first spawn → all ${size} listening (${spacing}, random order)`,
      targetMs: null,
      knh: '—',
      samples: sample((r) => r.startupMs),
    },
    {
      kind: 'timing',
      name: `Crashed coordinator of ${size} (SIGKILL) → all ${size - 1} follow the successor and its cluster_status arrives`,
      targetMs: TARGET_MS,
      knh: '—',
      samples: sample((r) => r.takeoverMs),
    },
  ];
  const missed = rows.filter((r) => passed(r) === false).map((r) => r.name);
  const totalSeconds = Math.round((Date.now() - began) / 1000);
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
  const markdown = `${SECTION.replace('50', String(size))}

Produced by bench/mesh-settle.ts (\`node dist/bench/mesh-settle-main.js\`, or \`npm run bench\`; \`BENCH_MESH=0\` skips it): ${repeat} run${repeat === 1 ? '' : 's'}, each a fresh mesh of ${size} real knh processes with default settings on this one machine, each on its own loopback IP (127.X.Y.2 … 127.X.Y.${size + 1}, random X.Y, one port), one static \`PEERS\` list for all, a random \`PEER_SECRET\`, webhooks to the in-process receiver. Target from issue "Scale to 5,000 nodes".

Run on ${facts.date}: ${facts.nproc} CPUs (nproc; ${facts.cpu}), ${facts.memory} RAM, Node ${facts.node}; load average (1/5/15 min) ${facts.load} at start, ${load} at the end. ${totalSeconds} s in all.

${resultsTable(rows)}

Each run (times in seconds; CPU in % of one CPU, the machine's in CPUs busy, every process of every user included):

${runsTable(runs, size)}

How it is measured:

- **Start-up**: the nodes are spawned in a random order, ${spacing}: the next is spawned once the previous one logs \`listening\` (its HTTP server is bound, so its \`/ping\` answers) — on ${facts.nproc} CPUs a knh process needs about half a second of CPU to start, so spawning faster only measures a saturated machine. Start-up is the first spawn to the last \`listening\` line.
- **Settled**: every node's latest \`coordinator-changed\` log line names the highest-ranked node (the highest IP), and the receiver has a \`cluster_status\` from it listing all ${size - 1} peers alive, received after the last node listened; a \`/ping\` sweep of all ${size} then confirms (every node answers, all name that node at one epoch, only it says it is coordinator, and the cluster status is of that epoch). The time is the later of the last node's \`coordinator-changed\` line and that webhook's arrival, minus the last \`listening\` line: the sweep confirms, it does not add its own delay.
- **Crashed coordinator**: after ${QUIET_MS / 1000} s left alone, SIGKILL to the coordinator; the same test for the ${size - 1} others and the second-highest node, with any \`cluster_status\` from it (received after the kill) and an epoch above the old one.
- **Elections / messages**: elections held are the nodes' \`election-started\` log lines (the sum of every node's \`knh_elections_total\`, read after the quiet period, checks them: in brackets the logged count at that moment when they differ; \`election-deferred\` lines, elections put off, are counted apart). Messages sent are the lengths of the \`to\` lists of those lines (and of any other \`election-*\` line with a \`to\` list): the higher-ranked peers a node asks (\`POST /election\`). Where an election asks in batches and logs only the first, that is a lower bound; hence messages received: every \`POST /election\` the nodes' HTTP servers received, counted by a hook loaded into each node (\`NODE_OPTIONS=--import\`, one stderr line a request), which misses only messages to a node down or not yet listening. Each is counted by its time, from the first spawn (in brackets: from the last node listening) to settled, and from the kill to the takeover.
- **CPU**: utime + stime of each node process from \`/proc/<pid>/stat\` and the machine's from \`/proc/stat\`, sampled every ${CPU_SAMPLE_MS} ms, over the sampled interval enclosing the span (so a span shorter than a few samples is rounded up to them): the top node while settling, the coordinator and all nodes over the quiet period, the successor during the takeover.
`;
  return { rows, runs, markdown, missed };
}

/**
 * The section for docs/benchmarks.md: run unless BENCH_MESH=0 (then null markdown: its block keeps
 * the last figures). Returns its markdown and the names of missed targets.
 */
export async function meshSettleSection(progress: (text: string) => void): Promise<SectionResult> {
  if (process.env.BENCH_MESH === '0') {
    progress('mesh bench skipped: BENCH_MESH=0');
    return { markdown: null, missed: [] };
  }
  const result = await runMeshSettleBench({
    size: positiveInt('BENCH_MESH_SIZE', 50),
    repeat: positiveInt('BENCH_REPEAT', 3),
    staggerMs: positiveInt('BENCH_MESH_STAGGER_MS', 200),
    starting: positiveInt('BENCH_MESH_STARTING', 1),
    progress,
  });
  return { markdown: result.markdown, missed: result.missed };
}
