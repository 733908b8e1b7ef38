// One integration test's world: a LocalMesh of real knh processes wired to a real Receiver, torn down
// after every test (pass or fail), with the nodes' logs and the webhooks saved when a test fails.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Context } from 'mocha';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { LocalMesh, type LogLine, type MeshNode } from '../../src/demo/mesh.js';
import { Receiver, type ReceivedWebhook } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { highestRanked } from './expected-rank.js';
import { meshPorts } from './mesh-ports.js';
import { agreedEpoch, listsEveryPeerAlive } from './agreement.js';
import { pollUntil } from './poll.js';

/** How long a node may take to start listening (the CLI loads in ~1 s on an idle machine). */
const STARTUP_MS = 30_000;
const OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/integration/', import.meta.url));

export type PeerStatusWebhook = ReceivedWebhook & { body: PeerStatusPayload };
export type ClusterStatusWebhook = ReceivedWebhook & { body: ClusterStatusPayload };

export interface Leadership {
  coordinator: MeshNode;
  epoch: number;
}

export interface MeshFixtureOptions {
  size?: number;
  /** Settings for every node on top of the webhook URLs (default settings otherwise). */
  env?: Record<string, string>;
  /** PEER_SECRET of the nodes: default a random one (as LocalMesh); null: authentication off. */
  peerSecret?: string | null;
}

