// The scale benchmark: one real knh coordinator (its own process, default settings) leading 1,000
// and 5,000 simulated peers (bench/peer-sim-main.ts, another process) on loopback. Over a steady
// window it measures the coordinator's rounds, CPU and memory, whether every peer hears its
// heartbeats, and how the probes spread over the round interval; then how long a crashed and a
// black-holed peer take to be reported, and that no other peer is. A section of docs/benchmarks.md.
//
// Pair probing on (the default) the simulated peers report their paths as real nodes do; one more
// run at BENCH_SCALE_BASELINE peers (default 5000; 0: none) has it off (PAIR_PROBES=0, no reports),
// which is what the coordinator cost before it: the pair-probing runs are compared with it.
//
// BENCH_SCALE=0 skips it; BENCH_SCALE_SIZES (default 1000,5000); BENCH_SCALE_SECONDS (default 20)
// of steady window; BENCH_SCALE_MAX_RSS_MB (default 4096) stops a coordinator that swells past it;
// BENCH_SCALE_LOG=<file> appends the coordinator's log lines to that file (JSON, one a line), and
// its RSS each second (lines with `"bench": "rss"`);
// BENCH_SCALE_NODE_OPTIONS replaces daemonset.yaml's NODE_OPTIONS (to compare heap settings);
// BENCH_SCALE_DISCOVERY=static lists the peers in PEERS rather than in EndpointSlices (default
// kubernetes, as deployed: bench/scale-discovery.ts).
// Alone: `node dist/bench/scale-main.js`.
import { asDeployed, deployedText, manifestNodeOptions } from './manifest.js';
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { askStatus, type ReadTally } from './status-reads.js';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PeerStatusPayload } from '../src/wire/webhooks.js';
import { LocalMesh, type LogLine, type MeshNode } from '../src/demo/mesh.js';
import { Receiver, type ReceivedWebhook } from '../src/demo/webhook-sink.js';
import { loadSchemas } from '../src/wire/schemas.js';
import { sampleOf } from '../test/support/loopback-ips-mesh.js';
import {
  coordinatorPort,
  simulatedAddress,
  SIMULATED_IP,
  type ArrivalSpread,
  type SimulatorStats,
} from '../test/support/peer-simulator.js';
import { positiveInt } from './entry.js';
import { readSettings } from '../src/config/read-settings.js';
import { FULL_VIEW_PEERS, LARGE_MESH_REFRESH_EVERY } from '../src/election/driver.js';
import { cpuMsOf, rssOf } from './proc-usage.js';
import {
  listPeers,
  scaleDiscovery,
  type PeerListing,
  type ScaleDiscovery,
} from './scale-discovery.js';
import { SimulatorProcess } from './peer-sim-main.js';
import { machineFacts, median, table } from './report.js';
import type { SectionResult } from './benchmarks-doc.js';

const SECTION = '## Scale: one coordinator, thousands of simulated peers';
/**
 * The coordinator and every simulated peer are on 127.0.0.1, so no connection is bound to a source
 * IP (as in a pod); the coordinator's port is above the ephemeral range, the peers' below it, and
 * rank is the numeric IP, then the port: it outranks them all.
 */
const COORDINATOR_IP = SIMULATED_IP;
/** The coordinator's NODE_NAME: LocalMesh names its first node so. */
const COORDINATOR_NAME = 'node-1';
const ROUND_TARGET_MS = 1_000;
const RSS_TARGET_BYTES = 150e6;
/** Pair probing may cost the coordinator this much more CPU and memory than without it (issue 22). */
const PAIR_PROBING_MARGIN = 0.2;
/** PAIR_PROBES as deployed (src/config/settings.ts's default). */
const PAIR_PROBES = 20;
/** How long the bench waits for every simulated peer's first path report to be taken. */
const REPORTS_WAIT_MS = 150_000;
/**
 * A follower other than the successors of a large mesh gets every 8th heartbeat (4 s) and calls
 * its coordinator silent after COORDINATOR_TIMEOUT (1.5 s) plus two of those intervals less the
 * usual one (7 s): 8.5 s.
 */
const HEARD_WITHIN_MS = 8_500;
const DETECT_WAIT_MS = 30_000;

export interface ScaleRun {
  size: number;
  /** PAIR_PROBES: 0 is the run without pair probing (and no path reports). */
  pairProbes: number;
  /** Path reports the coordinator took in the window, and when every peer's first was taken. */
  reports: { accepted: number; failed: number; allHeldMs: number | null } | null;
  /** How the coordinator found its peers. */
  discovery: ScaleDiscovery;
  /** Why the run stopped before its end, if it did. */
  error: string | null;
  /** From spawning the coordinator: it listens, it leads, its first round is done (ms). */
  startup: {
    listening: number | null;
    leading: number | null;
    firstRound: number | null;
    /** The end of the first whole round that changed no verdict: every peer alive and known. */
    settled: number | null;
  };
  /**
   * How long the window waited for the coordinator's every-peer announcement (ms); `small`: a
   * mesh whose every heartbeat goes to every peer; `unseen`: none came in time, begun anyway;
   * null: not reached.
   */
  refreshWait: number | 'small' | 'unseen' | null;
  windowMs: number;
  roundDurations: number[];
  /**
   * A window three times as long, in phases of READ_PHASE_MS taking turns: a client on the pod
   * network asking GET /status 100 times a second, none, the pod's own loopback asking as often,
   * none (issue 34). The rounds and the coordinator's CPU of each kind of phase.
   */
  reads: Record<ReadPhase, PhaseFigures> | null;
  probedMedian: number | null;
  lateRounds: number | null;
  cpuMs: number | null;
  rssMaxBytes: number | null;
  /** Fewest peers that had heard a heartbeat within 8.5 s, over the window's 1-s samples. */
  heardMin: number | null;
  arrivals: ArrivalSpread | null;
  /** Connections the simulated peers accepted during the window (kept open: about none). */
  connections: number | null;
  deadMs: number | null;
  blackholeMs: number | null;
  /**
   * A zone lost: every third peer crashed at once. How many, how many peer_dead came within
   * ZONE_WAIT_MS and when the last did, and the coordinator's RSS meanwhile (null: not run).
   */
  zone: { size: number; reported: number; lastMs: number | null; rssMaxBytes: number } | null;
  /** peer_dead webhooks for peers neither killed nor black-holed. */
  falseDead: string[];
  /** Such peers the coordinator logged as dead, webhook received or not. */
  falseDeclared: string[];
  /** Of falseDead and falseDeclared, how many came before the zone was lost (null: not lost). */
  falseBeforeZone: { dead: number; declared: number } | null;
  sim: { cpuPercent: number; loopUtilisation: number; rssBytes: number } | null;
  load: string;
}

