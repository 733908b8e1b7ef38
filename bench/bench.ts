// `npm run bench`: failure detection on 5 network-namespace hosts (root only; bench/hosts.ts), then
// elections, crash detection and false alarms of 5 real nodes on loopback, then malformed input,
// slow clients and floods (bench/hostile.ts), then scale: one coordinator of 1,000 and 5,000
// simulated peers (bench/scale.ts), knh's peer client against node:http and undici
// (bench/peer-client.ts), the election simulated at 100 to 5,000 nodes
// (bench/election-scale.ts), localizing path failures (bench/localize.ts), pair probing's memory
// (bench/path-memory.ts) and 50 real nodes
// (bench/mesh-settle.ts); prints each table against
// its targets and writes the sections it ran into their blocks of docs/benchmarks.md, leaving the
// rest of the doc as it is (bench/benchmarks-doc.ts).
import { localizeSection } from './localize.js';
import { pathMemorySection } from './path-memory.js';
import { positiveInt, runMain } from './entry.js';
import { parseDuration } from '../src/config/duration.js';
import { clusterStatusOf, peerStatusOf } from '../src/demo/received-webhooks.js';
import { Receiver } from '../src/demo/webhook-sink.js';
import { loadSchemas } from '../src/wire/schemas.js';
import { HostNetwork } from '../test/support/netns-hosts.js';
import { hostileSection } from './hostile.js';
import { electionScaleSection } from './election-scale.js';
import { meshSettleSection } from './mesh-settle.js';
import { scaleSection } from './scale.js';
import { peerClientSection } from './peer-client.js';
import { rowPassed, runHostsBench } from './hosts.js';
import { LivenessLedger } from './liveness-ledger.js';
import {
  checkBenchmarksDoc,
  prettyMarkdown,
  writeSections,
  type SectionResult,
} from './benchmarks-doc.js';
import {
  measureCoordinatorCrash,
  measureElection,
  measurePeerCrash,
  steadyRun,
  type BenchContext,
} from './measurements.js';
import {
  defaultOf,
  machineFacts,
  markdownReport,
  passed,
  relevantSettings,
  resultsTable,
  type Row,
} from './report.js';

/** The longest one probe can take with every retry timing out: how far back a real death can lie. */
function probeSpanMs(): number {
  const ms = (env: string) => parseDuration(defaultOf(env)) ?? 0;
  const connect = Number(defaultOf('CONNECT_MAX_RETRIES'));
  const send = Number(defaultOf('SEND_MAX_RETRIES'));
  return (
    (1 + connect + send) * ms('PROBE_TIMEOUT') +
    connect * ms('CONNECT_COOLDOWN_PERIOD') +
    send * ms('SEND_COOLDOWN_PERIOD')
  );
}

/**
 * The multi-host section: run unless BENCH_HOSTS=0; skipped with the reason where namespaces are
 * not available (not root, no iptables), keeping the figures of the last run that had them.
 */
async function hostsSection(
  repeat: number,
  progress: (text: string) => void,
): Promise<SectionResult> {
  const skipped = (why: string) => {
    progress(`multi-host bench skipped: ${why}; its block in docs/benchmarks.md is kept`);
    return { markdown: null, missed: [] };
  };
  if (process.env.BENCH_HOSTS === '0') return skipped('BENCH_HOSTS=0');
  const available = await HostNetwork.available();
  if (!available.ok) return skipped(available.reason);
  const result = await runHostsBench({
    repeat,
    lossSeconds: positiveInt('BENCH_LOSS_SECONDS', 300),
    progress,
  });
  return {
    markdown: result.markdown,
    missed: result.rows.filter((r) => !rowPassed(r)).map((r) => r.name),
  };
}

