// What the bench entry points share: numeric settings from the environment, running main(), and
// running one section alone.
import { format } from 'prettier';
import {
  checkBenchmarksDoc,
  writeSections,
  type Section,
  type SectionResult,
} from './benchmarks-doc.js';

/** A whole number ≥ 1 from the environment, or `fallback`; anything else stops with a message. */
export function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new Error(`${name}=${JSON.stringify(raw)}: expected a whole number of at least 1`);
  }
  return Number(raw);
}

/** Runs `main`, setting the exit code from its result; an error is printed with its stack. */
export function runMain(main: () => Promise<number>): void {
  main().then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(
        `bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exitCode = 1;
    },
  );
}

/**
 * Runs one section of the bench alone (`node dist/bench/<section>.js`): its progress on stdout,
 * timed from the start, then its markdown and the targets it missed. Ctrl-C exits, and the
 * section's own exit handler kills what it started. With `--write`, a section that names its
 * `block` also puts its markdown there in docs/benchmarks.md (the doc checked before the run).
 */
export function runSectionAlone(
  section: (progress: (text: string) => void) => Promise<SectionResult>,
  block?: Section,
): void {
  runMain(async () => {
    const write = block !== undefined && process.argv.includes('--write');
    if (write) checkBenchmarksDoc([block]);
    const began = Date.now();
    const progress = (text: string) =>
      process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
    const onSignal = (signal: NodeJS.Signals) => process.exit(signal === 'SIGINT' ? 130 : 143);
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    const { markdown, missed } = await section(progress);
    if (markdown !== null) {
      process.stdout.write(`\n${await format(markdown, { parser: 'markdown', printWidth: 100 })}`);
      if (write) await writeSections({ [block]: markdown });
    }
    process.stdout.write(
      missed.length === 0
        ? '\nall targets met\n'
        : `\n${missed.length} target(s) missed:\n${missed.map((m) => `  FAIL  ${m}`).join('\n')}\n`,
    );
    return 0;
  });
}
