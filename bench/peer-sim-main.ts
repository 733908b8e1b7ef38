// The peer simulator (test/support/peer-simulator.ts) in a child process, driven over IPC: the
// child's entry (`node dist/bench/peer-sim-main.js`, forked) and the parent's handle to it. A child
// of its own, so that the simulator's event loop and the benchmark's never slow each other down;
// it exits when its parent goes (the IPC channel closes), whatever happened to the parent.
import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  PeerSimulator,
  type ArrivalSpread,
  type PeerSimulatorOptions,
  type SimulatorStats,
} from '../test/support/peer-simulator.js';

export type SimCommand =
  | { type: 'start'; options: PeerSimulatorOptions }
  | { type: 'die' | 'blackhole' | 'revive'; address: string }
  | { type: 'stats'; heardWithinMs: number }
  | { type: 'arrivals'; fromMs: number; toMs: number }
  | { type: 'stop' };

type Request = SimCommand & { id: number };
type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: string };

const ENTRY = fileURLToPath(import.meta.url);

/** The parent's side: one request at a time or many, each answered or timed out. */
export class SimulatorProcess {
  private nextId = 1;
  private readonly pending = new Map<number, (reply: Reply) => void>();
  private exited = false;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: Reply) => this.pending.get(reply.id)?.(reply));
    child.once('exit', (code, signal) => {
      this.exited = true;
      for (const [id, settle] of this.pending) {
        settle({ id, ok: false, error: `simulator exited (${signal ?? code})` });
      }
    });
  }

  /**
   * Forks the simulator and starts `options.count` peers in it; returns once they all listen, with
   * the first of their ports (peer i on 127.0.0.1:firstPort+i).
   */
  static async start(
    options: PeerSimulatorOptions,
    timeoutMs = 60_000,
  ): Promise<{ sim: SimulatorProcess; firstPort: number }> {
    const child = startChild();
    const sim = new SimulatorProcess(child);
    try {
      const firstPort = await sim.request<number>({ type: 'start', options }, timeoutMs);
      return { sim, firstPort };
    } catch (err) {
      sim.kill();
      throw err;
    }
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  request<T>(command: SimCommand, timeoutMs = 10_000): Promise<T> {
    if (this.exited) return Promise.reject(new Error('the simulator has exited'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`simulator: no answer to ${command.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, (reply) => {
        clearTimeout(timer);
        this.pending.delete(id);
        if (reply.ok) resolve(reply.value as T);
        else reject(new Error(`simulator: ${command.type}: ${reply.error}`));
      });
      this.child.send({ ...command, id } satisfies Request);
    });
  }

  die(address: string): Promise<void> {
    return this.request({ type: 'die', address });
  }

  blackhole(address: string): Promise<void> {
    return this.request({ type: 'blackhole', address });
  }

  revive(address: string): Promise<void> {
    return this.request({ type: 'revive', address });
  }

  stats(heardWithinMs = 1_500): Promise<SimulatorStats> {
    return this.request({ type: 'stats', heardWithinMs });
  }

  arrivals(fromMs: number, toMs: number): Promise<ArrivalSpread> {
    return this.request({ type: 'arrivals', fromMs, toMs });
  }

  /** Asks the child to close its peers and exit; kills it if it has not within 5 s. Never throws. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    await this.request({ type: 'stop' }, 5_000).catch(() => undefined);
    const timer = setTimeout(() => this.kill(), 5_000);
    await exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause === undefined ? err.message : `${err.message}: ${describe(err.cause)}`;
}

/** The child's side: one simulator, commands in order of arrival. */
function serve(): void {
  let sim: PeerSimulator | null = null;
  const running = (): PeerSimulator => {
    if (!sim) throw new Error('not started');
    return sim;
  };
  const run = async (command: SimCommand): Promise<unknown> => {
    switch (command.type) {
      case 'start':
        if (sim) throw new Error('already started');
        sim = await PeerSimulator.start(command.options);
        return sim.firstPort;
      case 'die':
        return running().die(command.address);
      case 'blackhole':
        return running().blackhole(command.address);
      case 'revive':
        return running().revive(command.address);
      case 'stats':
        return running().stats(command.heardWithinMs);
      case 'arrivals':
        return running().pingArrivals(command.fromMs, command.toMs);
      case 'stop':
        await sim?.stop();
        setImmediate(() => process.exit(0));
        return null;
    }
  };
  process.on('message', (request: Request) => {
    run(request).then(
      (value) => process.send?.({ id: request.id, ok: true, value: value ?? null } satisfies Reply),
      (err: unknown) =>
        process.send?.({
          id: request.id,
          ok: false,
          error: describe(err),
        } satisfies Reply),
    );
  });
  // The parent is gone (exited, killed, crashed): so is the simulator.
  process.once('disconnect', () => process.exit(0));
}

if (process.argv[1] === ENTRY && process.send) serve();

/**
 * The simulator holds two descriptors a peer (its server and the coordinator's connection) and
 * one a report in flight: 5,000 peers come near a limit of 20,000, and reach it once reports and
 * reconnections pile up. Where `prlimit` can raise it (root), the child gets 65,536.
 */
function startChild(): ChildProcess {
  const stdio: ['ignore', 'inherit', 'inherit', 'ipc'] = ['ignore', 'inherit', 'inherit', 'ipc'];
  if (!canRaiseDescriptors()) return fork(ENTRY, [], { stdio });
  return spawn('prlimit', [`--nofile=${DESCRIPTORS}:${DESCRIPTORS}`, process.execPath, ENTRY], {
    stdio,
  });
}

const DESCRIPTORS = 65_536;

function canRaiseDescriptors(): boolean {
  try {
    execFileSync('prlimit', [`--nofile=${DESCRIPTORS}:${DESCRIPTORS}`, 'true'], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}
