// One multi-host test's world: a HostNetwork, what its receiver got, the coordinator the hosts agree
// on; torn down after every test, with the hosts' logs and webhooks saved when a test fails.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Context } from 'mocha';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { waitForWebhook } from '../../src/demo/received-webhooks.js';
import type { ReceivedWebhook } from '../../src/demo/webhook-sink.js';
import type { ClusterStatusWebhook, PeerStatusWebhook } from './mesh-fixture.js';
import { HostNetwork, type HostNetworkOptions, type HostNode } from './netns-hosts.js';
import { agreedEpoch, listsEveryPeerAlive } from './agreement.js';
import { expect } from 'chai';
import { pollUntil, sleep } from './poll.js';
import { referenceErrors } from './knh-reference-schemas.js';

const OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/multi-host/', import.meta.url));

export interface HostLeadership {
  coordinator: HostNode;
  epoch: number;
}

/** A settled mesh: its leadership, and the cluster status that showed every other host alive. */
export interface SettledMesh extends HostLeadership {
  status: ClusterStatusWebhook;
}

/** The bully order, computed here from the IPs (every host listens on the same port). */
export function byRank(hosts: readonly HostNode[]): HostNode[] {
  const value = (h: HostNode) => h.ip.split('.').reduce((v, octet) => v * 256 + Number(octet), 0);
  return [...hosts].sort((a, b) => value(b) - value(a));
}

export function highestRanked(hosts: readonly HostNode[]): HostNode {
  const best = byRank(hosts)[0];
  if (!best) throw new Error('no hosts to rank');
  return best;
}

/**
 * Epochs that two coordinators posted under (cluster statuses and peer-status events alike), as
 * `epoch N: a, b`: each term must have an epoch of its own.
 */
export function epochsOfTwoCoordinators(fx: MultiHostFixture): string[] {
  const byEpoch = new Map<number, Set<string>>();
  for (const w of [...fx.clusterStatuses(), ...fx.peerStatuses()]) {
    const seen = byEpoch.get(w.body.epoch) ?? new Set<string>();
    seen.add(w.body.coordinator_address);
    byEpoch.set(w.body.epoch, seen);
  }
  return [...byEpoch]
    .filter(([, coordinators]) => coordinators.size > 1)
    .map(([epoch, coordinators]) => `epoch ${epoch}: ${[...coordinators].join(', ')}`);
}

/**
 * Faults hit a mesh in steady state, as in production: a few heartbeats after it settled, so the
 * followers hold the coordinator's verdicts (a fault within the first second finds a successor
 * that has never seen some peers alive, and so never alerts for them).
 */
export const STEADY_MS = 2_000;

/** A line of a test's own output, indented under its title. */
export const log = (text: string) => console.log(`      ${text}`);

/** Sleeps until `fromMs + ms`. */
export const until = (fromMs: number, ms: number) => sleep(Math.max(0, fromMs + ms - Date.now()));

/** Every webhook the receiver got is valid against knh's schemas (the receiver checks each). */
export function expectValidWebhooks(fx: MultiHostFixture): void {
  const invalid = fx.net.receiver.received.filter((w) => w.errors.length > 0);
  expect(invalid.map((w) => `${JSON.stringify(w.body)}: ${w.errors.join('; ')}`)).to.deep.equal([]);
  // And as an existing KNH receiver takes them.
  const knh = [
    ...fx.peerStatuses().map((w) => ({ w, errors: referenceErrors('knh-peer-status', w.body) })),
    ...fx
      .clusterStatuses()
      .map((w) => ({ w, errors: referenceErrors('knh-cluster-status', w.body) })),
  ].filter(({ errors }) => errors.length > 0);
  expect(
    knh.map(({ w, errors }) => `${JSON.stringify(w.body)}: ${errors.join('; ')}`),
    "KNH's schemas",
  ).to.deep.equal([]);
}

