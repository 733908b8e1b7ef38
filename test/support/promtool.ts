// The real `promtool` (Debian's `prometheus` package) for integration tests: required, or skipped
// with KNH_SKIP_PROMTOOL=1, and run with its input on stdin or in files.
import { spawn, spawnSync } from 'node:child_process';
import type { Context } from 'mocha';

const SKIP_ENV = 'KNH_SKIP_PROMTOOL';

/** Fails the test when promtool is missing, unless KNH_SKIP_PROMTOOL=1 skips it. */
export function requirePromtool(ctx: Context): void {
  const found = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  if (!found.error) return;
  if (process.env[SKIP_ENV] === '1') {
    console.log(`    skipped: ${SKIP_ENV}=1 and promtool is not installed`);
    ctx.skip();
  }
  throw new Error(
    `promtool not found (${found.error.message}): install Debian's \`prometheus\` package ` +
      `(apt-get install prometheus; CI installs it), or set ${SKIP_ENV}=1 to skip this test`,
  );
}

/** `promtool <args>` with `stdin`: its exit code and everything it printed. */
export function promtool(
  args: string[],
  stdin = '',
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(stdin);
  });
}