const msg = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** `work`, unless the coordinator exits first or `ms` pass. */
function bounded<T>(
  work: Promise<T>,
  exited: Promise<string>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    exited.then((why) => Promise.reject(new Error(`${what}: the coordinator exited (${why})`))),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

async function lateRoundsOf(node: MeshNode): Promise<number | null> {
  try {
    const res = await fetch(`http://${node.address}/metrics`, {
      signal: AbortSignal.timeout(5_000),
    });
    return res.ok ? (sampleOf(await res.text(), 'knh_probe_rounds_late_total') ?? null) : null;
  } catch {
    return null;
  }
}

/**
 * The simulator's peers on a free range of ports below the ephemeral range (it picks one, and
 * another if a port is taken), with the coordinator, on `port` above it, among their peers.
 */
async function startSimulator(
  size: number,
  secret: string,
  port: number,
  pairProbes: number,
): Promise<{ sim: SimulatorProcess; firstPort: number }> {
  return SimulatorProcess.start({
    count: size,
    secret,
    others: [`${COORDINATOR_IP}:${port}`],
    coordinatorTimeoutMs: HEARD_WITHIN_MS,
    ...(pairProbes > 0 ? { pathReports: { perRound: pairProbes } } : {}),
  });
}

/** The coordinator's heap settings: as deployed, unless the bench is told otherwise. */
function coordinatorNodeOptions(): string {
  return process.env.BENCH_SCALE_NODE_OPTIONS ?? manifestNodeOptions();
}

/** The kinds of the reads window's phases: who asks for /status, if anyone. */
type ReadPhase = 'network' | 'loopback' | 'quiet';

/** The rounds, CPU and answers of one kind of phase. */
interface PhaseFigures extends ReadTally {
  roundDurations: number[];
  cpuMs: number;
  windowMs: number;
}

/** The coordinator process and what the bench reads from it. */
interface Coordinator {
  mesh: LocalMesh;
  node: MeshNode;
  pid: number;
  /** Resolves, with how, when the process exits. */
  exited: Promise<string>;
  /** Its `round` log lines as they came (receipt time). */
  rounds: { atMs: number; durationMs: number; probed: number; changed: number }[];
  /** Peers its log says it declared dead or path-broken (a webhook may still be on its way, or stuck). */
  declaredDead: Set<string>;
  /** Samples its memory each second. */
  sampler: NodeJS.Timeout;
  /** Its warning and error lines, counted by event (or message), and those naming EMFILE. */
  warnings: Map<string, number>;
  spawnedAt: number;
}

/** Spawns the coordinator with every simulated peer in PEERS, and samples its memory each second. */
async function startCoordinator(
  run: ScaleRun,
  {
    port,
    firstPort,
    secret,
    receiver,
    started,
    listed,
  }: {
    port: number;
    firstPort: number;
    secret: string;
    receiver: Receiver;
    started: (mesh: LocalMesh) => void;
    listed: (listing: PeerListing) => void;
  },
  progress: (text: string) => void,
): Promise<Coordinator> {
  const self = `${COORDINATOR_IP}:${port}`;
  const simulated = Array.from({ length: run.size }, (_, i) => simulatedAddress(i, firstPort));
  const listing = await listPeers(
    run.discovery,
    [self, ...simulated],
    // The simulator names its peers sim-1, sim-2 … (peer-simulator.ts): the slices name them so.
    [COORDINATOR_NAME, ...simulated.map((_, i) => `sim-${i + 1}`)],
  );
  listed(listing);
  const deployed = asDeployed(coordinatorNodeOptions());
  const mesh = new LocalMesh({
    size: 1,
    hosts: [COORDINATOR_IP],
    ports: [port],
    peerSecret: secret,
    maxLogLines: 2_000,
    // As the image runs it, with the heap daemonset.yaml sizes for the pod's memory limit.
    nodeArgs: deployed.nodeArgs,
    env: {
      ...listing.env,
      PEER_STATUS_URL: receiver.url('/peer'),
      CLUSTER_STATUS_URL: receiver.url('/cluster'),
      LOG_LEVEL: 'debug',
      PAIR_PROBES: String(run.pairProbes),
      ...deployed.env,
    },
  });
  started(mesh);
  const stderr: string[] = [];
  const rounds: Coordinator['rounds'] = [];
  const warnings = new Map<string, number>();
  const declaredDead = new Set<string>();
  const spawnedAt = Date.now();
  const logFile = process.env.BENCH_SCALE_LOG;
  mesh.on('log', (_n: MeshNode, line: LogLine) => {
    if (logFile) appendFileSync(logFile, `${JSON.stringify(line)}\n`);
    if (
      (line.event === 'peer-dead' || line.event === 'path-broken') &&
      typeof line.peerAddress === 'string'
    ) {
      declaredDead.add(line.peerAddress);
    }
    if (line.level >= 40) {
      const key = line.event ?? line.msg.slice(0, 60);
      warnings.set(key, (warnings.get(key) ?? 0) + 1);
      if (JSON.stringify(line).includes('EMFILE'))
        warnings.set('EMFILE', (warnings.get('EMFILE') ?? 0) + 1);
    }
    if (line.event === 'round' && typeof line.durationMs === 'number') {
      rounds.push({
        atMs: Date.now(),
        durationMs: line.durationMs,
        probed: Number(line.probed),
        changed: Number(line.changed),
      });
    }
  });
  mesh.on('stderr', (_n: MeshNode, text: string) => stderr.push(text));
  progress(
    `scale ${run.size}: spawning the coordinator at ${self} (peers: ${run.discovery === 'kubernetes' ? `${simulated.length + 1} EndpointSlices` : 'PEERS'})`,
  );
  await mesh.start();
  const node = mesh.node(1);
  const child = node.process;
  if (!child?.pid) throw new Error('the coordinator did not start');
  const pid = child.pid;
  run.startup.listening = Date.now() - spawnedAt;
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) =>
      resolve(
        `${signal ?? `code ${code}`}${stderr.length > 0 ? `: ${stderr.join('').slice(-2_000)}` : ''}`,
      ),
    ),
  );
  const maxRssMb = positiveInt('BENCH_SCALE_MAX_RSS_MB', 4_096);
  const sampler = setInterval(() => {
    const rss = rssOf(pid);
    if (rss === null) return;
    // Beside the coordinator's lines: when its memory grows, against what it was doing then.
    if (logFile) {
      const sample = { time: Date.now(), bench: 'rss', size: run.size, rssBytes: rss };
      appendFileSync(logFile, `${JSON.stringify(sample)}\n`);
    }
    // The zone loss has its own row: the target is for running, not for a lost third.
    if (run.zone) run.zone.rssMaxBytes = Math.max(run.zone.rssMaxBytes, rss);
    else run.rssMaxBytes = Math.max(run.rssMaxBytes ?? 0, rss);
    // The machine is shared: a coordinator swelling past this is stopped, not waited for.
    if (rss > maxRssMb * 2 ** 20) {
      stderr.push(`killed by the bench: RSS over BENCH_SCALE_MAX_RSS_MB=${maxRssMb}`);
      child.kill('SIGKILL');
    }
  }, 1_000);
  return { mesh, node, pid, exited, rounds, warnings, declaredDead, spawnedAt, sampler };
}

