// The mixed-version mesh scenario: the previous version on the top- and bottom-ranked hosts, this one
// on the rest; settle, crashes and a failover across versions, each timed from its cause to its webhook.
import { CLI_PATH } from '../../src/demo/mesh.js';
import { byRank, type MultiHostFixture } from './multi-host-fixture.js';
import type { HostNode } from './netns-hosts.js';
import { sleep } from './poll.js';

/** How long one step may take before the scenario gives up (far above every target: slow runs are measured). */
export const STEP_TIMEOUT_MS = 30_000;
/**
 * Faults hit a mesh in steady state: a few heartbeats after the last change, so that the followers
 * hold the coordinator's verdicts and alerts (what a successor carries on).
 */
const STEADY_MS = 2_000;
/**
 * How long after the coordinator's crash the successor is watched for a repeated peer_dead of the
 * follower its predecessor reported: its takeover (≤ 3 s) and a full probe round after it.
 */
const SUCCESSION_WATCH_MS = 8_000;
/** How long after the last crash the receiver is watched for a duplicate report. */
const LAST_WATCH_MS = 5_000;

/** Who plays what, from the bully order (the highest IP leads). */
export interface MixedVersionRoles {
  /** Previous version; the first coordinator. */
  top: HostNode;
  /** This version; the successor. */
  second: HostNode;
  /** This version; the follower crashed under the old coordinator. */
  follower: HostNode;
  /** Previous version; crashed under the new coordinator. */
  bottom: HostNode;
  /** The hosts that run the previous version. */
  previous: HostNode[];
}

/** One reported crash: ms from the kill to its peer_dead, and who sent it. */
export interface DeadReport {
  ms: number;
  by: string;
}

export interface MixedVersionOutcome {
  roles: MixedVersionRoles;
  /** ms from the spawn of the last node to the top host's cluster status listing all others alive. */
  settleMs: number;
  settledEpoch: number;
  followerDead: DeadReport;
  /** ms from the coordinator's crash to the successor's first cluster status of a higher epoch. */
  failoverMs: number;
  failoverEpoch: number;
  topDead: DeadReport;
  bottomDead: DeadReport;
  /** Every peer_dead received, as "address by coordinator_address", in arrival order. */
  deadReports: string[];
  /** Every webhook knh's schemas rejected, with the receiver's errors. */
  invalidWebhooks: string[];
  /** Every peer-status event at warning severity (a finding of pair probing), as "event address". */
  warnings: string[];
}

export interface MixedVersionOptions {
  /** The previous version's CLI (see previous-version.ts). */
  previousCli: string;
  /** This version's CLI (default: the working tree's build). */
  currentCli?: string;
  stepTimeoutMs?: number;
  /** One line per step, with its measured time. */
  progress?: (line: string) => void;
}

/** The roles of ≥ 4 hosts: the previous version at both ends of the rank order, the third crashed. */
export function mixedVersionRoles(hosts: readonly HostNode[]): MixedVersionRoles {
  const ranked = byRank(hosts);
  const [top, second, follower] = ranked;
  const bottom = ranked.at(-1);
  if (!top || !second || !follower || !bottom || ranked.length < 4) {
    throw new Error(`the mixed-version scenario needs at least 4 hosts, not ${ranked.length}`);
  }
  return { top, second, follower, bottom, previous: [top, bottom] };
}

/**
 * Runs the scenario on a network built with `startNodes: false`: starts every node with its
 * version, then settle → crash a follower → crash the coordinator → crash the bottom host. Throws
 * when a step does not happen within `stepTimeoutMs`; what happened otherwise is returned for the
 * caller to judge (a test asserts, a benchmark prints rows).
 */
