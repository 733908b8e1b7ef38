// `node dist/bench/hosts-main.js` (root): runs the multi-host benchmark and prints its table.
// BENCH_REPEAT (default 5) runs of each timing; BENCH_LOSS_SECONDS (default 300) of packet loss.
import { format } from 'prettier';
import { positiveInt, runMain } from './entry.js';
import { rowPassed, runHostsBench } from './hosts.js';

async function main(): Promise<number> {
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
  // Ctrl-C: exit, and the harness's exit handler kills the nodes and deletes the namespaces.
  const onSignal = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const result = await runHostsBench({
    repeat: positiveInt('BENCH_REPEAT', 5),
    lossSeconds: positiveInt('BENCH_LOSS_SECONDS', 300),
    progress,
  });
  const markdown = await format(result.markdown, { parser: 'markdown', printWidth: 100 });
  process.stdout.write(`\n${markdown}`);
  const missed = result.rows.filter((r) => !rowPassed(r));
  process.stdout.write(
    missed.length === 0
      ? '\nall targets met\n'
      : `\n${missed.length} target(s) missed:\n${missed.map((r) => `  FAIL  ${r.name}`).join('\n')}\n`,
  );
  return 0;
}

runMain(main);
