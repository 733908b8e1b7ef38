// The knh command with bad settings refuses to start and names every bad variable at once.
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { CLI_PATH } from '../../src/demo/mesh.js';

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
});