/** Waits for the coordinator to lead, its first round, and every peer to hear it (15 s at most). */
async function settle(run: ScaleRun, c: Coordinator, sim: SimulatorProcess): Promise<void> {
  // Times from the log lines' own timestamps: the bench may read them late on a busy machine.
  const at = (line: LogLine) => Date.parse(line.time) - c.spawnedAt;
  const leading = c.mesh.waitForLog(1, (l) => l.event === 'leading', 60_000);
  run.startup.leading = at(await bounded(leading, c.exited, 61_000, 'leading'));
  const first = c.mesh.waitForLog(1, (l) => l.event === 'round', 60_000);
  run.startup.firstRound = at(await bounded(first, c.exited, 61_000, 'first round'));
  // Start-up's work (every peer found alive, each a verdict change, logged and announced to the
  // successors) is over once a whole round changes nothing: the steady state the window measures.
  const settled = c.mesh.waitForLog(
    1,
    (l) => l.event === 'round' && Number(l.probed) === run.size && Number(l.changed) === 0,
    60_000,
  );
  run.startup.settled = at(await bounded(settled, c.exited, 61_000, 'verdicts settled'));
  for (let i = 0; i < 15 && (await sim.stats(HEARD_WITHIN_MS)).heardWithin < run.size; i++) {
    await sleep(1_000);
  }
  if (run.pairProbes === 0) return;
  // A new coordinator's first reports are spread out (report-policy.ts): the window
  // measures the book once it holds every peer's paths.
  const began = Date.now();
  while (Date.now() - began < REPORTS_WAIT_MS) {
    const reports = (await sim.stats(HEARD_WITHIN_MS)).pathReports;
    if (reports && reports.peersHeld >= run.size) {
      run.reports = { accepted: 0, failed: 0, allHeldMs: Date.now() - c.spawnedAt };
      return;
    }
    await bounded(sleep(1_000), c.exited, 2_000, 'first path reports');
  }
}

/** The election driver's every-peer announcement of a large mesh, the default heartbeat's: 30 s. */
const REFRESH_PERIOD_MS = LARGE_MESH_REFRESH_EVERY * readSettings({}).values.heartbeatIntervalMs;
/** How long a window waits for that announcement at most: a period, and time for it to go out. */
const REFRESH_WAIT_MS = REFRESH_PERIOD_MS + 10_000;

/** An every-peer announcement is taken as seen once this many went out within BURST_MS. */
const BURST_SHARE = 0.9;
/**
 * Announcements go in chunks; the successors' own, a few a second, never add up to BURST_SHARE of
 * a mesh of over FULL_VIEW_PEERS within it.
 */
const BURST_MS = 5_000;

/**
 * Waits until the coordinator has announced itself to every peer (a large mesh's refresh, every
 * REFRESH_PERIOD_MS), so that each window starts at the same point of that cycle: a 20 s window
 * started anywhere holds one such announcement or none, 0.6 s of CPU at 2,500 peers, and runs
 * compared against each other would differ by it. How long it waited (see ScaleRun.refreshWait).
 */
async function afterEveryoneAnnounced(
  run: ScaleRun,
  c: Coordinator,
  sim: SimulatorProcess,
): Promise<ScaleRun['refreshWait']> {
  if (run.size <= FULL_VIEW_PEERS) return 'small';
  const announced = async () => (await sim.stats(HEARD_WITHIN_MS)).requests['/coordinator'] ?? 0;
  const began = Date.now();
  const seen: { atMs: number; count: number }[] = [{ atMs: began, count: await announced() }];
  while (Date.now() - began < REFRESH_WAIT_MS) {
    await bounded(sleep(250), c.exited, 2_000, 'every peer announced to');
    const now = { atMs: Date.now(), count: await announced() };
    while (seen.length > 1 && now.atMs - seen[0]!.atMs > BURST_MS) seen.shift();
    seen.push(now);
    if (now.count - seen[0]!.count >= BURST_SHARE * run.size) {
      // The rest of it and its answers, then the window.
      await bounded(sleep(2_000), c.exited, 3_000, 'every peer announced to');
      return Date.now() - began;
    }
  }
  return 'unseen';
}

