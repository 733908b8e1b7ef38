// The root-only plumbing of the multi-host harness: bounded commands, our names, leftovers, a lock.
//
// Every network object a HostNetwork creates carries the creating process's pid in its name, so
// a later run can tell a crashed run's leftovers (pid gone) from a live concurrent run's objects
// (pid alive) and removes only the former:
//   namespaces  knht-<pid>-<seq>-h<i>
//   links       knht<pid>b<seq> (bridge), knht<pid>v<seq><i> (root end of host i's veth)
//   root rules  iptables ... -m comment --comment knht-<pid>-<seq>
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sleep } from './poll.js';

const run = promisify(execFile);
const COMMAND_TIMEOUT_MS = 10_000;
const LOCK_DIR = join(tmpdir(), 'knht-netns.lock');
const LOCK_WAIT_MS = 60_000;

export const PREFIX = 'knht';
const NETNS_RE = /^knht-(\d+)-([0-9a-z]+)-/;
const LINK_RE = /^knht(\d+)[bv]([0-9a-z])/;
const COMMENT_RE = /--comment "?knht-(\d+)-([0-9a-z]+)"?/;

/** Runs a command (no shell) with a timeout; resolves stdout, rejects with its stderr in the message. */
export async function sh(
  file: string,
  args: readonly string[],
  { input, timeoutMs = COMMAND_TIMEOUT_MS }: { input?: string; timeoutMs?: number } = {},
): Promise<string> {
  const child = run(file, [...args], { timeout: timeoutMs, encoding: 'utf8' });
  if (input !== undefined) child.child.stdin?.end(input);
  try {
    return (await child).stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`${file} ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}`, {
      cause: err,
    });
  }
}

