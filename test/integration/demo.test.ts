// `knh demo` as a new user runs it: each node's start names its status page, the page answers
// there, and Ctrl-C (SIGINT) stops the demo and every node with it.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { CLI_PATH } from '../../src/demo/mesh.js';
import { pollUntil } from '../support/poll.js';

const STARTED = /\b(node-\d) started on (\S+) \(pid \d+\), status page (http:\/\/\S+\/)$/;

describe('knh demo', function () {
  this.timeout(60_000);

  it('prints where each node serves its status page, which answers there; SIGINT stops it', async () => {
    // stdin is not a terminal: no keys, it runs until a signal.
    const child = spawn(process.execPath, [CLI_PATH, 'demo', '--nodes', '2'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const started = await pollUntil(
        'both nodes started',
        () => {
          const found = lines.map((l) => STARTED.exec(l)).filter((m) => m !== null);
          return found.length === 2 ? found : undefined;
        },
        { timeoutMs: 40_000, describe: () => lines.join('\n') },
      );
      expect(started.map((m) => m[1]).sort()).to.deep.equal(['node-1', 'node-2']);
      for (const [, name, address, url] of started) {
        // Without OPERATOR_LISTEN the views are on the node's own address.
        expect(url, name).to.equal(`http://${address}/`);
        const page = await fetch(url ?? '');
        expect(page.status, name).to.equal(200);
        expect(page.headers.get('content-type'), name).to.match(/^text\/html/);
        await page.body?.cancel();
      }
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).to.equal(0);
    expect(lines.at(-1)).to.match(/stopped: every node process has exited$/);
  });
});