/** The time from `fromMs` to `toMs` in seconds, for printing. */
export function secs(fromMs: number, toMs: number): string {
  return `${((toMs - fromMs) / 1000).toFixed(2)} s`;
}

const isPeerStatus = (w: ReceivedWebhook): w is PeerStatusWebhook =>
  w.kind === 'peer-status' && w.path === '/peer';
const isClusterStatus = (w: ReceivedWebhook): w is ClusterStatusWebhook =>
  w.kind === 'cluster-status' && w.path === '/cluster';

export class MultiHostFixture {
  readonly startedMs = Date.now();

  constructor(readonly net: HostNetwork) {}

  get hosts(): HostNode[] {
    return this.net.hosts;
  }

  running(): HostNode[] {
    return this.hosts.filter((h) => h.process !== null);
  }

  peerStatuses(sinceMs = 0): PeerStatusWebhook[] {
    return this.net.receiver.received.filter(
      (w): w is PeerStatusWebhook => isPeerStatus(w) && w.receivedMs >= sinceMs,
    );
  }

  clusterStatuses(sinceMs = 0): ClusterStatusWebhook[] {
    return this.net.receiver.received.filter(
      (w): w is ClusterStatusWebhook => isClusterStatus(w) && w.receivedMs >= sinceMs,
    );
  }

  /** Every peer_dead since `sinceMs`. */
  deadReports(sinceMs = 0): PeerStatusWebhook[] {
    return this.peerStatuses(sinceMs).filter((w) => w.body.event === 'peer_dead');
  }

  /** Polls /ping of `among` (default: running hosts) until they all follow its highest-ranked host. */
  async waitForLeader({
    among = this.running(),
    timeoutMs = 15_000,
    epochAbove = 0,
  }: {
    among?: HostNode[];
    timeoutMs?: number;
    epochAbove?: number;
  } = {}): Promise<HostLeadership> {
    const expected = highestRanked(among);
    let last: (PingResponse | null)[] = [];
    return pollUntil(
      `hosts ${among.map((h) => h.index).join(',')} agreeing on coordinator ${expected.address}`,
      async () => {
        last = await Promise.all(among.map((h) => this.net.ping(h.index)));
        const epoch = agreedEpoch(last, expected.address, epochAbove);
        return epoch === undefined ? undefined : { coordinator: expected, epoch };
      },
      { timeoutMs, describe: () => JSON.stringify(last) },
    );
  }

  /** Every 200 ms for `ms`: the samples in which more than one running host said it leads. */
  async doubleClaims(ms: number): Promise<string[][]> {
    const doubled: string[][] = [];
    for (const end = Date.now() + ms; Date.now() < end; await sleep(200)) {
      const pings = await Promise.all(this.running().map((h) => this.net.ping(h.index)));
      const claims = pings.filter((p) => p?.role === 'coordinator').map((p) => p?.address ?? '');
      if (claims.length > 1) doubled.push(claims);
    }
    return doubled;
  }

  /** All hosts follow the top host, whose cluster status lists every other host alive. */
  async settled(timeoutMs = 20_000): Promise<SettledMesh> {
    const lead = await this.waitForLeader({ timeoutMs });
    const status = await this.waitForClusterStatus(
      `the first cluster status of ${lead.coordinator.address} listing every peer alive`,
      (b) => listsEveryPeerAlive(b, lead.coordinator.address, lead.epoch, this.hosts.length - 1),
      { timeoutMs },
    );
    return { ...lead, epoch: status.body.epoch, status };
  }

  /** The first peer-status webhook received since `sinceMs` (default: any) whose body matches. */
  async waitForPeerStatus(
    what: string,
    match: (b: PeerStatusPayload) => boolean,
    { timeoutMs = 15_000, sinceMs = 0 } = {},
  ): Promise<PeerStatusWebhook> {
    const pick = (w: ReceivedWebhook) => (isPeerStatus(w) && match(w.body) ? w : null);
    const opts = { timeoutMs, sinceMs, what };
    return (await this.explained(waitForWebhook(this.net.receiver, pick, opts))).value;
  }

