// The multi-host benchmark: 5 knh hosts in network namespaces (root only); crash, black-hole, lose
// packets and partition them, and time or count what the receiver is told. Rows as Markdown.
import { setTimeout as sleep } from 'node:timers/promises';
import { byRank, MultiHostFixture } from '../test/support/multi-host-fixture.js';
import { HostNetwork, type HostNode } from '../test/support/netns-hosts.js';
import { machineFacts, median, settingsTable, table, type MachineFacts } from './report.js';
import { mixedVersionRows, outageRows, startupRow } from './hosts-outages.js';
import { pathRows } from './hosts-paths.js';
import { faultRows } from './hosts-faults.js';
import { FaultSpacing } from './fault-spacing.js';

/** A wait longer than any target, so a slow run is measured rather than cut short. */
const WAIT_MS = 30_000;
/** Faults hit a mesh that has settled and exchanged a few heartbeats since (verdicts shared). */
const STEADY_MS = 2_000;
/** How long both sides of a partition are watched: election, then a probe with every retry timing out, twice over. */
const PARTITION_WATCH_MS = 20_000;

export interface HostsBenchOptions {
  /** Runs of each timing (default 5). */
  repeat?: number;
  /** Length of the packet-loss run (default 300). */
  lossSeconds?: number;
  /** Fraction of packets dropped in the loss run (default 0.2). */
  lossProbability?: number;
  /** Node settings on top of the harness's; default none: knh's defaults. */
  env?: Record<string, string>;
  progress?: (text: string) => void;
}

export type HostsRow =
  | { kind: 'timing'; name: string; targetMs: number; samples: (number | null)[] }
  | { kind: 'count'; name: string; runs: string; count: number; note: string }
  | { kind: 'outcome'; name: string; target: string; outcome: string; ok: boolean };

export interface HostsBenchResult {
  rows: HostsRow[];
  facts: MachineFacts;
  /** A section for docs/benchmarks.md: date, machine, table, how measured, settings. */
  markdown: string;
  totalSeconds: number;
}

const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

export function rowPassed(row: HostsRow): boolean {
  if (row.kind === 'count') return row.count === 0;
  if (row.kind === 'outcome') return row.ok;
  return row.samples.every((s) => s !== null && s <= row.targetMs);
}

export function hostsTable(rows: readonly HostsRow[]): string {
  const cells = (row: HostsRow): string[] => {
    const result = rowPassed(row) ? 'PASS' : '**FAIL**';
    if (row.kind === 'count') {
      return [row.name, '0', row.runs, '—', '—', `${result}: ${row.count} (${row.note})`];
    }
    if (row.kind === 'outcome')
      return [row.name, row.target, '1', '—', '—', `${result}: ${row.outcome}`];
    const ok = row.samples.filter((s): s is number => s !== null);
    const missed = row.samples.length - ok.length;
    return [
      row.name,
      `≤ ${row.targetMs / 1000} s`,
      `${ok.length}/${row.samples.length}${missed ? ` (${missed} timed out)` : ''}`,
      ok.length ? secs(median(ok)) : '—',
      ok.length ? secs(Math.max(...ok)) : '—',
      result,
    ];
  };
  const escaped = (row: HostsRow) => cells(row).map((c) => c.replace(/\|/g, '\\|'));
  return table(['Measurement', 'Target', 'Runs', 'Median', 'Max', 'Result'], rows.map(escaped));
}

/** Back to the starting point: no fault, every node up, all following the top host, verdicts shared. */
async function converge(fx: MultiHostFixture): Promise<number> {
  await fx.net.heal();
  for (const h of fx.hosts) if (!h.process) await fx.net.startNode(h.index);
  const { epoch } = await fx.waitForLeader({ timeoutMs: WAIT_MS });
  await sleep(STEADY_MS);
  return epoch;
}

/** ms from `atMs` to the first matching webhook's arrival, or null (reported) after WAIT_MS. */
async function timeTo(
  fx: MultiHostFixture,
  atMs: number,
  wait: (o: { sinceMs: number; timeoutMs: number }) => Promise<{ receivedMs: number }>,
  progress: (t: string) => void,
): Promise<number | null> {
  try {
    return (await wait({ sinceMs: atMs, timeoutMs: WAIT_MS })).receivedMs - atMs;
  } catch (err) {
    progress(`  ${(err as Error).message.split('; received')[0]}`);
    return null;
  }
}