async function main(): Promise<number> {
  const repeat = positiveInt('BENCH_REPEAT', 5);
  const steadySeconds = positiveInt('BENCH_STEADY_SECONDS', 300);
  // Before any work: a run of half an hour must not end by failing to write.
  checkBenchmarksDoc();
  const facts = machineFacts();
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);

  const receiver = await new Receiver({ schemas: loadSchemas() }).start();
  const ctx: BenchContext = {
    receiver,
    ledger: new LivenessLedger(probeSpanMs()),
    env: {
      PEER_STATUS_URL: receiver.url('/peer-status'),
      CLUSTER_STATUS_URL: receiver.url('/cluster-status'),
    },
    repeat,
    progress,
    meshes: [],
  };
  // Whatever happens (an error, Ctrl-C), no node process outlives the bench.
  const killAll = () =>
    ctx.meshes.forEach((m) => m.nodes.forEach((n) => n.process?.kill('SIGKILL')));
  process.on('exit', killAll);
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`bench: ${signal}, stopping every node\n`);
    killAll();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const signal of signals) process.on(signal, onSignal);

  progress(
    `knh bench: ${repeat} runs a timing, ${steadySeconds} s steady run, ${facts.nproc} CPUs, Node ${facts.node}`,
  );
  progress(
    `defaults: ${relevantSettings()
      .map((s) => `${s.env}=${s.default ?? '-'}`)
      .join(' ')}`,
  );
  try {
    const hosts = await hostsSection(repeat, progress);
    const election = await measureElection(ctx);
    const peer = await measurePeerCrash(ctx, election.last);
    const coordinator = await measureCoordinatorCrash(ctx, election.last);
    const leaving = await measureCoordinatorCrash(ctx, election.last, 'SIGTERM');
    const steady = await steadyRun(ctx, election.last, steadySeconds);
    await election.last.mesh.stop();
    // Malformed input, slow clients and floods: a mesh of its own (BENCH_HOSTILE=0 skips it).
    const hostile = await hostileSection(progress);
    // Scale: a coordinator of 1,000 and 5,000 simulated peers (BENCH_SCALE=0 skips it), the
    // election simulated at 100 to 5,000 nodes (BENCH_ELECTION=0), and 50 real nodes settling
    // and replacing a crashed coordinator (BENCH_MESH=0).
    const scale = await scaleSection(progress);
    // knh's peer client against node:http and undici under a coordinator's load of pings
    // (BENCH_PEER_CLIENT=0 skips it).
    const peerClient = await peerClientSection(progress);
    const electionScale = electionScaleSection(progress);
    const localizing = localizeSection(progress);
    const pathMemory = await pathMemorySection(progress);
    const meshSettle = await meshSettleSection(progress);

    const peerDead = receiver.received.flatMap((w) => {
      const p = peerStatusOf(w);
      return p?.event === 'peer_dead' ? [p] : [];
    });
    const falseAlarms = peerDead.filter((p) => ctx.ledger.isFalseAlarm(p));
    for (const p of falseAlarms) progress(`FALSE ALARM: ${JSON.stringify(p)}`);
    const totalSeconds = (Date.now() - began) / 1000;
    const rows: Row[] = [
      {
        kind: 'timing',
        name: 'Election settled: spawn → first cluster_status from the top node with 4/4 alive',
        targetMs: 2000,
        knh: '15 s',
        samples: election.samples,
      },
      {
        kind: 'timing',
        name: '… of which process start-up: spawn → all 5 nodes listening',
        targetMs: null,
        knh: '—',
        samples: election.startup,
      },
      {
        kind: 'timing',
        name: 'Crashed peer (SIGKILL) → its peer_dead webhook',
        targetMs: 3000,
        knh: '19 s',
        samples: peer.dead,
      },
      {
        kind: 'timing',
        name: 'Crashed coordinator (SIGKILL) → cluster_status from the new coordinator',
        targetMs: 3000,
        knh: '11 s',
        samples: coordinator.takeover,
      },
      {
        kind: 'timing',
        name: 'Coordinator stopped in order (SIGTERM) → cluster_status from the new coordinator',
        targetMs: 1000,
        knh: '11 s',
        samples: leaving.takeover,
      },
      {
        kind: 'count',
        name: 'peer_dead webhooks about a coordinator stopped in order (SIGTERM)',
        runs: `${ctx.repeat} runs`,
        count: leaving.deadReports,
      },
      {
        kind: 'timing',
        name: 'Restarted peer → its peer_recovered webhook (process start-up and RECOVERY_HOLD included)',
        targetMs: null,
        knh: '—',
        samples: peer.recovered,
      },
      {
        kind: 'timing',
        name: 'Restarted coordinator → its cluster_status as coordinator again',
        targetMs: null,
        knh: '—',
        samples: coordinator.back,
      },
      {
        kind: 'count',
        name: `peer_dead webhooks for live peers, steady run (nothing killed)`,
        runs: `${steadySeconds} s`,
        count: steady.peerDead,
      },
      {
        kind: 'count',
        name: `peer_dead webhooks for live peers, whole run (${peerDead.length} peer_dead in all)`,
        runs: `${Math.round(totalSeconds)} s`,
        count: falseAlarms.length,
      },
    ];
    const bad = receiver.received.filter((w) => w.errors.length > 0).length;
    const clusterStatuses = receiver.received.filter((w) => clusterStatusOf(w) !== null).length;
    const notes = [
      `Steady run: ${steady.coordinatorChanges} coordinator changes logged, ${steady.clusterStatuses} cluster_status webhooks.`,
      `Whole run: ${receiver.received.length} webhooks received (${peerDead.length} peer_dead, ${clusterStatuses} cluster_status), ${bad} failing their schema.`,
    ];
    const loopback = markdownReport({
      facts,
      rows,
      repeat,
      steadySeconds,
      totalSeconds,
      falseAlarmWindowMs: ctx.ledger.windowMs,
      notes,
    });
    const written = {
      hosts: hosts.markdown,
      loopback,
      hostile: hostile.markdown,
      scale: scale.markdown,
      'peer-client': peerClient.markdown,
      'election-scale': electionScale.markdown,
      localize: localizing.markdown,
      'path-memory': pathMemory.markdown,
      'mesh-settle': meshSettle.markdown,
    };
    await writeSections(written);

    if (hosts.markdown !== null) {
      process.stdout.write(`\n${await prettyMarkdown(hosts.markdown)}\n`);
    }
    process.stdout.write(`\n${await prettyMarkdown(resultsTable(rows))}\n${notes.join('\n')}\n`);
    if (peerClient.markdown !== null) {
      process.stdout.write(`\n${await prettyMarkdown(peerClient.markdown)}`);
    }
    const missed = [
      ...hosts.missed,
      ...hostile.missed,
      ...scale.missed,
      ...peerClient.missed,
      ...electionScale.missed,
      ...meshSettle.missed,
      ...rows.filter((r) => passed(r) === false).map((r) => r.name),
    ];
    const blocks = Object.entries(written);
    const said = (ran: boolean) =>
      blocks
        .filter(([, markdown]) => (markdown !== null) === ran)
        .map(([section]) => section)
        .join(', ') || 'none';
    const where = `Written to docs/benchmarks.md: ${said(true)}; kept as they were: ${said(false)}\n`;
    process.stdout.write(
      missed.length === 0
        ? `\nall targets met. ${where}`
        : `\nFAIL: ${missed.length} target(s) missed:\n${missed.map((m) => `  FAIL  ${m}`).join('\n')}\n${where}`,
    );
    return 0;
  } finally {
    await Promise.all(ctx.meshes.map((m) => m.stop()));
    await receiver.close();
    process.off('exit', killAll);
    for (const signal of signals) process.off(signal, onSignal);
  }
}

runMain(main);
