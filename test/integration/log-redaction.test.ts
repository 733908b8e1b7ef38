// Receiver URLs carry their secrets (Slack's, Discord's and many webhooks' are in the path): a
// real node given token-bearing URLs for every receiver, at LOG_LEVEL=debug, its receivers failing
// and then taking its webhooks and a test alert, prints no token, nor shows one on /status or
// /metrics; asked for paths (LOG_RECEIVER_URLS=path), it shows them, so the check can fail.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { CLI_PATH } from '../../src/demo/mesh.js';
import { Receiver } from '../../src/demo/webhook-sink.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { meshPorts } from '../support/mesh-ports.js';
import { pollUntil, sleep } from '../support/poll.js';

const RECEIVERS = [
  'PEER_STATUS_URL',
  'CLUSTER_STATUS_URL',
  'SLACK_WEBHOOK_URL',
  'ALERTMANAGER_URL',
  'ALERT_WEBHOOK_URL',
  'PAGERDUTY_URL',
  'SANITY_CHECK_URL',
] as const;

interface Run {
  printed: string;
  status: string;
  metrics: string;
  /** Paths the receiver took webhooks at. */
  paths: string[];
  tokens: string[];
}

async function runNode(extra: Record<string, string>): Promise<Run> {
  const receiver = await new Receiver({ schemas: loadSchemas() }).start();
  const [port] = await meshPorts(1);
  const tokens = RECEIVERS.map(() => `t0ken${randomBytes(8).toString('hex')}`);
  const urls = Object.fromEntries(
    RECEIVERS.map((name, i) => [name, receiver.url(`/${name.toLowerCase()}/${tokens[i]}`)]),
  );
  // Failing first: errors and retries are logged too.
  receiver.outage(500);
  const child = spawn(process.execPath, [CLI_PATH], {
    env: {
      PATH: process.env.PATH ?? '',
      DISCOVERY: 'static',
      PEERS: `127.0.0.1:${port}`,
      LISTEN_HOST: '127.0.0.1',
      CONTAINER_PORT: String(port),
      LOG_LEVEL: 'debug',
      PAGERDUTY_ROUTING_KEY: 'R0123456789abcdef0123456789abcde',
      ...urls,
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout.on('data', (c: Buffer) => (printed += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (printed += c.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  try {
    await pollUntil(
      'the node leading',
      async () => {
        const res = await fetch(`${base}/status`).catch(() => null);
        const s = res?.ok ? ((await res.json()) as { role: string }) : null;
        return s?.role === 'coordinator' || undefined;
      },
      { timeoutMs: 15_000 },
    );
    const test = await fetch(`${base}/test-alert`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(test.status, await test.clone().text()).to.equal(202);
    await sleep(2_000);
    receiver.outage(null);
    // Retried once the receivers take them: the test alert at Slack's, the election's status.
    await pollUntil(
      'the webhooks delivered at their token paths',
      () => {
        const paths = receiver.received.map((w) => w.path);
        return (
          ['slack_webhook_url', 'cluster_status_url'].every((p) =>
            paths.some((q) => q.startsWith(`/${p}/`)),
          ) || undefined
        );
      },
      { timeoutMs: 30_000 },
    );
    const status = await (await fetch(`${base}/status`)).text();
    const metrics = await (await fetch(`${base}/metrics`)).text();
    return { printed, status, metrics, paths: receiver.received.map((w) => w.path), tokens };
  } finally {
    child.kill('SIGTERM');
    await exited;
    await receiver.close();
  }
}

describe('receiver URLs in the logs (a real node, LOG_LEVEL=debug)', function () {
  this.timeout(90_000);

  it('prints no receiver token at any level, in errors or deliveries, nor shows one on /status or /metrics', async () => {
    const run = await runNode({});
    // The URLs were used as given, tokens and all.
    expect(
      run.paths.some((p) => p.includes(run.tokens[2]!)),
      'Slack got the test',
    ).to.equal(true);
    expect(run.printed, 'the node logged its deliveries').to.match(/webhook delivered/);
    expect(run.printed, 'and their failures').to.match(/"status":500|HTTP 500/);
    for (const token of run.tokens) {
      expect(run.printed, 'stdout and stderr').not.to.include(token);
      expect(run.status, '/status').not.to.include(token);
      expect(run.metrics, '/metrics').not.to.include(token);
    }
  });

  it('shows the paths when LOG_RECEIVER_URLS=path asks for them', async () => {
    const run = await runNode({ LOG_RECEIVER_URLS: 'path' });
    expect(run.printed).to.include(run.tokens[0]!);
  });
});
