// The Kubernetes client as the build ships it: dist/kube-client.cjs, one bundle of the classes knh
// uses, not the whole @kubernetes/client-node package (some 2,500 modules; docs/benchmarks.md has
// its cost), which dist/knh.cjs requires only under DISCOVERY=kubernetes. It loads and talks to an
// API server without a deprecation warning on the Node running the tests (CI runs them on the
// machine's Node and the image's), and its stack traces lead to the code through its source map.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { DiscoveryV1Api, KubeConfig, makeInformer } from '../../src/discovery/kube-client.js';
import { FakeKubeApi } from '../support/fake-kube-api.js';
import { pollUntil } from '../support/poll.js';

const BUNDLE_URL = new URL('../../kube-client.cjs', import.meta.url);
const BUNDLE = fileURLToPath(BUNDLE_URL);
const built = readFileSync(BUNDLE_URL, 'utf8');
const KNH = readFileSync(new URL('../../knh.cjs', import.meta.url), 'utf8');
const ROOT = new URL('../../../', import.meta.url);

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts a CommonJS script under the Node running the tests, with no NODE_OPTIONS of ours. */
function startScript(script: string, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, '-e', `(async () => {${script}})()`], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: Run = { code: null, stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (run.stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (run.stderr += c.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const done = new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      run.code = code;
      resolve(run);
    });
  });
  return { child, run, done };
}

const runScript = (script: string, nodeArgs: string[] = []) => startScript(script, nodeArgs).done;

/** The first stack frame's file, line and column. */
function topFrame(stack: string): { file: string; line: number; column: number } {
  const frame = stack.split('\n').find((l) => l.trim().startsWith('at '));
  const match = /\(?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/.exec(frame ?? '');
  if (!match) throw new Error(`no frame with a file in:\n${stack}`);
  return { file: match[1] ?? '', line: Number(match[2]), column: Number(match[3]) };
}

// An error the library throws from inside the bundle: an API client asked of an empty kubeconfig.
const THROW_FROM_BUNDLE = `
  const { KubeConfig, DiscoveryV1Api } = require(${JSON.stringify(BUNDLE)});
  try { new KubeConfig().makeApiClient(DiscoveryV1Api); } catch (err) { console.log(err.stack); }
`;

describe('the Kubernetes client bundle (npm run build)', () => {
  it('imports nothing from @kubernetes/client-node at run time: the classes are in the bundle', () => {
    expect(built).to.not.match(/require\(\s*["']@kubernetes\/client-node/);
    expect(built).to.match(/\bKubeConfig\s*=\s*class\b/);
  });

  it("holds the models an EndpointSlice list is made of, and none of the other APIs' (kube-models.ts)", () => {
    for (const model of [
      'V1EndpointSliceList',
      'V1EndpointSlice',
      'V1EndpointConditions',
      'V1ObjectMeta',
    ]) {
      expect(built, model).to.match(new RegExp(`\\b${model}\\s*=\\s*class\\b`));
    }
    for (const model of ['V1Pod', 'V1Deployment', 'V1Node']) {
      expect(built, model).to.not.match(new RegExp(`\\b${model}\\s*=\\s*class\\b`));
    }
  });

  it("leaves out what knh never runs: exec's and port-forward's WebSocket client, cp's tar archives", () => {
    expect(built).to.not.include('Sec-WebSocket-Key');
    expect(built).to.not.include('USTAR_MAGIC');
  });

  it('is apart from knh.cjs, which requires it from beside itself, only when first imported', () => {
    expect(KNH).to.not.match(/\bKubeConfig\s*=\s*class\b/);
    expect(KNH.match(/require\("\.\/kube-client\.cjs"\)/g)).to.have.length(1);
    // Inside esbuild's lazy initializer of src/discovery/kubernetes.js, which runs on first import.
    expect(KNH).to.match(
      /=__esm\(\{"dist\/src\/discovery\/kubernetes\.js"\(\)\{[^}]*require\("\.\/kube-client\.cjs"\)/,
    );
  });

  it('gives working classes: a kubeconfig is read, and an API client and an informer made from it', () => {
    const kc = new KubeConfig();
    kc.loadFromString(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://10.0.0.1:6443' } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    expect(kc.getCurrentCluster()?.server).to.equal('https://10.0.0.1:6443');
    expect(kc.makeApiClient(DiscoveryV1Api)).to.be.an.instanceOf(DiscoveryV1Api);
    const informer = makeInformer(kc, '/apis/discovery.k8s.io/v1/endpointslices', () =>
      Promise.reject(new Error('not listed in this test')),
    );
    expect(informer.list()).to.deep.equal([]);
  });

  describe(`on this Node (${process.version})`, function () {
    this.timeout(30_000);
    let api: FakeKubeApi;
    let dir: string;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'knh-bundle-'));
      api = await new FakeKubeApi().start();
    });

    afterEach(async () => {
      await api.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('loads, lists and watches EndpointSlices without a deprecation warning', async () => {
      api.upsert('knh', 'knh', 'knh-abc12', 8080, [{ ip: '10.0.0.1', nodeName: 'worker-1' }]);
      const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig.json'));
      // As knh's discovery uses it (src/discovery/kubernetes.ts): a list, then an informer.
      const script = `
        const { KubeConfig, DiscoveryV1Api, makeInformer } = require(${JSON.stringify(BUNDLE)});
        const kc = new KubeConfig();
        kc.loadFromFile(${JSON.stringify(kubeconfig)});
        const api = kc.makeApiClient(DiscoveryV1Api);
        const listed = await api.listNamespacedEndpointSlice({ namespace: 'knh' });
        console.log('listed', listed.items.length);
        const informer = makeInformer(kc, '/apis/discovery.k8s.io/v1/namespaces/knh/endpointslices',
          () => api.listNamespacedEndpointSlice({ namespace: 'knh' }));
        informer.on('error', (err) => console.log('informer error', err));
        await informer.start();
        console.log('informer', informer.list().length);
      `;
      const { child, run, done } = startScript(script, ['--trace-deprecation', '--trace-warnings']);
      await pollUntil(
        'the informer started and its watch request made',
        () =>
          run.stdout.includes('informer ') && api.requests.some((r) => r.query.watch === 'true')
            ? true
            : undefined,
        { timeoutMs: 15_000, describe: () => JSON.stringify(run) },
      );
      child.kill('SIGTERM');
      const { stdout, stderr } = await done;
      expect(stdout).to.include('listed 1').and.include('informer 1');
      expect(stdout).to.not.include('informer error');
      expect(stderr, 'stderr').to.not.match(/Warning/);
    });

    it('throws errors whose stack leads, through the source map, to the file in node_modules and its line', async () => {
      const plain = await runScript(THROW_FROM_BUNDLE);
      expect(plain.stderr).to.equal('');
      expect(plain.stdout).to.include('No active cluster');
      expect(topFrame(plain.stdout).file).to.equal(BUNDLE);
      // In a development tree, or wherever the build's map is put beside the file.
      const { stdout } = await runScript(THROW_FROM_BUNDLE, ['--enable-source-maps']);
      const frame = topFrame(stdout);
      const source = fileURLToPath(
        new URL('node_modules/@kubernetes/client-node/dist/config.js', ROOT),
      );
      expect(frame.file).to.equal(source);
      expect(existsSync(source)).to.equal(true);
      const line = readFileSync(source, 'utf8').split('\n')[frame.line - 1];
      expect(line).to.include('No active cluster');
    });
  });
});
