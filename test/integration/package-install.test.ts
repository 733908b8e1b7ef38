// The package as a user installs it: `npm pack` of a tree without dist/ (its prepack builds it),
// then the tarball installed without dev dependencies: it has no others, its libraries are bundled
// (scripts/bundle.ts). Its command runs, names the revision its build was given, and a node from
// it finds its peers through the Kubernetes API (the in-repo fake), on the Node running the tests,
// without a warning.
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { freePorts } from '../../src/demo/mesh.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { pollUntil } from '../support/poll.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** What the Dockerfile's build stage copies: all a build needs. */
const BUILD_INPUTS = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'LICENSE',
  'README.md',
  'src',
  'scripts',
  'schemas',
];
const REVISION = 'v0.0.0-test';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts `file args`; the returned run fills in as output comes, `done` resolves at exit. */
function start(file: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv }) {
  const child = spawn(file, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
  const run: Run = { code: null, signal: null, stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (run.stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (run.stderr += c.toString('utf8')));
  const done = new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      Object.assign(run, { code, signal });
      resolve(run);
    });
  });
  return { child, run, done };
}

/** Runs a command to its end within `timeoutMs`; rejects, with its output, unless it exits 0. */
async function succeed(
  file: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = {},
) {
  const { child, done } = start(file, args, { cwd, env: { ...process.env, ...env } });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const run = await done.finally(() => clearTimeout(timer));
  if (run.code !== 0) {
    throw new Error(`${file} ${args.join(' ')}: exit ${run.code ?? run.signal}\n${run.stderr}`);
  }
  return run;
}

describe('the packed package, installed without dev dependencies', function () {
  this.timeout(180_000);
  let dir: string;
  let app: string;
  let cli: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'knh-package-'));
    app = join(dir, 'app');
    // Packed from a clean tree: what the Dockerfile's build stage copies, no dist/ (the libraries
    // from this checkout's node_modules), and no .git, so the revision is the one given, as the
    // image's build is given it. Packing builds it (prepack).
    const tree = join(dir, 'tree');
    for (const entry of BUILD_INPUTS)
      cpSync(join(ROOT, entry), join(tree, entry), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'), 'dir');
    const packed = await succeed(
      'npm',
      ['pack', '--json', '--pack-destination', dir],
      tree,
      100_000,
      { KNH_REVISION: REVISION },
    );
    const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
    // From npm's cache where it can (npm ci filled it), as a second install on a machine would.
    await succeed(
      'npm',
      [
        'install',
        '--prefix',
        app,
        '--omit=dev',
        '--no-audit',
        '--no-fund',
        '--no-package-lock',
        '--prefer-offline',
        join(dir, filename),
      ],
      dir,
      90_000,
    );
    cli = join(app, 'node_modules', 'knh', 'dist', 'knh.cjs');
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('installs the knh command and no other package', () => {
    expect(existsSync(cli)).to.equal(true);
    expect(existsSync(join(app, 'node_modules', '.bin', 'knh'))).to.equal(true);
    const installed = readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'));
    expect(installed).to.deep.equal(['knh']);
  });

  it('runs `knh --version`, naming the revision its build was given', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const run = await succeed(process.execPath, [cli, '--version'], app, 20_000);
    expect(run.stdout).to.equal(`knh ${version} (revision ${REVISION})\n`);
  });

  it('runs `knh --help`', async () => {
    const run = await succeed(process.execPath, [cli, '--help'], app, 20_000);
    expect(run.stdout).to.match(/^usage:/);
    expect(run.stderr).to.equal('');
  });

  it('starts a node that lists and watches EndpointSlices through the bundled client, with no warning', async () => {
    const api = await new FakeKubeApi().start();
    const [port] = await freePorts(1);
    try {
      api.upsert('knh', 'knh', 'knh-abc12', port ?? 0, [{ ip: '127.0.0.1', nodeName: 'worker-1' }]);
      const node = start(process.execPath, [cli], {
        cwd: app,
        env: {
          PATH: process.env.PATH ?? '',
          DISCOVERY: 'kubernetes',
          KUBECONFIG: api.writeKubeconfig(join(dir, 'kubeconfig.json')),
          SERVICE_NAME: 'knh',
          NAMESPACE: 'knh',
          NODE_NAME: 'worker-1',
          POD_IP: '127.0.0.1',
          LISTEN_HOST: '127.0.0.1',
          CONTAINER_PORT: String(port),
        },
      });
      try {
        await pollUntil(
          'a list and a watch of EndpointSlices from the installed node',
          () =>
            api.requests.some((r) => r.query.watch === 'true') &&
            api.requests.some((r) => r.query.watch === undefined)
              ? true
              : undefined,
          { timeoutMs: 30_000, describe: () => `${node.run.stdout}\n${node.run.stderr}` },
        );
      } finally {
        node.child.kill('SIGTERM');
      }
      const run = await node.done;
      expect(run.stderr, 'stderr').to.not.match(/Warning/);
      expect(run.code, `${run.stdout}\n${run.stderr}`).to.equal(0);
    } finally {
      await api.close();
    }
  });
});
