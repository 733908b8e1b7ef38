// A mesh of real knh processes each on its own loopback IP (127.X.Y.2, .3, …, like pods with their
// own IPs), with a Receiver for their webhooks: for tests and benchmarks that attack the nodes from
// other loopback IPs (127.0.0.1 by default). Per-IP limits then fall on the attacker, never on the
// peers, and a message claiming a peer's address from the attacker's IP is refused as in a cluster.
// X.Y are random, so two such meshes on one machine never hear each other.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Suite } from 'mocha';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { compareRank } from '../../src/wire/node-ref.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { LocalMesh, type MeshNode } from '../../src/demo/mesh.js';
import { Receiver } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { sampleOf } from './metrics-text.js';
import { pollUntil } from './poll.js';

// The benchmarks read their samples through this module.
export { sampleOf };

const OUTPUT_DIR = fileURLToPath(new URL('../../../test-output/integration/', import.meta.url));

export interface Leadership {
  coordinator: MeshNode;
  epoch: number;
}

/** GET /ping of one node; null unless it answers 200 within `timeoutMs`. */
export async function pingNode(node: MeshNode, timeoutMs = 2_000): Promise<PingResponse | null> {
  try {
    const res = await fetch(`http://${node.address}/ping`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return res.ok ? ((await res.json()) as PingResponse) : null;
  } catch {
    return null;
  }
}

/** A random 127.X.Y. prefix away from 127.0.0.x (where other meshes and the attackers are). */
function randomPrefix(): string {
  const x = 16 + Math.floor(Math.random() * 200);
  const y = 1 + Math.floor(Math.random() * 250);
  return `127.${x}.${y}.`;
}

export class LoopbackIpsMesh {
  readonly receiver: Receiver;
  readonly mesh: LocalMesh;
  /** `prefix` + n: addresses on this host no node listens on, e.g. for attackers. */
  readonly prefix: string;
  readonly startedMs = Date.now();
  private readonly stderr: string[] = [];

  private constructor(receiver: Receiver, mesh: LocalMesh, prefix: string) {
    this.receiver = receiver;
    this.mesh = mesh;
    this.prefix = prefix;
    mesh.on('stderr', (node: MeshNode, text: string) => this.stderr.push(`[${node.name}] ${text}`));
  }

  /** Starts `size` nodes on `prefix`.2 … `prefix`.(size+1), one port, and waits until they listen. */
  static async start({
    size = 5,
    env = {},
    nodeArgs = [],
  }: {
    size?: number;
    env?: Record<string, string>;
    nodeArgs?: string[];
  } = {}): Promise<LoopbackIpsMesh> {
    const receiver = await new Receiver({ schemas: loadSchemas() }).start();
    const prefix = randomPrefix();
    const mesh = new LocalMesh({
      size,
      hosts: Array.from({ length: size }, (_, i) => `${prefix}${i + 2}`),
      env: {
        PEER_STATUS_URL: receiver.url('/peer'),
        CLUSTER_STATUS_URL: receiver.url('/cluster'),
        ...env,
      },
      nodeArgs,
    });
    const fx = new LoopbackIpsMesh(receiver, mesh, prefix);
    try {
      await mesh.start();
    } catch (err) {
      await fx.stop();
      throw err;
    }
    return fx;
  }

  get nodes(): MeshNode[] {
    return this.mesh.nodes;
  }

  /** The secret the nodes sign peer messages with (null: authentication off). */
  get peerSecret(): string | null {
    return this.mesh.peerSecret;
  }

  /** The node that should lead: the highest IP. */
  get top(): MeshNode {
    const top = [...this.nodes].sort((a, b) => compareRank(b.address, a.address))[0];
    if (!top) throw new Error('an empty mesh');
    return top;
  }

  /** Polls /ping of every node until all follow the top node at one epoch. */
  async waitForLeader(timeoutMs = 20_000): Promise<Leadership> {
    let last: (PingResponse | null)[] = [];
    const top = this.top;
    return pollUntil(
      `every node following ${top.address}`,
      async () => {
        last = await Promise.all(this.nodes.map((n) => pingNode(n)));
        const epochs = new Set(last.map((p) => p?.epoch));
        const agreed =
          last.every((p) => p?.coordinator?.address === top.address) && epochs.size === 1;
        return agreed ? { coordinator: top, epoch: last[0]?.epoch ?? 0 } : undefined;
      },
      { timeoutMs, describe: () => JSON.stringify(last) },
    );
  }

  /** A leader agreed on, and a cluster status from it listing every peer alive. */
  async settled(timeoutMs = 30_000): Promise<Leadership> {
    const lead = await this.waitForLeader(timeoutMs);
    const peers = this.nodes.length - 1;
    await this.receiver.waitFor((w) => {
      const b = w.body as {
        coordinator_address?: string;
        peer_map?: { alive: boolean }[];
      };
      return (
        w.path === '/cluster' &&
        b.coordinator_address === lead.coordinator.address &&
        b.peer_map?.length === peers &&
        b.peer_map.every((p) => p.alive)
      );
    }, timeoutMs);
    return lead;
  }

  /** peer_dead webhooks received so far. */
  deadReports(): PeerStatusPayload[] {
    return this.receiver.received
      .filter((w) => w.path === '/peer')
      .map((w) => w.body as PeerStatusPayload)
      .filter((b) => b.event === 'peer_dead');
  }

  /** Nodes whose process is not running (exited: crashed). */
  exited(): MeshNode[] {
    return this.nodes.filter((n) => !this.mesh.isRunning(n.index));
  }

  /** GET /metrics of `node` as text. */
  async metrics(node: MeshNode): Promise<string> {
    const res = await fetch(`http://${node.address}/metrics`, {
      signal: AbortSignal.timeout(5_000),
    });
    if (!res.ok) throw new Error(`GET /metrics of ${node.name}: ${res.status}`);
    return res.text();
  }

  /** knh_probe_rounds_late_total of `node` (0 when it never led). */
  async lateRounds(node: MeshNode): Promise<number> {
    const value = sampleOf(await this.metrics(node), 'knh_probe_rounds_late_total');
    if (value === undefined) throw new Error(`${node.name} exports no knh_probe_rounds_late_total`);
    return value;
  }

  /** Every node's log lines, stderr and the webhooks in test-output/integration/; returns the file. */
  saveEvidence(title: string): string {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    const file = `${OUTPUT_DIR}${title.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.log`;
    const t = (ms: number) => `+${((ms - this.startedMs) / 1000).toFixed(3)}s`;
    const parts = [
      '== webhooks',
      ...this.receiver.received.map(
        (w) => `${t(w.receivedMs)} ${w.path} ${JSON.stringify(w.body)}`,
      ),
      '== stderr',
      ...this.stderr,
      ...this.nodes.flatMap((n) => [
        `== ${n.name} ${n.address}`,
        ...n.logs.map((l) => JSON.stringify(l)),
      ]),
    ];
    writeFileSync(file, `${parts.join('\n')}\n`);
    return file;
  }

  /** Kills every node and closes the receiver; bounded, never throws. */
  async stop(): Promise<void> {
    const bounded = (p: Promise<unknown>) =>
      Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000))]);
    await bounded(this.mesh.stop());
    await bounded(this.receiver.close());
  }
}

/** A settled mesh as a suite's tests find it: who led then, and how many rounds had started late. */
export interface SettledMesh {
  fx: LoopbackIpsMesh;
  before: Leadership;
  lateBefore: number;
}

/**
 * One mesh of `size` nodes for every test of `suite`, so that each test also shows the ones before
 * it left nothing behind: started and settled before them (its late rounds counted then), a failed
 * test's evidence saved, stopped after them all. The function returned gives it once settled.
 */
export function meshForSuite(suite: Suite, size: number): () => SettledMesh {
  let fx: LoopbackIpsMesh | null = null;
  let settled: SettledMesh | null = null;
  suite.beforeAll(async function () {
    this.timeout(60_000);
    fx = await LoopbackIpsMesh.start({ size });
    const before = await fx.settled();
    settled = { fx, before, lateBefore: await fx.lateRounds(before.coordinator) };
  });
  suite.afterEach(function () {
    if (this.currentTest?.state === 'failed' && fx) {
      console.log(`      evidence: ${fx.saveEvidence(this.currentTest.fullTitle())}`);
    }
  });
  suite.afterAll(async () => {
    await fx?.stop();
    fx = null;
    settled = null;
  });
  return () => {
    if (!settled) throw new Error('no mesh');
    return settled;
  };
}