/** The steady window: rounds, CPU, heartbeats heard each second, probe arrivals, the simulator's load. */
async function steadyWindow(
  run: ScaleRun,
  c: Coordinator,
  sim: SimulatorProcess,
  seconds: number,
): Promise<SimulatorStats> {
  const simBefore = await sim.stats(HEARD_WITHIN_MS);
  const lateBefore = await lateRoundsOf(c.node);
  const t0 = Date.now();
  const cpu0 = cpuMsOf(c.pid);
  let heardMin = run.size;
  for (let s = 0; s < seconds; s++) {
    await bounded(sleep(Math.max(0, t0 + (s + 1) * 1_000 - Date.now())), c.exited, 2_000, 'window');
    heardMin = Math.min(heardMin, (await sim.stats(HEARD_WITHIN_MS)).heardWithin);
  }
  const t1 = Date.now();
  run.cpuMs = cpuMsOf(c.pid) - cpu0;
  run.windowMs = t1 - t0;
  run.heardMin = heardMin;
  run.load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
  const simAfter = await sim.stats(HEARD_WITHIN_MS);
  run.sim = simUsage(simBefore, simAfter, run.windowMs);
  const [r0, r1] = [simBefore.pathReports, simAfter.pathReports];
  if (r0 && r1) {
    run.reports = {
      allHeldMs: run.reports?.allHeldMs ?? null,
      accepted: r1.accepted - r0.accepted,
      failed: r1.failed - r0.failed,
    };
  }
  run.arrivals = await sim.arrivals(t0, t1);
  const lateAfter = await lateRoundsOf(c.node);
  run.lateRounds = lateBefore !== null && lateAfter !== null ? lateAfter - lateBefore : null;
  const inWindow = c.rounds.filter((r) => r.atMs >= t0 && r.atMs <= t1);
  run.roundDurations = inWindow.map((r) => r.durationMs);
  run.probedMedian = inWindow.length > 0 ? median(inWindow.map((r) => r.probed)) : null;
  return simAfter;
}

/** GET /status a second while reading. */
const READS_PER_SECOND = 100;

/**
 * The client on the pod network reads from this address: any but the pod's own 127.0.0.1 is one,
 * limited per client as every other (views.ts); the loopback client is the pod itself (a
 * port-forward), which no limit touches.
 */
const NETWORK_CLIENT_IP = '127.0.0.2';

/**
 * Reading and quiet phases take turns, so that every kind sees the same stretch of the
 * coordinator's life (a heap that grows, path reports that come in waves, its every-peer
 * announcement): two windows one after the other differed by more than the 10 % to be measured,
 * with no reader at all.
 */
const READ_PHASE_MS = 4_000;
/** A round ending this soon after a phase began may have started in the phase before: not counted. */
const PHASE_SETTLE_MS = 1_000;
const PHASE_CYCLE: readonly ReadPhase[] = ['network', 'quiet', 'loopback', 'quiet'];

/**
 * A window three times as long as the steady one, in phases of READ_PHASE_MS: GET /status asked
 * READS_PER_SECOND times a second by a client on the network, then not at all, then from the
 * pod's own loopback, then not at all, and so on. The reader runs on the same 2 cores: it decodes
 * nothing, to take as little CPU from the coordinator as it can.
 */
async function readsWindow(run: ScaleRun, c: Coordinator, seconds: number): Promise<void> {
  const figures = (): PhaseFigures => ({
    roundDurations: [],
    cpuMs: 0,
    windowMs: 0,
    byStatus: {},
    bodyBytes: 0,
  });
  const reads: Record<ReadPhase, PhaseFigures> = {
    network: figures(),
    loopback: figures(),
    quiet: figures(),
  };
  const from: Record<ReadPhase, string | undefined> = {
    network: NETWORK_CLIENT_IP,
    loopback: undefined,
    quiet: undefined,
  };
  const inFlight = new Set<Promise<void>>();
  const cycles = Math.max(
    1,
    Math.round((3 * seconds * 1_000) / (PHASE_CYCLE.length * READ_PHASE_MS)),
  );
  const spans: Record<ReadPhase, [number, number][]> = { network: [], loopback: [], quiet: [] };
  const run1 = async () => {
    for (let phase = 0; phase < cycles * PHASE_CYCLE.length; phase++) {
      const kind = PHASE_CYCLE[phase % PHASE_CYCLE.length]!;
      const t0 = Date.now();
      const cpu0 = cpuMsOf(c.pid);
      for (let i = 0; Date.now() < t0 + READ_PHASE_MS; i++) {
        await sleep(Math.max(0, t0 + (i * 1_000) / READS_PER_SECOND - Date.now()));
        if (kind === 'quiet' || Date.now() >= t0 + READ_PHASE_MS) continue;
        const p = askStatus(c.node.address, from[kind], reads[kind]).finally(() =>
          inFlight.delete(p),
        );
        inFlight.add(p);
      }
      const t1 = Date.now();
      reads[kind].cpuMs += cpuMsOf(c.pid) - cpu0;
      reads[kind].windowMs += t1 - t0;
      spans[kind].push([t0 + PHASE_SETTLE_MS, t1]);
    }
  };
  const budgetMs = cycles * PHASE_CYCLE.length * READ_PHASE_MS + 5_000;
  await bounded(run1(), c.exited, budgetMs, 'reads window');
  await Promise.all(inFlight);
  for (const kind of Object.keys(spans) as ReadPhase[]) {
    reads[kind].roundDurations = c.rounds
      .filter((r) => spans[kind].some(([a, b]) => r.atMs >= a && r.atMs <= b))
      .map((r) => r.durationMs);
  }
  run.reads = reads;
}

/** A row of the reads window: `kind`'s phases against the quiet ones. */
function readsRow(kind: 'network' | 'loopback', name: string, target: string): Row {
  return {
    name,
    target,
    cell: (r) => {
      const d = r.reads?.[kind].roundDurations ?? [];
      const q = r.reads?.quiet.roundDurations ?? [];
      if (r.reads === null || d.length === 0 || q.length === 0) {
        return { text: '—', ok: r.error === null && target !== '—' ? false : null };
      }
      const reading = r.reads[kind];
      const change = median(d) / median(q) - 1;
      const perSecond = (f: PhaseFigures) => Math.round(f.cpuMs / (f.windowMs / 1000));
      const answers = Object.entries(reading.byStatus)
        .map(([s, n]) => `${n} × ${s}`)
        .join(', ');
      return {
        text: `${secs(median(d))} (${secs(Math.max(...d))}) against ${secs(median(q))} (${secs(Math.max(...q))}), ${change >= 0 ? '+' : '−'}${Math.round(Math.abs(change) * 100)} %; ${perSecond(reading)} ms and ${perSecond(r.reads.quiet)} ms; ${answers} (${Math.round(reading.bodyBytes / 1024)} KiB)`,
        ok: target === '—' ? null : change <= 0.1,
      };
    },
  };
}

/** The peer a peer_dead webhook reports, or null for any other webhook. */
function deadPeerOf(w: ReceivedWebhook): string | null {
  const b = w.body as Partial<PeerStatusPayload>;
  return w.path === '/peer' && b.event === 'peer_dead' ? (b.peer?.address ?? null) : null;
}

