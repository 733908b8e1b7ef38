// A node exits 0 on SIGTERM, and its logs can never wedge it: not a full stdout pipe whose reader
// stopped reading, not a reader that went away.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { CLI_PATH, freePorts } from '../../src/demo/mesh.js';
import { pollUntil, sleep } from '../support/poll.js';

function startNode(port: number, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [CLI_PATH], {
    env: {
      PATH: process.env.PATH ?? '',
      DISCOVERY: 'static',
      PEERS: `127.0.0.1:${port}`,
      CONTAINER_PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      NODE_NAME: 'solo',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

const pingStatus = (port: number) =>
  fetch(`http://127.0.0.1:${port}/ping`, { signal: AbortSignal.timeout(3_000) }).then(
    (r) => r.status,
    () => undefined,
  );

/** A log line's fields; undefined for a line cut short (the last one a full pipe took). */
function parsed(line: string): { event?: string } | undefined {
  try {
    return JSON.parse(line) as { event?: string };
  } catch {
    return undefined;
  }
}

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
    // In a dry run every test alert logs its payload, unthrottled: 600 of them log about 500 KB,
    // several times what the pipe and this side's read buffer hold (warnings about bad requests
    // would not do: they are throttled to a few lines however many come).
    const node = startNode(port, { DRY_RUN: 'true', ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/hook' });
    child = node;
    const stdout = node.stdout!; // never read until the node has exited: the pipe fills up
    await pollUntil('the node answering', () => pingStatus(port), { timeoutMs: 15_000 });
    const TESTS = 600;
    for (let i = 0; i < TESTS; i++) {
      const status = await fetch(`http://127.0.0.1:${port}/test-alert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal: AbortSignal.timeout(3_000),
      }).then(
        (r) => r.status,
        () => undefined,
      );
      expect(status, `test alert ${i}, its log pipe filling`).to.equal(202);
    }
    expect(await pingStatus(port), 'still answering with its log pipe full').to.equal(200);
    // What it logged is read only once it has exited (the pipe keeps it): attached at 'exit',
    // before the child process's own clean-up would read it away unseen.
    const unread = new Promise<string>((resolve) =>
      node.once('exit', () => {
        const chunks: Buffer[] = [];
        stdout.on('data', (c: Buffer) => chunks.push(c));
        stdout.once('end', () => resolve(Buffer.concat(chunks).toString()));
      }),
    );
    expect(await terminate(node, 10_000)).to.equal(0);
    // Had the pipe never filled, every line would be there to read. Fewer test alerts than were
    // sent means the rest waited behind a full pipe when it exited, as the test needs.
    const alerts = (await unread)
      .split('\n')
      .filter((l) => parsed(l)?.event === 'test-alert').length;
    expect(alerts, 'test alerts read from the pipe').to.be.within(1, TESTS - 1);
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
