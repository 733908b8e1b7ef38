// `node dist/bench/scale-main.js`: runs the scale benchmark (bench/scale.ts) alone and prints its
// section. BENCH_SCALE_SIZES (default 1000,5000) peers; BENCH_SCALE_SECONDS (default 20) of window.
import { format } from 'prettier';
import { runMain } from './entry.js';
import { scaleSection } from './scale.js';

async function main(): Promise<number> {
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
  // Ctrl-C: exit, and the bench's exit handler kills the coordinator and the simulator.
  const onSignal = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const result = await scaleSection(progress);
  const markdown = await format(result.markdown, { parser: 'markdown', printWidth: 100 });
  process.stdout.write(`\n${markdown}`);
  process.stdout.write(
    result.missed.length === 0
      ? '\nall targets met\n'
      : `\n${result.missed.length} target(s) missed:\n${result.missed.map((m) => `  FAIL  ${m}`).join('\n')}\n`,
  );
  return 0;
}

runMain(main);
