// OPERATOR_LISTEN with real knh processes: the operator's views move to a listener of their own
// and leave the peer port, which keeps the peers' messages and the kubelet's checks; bound to an
// address, the listener is reachable there only; a taken port stops start-up; a stop closes both.
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { networkInterfaces } from 'node:os';
import { createServer, type Server } from 'node:net';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import type { PeerSource } from '../../src/discovery/peer-source.js';
import {
  CLI_PATH,
  LocalMesh,
  logLineOf,
  type LogLine,
  type MeshNode,
} from '../../src/demo/mesh.js';
import { startNode } from '../../src/main.js';
import type { NodeStatus } from '../../src/status/status-types.js';
import { formatAddress } from '../../src/wire/node-ref.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { LoopbackIpsMesh } from '../support/loopback-ips-mesh.js';
import { meshPorts } from '../support/mesh-ports.js';
import { pollUntil } from '../support/poll.js';

interface Answer {
  status: number;
  body: string;
}

interface Request {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A request's answer on a connection of its own (none kept alive: a closed listener must be seen
 * as closed), or `refused` when nothing listens there.
 */
function call(url: string, { method = 'GET', headers = {}, body }: Request = {}) {
  return new Promise<Answer | 'refused'>((resolve, reject) => {
    const req = request(url, { method, headers, agent: false, timeout: 5_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within 5 s`)));
    req.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNREFUSED' ? resolve('refused') : reject(err),
    );
    req.end(body);
  });
}

const statusOf = async (url: string, init?: Request) => {
  const answer = await call(url, init);
  return answer === 'refused' ? answer : answer.status;
};

/** A URL of `host` (an IP) and `port`. */
const at = (host: string, port: number, path: string) =>
  `http://${formatAddress(host, port)}${path}`;

/** Whether this host can listen on `ip` (::1 where IPv6 is off cannot). */
function canListenOn(ip: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(0, ip, () => server.close(() => resolve(true)));
  });
}

/** Runs `knh` with `env` until it exits (killed after 20 s); its log lines and exit code. */
function runKnh(env: Record<string, string>): Promise<{ code: number | null; logs: LogLine[] }> {
  const child = spawn(process.execPath, [CLI_PATH], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const logs: LogLine[] = [];
  createInterface({ input: child.stdout }).on('line', (text) => logs.push(logLineOf(text)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, logs });
    }),
  );
}

/** This host's first address that is not loopback, if it has one. */
const external = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

const openWindow = (url: string, headers: Record<string, string>) =>
  statusOf(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ duration: '10m', reason: 'operator-listen test' }),
  });

