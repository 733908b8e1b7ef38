// The multi-host benchmark's largest outages and start-ups: most followers crashed or black-holed
// at once, the top three crashing together, a staggered start-up, and a mesh of two versions.
import { setTimeout as sleep } from 'node:timers/promises';
import {
  byRank,
  epochsOfTwoCoordinators,
  MultiHostFixture,
} from '../test/support/multi-host-fixture.js';
import { HostNetwork, type HostNode } from '../test/support/netns-hosts.js';
import { runMixedVersionScenario } from '../test/support/mixed-version-scenario.js';
import { buildPreviousVersion, PREVIOUS_VERSIONS } from '../test/support/previous-version.js';
import type { HostsRow } from './hosts.js';
import type { FaultSpacing } from './fault-spacing.js';

/** A wait longer than any target, so a slow run is measured rather than cut short. */
const WAIT_MS = 30_000;
/** How long the receiver is watched after a mass black-hole for a peer_dead that must not come. */
const BLACKHOLE_WATCH_MS = 12_000;

type Progress = (text: string) => void;

/** ms from `atMs` to the webhook `wait` resolves with, or null (reported) once WAIT_MS passed. */
export async function timed(
  atMs: number,
  wait: () => Promise<{ receivedMs: number }>,
  progress: Progress,
): Promise<number | null> {
  try {
    return (await wait()).receivedMs - atMs;
  } catch (err) {
    progress(`  ${(err as Error).message.split('; received')[0]}`);
    return null;
  }
}

/**
 * Rows of the outages in a running mesh: `converge` brings it back to the starting point (every
 * node up, no fault, settled under the top host) between runs and returns the epoch it settled at.
 */
export async function outageRows(
  fx: MultiHostFixture,
  repeat: number,
  converge: () => Promise<number>,
  progress: Progress,
  spacing: FaultSpacing,
): Promise<HostsRow[]> {
  const ranked = () => byRank(fx.hosts);
  const massCrash: (number | null)[] = [];
  for (let run = 1; run <= repeat; run++) {
    const [, , ...victims] = ranked();
    await spacing.ready(victims, progress);
    const at = Date.now();
    await Promise.all(victims.map((v) => fx.net.kill(v.index)));
    spacing.hit(victims, at);
    const each = await Promise.all(
      victims.map((v) =>
        timed(
          at,
          () =>
            fx.waitForPeerStatus(
              `peer_dead for ${v.address}`,
              (b) => b.event === 'peer_dead' && b.peer.address === v.address,
              { sinceMs: at, timeoutMs: WAIT_MS },
            ),
          progress,
        ),
      ),
    );
    massCrash.push(each.some((t) => t === null) ? null : Math.max(...(each as number[])));
    progress(
      `3 of 4 followers crashed ${run}/${repeat}: the last peer_dead in ${massCrash.at(-1)} ms`,
    );
    await converge();
  }

  const massBlackhole: (number | null)[] = [];
  let falseDead = 0;
  for (let run = 1; run <= repeat; run++) {
    const [top, , ...victims] = ranked() as [HostNode, HostNode, ...HostNode[]];
    const at = Date.now();
    for (const v of victims) await fx.net.blackhole(v.index);
    const named = (addresses: readonly string[] | undefined) =>
      victims.every((v) => addresses?.includes(v.address));
    massBlackhole.push(
      await timed(
        at,
        () =>
          fx.waitForPeerStatus(
            `cannot_judge from ${top.address} naming all 3`,
            (b) =>
              b.event === 'cannot_judge' &&
              b.coordinator_address === top.address &&
              named(b.judgement?.unreachable.map((p) => p.address)),
            { sinceMs: at, timeoutMs: WAIT_MS },
          ),
        progress,
      ),
    );
    await sleep(Math.max(0, at + BLACKHOLE_WATCH_MS - Date.now()));
    falseDead += fx.deadReports(at).length;
    progress(
      `3 of 4 followers black-holed ${run}/${repeat}: cannot_judge naming them in ${massBlackhole.at(-1)} ms, ${fx.deadReports(at).length} peer_dead`,
    );
    await converge();
  }

  const topThree: (number | null)[] = [];
  for (let run = 1; run <= repeat; run++) {
    const [a, b, c, next] = ranked() as [HostNode, HostNode, HostNode, HostNode];
    const before = await converge();
    const at = Date.now();
    await Promise.all([a, b, c].map((h) => fx.net.kill(h.index)));
    topThree.push(
      await timed(
        at,
        () =>
          fx.waitForClusterStatus(
            `cluster_status from ${next.address}`,
            (s) => s.coordinator_address === next.address && s.epoch > before,
            { sinceMs: at, timeoutMs: WAIT_MS },
          ),
        progress,
      ),
    );
    progress(`top 3 crashed ${run}/${repeat}: ${next.name} leads in ${topThree.at(-1)} ms`);
    await converge();
  }

  return [
    {
      kind: 'timing',
      name: '3 of 4 followers crashed at once (SIGKILL) → the last of their 3 peer_dead',
      targetMs: 3_000,
      samples: massCrash,
    },
    {
      kind: 'timing',
      name: '3 of 4 followers black-holed at once → cannot_judge naming all 3 (from the coordinator, a 3-2 partition looks the same)',
      targetMs: 10_000,
      samples: massBlackhole,
    },
    {
      kind: 'count',
      name: '3 of 4 followers black-holed at once: peer_dead webhooks',
      runs: `${repeat} × ${BLACKHOLE_WATCH_MS / 1000} s`,
      count: falseDead,
      note: 'none may come: three live nodes on the far side of a partition look the same',
    },
    {
      kind: 'timing',
      name: 'The top 3 crashed together → cluster_status from the 4th (a single crash: ≤ 2 s)',
      targetMs: 2_000,
      samples: topThree,
    },
  ];
}

