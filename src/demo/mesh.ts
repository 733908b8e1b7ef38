// A mesh of real knh processes on loopback (static discovery): start, kill, restart, read their logs.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const CLI_PATH = fileURLToPath(new URL('../../knh.cjs', import.meta.url));

/** One JSON log line of a node, as pino writes it. */
export interface LogLine {
  level: number;
  time: string;
  msg: string;
  event?: string;
  [key: string]: unknown;
}

export interface MeshNode {
  index: number;
  name: string;
  host: string;
  address: string;
  port: number;
  process: ChildProcess | null;
  logs: LogLine[];
}

export interface MeshOptions {
  size: number;
  /** The address every node binds to (default 127.0.0.1), unless `hosts` gives one each. */
  host?: string;
  /** One loopback address a node (e.g. 127.0.0.2, 127.0.0.3…), like pods with their own IPs. */
  hosts?: string[];
  /** Ports to use, one a node; default: free ports picked at start (one shared port with `hosts`). */
  ports?: number[];
  /** Settings for every node (webhook URLs, timings...). */
  env?: Record<string, string>;
  /** Keep at most this many log lines a node in memory. */
  maxLogLines?: number;
  /**
   * PEER_SECRET shared by the nodes: default a fresh random one for this mesh (peer messages are
   * signed, as in a deployment); null: none (peer authentication off).
   */
  peerSecret?: string | null;
  /** Flags for node before the program, as the image's ENTRYPOINT gives them (default none). */
  nodeArgs?: string[];
}

/** Finds `n` distinct free TCP ports on `host` by binding port 0. */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, host, () => {
        const a = s.address();
        const p = typeof a === 'object' && a ? a.port : 0;
        s.close(() => resolve(p));
      });
    });
    if (!ports.includes(port)) ports.push(port);
  }
  return ports;
}

/**
 * Events: 'log' (node: MeshNode, line: LogLine), 'exit' (node: MeshNode, code, signal),
 * 'stderr' (node: MeshNode, text: string).
 */
/** One line a node wrote on stdout: its JSON log line, or the raw text as an info message. */
export function logLineOf(text: string): LogLine {
  try {
    return JSON.parse(text) as LogLine;
  } catch {
    return { level: 30, time: new Date().toISOString(), msg: text };
  }
}

export class LocalMesh extends EventEmitter {
  readonly nodes: MeshNode[] = [];
  /** The secret the nodes sign peer messages with; null: they do not. */
  readonly peerSecret: string | null;
  private readonly host: string;

  constructor(private readonly opts: MeshOptions) {
    super();
    // A wait for a log line (waitForLog) listens until it is met: one a node at start, and a few
    // more of the caller's, are no leak.
    this.setMaxListeners(2 * opts.size + 10);
    this.host = opts.host ?? '127.0.0.1';
    this.peerSecret =
      opts.peerSecret === undefined ? randomBytes(32).toString('hex') : opts.peerSecret;
  }

  get peers(): string {
    return this.nodes.map((n) => n.address).join(',');
  }

  async start(): Promise<void> {
    const { hosts, size } = this.opts;
    const ports =
      this.opts.ports ??
      (hosts
        ? new Array<number>(size).fill((await freePorts(1))[0] ?? 0)
        : await freePorts(size, this.host));
    for (let i = 0; i < size; i++) {
      const port = ports[i];
      const host = hosts?.[i] ?? this.host;
      if (port === undefined) throw new Error(`no port for node ${i + 1}`);
      this.nodes.push({
        index: i + 1,
        name: `node-${i + 1}`,
        host,
        address: `${host}:${port}`,
        port,
        process: null,
        logs: [],
      });
    }
    for (const node of this.nodes) this.startNode(node.index);
    // A bound, not a target: five processes starting at once on a busy 2-core machine are slow.
    try {
      await Promise.all(
        this.nodes.map((n) => this.waitForLog(n.index, (l) => l.event === 'listening', 30_000)),
      );
    } catch (err) {
      await this.stop(); // a failed start leaves no process behind
      throw err;
    }
  }

  node(index: number): MeshNode {
    const node = this.nodes[index - 1];
    if (!node) throw new Error(`no node ${index} in a mesh of ${this.nodes.length}`);
    return node;
  }

  /** The node with this address, if it is one of ours. */
  byAddress(address: string): MeshNode | undefined {
    return this.nodes.find((n) => n.address === address);
  }

  isRunning(index: number): boolean {
    return this.node(index).process !== null;
  }

  startNode(index: number, extraEnv: Record<string, string> = {}): MeshNode {
    const node = this.node(index);
    if (node.process) return node;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      DISCOVERY: 'static',
      PEERS: this.peers,
      NODE_NAME: node.name,
      POD_IP: node.host,
      LISTEN_HOST: node.host,
      CONTAINER_PORT: String(node.port),
      ...(this.peerSecret === null ? {} : { PEER_SECRET: this.peerSecret }),
      ...this.opts.env,
      ...extraEnv,
    };
    const argv = [...(this.opts.nodeArgs ?? []), CLI_PATH];
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    node.process = child;
    const max = this.opts.maxLogLines ?? 5000;
    createInterface({ input: child.stdout }).on('line', (text) => {
      const line = logLineOf(text);
      node.logs.push(line);
      if (node.logs.length > max) node.logs.splice(0, node.logs.length - max);
      this.emit('log', node, line);
    });
    child.stderr.on('data', (chunk: Buffer) => this.emit('stderr', node, chunk.toString('utf8')));
    child.once('exit', (code, signal) => {
      if (node.process === child) node.process = null;
      this.emit('exit', node, code, signal);
    });
    return node;
  }

  /** Sends `signal` (SIGKILL: a crash) and waits for the process to exit. */
  async kill(index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.node(index).process;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  async restart(index: number): Promise<void> {
    await this.kill(index);
    this.startNode(index);
    await this.waitForLog(index, (l) => l.event === 'listening', 30_000, true);
  }

  /** Resolves with the first log line of node `index` matching `pred` (only new lines if `fresh`). */
  waitForLog(
    index: number,
    pred: (l: LogLine) => boolean,
    timeoutMs: number,
    fresh = false,
  ): Promise<LogLine> {
    const node = this.node(index);
    const seen = fresh ? undefined : node.logs.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const onLog = (n: MeshNode, line: LogLine) => {
        if (n !== node || !pred(line)) return;
        clearTimeout(timer);
        this.off('log', onLog);
        resolve(line);
      };
      const timer = setTimeout(() => {
        this.off('log', onLog);
        reject(new Error(`node ${index}: no matching log line within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref(); // a pending wait must not keep the demo or a test process alive
      this.on('log', onLog);
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.kill(n.index, 'SIGKILL')));
  }
}