/** The peer a peer_dead or path_broken webhook reports (an alarm), or null for any other. */
function alarmPeerOf(w: ReceivedWebhook): string | null {
  const b = w.body as Partial<PeerStatusPayload>;
  return w.path === '/peer' && (b.event === 'peer_dead' || b.event === 'path_broken')
    ? (b.peer?.address ?? null)
    : null;
}

/** From telling the simulator to fail `address` to the receiver getting its peer_dead; null: never. */
async function timeToDead(
  receiver: Receiver,
  c: Coordinator,
  address: string,
  fail: () => Promise<void>,
): Promise<number | null> {
  const began = Date.now();
  await fail();
  const reported = receiver.waitFor((w) => deadPeerOf(w) === address, DETECT_WAIT_MS);
  return bounded(reported, c.exited, DETECT_WAIT_MS + 1_000, `peer_dead of ${address}`).then(
    () => Date.now() - began,
  );
}

/** peer_dead and path_broken webhooks received for peers the bench did not fail. */
function falseAlarms(receiver: Receiver, failed: Set<string>): string[] {
  return receiver.received.flatMap((w) => {
    const peer = alarmPeerOf(w);
    return peer !== null && !failed.has(peer) ? [peer] : [];
  });
}

/** Peers the bench did not fail that the coordinator logged dead or path-broken. */
function falseDeclarations(c: Coordinator, failed: Set<string>): string[] {
  return [...c.declaredDead].filter((a) => !failed.has(a));
}

/** How long the bench waits for every peer_dead of a lost zone. */
const ZONE_WAIT_MS = 60_000;

/**
 * Every third peer (those not failed already) crashes at once, as when a zone is lost; waits for
 * each one's peer_dead and records when the last came.
 */
async function loseZone(
  run: ScaleRun,
  receiver: Receiver,
  c: Coordinator,
  sim: SimulatorProcess,
  firstPort: number,
  failed: Set<string>,
): Promise<void> {
  const zone = new Set<string>();
  for (let i = 2; i < run.size; i += 3) {
    const address = simulatedAddress(i, firstPort);
    if (!failed.has(address)) zone.add(address);
  }
  for (const address of zone) failed.add(address);
  run.zone = { size: zone.size, reported: 0, lastMs: null, rssMaxBytes: 0 };
  const began = Date.now();
  await Promise.all([...zone].map((address) => sim.die(address)));
  const seen = new Set<string>();
  const deadline = began + ZONE_WAIT_MS;
  while (seen.size < zone.size && Date.now() < deadline) {
    for (const w of receiver.received) {
      const peer = deadPeerOf(w);
      if (peer !== null && zone.has(peer) && !seen.has(peer)) {
        seen.add(peer);
        run.zone.lastMs = w.receivedMs - began;
      }
    }
    await bounded(sleep(200), c.exited, 2_000, 'zone loss');
  }
  run.zone.reported = seen.size;
}

/** One size: a fresh simulator, coordinator and receiver, all stopped before it returns. */
async function measureSize(
  { size, pairProbes }: RunSpec,
  windowSeconds: number,
  progress: (text: string) => void,
  children: Set<() => void>,
): Promise<ScaleRun> {
  const run: ScaleRun = {
    size,
    pairProbes,
    reports: null,
    discovery: scaleDiscovery(),
    error: null,
    startup: { listening: null, leading: null, firstRound: null, settled: null },
    refreshWait: null,
    windowMs: 0,
    roundDurations: [],
    reads: null,
    probedMedian: null,
    lateRounds: null,
    cpuMs: null,
    rssMaxBytes: null,
    heardMin: null,
    arrivals: null,
    connections: null,
    deadMs: null,
    blackholeMs: null,
    zone: null,
    falseDead: [],
    falseDeclared: [],
    falseBeforeZone: null,
    sim: null,
    load: '',
  };
  const say = (text: string) =>
    progress(`scale ${size}${pairProbes === 0 ? ' (PAIR_PROBES=0)' : ''}: ${text}`);
  /** Peers the bench crashed or black-holed: their peer_dead is expected. */
  const failed = new Set<string>();
  const secret = randomBytes(32).toString('hex');
  const receiver = await new Receiver({ schemas: loadSchemas(), maxKept: 20_000 }).start();
  // What is running, for the teardown (and for an exit in the middle of the run).
  const live: {
    sim?: SimulatorProcess;
    mesh?: LocalMesh;
    c?: Coordinator;
    listing?: PeerListing;
  } = {};
  const kill = () => {
    live.sim?.kill();
    live.mesh?.nodes.forEach((n) => n.process?.kill('SIGKILL'));
  };
  children.add(kill);
  try {
    const port = await coordinatorPort();
    say(`starting ${size} simulated peers`);
    const { sim, firstPort } = await startSimulator(size, secret, port, pairProbes);
    live.sim = sim;
    say(`simulated peers on ${SIMULATED_IP}:${firstPort}-${firstPort + size - 1}`);
    const c = await startCoordinator(
      run,
      {
        port,
        firstPort,
        secret,
        receiver,
        started: (m) => (live.mesh = m),
        listed: (l) => (live.listing = l),
      },
      progress,
    );
    live.c = c;
    await settle(run, c, sim);
    say(
      `leading after ${secs(run.startup.leading)}, first round done after ${secs(run.startup.firstRound)}, verdicts settled after ${secs(run.startup.settled)}`,
    );
    run.refreshWait = await afterEveryoneAnnounced(run, c, sim);
    const before = await sim.stats(HEARD_WITHIN_MS);
    const after = await steadyWindow(run, c, sim, windowSeconds);
    run.connections = after.connections - before.connections;
    const received = Object.entries(after.requests).map(
      ([path, n]) => `${path} ${n - (before.requests[path] ?? 0)}`,
    );
    say(
      `window ${windowSeconds} s (its every-peer announcement ${refreshWaitText(run.refreshWait)}): ${run.roundDurations.length} rounds, CPU ${Math.round(run.cpuMs ?? 0)} ms, load ${run.load}; the peers got ${received.join(', ')}; refused so far ${JSON.stringify(after.refused)}${after.pathReports ? `; their path reports so far: ${JSON.stringify(after.pathReports)}` : ''}`,
    );
    await readsWindow(run, c, windowSeconds);
    const phaseText = (kind: ReadPhase) => {
      const f = run.reads?.[kind];
      if (!f) return '—';
      const answers = kind === 'quiet' ? '' : `; answers ${JSON.stringify(f.byStatus)}`;
      return `${f.roundDurations.length} rounds, median ${secs(median(f.roundDurations.length ? f.roundDurations : [0]))}, CPU ${Math.round(f.cpuMs)} ms${answers}`;
    };
    say(
      `${READS_PER_SECOND} GET /status a second from a client on the network: ${phaseText('network')}; from the pod's loopback: ${phaseText('loopback')}; none: ${phaseText('quiet')}; ${Math.round((run.reads?.loopback.bodyBytes ?? 0) / 1024)} KiB an answer (gzip)`,
    );
    const crashed = simulatedAddress(Math.floor(size / 2), firstPort);
    const holed = simulatedAddress(Math.floor(size / 3), firstPort);
    failed.add(crashed).add(holed);
    run.deadMs = await timeToDead(receiver, c, crashed, () => sim.die(crashed)).catch(
      (err: unknown) => {
        say(msg(err));
        return null;
      },
    );
    run.blackholeMs = await timeToDead(receiver, c, holed, () => sim.blackhole(holed)).catch(
      (err: unknown) => {
        say(msg(err));
        return null;
      },
    );
    say(
      `crashed peer reported after ${secs(run.deadMs)}, black-holed after ${secs(run.blackholeMs)}`,
    );
    // A few more rounds, for any false verdict the failures set off to show.
    await sleep(3_000);
    run.falseBeforeZone = {
      dead: falseAlarms(receiver, failed).length,
      declared: falseDeclarations(c, failed).length,
    };
    await loseZone(run, receiver, c, sim, firstPort, failed);
    say(
      `zone of ${run.zone?.size} crashed at once: ${run.zone?.reported} peer_dead, the last after ${secs(run.zone?.lastMs ?? null)}; RSS max meanwhile ${mb(run.zone?.rssMaxBytes ?? 0)}`,
    );
  } catch (err) {
    // A dead coordinator often shows first as its /proc entry gone: say how it exited, and why.
    const exit = live.c ? await Promise.race([live.c.exited, sleep(1_000).then(() => null)]) : null;
    run.error = exit === null ? msg(err) : `${msg(err)}; the coordinator exited: ${exit}`;
    say(`stopped: ${run.error}`);
  } finally {
    run.falseDead = falseAlarms(receiver, failed);
    run.falseDeclared = live.c ? falseDeclarations(live.c, failed) : [];
    clearInterval(live.c?.sampler);
    const warned = [...(live.c?.warnings ?? [])].sort((a, b) => b[1] - a[1]).slice(0, 6);
    say(`coordinator warnings: ${warned.map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}`);
    await live.mesh?.stop().catch(() => undefined);
    await live.sim?.stop();
    await live.listing?.close();
    await receiver.close();
    children.delete(kill);
  }
  return run;
}