/** A staggered start-up on fresh hosts, `repeat` times: the top node first, the rest 2 s later. */
export async function startupRow(repeat: number, progress: Progress): Promise<HostsRow> {
  let shownDead = 0;
  let sharedEpochs = 0;
  let deadEvents = 0;
  let statuses = 0;
  for (let run = 1; run <= repeat; run++) {
    const net = await HostNetwork.start({ hosts: 5, startNodes: false });
    const fx = new MultiHostFixture(net);
    try {
      const [top, ...rest] = byRank(fx.hosts) as [HostNode, ...HostNode[]];
      await net.startNode(top.index);
      await sleep(2_000);
      await Promise.all(rest.map((h) => net.startNode(h.index)));
      await fx.settled(WAIT_MS);
      await sleep(3_000);
      const sent = fx.clusterStatuses();
      statuses += sent.length;
      shownDead += sent.reduce((n, w) => n + w.body.peer_map.filter((p) => !p.alive).length, 0);
      sharedEpochs += epochsOfTwoCoordinators(fx).length;
      deadEvents += fx.deadReports().length;
      progress(
        `staggered start ${run}/${repeat}: ${sent.length} cluster statuses, ${shownDead} alive: false, ${sharedEpochs} shared epochs, ${deadEvents} peer_dead so far`,
      );
    } finally {
      await net.teardown();
    }
  }
  return {
    kind: 'outcome',
    name: 'Staggered start-up: the top node, then the other 4 two seconds later',
    target: '0 alive: false for starting nodes, 0 epochs of two coordinators, 0 peer_dead',
    outcome: `${repeat} start-ups, ${statuses} cluster statuses: ${shownDead} alive: false, ${sharedEpochs} epochs of two coordinators, ${deadEvents} peer_dead`,
    ok: shownDead === 0 && sharedEpochs === 0 && deadEvents === 0,
  };
}

/**
 * The previous version (built from git) on the top and bottom hosts, this one on the other three:
 * settle, a crash under the old coordinator, the old coordinator's crash, a crash under the new.
 */
export async function mixedVersionRows(repeat: number, progress: Progress): Promise<HostsRow[]> {
  const rows: HostsRow[] = [];
  for (const { commit } of PREVIOUS_VERSIONS) {
    rows.push(...(await mixedVersionRowsOf(commit, repeat, progress)));
  }
  return rows;
}

async function mixedVersionRowsOf(
  commit: string,
  repeat: number,
  progress: Progress,
): Promise<HostsRow[]> {
  const build = await buildPreviousVersion({ commit, log: (line) => progress(`  ${line}`) });
  if (!build.ok) {
    return [
      {
        kind: 'outcome',
        name: `Mixed versions (${commit.slice(0, 7)} and this one)`,
        target: 'settles, reports crashes, fails over',
        outcome: `not run: ${build.reason}`,
        ok: false,
      },
    ];
  }
  const settle: (number | null)[] = [];
  const crash: (number | null)[] = [];
  const failover: (number | null)[] = [];
  for (let run = 1; run <= repeat; run++) {
    const net = await HostNetwork.start({ hosts: 5, startNodes: false });
    const fx = new MultiHostFixture(net);
    try {
      const outcome = await runMixedVersionScenario(fx, { previousCli: build.cliPath });
      settle.push(outcome.settleMs);
      crash.push(Math.max(outcome.followerDead.ms, outcome.bottomDead.ms));
      failover.push(outcome.failoverMs);
      progress(
        `mixed versions ${run}/${repeat}: settled in ${outcome.settleMs} ms, crashes reported in ${outcome.followerDead.ms} and ${outcome.bottomDead.ms} ms, failover in ${outcome.failoverMs} ms`,
      );
    } catch (err) {
      progress(
        `  mixed versions ${run}/${repeat}: ${(err as Error).message.split('; received')[0]}`,
      );
      settle.push(null);
      crash.push(null);
      failover.push(null);
    } finally {
      await net.teardown();
    }
  }
  const mixed = `2 nodes of ${commit.slice(0, 7)} (the top and the bottom) with 3 of this version`;
  return [
    { kind: 'timing', name: `${mixed}: settled`, targetMs: 3_000, samples: settle },
    {
      kind: 'timing',
      name: `${mixed}: a crash reported (under the old coordinator, and under the new)`,
      targetMs: 3_000,
      samples: crash,
    },
    {
      kind: 'timing',
      name: `${mixed}: the old top node crashed → cluster_status from the new successor`,
      targetMs: 3_000,
      samples: failover,
    },
  ];
}
