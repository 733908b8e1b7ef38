// The knh command with bad settings refuses to start and names every bad variable at once; with
// settings that load but look like a mistake it starts, and says so in its logs.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { CLI_PATH } from '../../src/demo/mesh.js';
import { meshPorts } from '../support/mesh-ports.js';
import { pollUntil } from '../support/poll.js';

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `knh` with exactly `env` (plus PATH); kills it if it has not exited within 10 s. */
function runKnh(env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_PATH], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('invalid settings (the knh command)', function () {
  this.timeout(30_000);

  it('exits non-zero and names every bad variable in one report', async () => {
    const bad = {
      PEERS: 'nonsense',
      CONTAINER_PORT: '99999',
      SEND_MAX_RETRIES: '-1',
      PROBE_TIMEOUT: 'abc',
      LOG_LEVEL: 'loud',
      PEER_STATUS_URL: 'ftp://receiver/peer',
      WEBHOOK_QUEUE_SIZE: '0',
    };

    const run = await runKnh({ DISCOVERY: 'static', ...bad });

    expect(run.signal, 'exited on its own').to.equal(null);
    expect(run.code).to.be.a('number').and.not.equal(0);
    for (const name of Object.keys(bad)) {
      expect(run.stderr, `stderr names ${name}`).to.match(new RegExp(`\\b${name}\\b`));
    }
    expect(run.stdout, 'never started listening').not.to.include('listening');
  });

  it('names a missing required variable alongside a bad one', async () => {
    const run = await runKnh({ DISCOVERY: 'static', HEARTBEAT_INTERVAL: 'often' });

    expect(run.signal, 'exited on its own').to.equal(null);
    expect(run.code).to.be.a('number').and.not.equal(0);
    expect(run.stderr).to.match(/\bPEERS\b/);
    expect(run.stderr).to.match(/\bHEARTBEAT_INTERVAL\b/);
  });

  it('starts with a misspelled variable, logging a warning naming it, and its settings once, secrets hidden', async () => {
    const secret = 'a-peer-secret-of-forty-characters-0123456';
    const [port] = await meshPorts(1);
    const child = spawn(process.execPath, [CLI_PATH], {
      env: {
        PATH: process.env.PATH ?? '',
        DISCOVERY: 'static',
        PEERS: `127.0.0.1:${port}`,
        LISTEN_HOST: '127.0.0.1',
        CONTAINER_PORT: String(port),
        PEER_SECRET: secret,
        PEER_STATUS_ULR: 'http://receiver:8080/peer',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let rest = '';
    child.stdout.on('data', (c: Buffer) => {
      const text = rest + c.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts)
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    try {
      const listening = await pollUntil(
        'the node listening',
        () => (lines.some((l) => l.event === 'listening') ? lines : undefined),
        { timeoutMs: 15_000 },
      );
      const warned = listening.filter((l) => l.event === 'settings-warning').map((l) => l.msg);
      expect(warned).to.deep.equal([
        'PEER_STATUS_ULR is not a knh setting and is ignored: did you mean PEER_STATUS_URL?',
        'no receiver is set (PEER_STATUS_URL, CLUSTER_STATUS_URL, SLACK_WEBHOOK_URL, ALERTMANAGER_URL, PAGERDUTY_ROUTING_KEY, ALERT_WEBHOOK_URL): knh shows what it finds on its status page and metrics, but sends no alert',
      ]);
      const logged = listening.filter((l) => l.event === 'settings');
      expect(logged).to.have.length(1);
      expect(logged[0]?.settings).to.deep.include({
        DISCOVERY: 'static',
        CONTAINER_PORT: port,
        PEER_SECRET: '<set, not shown: a secret>',
        PEER_STATUS_URL: null,
      });
      expect(JSON.stringify(lines)).not.to.include(secret);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