describe('OPERATOR_LISTEN: the operator views on a listener of their own', function () {
  this.timeout(90_000);
  const meshes: { stop(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(meshes.splice(0).map((m) => m.stop()));
  });

  it('a port: views there on every node, not on the peer port, where the mesh still elects and probes', async () => {
    const [views] = await meshPorts(1);
    if (views === undefined) throw new Error('no free port');
    const fx = await LoopbackIpsMesh.start({ size: 3, env: { OPERATOR_LISTEN: String(views) } });
    meshes.push(fx);
    // Elected over the peer port, and a cluster status listing every peer alive: probes went there.
    const { coordinator } = await fx.settled();
    for (const node of fx.nodes) {
      const view = (path: string) => at(node.host, views, path);
      const peer = (path: string) => at(node.host, node.port, path);
      const status = await call(view('/status'));
      if (status === 'refused') expect.fail(`${node.name}: nothing on port ${views}`);
      expect(status.status, `${node.name} /status`).to.equal(200);
      expect((JSON.parse(status.body) as NodeStatus).address).to.equal(node.address);
      for (const path of ['/', '/metrics', '/maintenance', '/readyz']) {
        expect(await statusOf(view(path)), `${node.name} ${path} on ${views}`).to.equal(200);
      }
      for (const path of ['/', '/status', '/metrics', '/maintenance']) {
        const moved = await call(peer(path));
        if (moved === 'refused') expect.fail(`${node.name}: the peer port refused`);
        expect(moved.status, `${node.name} ${path} on the peer port`).to.equal(404);
        expect(moved.body).to.include(`OPERATOR_LISTEN moved the operator's views to`);
        expect(moved.body).to.include(`${node.host}:${views}`);
      }
      // The kubelet's checks and the peers' messages stay; none of the latter on the views' port.
      expect(await statusOf(peer('/readyz')), `${node.name} /readyz`).to.equal(200);
      expect(await statusOf(peer('/ping'))).to.equal(200);
      expect(await statusOf(view('/ping'))).to.equal(404);
    }
    const shown = await call(at(coordinator.host, views, '/status'));
    if (shown === 'refused') expect.fail('the coordinator refused');
    const peers = (JSON.parse(shown.body) as NodeStatus).peers;
    expect(peers.map((p) => [p.address, p.state])).to.have.deep.members(
      fx.nodes.filter((n) => n !== coordinator).map((n) => [n.address, 'alive']),
    );
    // A window opened on a follower's listener reaches the others over the peer port.
    const follower = fx.nodes.find((n) => n !== coordinator) as MeshNode;
    const json = { 'content-type': 'application/json' };
    expect(await openWindow(at(follower.host, follower.port, '/maintenance'), json)).to.equal(404);
    expect(await openWindow(at(follower.host, views, '/maintenance'), json)).to.equal(201);
    await pollUntil(
      'the window on every node',
      async () => {
        const lists = await Promise.all(
          fx.nodes.map(async (n) => {
            const res = await call(at(n.host, views, '/maintenance'));
            return res === 'refused'
              ? 0
              : (JSON.parse(res.body) as { windows: unknown[] }).windows.length;
          }),
        );
        return lists.every((n) => n === 1) ? true : undefined;
      },
      { timeoutMs: 10_000 },
    );
  });

  /** One node, its peer port on every address, its OPERATOR_LISTEN made from a free port. */
  async function lone(operatorListen: (views: number) => string) {
    const [port, views] = await meshPorts(2);
    if (port === undefined || views === undefined) throw new Error('no free ports');
    const mesh = new LocalMesh({
      size: 1,
      ports: [port],
      env: { LISTEN_HOST: '0.0.0.0', OPERATOR_LISTEN: operatorListen(views) },
    });
    meshes.push(mesh);
    await mesh.start();
    return { port, views };
  }

  for (const [loopback, other] of [
    ['127.0.0.1', '127.0.0.2'],
    ['::1', '127.0.0.1'],
  ] as const) {
    it(`an address (${loopback}): the views there only, out of reach of any other address`, async function () {
      if (!(await canListenOn(loopback))) this.skip();
      const { port, views } = await lone((v) => formatAddress(loopback, v));
      expect(await statusOf(at(loopback, views, '/status'))).to.equal(200);
      expect(await statusOf(at(loopback, views, '/metrics'))).to.equal(200);
      expect(await statusOf(at(other, views, '/status')), `${other}: bound elsewhere`).to.equal(
        'refused',
      );
      const moved = await call(at('127.0.0.1', port, '/status'));
      if (moved === 'refused') expect.fail('the peer port refused');
      expect(moved.status).to.equal(404);
      expect(moved.body).to.include('loopback only');
      const outside = external();
      if (outside === undefined) {
        console.log('      no address but loopback on this host: reached from loopback only');
        return;
      }
      // The peer port answers there (every address): the views' port refuses by its binding alone.
      expect(await statusOf(at(outside, port, '/ping'))).to.equal(200);
      expect(await statusOf(at(outside, views, '/status')), `${outside}`).to.equal('refused');
    });
  }

  it('a port on every address: views for other hosts, changes still from loopback only', async function () {
    const outside = external();
    if (outside === undefined) this.skip();
    const { views } = await lone((v) => String(v));
    expect(await statusOf(at(outside, views, '/metrics'))).to.equal(200);
    const json = { 'content-type': 'application/json' };
    expect(await openWindow(at(outside, views, '/maintenance'), json), 'from outside').to.equal(
      403,
    );
    const page = { 'content-type': 'text/plain', origin: 'https://evil.example' };
    expect(await openWindow(at('127.0.0.1', views, '/maintenance'), page), 'a page').to.be.oneOf([
      403, 415,
    ]);
    expect(await openWindow(at('127.0.0.1', views, '/maintenance'), json), 'curl').to.equal(201);
  });
});

describe('OPERATOR_LISTEN at start and stop', function () {
  this.timeout(60_000);

  it('a taken port stops start-up, naming OPERATOR_LISTEN and why', async () => {
    const [port, views] = await meshPorts(2);
    if (port === undefined || views === undefined) throw new Error('no free ports');
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(views, '127.0.0.1', resolve));
    try {
      const { code, logs } = await runKnh({
        DISCOVERY: 'static',
        PEERS: `127.0.0.1:${port}`,
        LISTEN_HOST: '127.0.0.1',
        CONTAINER_PORT: String(port),
        OPERATOR_LISTEN: `127.0.0.1:${views}`,
      });
      expect(code).to.equal(1);
      const fatal = logs.find((l) => l.level === 60);
      expect(fatal?.msg).to.include(`cannot listen on 127.0.0.1:${views} (OPERATOR_LISTEN)`);
      expect(fatal?.msg).to.include('EADDRINUSE');
      expect(logs.some((l) => l.event === 'listening')).to.equal(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('a stop closes the views’ listener with the peer port', async () => {
    const [port, views] = await meshPorts(2);
    if (port === undefined || views === undefined) throw new Error('no free ports');
    const self = `127.0.0.1:${port}`;
    const loaded = loadConfig(
      {
        DISCOVERY: 'static',
        PEERS: self,
        LISTEN_HOST: '127.0.0.1',
        CONTAINER_PORT: String(port),
        OPERATOR_LISTEN: `127.0.0.1:${views}`,
        NODE_NAME: 'stopping',
      },
      { hostname: 'test' },
    );
    if (!loaded.ok) throw new Error(loaded.errors.join('; '));
    const source: PeerSource = {
      start: (onPeers) => (onPeers([self]), Promise.resolve()),
      stop: () => Promise.resolve(),
    };
    const node = await startNode(loaded.config, {
      logger: new CapturingLogger(),
      peerSource: source,
    });
    try {
      expect(await statusOf(at('127.0.0.1', views, '/status'))).to.equal(200);
      expect(await statusOf(at('127.0.0.1', port, '/ping'))).to.equal(200);
    } finally {
      await node.stop(1_000);
    }
    expect(await statusOf(at('127.0.0.1', views, '/status'))).to.equal('refused');
    expect(await statusOf(at('127.0.0.1', port, '/ping'))).to.equal('refused');
  });
});
