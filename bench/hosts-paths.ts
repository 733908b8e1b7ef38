// The multi-host benchmark's pair-probing cases (issue 22): what only the paths between nodes show,
// each timed from the fault to its finding's webhook, with the dead-peer events sent meanwhile
// (none may be): two followers cut from each other, a node losing a quarter of its packets each
// way, an MTU black hole, a node whose egress is cut, two pairs of followers cut from each other.
import { setTimeout as sleep } from 'node:timers/promises';
import { byRank, type MultiHostFixture } from '../test/support/multi-host-fixture.js';
import type { HostNode } from '../test/support/netns-hosts.js';
import { FINDING_CLOSE_AFTER_MS } from '../src/paths/defaults.js';
import type { PeerStatusPayload } from '../src/wire/webhooks.js';
import type { HostsRow } from './hosts.js';

/** A wait longer than any target, so a slow run is measured rather than cut short. */
const WAIT_MS = 60_000;
/** After each finding, how long the receiver is watched for a peer_dead that must not come. */
const WATCH_MS = 10_000;
/** After converging, a cover of the ring and a little more: every path known and working. */
const PATHS_SETTLE_MS = 5_000;

type Progress = (text: string) => void;

interface Case {
  name: string;
  targetMs: number;
  /** Injects the fault in run `run` (1…); returns when it is in force, and what to wait for. */
  inject(
    run: number,
  ): Promise<{ at: number; what: string; match: (b: PeerStatusPayload) => boolean }>;
}

/**
 * Rows of the pair-probing cases in a running mesh: `converge` brings it back to the starting
 * point (no fault, every node up, settled under the top host) between runs.
 */
export async function pathRows(
  fx: MultiHostFixture,
  repeat: number,
  converge: () => Promise<number>,
  progress: Progress,
): Promise<HostsRow[]> {
  const followers = () => byRank(fx.hosts).slice(1);
  const victimOf = (run: number) => followers()[(run - 1) % 4] as HostNode;
  const idOf = (h: HostNode) => `${h.name}@${h.ip}`;
  const cases: Case[] = [
    {
      name: 'Two followers cut from each other → path_broken naming both',
      targetMs: 5_000,
      inject: async (run) => {
        const a = victimOf(run);
        const b = victimOf(run + 1);
        const ends = new Set([idOf(a), idOf(b)]);
        return {
          at: await fx.net.partition([a.index], [b.index]),
          what: `path_broken between ${a.name} and ${b.name}`,
          match: (p) =>
            p.event === 'path_broken' &&
            p.path !== undefined &&
            ends.has(p.path.from) &&
            ends.has(p.path.to),
        };
      },
    },
    {
      name: 'A node with 25 % packet loss each way → its peer_degraded',
      targetMs: 30_000,
      inject: async (run) => {
        const v = victimOf(run);
        return {
          at: await fx.net.lossyHost(v.index, 0.25),
          what: `peer_degraded for ${v.name}`,
          match: (p) => p.event === 'peer_degraded' && p.peer.address === v.address,
        };
      },
    },
    {
      name: 'An MTU black hole on a node (packets of 1,280 bytes and more dropped) → its peer_mtu',
      targetMs: 15_000,
      inject: async (run) => {
        const v = victimOf(run);
        return {
          at: await fx.net.mtuBlackhole(v.index, 1_280),
          what: `peer_mtu for ${v.name}`,
          match: (p) => p.event === 'peer_mtu' && p.peer.address === v.address,
        };
      },
    },
    {
      name: 'A node that opens no connection (its egress cut) → its egress_broken',
      targetMs: 20_000,
      inject: async (run) => {
        const v = victimOf(run);
        return {
          at: await fx.net.egressCut(v.index),
          what: `egress_broken for ${v.name}`,
          match: (p) => p.event === 'egress_broken' && p.peer.address === v.address,
        };
      },
    },
    {
      name: 'Two pairs of followers cut from each other (the coordinator reaching all) → partition',
      targetMs: 5_000,
      inject: async () => {
        const [a, b, c, d] = followers() as [HostNode, HostNode, HostNode, HostNode];
        return {
          at: await fx.net.partition([a.index, b.index], [c.index, d.index]),
          what: 'partition',
          match: (p) => p.event === 'partition',
        };
      },
    },
  ];
  const rows: HostsRow[] = [];
  let deaths = 0;
  for (const c of cases) {
    const samples: (number | null)[] = [];
    for (let run = 1; run <= repeat; run++) {
      await sleep(PATHS_SETTLE_MS);
      const { at, what, match } = await c.inject(run);
      try {
        const found = await fx.waitForPeerStatus(what, match, { sinceMs: at, timeoutMs: WAIT_MS });
        samples.push(found.receivedMs - at);
      } catch (err) {
        progress(`  ${(err as Error).message.split('; received')[0]}`);
        samples.push(null);
      }
      await sleep(WATCH_MS);
      const dead = fx.deadReports(at).length;
      deaths += dead;
      progress(
        `${c.name} ${run}/${repeat}: ${samples.at(-1) ?? 'timed out'} ms; ${dead} peer_dead`,
      );
      const healedMs = Date.now();
      await converge();
      // What was found closes once it has not been found for FINDING_CLOSE_AFTER_MS: the same
      // fault again before then is that incident going on, and sends nothing new.
      await sleep(Math.max(0, healedMs + FINDING_CLOSE_AFTER_MS + 2_000 - Date.now()));
    }
    rows.push({ kind: 'timing', name: c.name, targetMs: c.targetMs, samples });
  }
  rows.push({
    kind: 'count',
    name: 'The cases above: peer_dead webhooks (every node answered all along)',
    runs: `${repeat} × ${cases.length}`,
    count: deaths,
    note: `within ${WATCH_MS / 1000} s of each finding`,
  });
  return rows;
}