export async function runMixedVersionScenario(
  fx: MultiHostFixture,
  {
    previousCli,
    currentCli = CLI_PATH,
    stepTimeoutMs = STEP_TIMEOUT_MS,
    progress = () => undefined,
  }: MixedVersionOptions,
): Promise<MixedVersionOutcome> {
  if (fx.running().length > 0) throw new Error('start the network with startNodes: false');
  const roles = mixedVersionRoles(fx.hosts);
  const { top, second, follower, bottom } = roles;
  const cliOf = (h: HostNode) => (roles.previous.includes(h) ? previousCli : currentCli);
  const versionOf = (h: HostNode) => (roles.previous.includes(h) ? 'previous' : 'current');
  progress(
    `previous version on ${roles.previous.map((h) => h.name).join(', ')}; ranks: ${byRank(fx.hosts)
      .map((h) => `${h.name} (${versionOf(h)})`)
      .join(' > ')}`,
  );

  const spawned = await Promise.all(fx.hosts.map((h) => fx.net.startNode(h.index, cliOf(h))));
  const lastStartMs = Math.max(...spawned);
  const settled = await fx.settled(stepTimeoutMs);
  const settleMs = settled.status.receivedMs - lastStartMs;
  progress(
    `settled on ${settled.coordinator.name} epoch ${settled.epoch}, every peer alive, ${seconds(settleMs)} after the last start`,
  );
  await sleep(STEADY_MS);

  const followerDead = await crashAndAwaitDead(fx, follower, stepTimeoutMs);
  progress(
    `crashed follower ${follower.name} → peer_dead in ${seconds(followerDead.ms)} by ${followerDead.by}`,
  );
  await sleep(STEADY_MS);

  const topCrashMs = await fx.net.kill(top.index);
  const takeover = await fx.waitForClusterStatus(
    `cluster_status from ${second.address} above epoch ${settled.epoch}`,
    (b) => b.coordinator_address === second.address && b.epoch > settled.epoch,
    { sinceMs: topCrashMs, timeoutMs: stepTimeoutMs },
  );
  const failoverMs = takeover.receivedMs - topCrashMs;
  progress(
    `crashed coordinator ${top.name} → ${second.name}'s cluster_status in ${seconds(failoverMs)} (epoch ${takeover.body.epoch})`,
  );
  const topDead = await awaitDead(fx, top, topCrashMs, stepTimeoutMs);
  progress(`… and its peer_dead in ${seconds(topDead.ms)} by ${topDead.by}`);
  await sleep(Math.max(0, topCrashMs + SUCCESSION_WATCH_MS - Date.now()));

  const bottomDead = await crashAndAwaitDead(fx, bottom, stepTimeoutMs);
  progress(
    `crashed bottom ${bottom.name} (previous version) → peer_dead in ${seconds(bottomDead.ms)} by ${bottomDead.by}`,
  );
  await sleep(LAST_WATCH_MS);

  return {
    roles,
    settleMs,
    settledEpoch: settled.epoch,
    followerDead,
    failoverMs,
    failoverEpoch: takeover.body.epoch,
    topDead,
    bottomDead,
    deadReports: fx
      .deadReports()
      .map((w) => `${w.body.peer.address} by ${w.body.coordinator_address}`),
    warnings: fx
      .peerStatuses()
      .filter((w) => w.body.severity === 'warning')
      .map((w) => `${w.body.event} ${w.body.peer.address}: ${w.body.reason ?? ''}`),
    invalidWebhooks: fx.net.receiver.received
      .filter((w) => w.errors.length > 0)
      .map((w) => `${JSON.stringify(w.body)}: ${w.errors.join('; ')}`),
  };
}

async function crashAndAwaitDead(
  fx: MultiHostFixture,
  victim: HostNode,
  timeoutMs: number,
): Promise<DeadReport> {
  const at = await fx.net.kill(victim.index);
  return awaitDead(fx, victim, at, timeoutMs);
}

/** The first peer_dead for `victim` since `at`: how long after `at` it came, and from whom. */
async function awaitDead(
  fx: MultiHostFixture,
  victim: HostNode,
  at: number,
  timeoutMs: number,
): Promise<DeadReport> {
  const dead = await fx.waitForPeerStatus(
    `peer_dead for ${victim.address}`,
    (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    { sinceMs: at, timeoutMs },
  );
  return { ms: dead.receivedMs - at, by: dead.body.coordinator_address };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