function simUsage(
  before: SimulatorStats,
  after: SimulatorStats,
  windowMs: number,
): ScaleRun['sim'] {
  const cpuUs = after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs;
  const active = after.loopActiveMs - before.loopActiveMs;
  const idle = after.loopIdleMs - before.loopIdleMs;
  return {
    cpuPercent: cpuUs / 10 / windowMs,
    loopUtilisation: active + idle > 0 ? active / (active + idle) : 0,
    rssBytes: after.rssBytes,
  };
}

const secs = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(2)} s`);
const mb = (bytes: number | null) => (bytes === null ? '—' : `${Math.round(bytes / 1e6)} MB`);
const verdict = (ok: boolean | null) => (ok === null ? '' : ok ? 'PASS: ' : '**FAIL**: ');

interface Row {
  name: string;
  target: string;
  /** Each run's cell, and whether it met the target (null: informational). */
  cell(run: ScaleRun): { text: string; ok: boolean | null };
}

function refreshWaitText(wait: ScaleRun['refreshWait']): string {
  if (wait === 'small') return 'not needed: every heartbeat goes to every peer';
  if (wait === 'unseen') {
    return `not seen within ${REFRESH_WAIT_MS / 1000} s: begun anyway`;
  }
  return wait === null ? '—' : `after ${secs(wait)}`;
}

const ROWS: Row[] = [
  {
    name: 'Round duration: median (max) of the rounds in the window',
    target: '≤ 1 s',
    cell: (r) => {
      const d = r.roundDurations;
      if (d.length === 0) return { text: 'no round', ok: false };
      const max = Math.max(...d);
      return { text: `${secs(median(d))} (${secs(max)})`, ok: max <= ROUND_TARGET_MS };
    },
  },
  readsRow(
    'network',
    `With ${READS_PER_SECOND} GET /status a second from one client on the pod network (issue 34; limited per client), in ${READ_PHASE_MS / 1000}-s phases taking turns with none: round duration median (max) reading, against the quiet phases'; coordinator CPU a second, reading and quiet; answers`,
    '≤ +10 %',
  ),
  readsRow(
    'loopback',
    `The same from the pod's own loopback (a port-forward: never limited), in phases between those`,
    '—',
  ),
  {
    name: 'Rounds completed in the window (one due a second); peers probed a round (median)',
    target: '—',
    cell: (r) => ({
      text: `${r.roundDurations.length} in ${secs(r.windowMs)}; ${r.probedMedian ?? '—'}`,
      ok: null,
    }),
  },
  {
    name: 'The window’s wait for the coordinator’s every-peer announcement, once the start-up’s work was done (with pair probing, every peer’s first report in)',
    target: '—',
    cell: (r) => ({ text: refreshWaitText(r.refreshWait), ok: null }),
  },
  {
    name: 'Rounds started late (`knh_probe_rounds_late_total`)',
    target: '—',
    cell: (r) => ({ text: String(r.lateRounds ?? '—'), ok: null }),
  },
  {
    name: 'Coordinator CPU per round (and % of one core)',
    target: '—',
    cell: (r) => {
      const n = r.roundDurations.length;
      if (r.cpuMs === null || r.windowMs === 0) return { text: '—', ok: null };
      const pct = `${Math.round((100 * r.cpuMs) / r.windowMs)} %`;
      return { text: `${n > 0 ? `${Math.round(r.cpuMs / n)} ms` : '—'} (${pct})`, ok: null };
    },
  },
  {
    name: 'Path reports the coordinator took in the window, a second (failed); every peer’s first taken after',
    target: '—',
    cell: (r) =>
      r.reports
        ? {
            text: `${(r.reports.accepted / Math.max(1, r.windowMs / 1000)).toFixed(1)} (${r.reports.failed}); ${secs(r.reports.allHeldMs)}`,
            ok: null,
          }
        : { text: r.pairProbes === 0 ? 'off' : '—', ok: null },
  },
  {
    name: 'Coordinator RSS: max of 1-s samples (VmRSS), start-up to end',
    target: '≤ 150 MB',
    cell: (r) => ({
      text: mb(r.rssMaxBytes),
      ok: r.rssMaxBytes === null ? false : r.rssMaxBytes <= RSS_TARGET_BYTES,
    }),
  },
  {
    name: 'Peers that heard a heartbeat within 8.5 s (fewest over 1-s samples; non-successors get one in each probe, are told to expect one every 4 s, and call the coordinator silent after 8.5 s)',
    target: 'all',
    cell: (r) => ({
      text: r.heardMin === null ? '—' : `${r.heardMin}/${r.size}`,
      ok: r.heardMin === r.size,
    }),
  },
  {
    name: 'Probe arrivals at the peers, per 10 ms: busiest (mean); share in the busiest tenth of the time',
    target: '—',
    cell: (r) => {
      const a = r.arrivals;
      if (!a || a.pings === 0) return { text: '—', ok: null };
      return {
        text: `${a.max} (${a.mean.toFixed(1)}); ${Math.round(100 * a.busiestTenthShare)} %`,
        ok: null,
      };
    },
  },
  {
    name: 'Connections the peers accepted in the window (kept open: about none)',
    target: '—',
    cell: (r) => ({ text: String(r.connections ?? '—'), ok: null }),
  },
  {
    name: 'Crashed peer (port closed, connections reset) → its peer_dead',
    target: '—',
    cell: (r) => ({ text: r.deadMs === null ? 'not reported' : secs(r.deadMs), ok: null }),
  },
  {
    name: 'Black-holed peer (connections accepted, never answered) → its peer_dead',
    target: '—',
    cell: (r) => ({
      text: r.blackholeMs === null ? 'not reported' : secs(r.blackholeMs),
      ok: null,
    }),
  },
  {
    name: `A zone lost: every third peer crashed at once → their peer_dead webhooks within ${ZONE_WAIT_MS / 1000} s, the last after; the coordinator's RSS max meanwhile`,
    target: 'all',
    cell: (r) =>
      r.zone
        ? {
            text: `${r.zone.reported}/${r.zone.size}, ${secs(r.zone.lastMs)}; ${mb(r.zone.rssMaxBytes)}`,
            ok: r.zone.reported === r.zone.size,
          }
        : { text: '—', ok: null },
  },
  {
    name: 'peer_dead or path_broken webhooks for peers never killed (and such peers the coordinator logged dead or path-broken), up to the zone loss',
    target: '0',
    cell: (r) => {
      const before = r.falseBeforeZone ?? {
        dead: r.falseDead.length,
        declared: r.falseDeclared.length,
      };
      return {
        text: `${before.dead} (${before.declared})`,
        ok: r.error === null && before.dead === 0 && before.declared === 0,
      };
    },
  },
  {
    name: '… the same during the zone loss',
    target: '—',
    cell: (r) => {
      const before = r.falseBeforeZone;
      if (!before) return { text: '—', ok: null };
      return {
        text: `${r.falseDead.length - before.dead} (${r.falseDeclared.length - before.declared})`,
        ok: null,
      };
    },
  },
  {
    name: 'Simulator: CPU (% of one core), event-loop utilisation, RSS',
    target: '—',
    cell: (r) =>
      r.sim
        ? {
            text: `${Math.round(r.sim.cpuPercent)} %, ${r.sim.loopUtilisation.toFixed(2)}, ${mb(r.sim.rssBytes)}`,
            ok: null,
          }
        : { text: '—', ok: null },
  },
  {
    name: 'Coordinator start-up: spawn → listening → leading → first round done → a whole round that changed no verdict',
    target: '—',
    cell: (r) => ({
      text: `${secs(r.startup.listening)} → ${secs(r.startup.leading)} → ${secs(r.startup.firstRound)} → ${secs(r.startup.settled)}`,
      ok: null,
    }),
  },
  {
    name: 'Load average (1/5/15 min) at the end of the window',
    target: '—',
    cell: (r) => ({ text: r.load || '—', ok: null }),
  },
];

