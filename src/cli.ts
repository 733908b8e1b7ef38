#!/usr/bin/env node
// The `knh` command: run a node from the environment (default) or the local demo; argv only.
import { BUILD, describeBuild } from './build-info.js';
import { runFromEnv } from './run-from-env.js';

const USAGE = `usage:
  knh                 run one node configured from the environment (see docs/settings.md)
  knh demo [options]  run a local mesh of 5 nodes on loopback with a built-in webhook receiver
  knh --version       the version and the git revision this build was made from
  knh --help          this text
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'run') return runFromEnv(process.env);
  if (command === 'demo') {
    const { runDemo } = await import('./demo/demo.js');
    return runDemo(rest);
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    process.stdout.write(`${describeBuild(BUILD)}\n`);
    return 0;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(`knh: unknown command "${command}"\n${USAGE}`);
  return 2;
}

// Exit explicitly once the command is done: idle keep-alive sockets must not hold the process.
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `knh: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