  async waitForClusterStatus(
    what: string,
    match: (b: ClusterStatusPayload) => boolean,
    { timeoutMs = 15_000, sinceMs = 0 } = {},
  ): Promise<ClusterStatusWebhook> {
    const pick = (w: ReceivedWebhook) => (isClusterStatus(w) && match(w.body) ? w : null);
    const opts = { timeoutMs, sinceMs, what };
    return (await this.explained(waitForWebhook(this.net.receiver, pick, opts))).value;
  }

  /** Log lines with this `event` (e.g. coordinator-changed) logged by any host since `sinceMs`. */
  logCount(event: string, sinceMs: number): number {
    return this.hosts
      .flatMap((h) => h.logs)
      .filter((l) => l.event === event && Date.parse(l.time) >= sinceMs).length;
  }

  private async explained<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      const got = this.net.receiver.received
        .map(
          (w) =>
            `+${((w.receivedMs - this.startedMs) / 1000).toFixed(2)}s ${JSON.stringify(w.body)}`,
        )
        .join('\n  ');
      throw new Error(`${(err as Error).message}; received:\n  ${got}`, { cause: err });
    }
  }

  /** Writes the webhooks, faults, firewalls and every host's logs to test-output/multi-host/<title>/. */
  async saveEvidence(title: string): Promise<string> {
    const dir = `${OUTPUT_DIR}${title.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}/`;
    mkdirSync(dir, { recursive: true });
    const t = (ms: number) => `+${((ms - this.startedMs) / 1000).toFixed(3)}s`;
    const webhooks = this.net.receiver.received.map(
      (w) =>
        `${t(w.receivedMs)} ${w.path} ${JSON.stringify(w.body)}${w.errors.length ? ` ERRORS ${w.errors.join('; ')}` : ''}`,
    );
    writeFileSync(`${dir}webhooks.log`, `${webhooks.join('\n')}\n`);
    const faultLines = this.net.faultLog.map((f) => `${t(f.atMs)} ${f.what}`);
    writeFileSync(`${dir}faults.log`, `${faultLines.join('\n')}\n`);
    writeFileSync(`${dir}iptables.log`, await this.net.firewallDump());
    for (const h of this.hosts) {
      writeFileSync(`${dir}${h.name}.log`, `${h.logs.map((l) => JSON.stringify(l)).join('\n')}\n`);
      writeFileSync(`${dir}${h.name}.stderr`, h.stderr.join(''));
    }
    return dir;
  }
}

/**
 * Registers an afterEach that tears down every network the test started (saving the evidence of a
 * failed test first) and returns the function that starts one.
 */
export function useHostNetwork(): (
  options?: Partial<HostNetworkOptions>,
) => Promise<MultiHostFixture> {
  let started: HostNetwork[] = [];
  let fixtures: MultiHostFixture[] = [];
  const teardownAll = async () => {
    const nets = started;
    started = [];
    fixtures = [];
    await Promise.all(nets.map((n) => n.teardown()));
  };
  afterEach(async function (this: Context) {
    if (this.currentTest?.state === 'failed') {
      for (const fx of fixtures) {
        const dir = await fx.saveEvidence(this.currentTest.fullTitle()).catch((e: unknown) => e);
        console.log(`    evidence: ${String(dir)}`);
      }
    }
    await teardownAll();
  });
  after(teardownAll);
  return async (options = {}) => {
    const net = await HostNetwork.start({ ...options, hosts: options.hosts ?? 5 });
    started.push(net);
    const fx = new MultiHostFixture(net);
    fixtures.push(fx);
    if (net.cleaned.length) console.log(`    removed leftovers: ${net.cleaned.join(', ')}`);
    return fx;
  };
}
