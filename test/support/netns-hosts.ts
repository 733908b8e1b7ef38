// N hosts on a Linux bridge, one network namespace and one real knh process each, a receiver on the
// bridge address, and reversible network faults between the hosts (needs root; see available()).
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { CLI_PATH, type LogLine } from '../../src/demo/mesh.js';
import { Receiver } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import * as faults from './netns-faults.js';
import {
  buildHost,
  KNH_PORT,
  listenBriefly,
  reach,
  signalAndWait,
  spawnKnh,
  type HostNode,
} from './netns-host.js';
import * as shell from './netns-shell.js';

export { KNH_PORT, type HostNode };

const STARTUP_MS = 30_000;
const TERM_GRACE_MS = 1_000;

export interface HostNetworkOptions {
  hosts: number;
  /** Settings for every node, on top of the harness's (static discovery, webhook URLs, debug logs). */
  env?: Record<string, string>;
  maxLogLines?: number;
  /** The knh CLI host i (1-based) runs; default the working tree's (CLI_PATH). */
  cliFor?: (index: number) => string;
  /** false: build the hosts and start the receiver only; the test starts nodes with startNode(). */
  startNodes?: boolean;
}

/** One fault operation, for failure reports. */
export interface FaultRecord {
  atMs: number;
  what: string;
}

const liveSeqs = new Set<string>();
let nextSeq = 0;

/** Events: 'log' (host: HostNode, line: LogLine). */
export class HostNetwork extends EventEmitter {
  readonly hosts: HostNode[] = [];
  readonly faultLog: FaultRecord[] = [];
  /** The hosts' shared PEER_SECRET. */
  readonly peerSecret = randomBytes(32).toString('hex');
  /** Leftovers of crashed earlier runs removed at construction. */
  cleaned: string[] = [];
  private localReceiver: Receiver | null = null;
  private readonly names: shell.RunNames;
  private readonly seq: string;
  private subnet = '';
  private readonly rootRules: string[][] = [];
  private readonly slowed = new Map<number, faults.DutyCycle>();
  private teardownDone: Promise<void> | null = null;
  private readonly onExit = () => this.teardownSync();

  /** Whether this machine can run the harness: root, ip, iptables, a throwaway namespace. */
  static async available(): Promise<{ ok: true } | { ok: false; reason: string }> {
    const reason = await shell.unavailableReason();
    return reason === null ? { ok: true } : { ok: false, reason };
  }

  /**
   * Builds the network, starts the receiver and (unless `startNodes` is false) every node; on any
   * failure leaves nothing behind.
   */
  static async start(opts: HostNetworkOptions): Promise<HostNetwork> {
    const net = new HostNetwork(opts);
    try {
      await net.build();
      await net.receiver.start();
      if (opts.startNodes ?? true) await Promise.all(net.hosts.map((h) => net.startNode(h.index)));
      await net.checkConnectivity();
      return net;
    } catch (err) {
      await net.teardown();
      throw err;
    }
  }

  private constructor(private readonly opts: HostNetworkOptions) {
    super();
    const seq = nextSeq++;
    this.names = shell.runNames(seq);
    this.seq = (seq % 36).toString(36);
    liveSeqs.add(this.seq);
    process.on('exit', this.onExit);
  }

  /** Records every webhook; listens on the bridge address, which every host reaches in every fault. */
  get receiver(): Receiver {
    if (!this.localReceiver) throw new Error('the network is not built');
    return this.localReceiver;
  }

  /** The bridge host's address (the receiver's host). */
  get bridgeIp(): string {
    return `${this.subnet}.1`;
  }

  host(i: number): HostNode {
    const h = this.hosts[i - 1];
    if (!h) throw new Error(`no host ${i} of ${this.hosts.length}`);
    return h;
  }

  byAddress(address: string): HostNode | undefined {
    return this.hosts.find((h) => h.address === address);
  }

  private othersOf(i: number): string[] {
    return this.hosts.filter((h) => h.index !== i).map((h) => h.ip);
  }