/** `sh` inside network namespace `ns`. */
export function nsSh(
  ns: string,
  args: readonly string[],
  input?: string,
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<string> {
  return sh('ip', ['netns', 'exec', ns, ...args], {
    timeoutMs,
    ...(input === undefined ? {} : { input }),
  });
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface RunNames {
  /** Tag of this run: knht-<pid>-<seq>. */
  tag: string;
  bridge: string;
  netns(i: number): string;
  veth(i: number): string;
}

export function runNames(seq: number): RunNames {
  const s = (seq % 36).toString(36);
  const pid = process.pid;
  return {
    tag: `${PREFIX}-${pid}-${s}`,
    bridge: `${PREFIX}${pid}b${s}`,
    netns: (i) => `${PREFIX}-${pid}-${s}-h${i}`,
    veth: (i) => `${PREFIX}${pid}v${s}${i}`,
  };
}

/** Whether an object named for (pid, seq) belongs to nobody: its process is gone, or it is ours but no live run. */
function orphaned(pid: number, seq: string, liveSeqs: ReadonlySet<string>): boolean {
  return pid === process.pid ? !liveSeqs.has(seq) : !pidAlive(pid);
}

/** Removes the namespaces (and their processes), links and root iptables rules of dead runs. */
export async function removeLeftovers(liveSeqs: ReadonlySet<string>): Promise<string[]> {
  const removed: string[] = [];
  const namespaces = (await sh('ip', ['netns', 'list'])).split('\n').map((l) => l.split(' ')[0]);
  for (const ns of namespaces) {
    const m = ns ? NETNS_RE.exec(ns) : null;
    if (!ns || !m || !orphaned(Number(m[1]), m[2] ?? '', liveSeqs)) continue;
    const pids = (await sh('ip', ['netns', 'pids', ns]).catch(() => '')).split(/\s+/);
    for (const pid of pids.filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await sh('ip', ['netns', 'delete', ns]).catch(() => undefined);
    removed.push(`netns ${ns}`);
  }
  const links = (await sh('ip', ['-o', 'link', 'show'])).split('\n');
  for (const line of links) {
    const name = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
    const m = name ? LINK_RE.exec(name) : null;
    if (!name || !m || !orphaned(Number(m[1]), m[2] ?? '', liveSeqs)) continue;
    await sh('ip', ['link', 'delete', name]).catch(() => undefined);
    removed.push(`link ${name}`);
  }
  for (const chain of ['FORWARD', 'INPUT', 'OUTPUT']) {
    const rules = (await sh('iptables', ['-S', chain]).catch(() => '')).split('\n');
    for (const rule of rules) {
      const m = COMMENT_RE.exec(rule);
      if (!rule.startsWith('-A ') || !m || !orphaned(Number(m[1]), m[2] ?? '', liveSeqs)) continue;
      await sh('iptables', ['-D', ...rule.slice(3).replace(/"/g, '').split(/\s+/)]).catch(
        () => undefined,
      );
      removed.push(`iptables ${rule}`);
    }
  }
  return removed;
}

/** Synchronous last-resort removal of one run's objects (for a process 'exit' handler). */
export function removeNowSync(
  names: RunNames,
  hosts: number,
  pids: readonly number[],
  rootRules: readonly string[][],
): void {
  const quiet = (file: string, args: string[]) => {
    try {
      execFileSync(file, args, { stdio: 'ignore', timeout: 5_000 });
    } catch {
      // best effort
    }
  };
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (let i = 1; i <= hosts; i++) quiet('ip', ['netns', 'delete', names.netns(i)]);
  quiet('ip', ['link', 'delete', names.bridge]);
  for (const rule of rootRules) quiet('iptables', ['-D', ...rule]);
}

/**
 * The root namespace's firewall must let bridged traffic between the hosts through (it sees it
 * when br_netfilter's bridge-nf-call-iptables is 1) and let the hosts reach the receiver. Where a
 * chain is not plainly "policy ACCEPT, no rules", one ACCEPT rule tagged `tag` is inserted first;
 * returns those rules (chain first) for teardown to delete. Nothing else of the machine changes.
 */
export async function openRootFirewall(bridge: string, tag: string): Promise<string[][]> {
  const sysctl = '/proc/sys/net/bridge/bridge-nf-call-iptables';
  const bridgedSeen = existsSync(sysctl) && readFileSync(sysctl, 'utf8').trim() === '1';
  const wanted: [string, string[]][] = [
    ['INPUT', ['-i', bridge]],
    ['OUTPUT', ['-o', bridge]],
  ];
  if (bridgedSeen) wanted.push(['FORWARD', ['-i', bridge, '-o', bridge]]);
  const added: string[][] = [];
  for (const [chain, match] of wanted) {
    const rules = (await sh('iptables', ['-S', chain])).trim().split('\n');
    if (rules.length === 1 && rules[0] === `-P ${chain} ACCEPT`) continue;
    const rule = [chain, ...match, '-m', 'comment', '--comment', tag, '-j', 'ACCEPT'];
    await sh('iptables', ['-I', chain, '1', ...rule.slice(1)]);
    added.push(rule);
  }
  return added;
}

function lockOwner(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function lockAgeMs(): number {
  try {
    return Date.now() - statSync(LOCK_DIR).mtimeMs;
  } catch {
    return Infinity;
  }
}

/**
 * A cross-process lock held while a run cleans up and picks its subnet (a directory: mkdir is
 * atomic). A lock whose owner died is broken. Bounded: throws after LOCK_WAIT_MS.
 */
export async function withSetupLock<T>(fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  const owner = join(LOCK_DIR, 'pid');
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      writeFileSync(owner, String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = lockOwner(owner);
      // No owner yet: being taken right now, or its taker died between mkdir and write.
      const stale = pid === null ? lockAgeMs() > 5_000 : !pidAlive(pid);
      if (stale) {
        rmSync(LOCK_DIR, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(`${LOCK_DIR} held by pid ${pid} for too long`, { cause: err });
      }
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

/** The lowest third octet k such that no address of the root namespace lies in 10.213.k.0/24. */
export async function freeSubnet(): Promise<number> {
  const addresses = await sh('ip', ['-4', '-o', 'addr', 'show']);
  const used = new Set([...addresses.matchAll(/inet 10\.213\.(\d+)\./g)].map((m) => Number(m[1])));
  for (let k = 0; k < 256; k++) if (!used.has(k)) return k;
  throw new Error('no free 10.213.k.0/24 subnet');
}

/** Why this machine cannot run the harness, or null if it can. */
export async function unavailableReason(): Promise<string | null> {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root (network namespaces, veth, bridge, iptables)';
  for (const [tool, args] of [
    ['ip', ['-V']],
    ['iptables', ['--version']],
    ['iptables-restore', ['--version']],
  ] as const) {
    try {
      await sh(tool, args);
    } catch (err) {
      const code = ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code;
      return code === 'ENOENT'
        ? `\`${tool}\` not found (apt-get install -y iproute2 iptables)`
        : `\`${tool} ${args.join(' ')}\` failed: ${(err as Error).message}`;
    }
  }
  const ns = `${PREFIX}-${process.pid}-probe-ns`;
  try {
    await sh('ip', ['netns', 'add', ns]);
    await nsSh(ns, ['ip', 'link', 'add', 'probebr', 'type', 'bridge']);
    await nsSh(ns, ['ip', 'link', 'add', 'probea', 'type', 'veth', 'peer', 'name', 'probeb']);
    await nsSh(
      ns,
      ['iptables', '-A', 'INPUT', '-m', 'statistic', '--mode', 'random'].concat([
        '--probability',
        '0.5',
        '-j',
        'DROP',
      ]),
    );
    return null;
  } catch (err) {
    return `cannot build a throwaway network namespace: ${(err as Error).message}`;
  } finally {
    await sh('ip', ['netns', 'delete', ns]).catch(() => undefined);
  }
}
