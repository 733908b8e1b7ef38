// One host of a HostNetwork: its namespace on the bridge, and the knh process that runs in it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { logLineOf, type LogLine } from '../../src/demo/mesh.js';
import { chainSetup } from './netns-faults.js';
import { nsSh, sh } from './netns-shell.js';

export const KNH_PORT = 8080;

export interface HostNode {
  /** 1-based. */
  index: number;
  name: string;
  ip: string;
  /** ip:8080, the node's peer address. */
  address: string;
  netns: string;
  /** The knh CLI this host runs (and runs again on a restart): the working tree's or another build's. */
  cliPath: string;
  process: ChildProcess | null;
  logs: LogLine[];
  stderr: string[];
}

/**
 * Creates the host's namespace with lo up and eth0 (`ip`/24), the other end of a veth named
 * `veth` enslaved to `bridge`, and our fault chains hooked into its firewall.
 */
export async function buildHost(h: HostNode, veth: string, bridge: string): Promise<void> {
  await sh('ip', ['netns', 'add', h.netns]);
  await sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', h.netns]);
  await sh('ip', ['link', 'set', veth, 'master', bridge, 'up']);
  await nsSh(h.netns, ['ip', 'addr', 'add', `${h.ip}/24`, 'dev', 'eth0']);
  await nsSh(h.netns, ['ip', 'link', 'set', 'eth0', 'up']);
  await nsSh(h.netns, ['ip', 'link', 'set', 'lo', 'up']);
  await nsSh(h.netns, ['iptables-restore', '--noflush'], chainSetup());
}

/**
 * Opens (and closes) a TCP connection from inside host `h` to ip:port. The bound is generous: on a
 * loaded machine starting `ip netns exec … bash` alone can take seconds (measured up to 6 s with
 * three harnesses starting 15 nodes at once on 2 CPUs), while the connection itself takes ms.
 */
export async function reach(h: HostNode, ip: string, port: number): Promise<void> {
  const connect = `exec 3<>/dev/tcp/${ip}/${port}`;
  try {
    await nsSh(h.netns, ['timeout', '15', 'bash', '-c', connect], undefined, 20_000);
  } catch (err) {
    throw new Error(`${h.name} cannot reach ${ip}:${port} (root firewall?)`, { cause: err });
  }
}

/**
 * A TCP listener on h.ip:port inside the host's namespace, standing in for a knh node not started
 * yet so that connectivity can be checked before any node runs; resolves once it listens, with the
 * function that stops it (and waits for the port to be free again). It exits by itself after 60 s.
 */
export async function listenBriefly(h: HostNode, port: number): Promise<() => Promise<void>> {
  const script = [
    `require('node:net').createServer((s) => s.destroy())`,
    `.listen(${port}, '${h.ip}', () => console.log('listening'));`,
    `setTimeout(() => process.exit(0), 60000).unref();`,
  ].join('');
  const child = spawn('ip', ['netns', 'exec', h.netns, process.execPath, '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async () => {
    child.kill('SIGKILL');
    await exited;
  };
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let timer: NodeJS.Timeout | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    void exited.then(() => reject(new Error(`exited: ${stderr.trim()}`)));
    timer = setTimeout(() => reject(new Error('not listening within 20 s')), 20_000);
  });
  try {
    await ready;
    return stop;
  } catch (err) {
    await stop();
    throw new Error(`${h.name}: a stand-in listener on ${h.ip}:${port} failed`, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Spawns knh (`h.cliPath`) in the host's namespace (`ip netns exec` execs node, so the child's pid
 * is node's), with exactly `env`; keeps its last `maxLines` JSON log lines and its stderr on `h`.
 */
export function spawnKnh(
  h: HostNode,
  env: Record<string, string>,
  maxLines: number,
  onLine: (line: LogLine) => void,
): ChildProcess {
  const child = spawn('ip', ['netns', 'exec', h.netns, process.execPath, h.cliPath], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  h.process = child;
  createInterface({ input: child.stdout }).on('line', (text) => {
    const line = logLineOf(text);
    h.logs.push(line);
    if (h.logs.length > maxLines) h.logs.splice(0, h.logs.length - maxLines);
    onLine(line);
  });
  child.stderr.on('data', (chunk: Buffer) => h.stderr.push(chunk.toString('utf8')));
  child.once('exit', (code, signal) => {
    if (h.process === child) h.process = null;
    h.stderr.push(`[exited: code ${code}, signal ${signal}]\n`);
  });
  return child;
}

/** Sends `signal` (after a SIGCONT, in case it is stopped) and waits up to `timeoutMs` for the exit. */
export async function signalAndWait(h: HostNode, signal: NodeJS.Signals, timeoutMs: number) {
  const child = h.process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGCONT');
  child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
  clearTimeout(timer);
}