  private async build(): Promise<void> {
    await shell.withSetupLock(async () => {
      this.cleaned = await shell.removeLeftovers(liveSeqs);
      this.subnet = `10.213.${await shell.freeSubnet()}`;
      const br = this.names.bridge;
      await shell.sh('ip', ['link', 'add', br, 'type', 'bridge']);
      await shell.sh('ip', ['addr', 'add', `${this.bridgeIp}/24`, 'dev', br]);
      await shell.sh('ip', ['link', 'set', br, 'up']);
      for (let i = 1; i <= this.opts.hosts; i++) {
        const ip = `${this.subnet}.${10 + i}`;
        this.hosts.push({
          index: i,
          name: `host${i}`,
          ip,
          address: `${ip}:${KNH_PORT}`,
          netns: this.names.netns(i),
          cliPath: this.opts.cliFor?.(i) ?? CLI_PATH,
          process: null,
          logs: [],
          stderr: [],
        });
      }
      await Promise.all(
        this.hosts.map((h) => buildHost(h, this.names.veth(h.index), this.names.bridge)),
      );
      this.rootRules.push(...(await shell.openRootFirewall(br, this.names.tag)));
    });
    this.localReceiver = new Receiver({ schemas: loadSchemas(), host: this.bridgeIp, port: 0 });
  }

  /**
   * Checks what the tests rely on: every host reaches the receiver, and the hosts reach each other
   * on the knh port (host 1 every other node; with no node started yet, every other host a
   * stand-in listener on host 1).
   */
  private async checkConnectivity(): Promise<void> {
    const first = this.host(1);
    const others = this.hosts.filter((h) => h !== first);
    await Promise.all(this.hosts.map((h) => reach(h, this.bridgeIp, this.receiver.port)));
    if (others.every((h) => h.process)) {
      await Promise.all(others.map((h) => reach(first, h.ip, KNH_PORT)));
      return;
    }
    const stop = await listenBriefly(first, KNH_PORT);
    try {
      await Promise.all(others.map((h) => reach(h, first.ip, KNH_PORT)));
    } finally {
      await stop();
    }
  }