/** GET /ping of one node; null if it does not answer 200 within 2 s. */
export async function ping(node: MeshNode): Promise<PingResponse | null> {
  try {
    const res = await fetch(`http://${node.address}/ping`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? ((await res.json()) as PingResponse) : null;
  } catch {
    return null;
  }
}

export class MeshFixture {
  readonly startedMs = Date.now();
  /** Both created in start(), on ports from meshPorts(). */
  private localReceiver: Receiver | null = null;
  private localMesh: LocalMesh | null = null;
  private readonly stderr: string[] = [];
  /** Coordinators our nodes followed that are not in this mesh: cross-talk from another mesh. */
  private readonly foreign = new Set<string>();

  constructor(private readonly size: number) {}

  get receiver(): Receiver {
    if (!this.localReceiver) throw new Error('the receiver is not started');
    return this.localReceiver;
  }

  get mesh(): LocalMesh {
    if (!this.localMesh) throw new Error('the mesh is not started');
    return this.localMesh;
  }

  /** Nodes of this mesh that followed a coordinator from outside it, if any ever did. */
  get crossTalk(): string[] {
    return [...this.foreign];
  }

  get nodes(): MeshNode[] {
    return this.mesh.nodes;
  }

  running(): MeshNode[] {
    return this.nodes.filter((n) => n.process !== null);
  }

  /** Polls /ping of `among` (default: running nodes) until they agree on the highest-ranked one. */
  async waitForLeader({
    among = this.running(),
    timeoutMs = 15_000,
    epochAbove = 0,
  }: { among?: MeshNode[]; timeoutMs?: number; epochAbove?: number } = {}): Promise<Leadership> {
    const expected = highestRanked(among);
    let last: (PingResponse | null)[] = [];
    return pollUntil(
      `nodes ${among.map((n) => n.index).join(',')} agreeing on coordinator ${expected.address}`,
      async () => {
        last = await Promise.all(among.map(ping));
        const epoch = agreedEpoch(last, expected.address, epochAbove);
        return epoch === undefined ? undefined : { coordinator: expected, epoch };
      },
      { timeoutMs, describe: () => JSON.stringify(last) },
    );
  }

  peerStatuses(): PeerStatusWebhook[] {
    return this.receiver.received.filter(
      (w): w is PeerStatusWebhook => w.kind === 'peer-status' && w.path === '/peer',
    );
  }

  clusterStatuses(): ClusterStatusWebhook[] {
    return this.receiver.received.filter(
      (w): w is ClusterStatusWebhook => w.kind === 'cluster-status' && w.path === '/cluster',
    );
  }

  /** The peer_dead webhooks received about `address`. */
  deadReports(address: string): PeerStatusWebhook[] {
    return this.peerStatuses().filter(
      (w) => w.body.event === 'peer_dead' && w.body.peer.address === address,
    );
  }

  /** Resolves with the first peer-status webhook (received or future) whose body matches. */
  waitForPeerStatus(
    what: string,
    match: (body: PeerStatusPayload) => boolean,
    timeoutMs = 15_000,
  ): Promise<PeerStatusWebhook> {
    return this.waitForWebhook(
      what,
      (w): w is PeerStatusWebhook =>
        w.kind === 'peer-status' && w.path === '/peer' && match(w.body as PeerStatusPayload),
      timeoutMs,
    );
  }

  /** Resolves with the first cluster-status webhook (received or future) whose body matches. */
  waitForClusterStatus(
    what: string,
    match: (body: ClusterStatusPayload) => boolean,
    timeoutMs = 15_000,
  ): Promise<ClusterStatusWebhook> {
    return this.waitForWebhook(
      what,
      (w): w is ClusterStatusWebhook =>
        w.kind === 'cluster-status' &&
        w.path === '/cluster' &&
        match(w.body as ClusterStatusPayload),
      timeoutMs,
    );
  }

  /** A converged mesh whose coordinator has sent a cluster status listing every peer alive. */
  async settled(): Promise<Leadership> {
    const lead = await this.waitForLeader();
    const status = await this.waitForClusterStatus(
      `the first cluster status of ${lead.coordinator.address} listing every peer alive`,
      (b) => listsEveryPeerAlive(b, lead.coordinator.address, lead.epoch, this.nodes.length - 1),
    );
    return { ...lead, epoch: status.body.epoch };
  }

  async start(env: Record<string, string>, peerSecret?: string | null): Promise<void> {
    const ports = await meshPorts(this.size + 1);
    this.localReceiver = new Receiver({ schemas: loadSchemas(), port: ports.pop() });
    await this.localReceiver.start();
    this.localMesh = new LocalMesh({
      size: this.size,
      ports,
      ...(peerSecret === undefined ? {} : { peerSecret }),
      env: {
        PEER_STATUS_URL: this.receiver.url('/peer'),
        CLUSTER_STATUS_URL: this.receiver.url('/cluster'),
        ...env,
      },
    });
    this.mesh.on('stderr', (node: MeshNode, text: string) =>
      this.stderr.push(`[${node.name}] ${text}`),
    );
    this.mesh.on('log', (node: MeshNode, line: LogLine) => {
      const leader = line.coordinatorAddress;
      if (line.event === 'coordinator-changed' && typeof leader === 'string') {
        if (!this.mesh.byAddress(leader)) this.foreign.add(`${node.name} followed ${leader}`);
      }
    });
    try {
      await this.mesh.start();
    } catch {
      // LocalMesh gives the nodes 10 s to listen; a loaded 2-core machine can need longer.
      await Promise.all(this.nodes.map((n) => this.listening(n.index, false)));
    }
  }

  /** Restarts node `index` (SIGKILL, then start) and waits until it listens again. */
  async restart(index: number): Promise<void> {
    await this.mesh.kill(index);
    const listening = this.listening(index, true);
    this.mesh.startNode(index);
    await listening;
  }

  private listening(index: number, fresh: boolean): Promise<LogLine> {
    return this.mesh.waitForLog(index, (l) => l.event === 'listening', STARTUP_MS, fresh);
  }

  /** Kills every node and closes the receiver; bounded, and never throws. */
  async stop(): Promise<void> {
    const bounded = (p: Promise<unknown>) =>
      Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
    if (this.localMesh) await bounded(this.localMesh.stop());
    if (this.localReceiver) await bounded(this.localReceiver.close());
  }

  /** Writes every node's log lines, their stderr and every webhook to test-output/integration/. */
  saveEvidence(title: string): string {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    const file = `${OUTPUT_DIR}${title.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.log`;
    const t = (ms: number) => `+${((ms - this.startedMs) / 1000).toFixed(3)}s`;
    const parts = [
      `== cross-talk from outside this mesh: ${this.crossTalk.join('; ') || 'none'}`,
      '== webhooks',
      ...(this.localReceiver?.received ?? []).map(
        (w) =>
          `${t(w.receivedMs)} ${w.path} ${JSON.stringify(w.body)}${w.errors.length ? ` ERRORS ${w.errors.join('; ')}` : ''}`,
      ),
      '== stderr',
      ...this.stderr,
      ...(this.localMesh?.nodes ?? []).flatMap((n) => [
        `== ${n.name} ${n.address}`,
        ...n.logs.map((l) => JSON.stringify(l)),
      ]),
    ];
    writeFileSync(file, `${parts.join('\n')}\n`);
    return file;
  }

  private async waitForWebhook<W extends ReceivedWebhook>(
    what: string,
    match: (w: ReceivedWebhook) => w is W,
    timeoutMs: number,
  ): Promise<W> {
    try {
      return (await this.receiver.waitFor(match, timeoutMs)) as W;
    } catch {
      const got = this.receiver.received.map((w) => JSON.stringify(w.body)).join('\n  ');
      throw new Error(`${what}: no such webhook within ${timeoutMs} ms; received:\n  ${got}`);
    }
  }
}

/**
 * Registers an afterEach that tears down every fixture the test started, and returns the function
 * that starts one: `const startMesh = useMeshFixture(); ... const fx = await startMesh();`
 */
export function useMeshFixture(): (options?: MeshFixtureOptions) => Promise<MeshFixture> {
  let started: MeshFixture[] = [];
  afterEach(async function (this: Context) {
    const fixtures = started;
    started = [];
    if (this.currentTest?.state === 'failed') {
      for (const fx of fixtures) {
        console.log(`    evidence: ${fx.saveEvidence(this.currentTest.fullTitle())}`);
        if (fx.crossTalk.length) console.log(`    cross-talk: ${fx.crossTalk.join('; ')}`);
      }
    }
    await Promise.all(fixtures.map((fx) => fx.stop()));
  });
  return async ({ size = 5, env = {}, peerSecret }: MeshFixtureOptions = {}) => {
    const fx = new MeshFixture(size);
    // Registered before starting, so a start that fails half-way is still torn down.
    started.push(fx);
    await fx.start(env, peerSecret);
    return fx;
  };
}