function discoveryText(how: ScaleDiscovery): string {
  return how === 'kubernetes'
    ? "Peers found as deployed (DISCOVERY=kubernetes): the real @kubernetes/client-node informer lists and watches the Service's EndpointSlices, served by the in-repo API server (test/support/fake-kube-api.ts); one slice a peer, since they share an IP (a real Service of 5,000 pods has about 50 slices of 100)."
    : 'Peers from PEERS (BENCH_SCALE_DISCOVERY=static): the Kubernetes client library is not loaded, unlike in a deployment.';
}

/** One run: how many peers, and PAIR_PROBES (0: pair probing off, the baseline). */
export interface RunSpec {
  size: number;
  pairProbes: number;
}

/** CPU per window second and RSS max of a pair-probing run against the baseline of its size. */
function againstBaseline(run: ScaleRun, runs: readonly ScaleRun[]) {
  const base = runs.find((b) => b.size === run.size && b.pairProbes === 0);
  if (!base || run.pairProbes === 0) return null;
  const cpu = (r: ScaleRun) => (r.cpuMs !== null && r.windowMs > 0 ? r.cpuMs / r.windowMs : null);
  const [c1, c0] = [cpu(run), cpu(base)];
  const [m1, m0] = [run.rssMaxBytes, base.rssMaxBytes];
  if (c1 === null || c0 === null || m1 === null || m0 === null) return null;
  return { cpu: c1 / c0 - 1, rss: m1 / m0 - 1 };
}

const pct = (x: number) => `${x >= 0 ? '+' : '−'}${Math.round(Math.abs(x) * 100)} %`;

