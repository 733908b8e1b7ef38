// Which knh a node is, as its operator and its receivers see it: the version and git revision the
// build baked in (scripts/bundle.ts) in knh_build_info, GET /status, the start-up log line, `knh
// --version` and the User-Agent of every request it sends; and the revision's fallback order.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { describeBuild, userAgentOf, type BuildInfo } from '../../src/build-info.js';
import { loadConfig } from '../../src/config/load.js';
import { freePorts } from '../../src/demo/mesh.js';
import { startNode, type RunningNode } from '../../src/main.js';
import { httpSanityCheck } from '../../src/peer-client/sanity-check.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { buildRevision, gitCheckout } from '../../scripts/build-revision.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { pollUntil } from '../support/poll.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BAKED: BuildInfo = { version: '9.8.7', revision: 'feedbee-dirty' };

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** An HTTP server that keeps every request it gets and answers each 404. */
async function recorder(): Promise<{ server: Server; port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => res.writeHead(404, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

describe('the build a node names', function () {
  this.timeout(20_000);
  let peer: Awaited<ReturnType<typeof recorder>>;
  let node: RunningNode;
  let logger: CapturingLogger;
  let base: string;

  before(async () => {
    // The recorder is the node's one peer (it refuses every message) and its webhook receiver.
    peer = await recorder();
    const [port = 0] = await freePorts(1);
    base = `http://127.0.0.1:${port}`;
    const loaded = loadConfig(
      {
        DISCOVERY: 'static',
        PEERS: `127.0.0.1:${port},127.0.0.1:${peer.port}`,
        POD_IP: '127.0.0.1',
        LISTEN_HOST: '127.0.0.1',
        CONTAINER_PORT: String(port),
        NODE_NAME: 'built',
        CLUSTER_STATUS_URL: `http://127.0.0.1:${peer.port}/cluster`,
      },
      { hostname: 'test' },
    );
    if (!loaded.ok) throw new Error(loaded.errors.join('; '));
    logger = new CapturingLogger();
    node = await startNode(loaded.config, { logger, build: BAKED });
  });

  after(async () => {
    await node?.stop(500);
    peer?.server.close();
  });

  it('names version and revision in knh_build_info', async () => {
    const body = await (await fetch(`${base}/metrics`)).text();
    expect(body).to.match(/^knh_build_info\{version="9\.8\.7",revision="feedbee-dirty"\} 1$/m);
  });

  it('names them in GET /status, which its schema takes, as it takes one without a revision', async () => {
    const status = (await (await fetch(`${base}/status`)).json()) as Record<string, unknown>;
    expect({ version: status.version, revision: status.revision }).to.deep.equal(BAKED);
    const schemas = loadSchemas();
    expect(schemas.check('status', status)).to.deep.equal({ ok: true });
    // A reader validating with this schema still takes a node of a version before revisions.
    const older = { ...status };
    delete older.revision;
    expect(schemas.check('status', older)).to.deep.equal({ ok: true });
  });

  it('names them in its start-up log line', () => {
    const line = logger.records.find((r) => r.fields.event === 'listening');
    expect(line?.msg).to.match(/^knh 9\.8\.7 \(revision feedbee-dirty\) node /);
    expect(line?.fields).to.include({ version: '9.8.7', revision: 'feedbee-dirty' });
  });

  it('sends its User-Agent with every peer message and every webhook', async () => {
    const ua = 'knh/9.8.7 (revision feedbee-dirty)';
    const { seen } = peer;
    await pollUntil(
      'a probe of the peer and the cluster status webhook',
      () =>
        seen.some((s) => s.path === '/ping') && seen.some((s) => s.path === '/cluster')
          ? true
          : undefined,
      { timeoutMs: 15_000, describe: () => JSON.stringify(seen.map((s) => s.path)) },
    );
    const paths = new Set(seen.map((s) => `${s.method} ${s.path}`));
    expect([...paths], 'a peer message and a webhook').to.include.members([
      'GET /ping',
      'POST /cluster',
    ]);
    for (const s of seen) expect(s.headers['user-agent'], `${s.method} ${s.path}`).to.equal(ua);
  });
});

describe("the sanity check's User-Agent", () => {
  it('is the one given', async () => {
    const { server, port, seen } = await recorder();
    try {
      const check = httpSanityCheck(`http://127.0.0.1:${port}/`, 2_000, userAgentOf(BAKED));
      expect((await check.check()).ok).to.equal(true);
      expect(seen[0]?.headers['user-agent']).to.equal('knh/9.8.7 (revision feedbee-dirty)');
    } finally {
      server.close();
    }
  });
});

describe('the revision a build bakes in', () => {
  const head = { head: '1a2b3c4', dirty: false };

  it('is KNH_REVISION when set, before git', () => {
    expect(buildRevision({ KNH_REVISION: 'v0.2.0-9f8e7d6' }, () => head)).to.equal(
      'v0.2.0-9f8e7d6',
    );
  });

  it("is git's short hash without KNH_REVISION (or with it empty), -dirty when tracked files changed", () => {
    expect(buildRevision({}, () => head)).to.equal('1a2b3c4');
    expect(buildRevision({ KNH_REVISION: ' ' }, () => head)).to.equal('1a2b3c4');
    expect(buildRevision({}, () => ({ ...head, dirty: true }))).to.equal('1a2b3c4-dirty');
  });

  it('is `unknown` with neither', () => {
    expect(buildRevision({}, () => null)).to.equal('unknown');
  });

  it('refuses a KNH_REVISION a header or a label cannot carry, naming it', () => {
    for (const bad of ['abc 123', 'abc\r\nx-evil: 1', '-abc', 'x'.repeat(65), 'é']) {
      expect(() => buildRevision({ KNH_REVISION: bad }, () => head), bad).to.throw(
        /^KNH_REVISION=.*a revision is 1-64 letters/,
      );
    }
  });

  it('reads a checkout: its short hash, dirty only for changed tracked files; none outside one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'knh-revision-'));
    try {
      expect(gitCheckout(dir), 'not a repository').to.equal(null);
      const git = (...args: string[]) =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
          cwd: dir,
          encoding: 'utf8',
        }).trim();
      git('init', '-q');
      writeFileSync(join(dir, 'a.txt'), 'a\n');
      git('add', 'a.txt');
      git('commit', '-q', '-m', 'a');
      const hash = git('rev-parse', '--short', 'HEAD');
      writeFileSync(join(dir, 'untracked.txt'), 'b\n');
      expect(gitCheckout(dir)).to.deep.equal({ head: hash, dirty: false });
      writeFileSync(join(dir, 'a.txt'), 'changed\n');
      expect(gitCheckout(dir)).to.deep.equal({ head: hash, dirty: true });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is in the bundle with the package's version: `knh --version` (npm run build made it)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const revision = buildRevision(process.env, () => gitCheckout(ROOT));
    const out = execFileSync(process.execPath, [join(ROOT, 'dist/knh.cjs'), '--version'], {
      encoding: 'utf8',
    });
    expect(out, 'the tree changed since the build? npm run build').to.equal(
      `${describeBuild({ version: pkg.version, revision })}\n`,
    );
  });
});
