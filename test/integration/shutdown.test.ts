// A node exits 0 on SIGTERM, and its logs can never wedge it: not a full stdout pipe whose reader
// stopped reading, not a reader that went away.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { CLI_PATH, freePorts } from '../../src/demo/mesh.js';
import { pollUntil, sleep } from '../support/poll.js';

function startNode(port: number): ChildProcess {
  return spawn(process.execPath, [CLI_PATH], {
    env: {
      PATH: process.env.PATH ?? '',
      DISCOVERY: 'static',
      PEERS: `127.0.0.1:${port}`,
      CONTAINER_PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      NODE_NAME: 'solo',
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

const pingStatus = (port: number) =>
  fetch(`http://127.0.0.1:${port}/ping`, { signal: AbortSignal.timeout(3_000) }).then(
    (r) => r.status,
    () => undefined,
  );

/** Sends SIGTERM; resolves with the exit code, or 'still running' after `ms`. */
function terminate(child: ChildProcess, ms: number): Promise<number | string> {
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? `signal ${signal}`)),
  );
  child.kill('SIGTERM');
  return Promise.race([exited, sleep(ms).then(() => 'still running')]);
}

describe('shutdown and logging (a real knh process)', function () {
  this.timeout(60_000);
  let child: ChildProcess | null = null;

  afterEach(() => {
    child?.kill('SIGKILL');
    child = null;
  });

  it('logs its stop and exits 0 on SIGTERM', async () => {
    const [port = 0] = await freePorts(1);
    child = startNode(port);
    const lines: { event?: string }[] = [];
    createInterface({ input: child.stdout! }).on('line', (l) =>
      lines.push(JSON.parse(l) as { event?: string }),
    );
    await pollUntil('the node answering', () => pingStatus(port), { timeoutMs: 15_000 });
    expect(await terminate(child, 10_000)).to.equal(0);
    expect(lines.map((l) => l.event)).to.include('stopped');
  });

  it('keeps answering and exits on SIGTERM while nobody reads its logs (full pipe)', async () => {
    const [port = 0] = await freePorts(1);
    child = startNode(port); // stdout is never read: the pipe fills up
    await pollUntil('the node answering', () => pingStatus(port), { timeoutMs: 15_000 });
    // Every malformed request logs a warning: well over a pipe's 64 KiB.
    const bad = JSON.stringify({ from: { id: 'x'.repeat(300), address: 'bad' }, epoch: -1 });
    for (let i = 0; i < 600; i++) {
      await fetch(`http://127.0.0.1:${port}/election`, { method: 'POST', body: bad }).catch(
        () => undefined,
      );
    }
    expect(await pingStatus(port), 'still answering with its log pipe full').to.equal(200);
    expect(await terminate(child, 10_000)).to.equal(0);
  });

  it('exits 0 on SIGTERM after its log reader went away (broken pipe)', async () => {
    const [port = 0] = await freePorts(1);
    child = startNode(port);
    await pollUntil('the node answering', () => pingStatus(port), { timeoutMs: 15_000 });
    child.stdout?.destroy();
    await sleep(1_500);
    expect(await pingStatus(port)).to.equal(200);
    expect(await terminate(child, 10_000)).to.equal(0);
  });
});