export async function runHostsBench({
  repeat = 5,
  lossSeconds = 300,
  lossProbability = 0.2,
  env = {},
  progress = () => undefined,
}: HostsBenchOptions = {}): Promise<HostsBenchResult> {
  const available = await HostNetwork.available();
  if (!available.ok) throw new Error(`the multi-host bench cannot run here: ${available.reason}`);
  const facts = machineFacts();
  const began = Date.now();
  const net = await HostNetwork.start({ hosts: 5, env });
  const fx = new MultiHostFixture(net);
  let rows: HostsRow[];
  let lossRunMs: number | undefined;
  try {
    if (net.cleaned.length) progress(`removed leftovers: ${net.cleaned.join(', ')}`);
    let { epoch } = await fx.settled(WAIT_MS);
    await sleep(STEADY_MS);
    const [top, next] = byRank(fx.hosts) as [HostNode, HostNode];
    const followers = byRank(fx.hosts).slice(1);
    const victimOf = (run: number) => followers[(run - 1) % followers.length] as HostNode;
    const deadFor = (victim: HostNode) => (o: { sinceMs: number; timeoutMs: number }) =>
      fx.waitForPeerStatus(
        `peer_dead for ${victim.address}`,
        (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
        o,
      );

    const spacing = new FaultSpacing();
    const crashed: (number | null)[] = [];
    for (let run = 1; run <= repeat; run++) {
      const victim = victimOf(run);
      await spacing.ready([victim], progress);
      const at = await net.kill(victim.index);
      spacing.hit([victim], at);
      crashed.push(await timeTo(fx, at, deadFor(victim), progress));
      progress(
        `crashed peer ${run}/${repeat} (${victim.name}): ${crashed.at(-1) ?? 'timed out'} ms`,
      );
      epoch = await converge(fx);
    }

    const blackholed: (number | null)[] = [];
    for (let run = 1; run <= repeat; run++) {
      const victim = victimOf(run);
      await spacing.ready([victim], progress);
      const at = await net.blackhole(victim.index);
      spacing.hit([victim], at);
      blackholed.push(await timeTo(fx, at, deadFor(victim), progress));
      progress(
        `black-holed peer ${run}/${repeat} (${victim.name}): ${blackholed.at(-1) ?? 'timed out'} ms`,
      );
      epoch = await converge(fx);
    }

    const takeover: (number | null)[] = [];
    for (let run = 1; run <= repeat; run++) {
      const before = epoch;
      const at = await net.kill(top.index);
      const successor = (o: { sinceMs: number; timeoutMs: number }) =>
        fx.waitForClusterStatus(
          `cluster_status from a successor above epoch ${before}`,
          (b) => b.coordinator_address !== top.address && b.epoch > before,
          o,
        );
      takeover.push(await timeTo(fx, at, successor, progress));
      progress(`crashed coordinator ${run}/${repeat}: ${takeover.at(-1) ?? 'timed out'} ms`);
      epoch = await converge(fx);
    }

    progress(`${lossProbability * 100}% loss on every host for ${lossSeconds} s`);
    const lossAt = await net.loss(lossProbability);
    for (let done = 0; done < lossSeconds; done += 60) {
      await sleep(Math.min(60, lossSeconds - done) * 1000);
      progress(
        `  ${Math.min(done + 60, lossSeconds)}/${lossSeconds} s: ${fx.deadReports(lossAt).length} peer_dead`,
      );
    }
    const lossEnd = await net.heal();
    await sleep(3_000); // alerts decided just before the heal still arrive
    const lossDead = fx.deadReports(lossAt).length;
    const lossWarnings = new Map<string, number>();
    for (const w of fx.peerStatuses(lossAt)) {
      if (w.body.severity === 'warning' && w.receivedMs <= lossEnd) {
        lossWarnings.set(w.body.event, (lossWarnings.get(w.body.event) ?? 0) + 1);
      }
    }
    const terms = new Set(
      fx.clusterStatuses(lossAt).map((w) => `${w.body.coordinator_address}#${w.body.epoch}`),
    );
    const elections = fx.logCount('election-started', lossAt);
    progress(
      `  loss run: ${lossDead} peer_dead, ${terms.size} coordinator terms reported, ${elections} elections held`,
    );
    epoch = await converge(fx);

    const two = [top, next];
    const three = byRank(fx.hosts).slice(2);
    const partAt = await net.partition(
      three.map((h) => h.index),
      two.map((h) => h.index),
    );
    await sleep(PARTITION_WATCH_MS);
    const inPartition = fx.deadReports(partAt);
    const by = (side: HostNode[]) =>
      inPartition.filter((w) => side.some((h) => h.address === w.body.coordinator_address));
    const threeSaw = [...new Set(by(three).map((w) => w.body.peer.address))].sort();
    const twoSent = by(two).length;
    const healedMs = await net.heal();
    await fx
      .waitForLeader({ timeoutMs: WAIT_MS })
      .catch((err: Error) => progress(`  ${err.message}`));
    const partitionOk =
      twoSent === 0 &&
      threeSaw.join() ===
        two
          .map((h) => h.address)
          .sort()
          .join();
    const outcome = `3-side reported ${threeSaw.join(', ') || 'nobody'}; 2-side sent ${twoSent} peer_dead; one coordinator again ${secs(Date.now() - healedMs)} after healing`;
    progress(`partition 3 + 2: ${outcome}`);

    rows = [
      {
        kind: 'timing',
        name: 'Crashed peer (SIGKILL) → its peer_dead',
        targetMs: 2000,
        samples: crashed,
      },
      {
        kind: 'timing',
        name: 'Black-holed peer (iptables DROP both ways) → its peer_dead',
        targetMs: 4000,
        samples: blackholed,
      },
      {
        kind: 'timing',
        name: 'Crashed coordinator (SIGKILL) → cluster_status from its successor',
        targetMs: 2000,
        samples: takeover,
      },
      {
        kind: 'count',
        name: `${lossProbability * 100}% random loss on every host: peer_dead webhooks`,
        runs: `${lossSeconds} s`,
        count: lossDead,
        note: `${terms.size} coordinator terms reported, ${elections} elections held; warnings of pair probing: ${[...lossWarnings].map(([e, n]) => `${n} ${e}`).join(', ') || 'none'}`,
      },
      {
        kind: 'outcome',
        name: 'Partition 3 + 2 (the top two hosts on the 2-side)',
        target: '3-side reports the 2; 2-side none',
        outcome,
        ok: partitionOk,
      },
    ];
    await converge(fx);
    rows.push(...(await outageRows(fx, repeat, () => converge(fx), progress, spacing)));
    await converge(fx);
    rows.push(...(await pathRows(fx, repeat, () => converge(fx), progress)));
    await converge(fx);
    rows.push(...(await faultRows(fx, repeat, () => converge(fx), progress, spacing)));
    lossRunMs = lossEnd - lossAt;
  } finally {
    await net.teardown();
  }
  // On hosts of their own: start-ups, and a mesh of two versions.
  rows.push(await startupRow(repeat, progress));
  rows.push(...(await mixedVersionRows(repeat, progress)));
  const totalSeconds = (Date.now() - began) / 1000;
  return {
    rows,
    facts,
    totalSeconds,
    markdown: hostsMarkdown({
      rows,
      facts,
      repeat,
      lossSeconds,
      totalSeconds,
      env,
      lossEnd: lossRunMs ?? 0,
    }),
  };
}

function hostsMarkdown(r: {
  rows: HostsRow[];
  facts: MachineFacts;
  repeat: number;
  lossSeconds: number;
  totalSeconds: number;
  env: Record<string, string>;
  lossEnd: number;
}): string {
  const f = r.facts;
  const extra = Object.entries(r.env).map(([k, v]) => `${k}=${v}`);
  return `## Multi-host: network namespaces

Produced by \`npm run bench\` (bench/hosts.ts, root only; alone: \`node dist/bench/hosts-main.js\`) on ${f.date}: 5 hosts, each its own network namespace on a Linux bridge with one knh process (static discovery, ${extra.length ? `settings ${extra.join(' ')}` : 'default settings'}, LOG_LEVEL=debug), the receiver on the bridge address. ${r.repeat} runs of each timing; the loss run lasted ${secs(r.lossEnd)}. ${f.nproc} CPUs (${f.cpu}), Node ${f.node}, ${f.os}; load average at start ${f.load}. Whole run: ${Math.round(r.totalSeconds)} s.

${hostsTable(r.rows)}

Each time runs from the moment the fault is in force (the kill returned, or iptables-restore committed the rules in the host's namespace) to the receiver getting the webhook. Crashed and black-holed peers rotate over the 4 followers, and a node is faulted again only once a minute (FLAP_WINDOW) has passed since its last fault: a node down again within it is flapping, which is damped (one page), and these rows time independent faults. Faults are iptables DROP rules inside the hosts' namespaces naming only the other hosts, so every host always reaches the receiver. Between runs the fault is healed, stopped nodes are restarted, and the mesh is back under the top host for ${STEADY_MS / 1000} s before the next fault. The mass outages hit the 3 lowest-ranked followers (the coordinator keeps one witness); the top-3 crash kills the coordinator and the 2 successors after it. Another secret and a wrong clock (libfaketime, the monotonic clock left alone) are given to a node by restarting it with them; the flapping link is a black hole put on and healed; the survivors' warnings are those naming either of the 2 hosts left (as the node, or an end of a path). The start-ups and the mixed-version runs each use hosts of their own, nodes started from nothing; the mixed-version rows run the previous version (built from git: bench/hosts-outages.ts, test/support/previous-version.ts) on the top and bottom hosts, and time each step from the last node's start or the kill to the webhook.

Settings (defaults from src/config/settings.ts):

${settingsTable()}
`;
}
