// The benchmark behind the defaults of degraded paths (src/paths/): two network namespaces joined by
// a veth pair, a node:http server in one, knh's peer client in the other sending one keep-alive
// GET /ping a second (bench/path-loss-ends.ts), and random packet loss switched on and off between
// them in phases, each probe's outcome recorded. The recording is then replayed through the path
// window and the degradation verdict (bench/path-loss-replay.ts). A section of docs/benchmarks.md.
//
// Root only. `npm run bench:path-loss`: about 13 minutes of measuring (BENCH_PATH_LOSS_TIME_PERCENT
// shortens every phase, for a quick look); the recording is kept in test-output/path-loss.json, and
// BENCH_PATH_LOSS_REPLAY=<that file> replays it without measuring again.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import * as shell from '../test/support/netns-shell.js';
import { positiveInt, runSectionAlone } from './entry.js';
import type { ProbeLine } from './path-loss-ends.js';
import { pathLossReport, type Phase, type Recording } from './path-loss-replay.js';
import { machineFacts } from './report.js';

const ENDS = fileURLToPath(new URL('./path-loss-ends.js', import.meta.url));
const RECORDING = 'test-output/path-loss.json';
const CLIENT_IP = '10.214.0.1';
const SERVER_IP = '10.214.0.2';
const PORT = 8080;
const START_MS = 15_000;

/**
 * The phases, in order. Packets are dropped at the receiving end (iptables INPUT, at random), so
 * the sender's TCP does not know, as with loss on the wire or netem's on the sender's egress
 * (netem is not in every kernel: not in the one this was first run on). A clean phase after each
 * loss from 10 % on shows the recovery.
 */
const PHASES: readonly Omit<Phase, 'startMs' | 'endMs'>[] = [
  { name: '0 %', requestLoss: 0, answerLoss: 0, seconds: 120 },
  { name: '5 % each way', requestLoss: 0.05, answerLoss: 0.05, seconds: 120 },
  { name: '10 % each way', requestLoss: 0.1, answerLoss: 0.1, seconds: 90 },
  { name: '0 % after 10 %', requestLoss: 0, answerLoss: 0, seconds: 30 },
  { name: '20 % each way', requestLoss: 0.2, answerLoss: 0.2, seconds: 120 },
  { name: '0 % after 20 %', requestLoss: 0, answerLoss: 0, seconds: 30 },
  { name: '25 % one way (requests)', requestLoss: 0.25, answerLoss: 0, seconds: 90 },
  { name: '0 % after 25 % one way', requestLoss: 0, answerLoss: 0, seconds: 30 },
  { name: '25 % each way', requestLoss: 0.25, answerLoss: 0.25, seconds: 120 },
  { name: '0 % after 25 % each way', requestLoss: 0, answerLoss: 0, seconds: 45 },
];

/** A child in a namespace: `ip netns exec` execs node, so the pid is node's. */
function spawnIn(ns: string, args: string[]): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, process.execPath, ENDS, ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}

function firstLine(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line within ${timeoutMs} ms`)), timeoutMs);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before its first line`)));
  });
}

/** Drops `p` of the packets arriving in `ns` from `from`; 0: drops nothing. */
async function setLoss(ns: string, from: string, p: number): Promise<void> {
  await shell.nsSh(ns, ['iptables', '-F', 'INPUT']);
  if (p === 0) return;
  await shell.nsSh(
    ns,
    ['iptables', '-A', 'INPUT', '-s', from, '-m', 'statistic'].concat([
      '--mode',
      'random',
      '--probability',
      String(p),
      '-j',
      'DROP',
    ]),
  );
}

async function measure(progress: (text: string) => void): Promise<Recording> {
  const reason = await shell.unavailableReason();
  if (reason) throw new Error(`the path-loss bench ${reason}`);
  const share = positiveInt('BENCH_PATH_LOSS_TIME_PERCENT', 100) / 100;
  const phases = PHASES.map((p) => ({ ...p, seconds: Math.max(5, Math.round(p.seconds * share)) }));
  const names = shell.runNames(0);
  const [client, server] = [names.netns(1), names.netns(2)];
  const children: ChildProcess[] = [];
  const onExit = () =>
    shell.removeNowSync(
      names,
      2,
      children.flatMap((c) => (c.pid ? [c.pid] : [])),
      [],
    );
  process.on('exit', onExit);
  const facts = machineFacts();
  try {
    await shell.withSetupLock(() => shell.removeLeftovers(new Set(['0'])));
    await shell.sh('ip', ['netns', 'add', client]);
    await shell.sh('ip', ['netns', 'add', server]);
    await shell.sh(
      'ip',
      ['link', 'add', 'name', names.veth(1), 'type', 'veth'].concat([
        'peer',
        'name',
        names.veth(2),
      ]),
    );
    for (const [i, ns, ip] of [
      [1, client, CLIENT_IP],
      [2, server, SERVER_IP],
    ] as const) {
      await shell.sh('ip', ['link', 'set', names.veth(i), 'netns', ns]);
      await shell.nsSh(ns, ['ip', 'addr', 'add', `${ip}/24`, 'dev', names.veth(i)]);
      await shell.nsSh(ns, ['ip', 'link', 'set', names.veth(i), 'up']);
      await shell.nsSh(ns, ['ip', 'link', 'set', 'lo', 'up']);
    }
    const serving = spawnIn(server, ['serve', SERVER_IP, String(PORT)]);
    children.push(serving);
    await firstLine(serving, START_MS);
    const total = phases.reduce((s, p) => s + p.seconds, 0);
    const probing = spawnIn(client, ['probe', `${SERVER_IP}:${PORT}`, String(total + 5)]);
    children.push(probing);
    const probes: ProbeLine[] = [];
    createInterface({ input: probing.stdout! }).on('line', (line) => {
      probes.push(JSON.parse(line) as ProbeLine);
    });
    progress(`probing ${SERVER_IP}:${PORT} from ${client}, ${total} s in ${phases.length} phases`);
    const measured: Phase[] = [];
    for (const phase of phases) {
      await setLoss(server, CLIENT_IP, phase.requestLoss);
      await setLoss(client, SERVER_IP, phase.answerLoss);
      const startMs = Date.now();
      progress(`${phase.name} for ${phase.seconds} s (${probes.length} probes so far)`);
      await sleep(phase.seconds * 1_000);
      measured.push({ ...phase, startMs, endMs: Date.now() });
    }
    // The last probe's answer, at most a timeout after the phase ended.
    await sleep(1_500);
    return { facts, phases: measured, probes };
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await shell.sh('ip', ['netns', 'delete', client]).catch(() => undefined);
    await shell.sh('ip', ['netns', 'delete', server]).catch(() => undefined);
    process.off('exit', onExit);
  }
}

runSectionAlone(async (progress) => {
  const replay = process.env.BENCH_PATH_LOSS_REPLAY;
  let recording: Recording;
  if (replay) {
    recording = JSON.parse(readFileSync(replay, 'utf8')) as Recording;
  } else {
    recording = await measure(progress);
    mkdirSync('test-output', { recursive: true });
    writeFileSync(RECORDING, JSON.stringify(recording));
    progress(`recording kept in ${RECORDING}`);
  }
  return { markdown: pathLossReport(recording), missed: [] };
});
