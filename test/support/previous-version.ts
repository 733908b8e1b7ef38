// Builds knh as of the previous version's commit, from git, into test-output/ (cached), for mixed-version tests.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pidAlive } from './netns-shell.js';
import { sleep } from './poll.js';

/** A version this one must work beside in a mesh, as a commit of this repository. */
export interface PreviousVersion {
  commit: string;
  /** Its peer protocol (src/wire/protocol.ts). */
  protocol: number;
}

/**
 * The versions before this one that a rolling upgrade may run beside it: the last landed (protocol
 * 4, the version right before this one, whose nodes do not sign their answers to probes), the last before peer_flapping (protocol 3), and the last
 * before pair probing (protocol 2). Protocol 1 (f6578aa) is further back: its compatibility stays
 * covered by the unit tests of what each protocol is sent (driver-protocol), not by a mesh.
 */
export const PREVIOUS_VERSIONS: readonly PreviousVersion[] = [
  { commit: '5f9b3580465afc52470880c45cd3e6377659fe1c', protocol: 4 },
  { commit: '033426ca5f6b15a193202cb5a400272f799e4899', protocol: 3 },
  { commit: '69ce293ebf2d1bb409a601ecc05718d0015c2d48', protocol: 2 },
];

/** The version right before this one. */
export const PREVIOUS_COMMIT = PREVIOUS_VERSIONS[0]!.commit;

/** This module runs from dist/test/support/: three levels below the repository root. */
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CACHE_DIR = join(REPO_ROOT, 'test-output', 'previous-version');
/** Written last: a directory without it is a build that did not finish and is never trusted. */
const MARKER = '.knh-build-complete';

const GIT_MS = 30_000;
const EXTRACT_MS = 60_000;
/** A cold `npm ci` of ~200 MB fetches from the registry; a warm npm cache takes ~20 s. */
const INSTALL_MS = 6 * 60_000;
const BUILD_MS = 4 * 60_000;
/** Enough of a failed command's output to see why, not its whole install log. */
const OUTPUT_TAIL = 4_000;

export type PreviousBuild =
  { ok: true; cliPath: string; commit: string; fromCache: boolean } | { ok: false; reason: string };

export interface BuildOptions {
  commit?: string;
  /** One line per step, with its duration. */
  log?: (line: string) => void;
}

/**
 * The previous version's command (its package.json's `bin`: `dist/src/cli.js` until the bundle), built on first use and reused from the cache after;
 * `ok: false` only when this checkout cannot have it (no git, commit not in history, e.g. a shallow
 * clone). A present commit that fails to build rejects, naming the step and its stderr.
 * Concurrent calls in one process share one build.
 */
export function buildPreviousVersion({
  commit = PREVIOUS_COMMIT,
  log = () => undefined,
}: BuildOptions = {}): Promise<PreviousBuild> {
  let pending = builds.get(commit);
  if (!pending) {
    pending = build(commit, log);
    builds.set(commit, pending);
    // A failed build may be retried by a later call (after the cause is fixed).
    pending.catch(() => builds.delete(commit));
  }
  return pending;
}

const builds = new Map<string, Promise<PreviousBuild>>();

async function build(commit: string, log: (line: string) => void): Promise<PreviousBuild> {
  const absent = await whyAbsent(commit);
  if (absent) return { ok: false, reason: absent };
  const dir = join(CACHE_DIR, commit);
  if (complete(dir)) {
    const cliPath = commandOf(dir);
    log(`previous version ${short(commit)}: reusing the build in ${dir}`);
    return { ok: true, cliPath, commit, fromCache: true };
  }
  const began = Date.now();
  log(`previous version ${short(commit)}: building in ${CACHE_DIR} (a minute or so, once)`);
  // Each process builds in its own staging directory and moves it in whole: a killed run leaves a
  // staging directory (removed by the next run), never a half-built `dir`.
  mkdirSync(CACHE_DIR, { recursive: true });
  await removeAbandonedStaging(commit);
  rmSync(dir, { recursive: true, force: true });
  const staging = join(CACHE_DIR, `${commit}.staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  try {
    await timed(log, `git archive ${short(commit)} | tar -x`, () => extract(commit, staging));
    await timed(log, 'npm ci', () =>
      run('npm', ['ci', '--no-audit', '--no-fund', '--include=dev'], staging, INSTALL_MS),
    );
    await timed(log, 'npm run build', () => run('npm', ['run', 'build'], staging, BUILD_MS));
    const built = commandOf(staging);
    if (!existsSync(built)) throw new Error(`the build of ${commit} produced no ${built}`);
    writeFileSync(
      join(staging, MARKER),
      `${JSON.stringify({ commit, node: process.version, builtAt: new Date().toISOString() })}\n`,
    );
    if (!complete(dir)) renameSync(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  const cliPath = commandOf(dir);
  log(`previous version ${short(commit)}: built in ${seconds(Date.now() - began)}: ${cliPath}`);
  return { ok: true, cliPath, commit, fromCache: false };
}

/** Why this checkout cannot provide `commit`, or null if it can. */
async function whyAbsent(commit: string): Promise<string | null> {
  try {
    await run('git', ['rev-parse', '--git-dir'], REPO_ROOT, GIT_MS);
  } catch (err) {
    return `${REPO_ROOT} is not a usable git checkout: ${(err as Error).message}`;
  }
  try {
    await run('git', ['cat-file', '-e', `${commit}^{commit}`], REPO_ROOT, GIT_MS);
    return null;
  } catch {
    const shallow = await run('git', ['rev-parse', '--is-shallow-repository'], REPO_ROOT, GIT_MS)
      .then((out) => out.trim() === 'true')
      .catch(() => false);
    return `commit ${commit} is not in this repository's history${shallow ? ' (a shallow clone: git fetch --unshallow)' : ''}`;
  }
}