  /**
   * Spawns host i's knh node in its namespace (with `cliPath`, which the host then keeps for its
   * restarts; default the one it has) and waits until it listens. Resolves with the time (epoch
   * ms) it was spawned, or, if it already runs, now.
   */
  async startNode(
    i: number,
    cliPath?: string,
    extraEnv: Record<string, string> = {},
  ): Promise<number> {
    const h = this.host(i);
    if (h.process) return Date.now();
    if (cliPath !== undefined) h.cliPath = cliPath;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
      DISCOVERY: 'static',
      NODE_NAME: h.name,
      POD_IP: h.ip,
      CONTAINER_PORT: String(KNH_PORT),
      PEERS: this.hosts.map((x) => x.address).join(','),
      PEER_STATUS_URL: this.receiver.url('/peer'),
      CLUSTER_STATUS_URL: this.receiver.url('/cluster'),
      LOG_LEVEL: 'debug',
      // Signed peer messages, as deployed.
      PEER_SECRET: this.peerSecret,
      ...this.opts.env,
      ...extraEnv,
    };
    spawnKnh(h, env, this.opts.maxLogLines ?? 50_000, (line) => this.emit('log', h, line));
    const spawnedMs = this.note(
      `start ${h.name}${h.cliPath === CLI_PATH ? '' : ` (${h.cliPath})`}`,
    );
    await this.waitForLog(i, (l) => l.event === 'listening', STARTUP_MS, true);
    return spawnedMs;
  }

  /** Resolves with host i's first log line matching `pred` (only lines from now on if `fresh`). */
  waitForLog(i: number, pred: (l: LogLine) => boolean, timeoutMs: number, fresh = false) {
    const h = this.host(i);
    const seen = fresh ? undefined : h.logs.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<LogLine>((resolve, reject) => {
      const onLog = (host: HostNode, line: LogLine) => {
        if (host !== h || !pred(line)) return;
        clearTimeout(timer);
        this.off('log', onLog);
        resolve(line);
      };
      const timer = setTimeout(() => {
        this.off('log', onLog);
        reject(new Error(`${h.name}: no matching log line within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('log', onLog);
    });
  }

  /** GET /ping of host i from the root namespace; null unless 200 within 1.5 s. */
  ping(i: number): Promise<PingResponse | null> {
    return this.getJson<PingResponse>(i, '/ping', 1_500);
  }

  /** GET /status of host i from the root namespace; null unless 200 within 3 s. */
  status(i: number): Promise<NodeStatus | null> {
    return this.getJson<NodeStatus>(i, '/status', 3_000);
  }

  private async getJson<T>(i: number, path: string, timeoutMs: number): Promise<T | null> {
    try {
      const res = await fetch(`http://${this.host(i).address}${path}`, {
        signal: AbortSignal.timeout(timeoutMs),
      });
      return res.ok ? ((await res.json()) as T) : null;
    } catch {
      return null;
    }
  }

  // ---- faults: each resolves with the time (epoch ms) from which it is in force ----

  /** SIGKILL: the namespace stays, so its address answers with connection refused. */
  async kill(i: number): Promise<number> {
    this.slowed.get(i)?.stop();
    this.slowed.delete(i);
    // The fault's time is the signal's: what follows it may be seen before the process is reaped.
    const at = this.note(`kill ${this.host(i).name}`);
    await signalAndWait(this.host(i), 'SIGKILL', 5_000);
    return at;
  }

  /** SIGTERM: the node stops in order (it tells its peers it leaves), the namespace stays. */
  async stop(i: number): Promise<number> {
    this.slowed.get(i)?.stop();
    this.slowed.delete(i);
    // The signal's time, not the exit's: a successor may lead, and say so, before this node has
    // finished its orderly stop (it resigns first, then tells its peers it leaves).
    const at = this.note(`stop ${this.host(i).name}`);
    await signalAndWait(this.host(i), 'SIGTERM', 10_000);
    return at;
  }

  /** `extraEnv`: settings of this start only (another PEER_SECRET, a wrong wall clock). */
  async restart(i: number, extraEnv: Record<string, string> = {}): Promise<number> {
    await this.kill(i);
    await this.startNode(i, undefined, extraEnv);
    return this.note(`restarted ${this.host(i).name}`);
  }

  /** Drops all packets between host i and the other hosts (not the receiver); the node runs on. */
  blackhole(i: number): Promise<number> {
    return this.inject(`blackhole ${this.host(i).name}`, [
      [i, faults.isolateFrom(this.othersOf(i))],
    ]);
  }

  /** Hosts of `a` and hosts of `b` drop each other's packets, both ways. */
  partition(a: readonly number[], b: readonly number[]): Promise<number> {
    const ips = (g: readonly number[]) => g.map((i) => this.host(i).ip);
    return this.inject(`partition [${a.join(',')}] | [${b.join(',')}]`, [
      ...a.map((i): [number, string[]] => [i, faults.isolateFrom(ips(b))]),
      ...b.map((i): [number, string[]] => [i, faults.isolateFrom(ips(a))]),
    ]);
  }

  /** Every host drops a random fraction p of the packets arriving from the other hosts. */
  loss(p: number): Promise<number> {
    return this.inject(
      `loss ${p} on every host`,
      this.hosts.map((h): [number, string[]] => [
        h.index,
        faults.lossyFrom(this.othersOf(h.index), p),
      ]),
    );
  }

  /** Host i and the other hosts each drop a random fraction p of the packets between them. */
  lossyHost(i: number, p: number): Promise<number> {
    const ip = this.host(i).ip;
    return this.inject(`loss ${p} each way at ${this.host(i).name}`, [
      [i, faults.lossyFrom(this.othersOf(i), p)],
      ...this.hosts
        .filter((h) => h.index !== i)
        .map((h): [number, string[]] => [h.index, faults.lossyFrom([ip], p)]),
    ]);
  }

  /** Host i drops packets of `minBytes` and more to and from the other hosts (an MTU black hole). */
  mtuBlackhole(i: number, minBytes: number): Promise<number> {
    return this.inject(`MTU black hole at ${this.host(i).name}: ${minBytes} bytes and more`, [
      [i, faults.largeDropped(this.othersOf(i), minBytes)],
    ]);
  }

  /** Host i opens no connection to the other hosts; those they open to it work (egress cut). */
  egressCut(i: number): Promise<number> {
    return this.inject(`egress cut at ${this.host(i).name}`, [
      [i, faults.noOwnConnectionsTo(this.othersOf(i))],
    ]);
  }

  /** Host i can send to the other hosts but receives nothing from them. */
  oneWay(i: number): Promise<number> {
    return this.inject(`one-way ${this.host(i).name}`, [[i, faults.deafTo(this.othersOf(i))]]);
  }

  /** Host i's process is stopped for `stoppedMs` of every `periodMs` until heal(). */
  slow(i: number, stoppedMs: number, periodMs: number): number {
    const pid = this.host(i).process?.pid;
    if (pid === undefined) throw new Error(`${this.host(i).name} is not running`);
    this.slowed.get(i)?.stop();
    this.slowed.set(i, new faults.DutyCycle(pid, stoppedMs, periodMs).start());
    return this.note(`slow ${this.host(i).name}: stopped ${stoppedMs} ms of every ${periodMs} ms`);
  }

  /** Undoes every network fault and duty cycle (killed nodes stay down). */
  async heal(): Promise<number> {
    for (const cycle of this.slowed.values()) cycle.stop();
    this.slowed.clear();
    await Promise.all(
      this.hosts.map((h) =>
        shell.nsSh(h.netns, ['iptables-restore', '--noflush'], faults.flushRules()),
      ),
    );
    return this.note('heal');
  }

  /** The iptables rules of every host's namespace, for failure reports. */
  async firewallDump(): Promise<string> {
    const dumps = await Promise.all(
      this.hosts.map(async (h) => {
        const rules = await shell
          .nsSh(h.netns, ['iptables', '-S'])
          .catch((e: unknown) => String(e));
        return `-- ${h.name}\n${rules}`;
      }),
    );
    return dumps.join('\n');
  }

  private async inject(what: string, rules: [number, string[]][]): Promise<number> {
    await Promise.all(
      rules.map(([i, r]) =>
        shell.nsSh(this.host(i).netns, ['iptables-restore', '--noflush'], faults.appendRules(r)),
      ),
    );
    return this.note(what);
  }

  private note(what: string): number {
    const atMs = Date.now();
    this.faultLog.push({ atMs, what });
    return atMs;
  }

  /** Kills every node (SIGTERM, then SIGKILL), closes the receiver, deletes what build() made. Idempotent. */
  teardown(): Promise<void> {
    this.teardownDone ??= (async () => {
      for (const cycle of this.slowed.values()) cycle.stop();
      this.slowed.clear();
      await Promise.all(this.hosts.map((h) => signalAndWait(h, 'SIGTERM', TERM_GRACE_MS)));
      await Promise.all(this.hosts.map((h) => signalAndWait(h, 'SIGKILL', 3_000)));
      const closing = this.localReceiver?.close();
      if (closing) await Promise.race([closing, new Promise((r) => setTimeout(r, 3_000))]);
      const quiet = (args: string[]) => shell.sh(args[0] ?? '', args.slice(1)).catch(() => '');
      for (const h of this.hosts) await quiet(['ip', 'netns', 'delete', h.netns]);
      for (const h of this.hosts) await quiet(['ip', 'link', 'delete', this.names.veth(h.index)]);
      await quiet(['ip', 'link', 'delete', this.names.bridge]);
      for (const rule of this.rootRules) await quiet(['iptables', '-D', ...rule]);
      this.rootRules.length = 0;
      process.off('exit', this.onExit);
      liveSeqs.delete(this.seq);
    })();
    return this.teardownDone;
  }

  /** Last resort at process exit (synchronous). */
  private teardownSync(): void {
    const pids = this.hosts.flatMap((h) => (h.process?.pid ? [h.process.pid] : []));
    shell.removeNowSync(this.names, this.opts.hosts, pids, this.rootRules);
  }
}