export async function runScaleBench({
  sizes = [1_000, 5_000],
  baselines = [5_000],
  windowSeconds = 20,
  progress = () => undefined,
}: {
  sizes?: number[];
  /** Sizes also run with pair probing off, to compare with. */
  baselines?: number[];
  windowSeconds?: number;
  progress?: (text: string) => void;
} = {}): Promise<{ runs: ScaleRun[]; markdown: string; missed: string[] }> {
  const specs: RunSpec[] = [
    ...sizes.map((size) => ({ size, pairProbes: PAIR_PROBES })),
    ...baselines.map((size) => ({ size, pairProbes: 0 })),
  ];
  const facts = machineFacts();
  const began = Date.now();
  const children = new Set<() => void>();
  // Whatever happens (an error, Ctrl-C and process.exit), no coordinator or simulator outlives us.
  const killAll = () => children.forEach((kill) => kill());
  process.on('exit', killAll);
  const runs: ScaleRun[] = [];
  try {
    for (const spec of specs) runs.push(await measureSize(spec, windowSeconds, progress, children));
  } finally {
    process.off('exit', killAll);
  }
  const missed: string[] = [];
  const body = ROWS.map((row) => [
    row.name,
    row.target,
    ...runs.map((run) => {
      const { text, ok } = row.cell(run);
      if (ok === false) missed.push(`${row.name} at ${run.size} peers`);
      return `${verdict(ok)}${text}`.replace(/\|/g, '\\|');
    }),
  ]);
  body.push([
    `Against the run with PAIR_PROBES=0 at the same size: coordinator CPU, RSS max`,
    `≤ ${pct(PAIR_PROBING_MARGIN)} each`,
    ...runs.map((run) => {
      const d = againstBaseline(run, runs);
      if (!d) return run.pairProbes === 0 ? 'the baseline' : '—';
      const ok = d.cpu <= PAIR_PROBING_MARGIN && d.rss <= PAIR_PROBING_MARGIN;
      if (!ok) missed.push(`pair probing's cost at ${run.size} peers`);
      return `${verdict(ok)}${pct(d.cpu)}, ${pct(d.rss)}`;
    }),
  ]);
  const errors = runs
    .filter((r) => r.error !== null)
    .map((r) => `- ${r.size} peers: stopped early: ${r.error}`);
  const markdown = `${SECTION}

Produced by \`npm run bench\` (bench/scale.ts; alone: \`node dist/bench/scale-main.js\`) on ${facts.date}: one real knh coordinator (default settings, a random PEER_SECRET, LOG_LEVEL=debug for its round lines, ${process.env.BENCH_SCALE_NODE_OPTIONS === undefined ? "daemonset.yaml's NODE_OPTIONS" : 'BENCH_SCALE_NODE_OPTIONS'} \`${coordinatorNodeOptions()}\`; ${deployedText(asDeployed(coordinatorNodeOptions()))}) on ${COORDINATOR_IP}, a port above the ephemeral range, and ${sizes.join(' or ')} simulated peers in one other process (test/support/peer-simulator.ts: passive followers answering the real wire protocol, signed; an indirect probe one of them makes of another is decided in memory, by the target's state, since both live in that process: the peers' counts below leave such probes out) on ${SIMULATED_IP}, one port each below it (so, as in a pod, no connection is bound to a source IP). ${discoveryText(scaleDiscovery())} Webhooks to an in-process receiver. A ${windowSeconds} s steady window once a whole round has changed no verdict (start-up's work done), every peer has heard a heartbeat and the coordinator has just announced itself to every peer (which it does to a mesh of over ${FULL_VIEW_PEERS} peers every ${REFRESH_PERIOD_MS / 1000} s: every window starts at the same point of that cycle, and holds no such announcement, so its CPU figure leaves that out; a row says how long each waited), then one peer is crashed and another black-holed, then a zone is lost: every third peer crashed at once. ${facts.nproc} CPUs (${facts.cpu}), Node ${facts.node}, ${facts.os}; load average at start ${facts.load}. Whole run: ${Math.round((Date.now() - began) / 1000)} s.

${table(['Measurement', 'Target', ...runs.map((r) => `${r.size.toLocaleString('en-US')} peers${r.pairProbes === 0 ? ', PAIR_PROBES=0' : ''}`)], body)}
${errors.length > 0 ? `\n${errors.join('\n')}\n` : ''}
Round duration is the coordinator's own \`durationMs\` of each \`round\` log line (its probes sent to all answered or failed); CPU is utime + stime from /proc over the window, per round completed in it. Probe arrivals are GET /ping requests as the simulator's event loop took them: evenly spread over a 1 s interval, the busiest tenth of the time holds about 10 % of them; in one burst, nearly all. The simulator's event-loop utilisation near 1 would mean the simulator, not the coordinator, set the pace. With pair probing on (PAIR_PROBES=${PAIR_PROBES}, the default) each simulated peer reports its paths as a real node does (test/support/simulated-path-reports.ts, by src/paths/report-policy.ts: its next ${PAIR_PROBES} nodes' paths in a full report to the new coordinator, spread over 4 report intervals, then one with nothing new each refresh; every path working); the simulated peers do not probe each other, which costs the coordinator nothing, and speak protocol 1 otherwise, so the coordinator's own pair probes to them are small ones only. The last column is the same coordinator with pair probing off: what it cost before issue 22.
`;
  return { runs, markdown, missed };
}

/** For bench.ts: the section, or null markdown when skipped (its block keeps the last figures). */
export async function scaleSection(progress: (text: string) => void): Promise<SectionResult> {
  if (process.env.BENCH_SCALE === '0') {
    progress('scale bench skipped: BENCH_SCALE=0');
    return { markdown: null, missed: [] };
  }
  try {
    const sizes = (process.env.BENCH_SCALE_SIZES ?? '1000,5000').split(',').map((s) => {
      if (!/^\d+$/.test(s.trim()) || Number(s) < 1 || Number(s) > 60_000) {
        throw new Error(
          `BENCH_SCALE_SIZES: ${JSON.stringify(s)} is not a number of peers (1 to 60000)`,
        );
      }
      return Number(s);
    });
    const baselines = (process.env.BENCH_SCALE_BASELINE ?? '5000')
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
    const result = await runScaleBench({
      sizes,
      baselines,
      windowSeconds: positiveInt('BENCH_SCALE_SECONDS', 20),
      progress,
    });
    return { markdown: result.markdown, missed: result.missed };
  } catch (err) {
    progress(`scale bench failed: ${msg(err)}`);
    return { markdown: `${SECTION}\n\nFailed: ${msg(err)}.\n`, missed: ['scale'] };
  }
}
