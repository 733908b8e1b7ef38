// The Node a benchmark measures on: the image's (the Dockerfile's `FROM node:<major>`), which is
// what a pod runs. Its newest release comes from the npm registry's node-linux-<arch> package (as
// .ci/run installs it), kept under node_modules/.cache so that it is fetched once. A benchmark run
// on another Node runs itself again on this one (onImageNode).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../', import.meta.url);
const readDockerfile = () => readFileSync(new URL('Dockerfile', ROOT), 'utf8');

/** The Node line the image is built on, from the Dockerfile's first `FROM node:<major>`. */
export function imageNodeMajor(dockerfile = readDockerfile()): number {
  const m = /^FROM node:(\d+)[.-]/m.exec(dockerfile);
  if (!m) throw new Error('the Dockerfile has no `FROM node:<major>` line');
  return Number(m[1]);
}

/** The flags the image's ENTRYPOINT gives node before the program (`node <flags> <program>`). */
export function imageNodeFlags(dockerfile = readDockerfile()): string[] {
  const m = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  if (!m) throw new Error('the Dockerfile has no ENTRYPOINT in its exec form');
  const argv = JSON.parse(m[1]!) as string[];
  if (argv[0] !== 'node') throw new Error(`the ENTRYPOINT runs ${argv[0]}, not node`);
  return argv.slice(1).filter((a) => a.startsWith('--'));
}

/**
 * The environment the image's last stage sets (its `ENV KEY=value` lines), which shapes how node
 * runs: a benchmark gives its processes the same.
 */
export function imageNodeEnv(dockerfile = readDockerfile()): Record<string, string> {
  const lastStage = dockerfile.split(/^FROM\s/m).at(-1) ?? '';
  const env: Record<string, string> = {};
  for (const line of lastStage.split('\n').filter((l) => /^ENV\s/.test(l))) {
    const m = /^ENV\s+(\w+)=(\S+)\s*$/.exec(line);
    // Another form (several pairs, quotes, `ENV KEY value`) would be measured without.
    if (!m) throw new Error(`the Dockerfile's ${JSON.stringify(line)} is not one ENV KEY=value`);
    env[m[1]!] = m[2]!;
  }
  return env;
}

/** A node binary of the image's line: this one if it is, else the newest from the registry. */
export function imageNode(): string {
  const major = imageNodeMajor();
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const arch = { x64: 'x64', arm64: 'arm64' }[process.arch as string];
  if (!arch || process.platform !== 'linux') {
    throw new Error(`no node-linux package for ${process.platform}/${process.arch}`);
  }
  const prefix = fileURLToPath(new URL(`node_modules/.cache/knh-image-node-${major}`, ROOT));
  const bin = `${prefix}/node_modules/node-linux-${arch}/bin/node`;
  if (!existsSync(bin)) {
    console.error(`Installing Node ${major} (the image's) into ${prefix}...`);
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        `node-linux-${arch}@${major}`,
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
  }
  return bin;
}

/**
 * Runs this benchmark again on the image's Node unless it runs there already; true when it did
 * (its exit code set: the caller returns), false when the caller is to go on.
 */
export function onImageNode(): boolean {
  const node = imageNode();
  if (node === process.execPath) return false;
  const r = spawnSync(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exitCode = r.status ?? 1;
  return true;
}
