// What the bench entry points share: numeric settings from the environment, and running main().

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