function complete(dir: string): boolean {
  return (
    existsSync(join(dir, MARKER)) &&
    existsSync(join(dir, 'package.json')) &&
    existsSync(commandOf(dir))
  );
}

/** The file a checkout's `knh` command runs, as its package.json names it. */
function commandOf(dir: string): string {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    bin: { knh: string };
  };
  return join(dir, pkg.bin.knh);
}

/**
 * Removes the staging directories of `commit` whose process is gone (killed mid-build), first
 * ending what that build had started and that outlived it (npm ci, tsc: their own process group).
 */
async function removeAbandonedStaging(commit: string): Promise<void> {
  const prefix = `${commit}.staging-`;
  for (const name of readdirSync(CACHE_DIR)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (pid !== process.pid && Number.isInteger(pid) && pidAlive(pid)) continue;
    const dir = join(CACHE_DIR, name);
    await endProcessesIn(dir);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SIGKILLs every process whose working directory lies in `dir` and waits (≤ 5 s) until they are gone. */
async function endProcessesIn(dir: string): Promise<void> {
  const inDir = () =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number)
      .filter((pid) => {
        try {
          const cwd = readlinkSync(`/proc/${pid}/cwd`);
          return cwd === dir || cwd.startsWith(`${dir}/`);
        } catch {
          return false;
        }
      });
  if (!existsSync('/proc')) return;
  for (let round = 0; round < 50; round++) {
    const pids = inDir();
    if (pids.length === 0) return;
    for (const pid of pids) killQuietly(pid);
    await sleep(100);
  }
}

/** `git archive <commit> | tar -x -C <into>`, both bounded. */
async function extract(commit: string, into: string): Promise<void> {
  const tarball = `${into}.tar`;
  try {
    await run('git', ['archive', '--format=tar', '-o', tarball, commit], REPO_ROOT, EXTRACT_MS);
    await run('tar', ['-xf', tarball, '-C', into], REPO_ROOT, EXTRACT_MS);
  } finally {
    rmSync(tarball, { force: true });
  }
}

/**
 * Runs `file args` in `cwd` (its own process group, so that a timeout ends npm's children too);
 * resolves its stdout; rejects naming the command, the exit and the tail of its stderr and stdout.
 */
function run(file: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const keep = (text: string, chunk: Buffer) => (text + chunk.toString('utf8')).slice(-65_536);
    child.stdout.on('data', (c: Buffer) => (stdout = keep(stdout, c)));
    child.stderr.on('data', (c: Buffer) => (stderr = keep(stderr, c)));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) killQuietly(-child.pid);
    }, timeoutMs);
    const fail = (why: string, cause?: unknown) => {
      const output = [stderr.trim(), stdout.trim()].filter(Boolean).join('\n--- stdout:\n');
      const tail = output.length > OUTPUT_TAIL ? `…${output.slice(-OUTPUT_TAIL)}` : output;
      const message = `\`${file} ${args.join(' ')}\` in ${cwd} ${why}${tail ? `:\n${tail}` : ''}`;
      reject(new Error(message, { cause }));
    };
    child.once('error', (err) => {
      clearTimeout(timer);
      fail(`could not start (${err.message})`, err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) fail(`timed out after ${seconds(timeoutMs)}`);
      else if (code === 0) resolve(stdout);
      else fail(`failed (exit ${code ?? signal})`);
    });
  });
}

/** SIGKILL to a pid (negative: its process group), if it still exists. */
function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

async function timed<T>(log: (line: string) => void, what: string, fn: () => Promise<T>) {
  const began = Date.now();
  const value = await fn();
  log(`${what}: ${seconds(Date.now() - began)}`);
  return value;
}

const short = (commit: string) => commit.slice(0, 7);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
