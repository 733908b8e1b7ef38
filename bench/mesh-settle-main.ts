// `node dist/bench/mesh-settle-main.js`: runs the mesh-size benchmark (bench/mesh-settle.ts) alone
// and prints its section. BENCH_REPEAT (default 3) meshes of BENCH_MESH_SIZE (default 50) nodes;
// BENCH_MESH_STAGGER_MS, BENCH_MESH_STARTING: how they are spawned (see bench/mesh-settle.ts).
import { format } from 'prettier';
import { runMain } from './entry.js';
import { meshSettleSection } from './mesh-settle.js';

async function main(): Promise<number> {
  const began = Date.now();
  const progress = (text: string) =>
    process.stdout.write(`[${((Date.now() - began) / 1000).toFixed(1).padStart(6)} s] ${text}\n`);
  // Ctrl-C: the section's own handler kills every node and exits.
  const { markdown, missed } = await meshSettleSection(progress);
  process.stdout.write(`\n${await format(markdown, { parser: 'markdown', printWidth: 100 })}`);
  process.stdout.write(
    missed.length === 0
      ? '\nall targets met\n'
      : `\n${missed.length} target(s) missed:\n${missed.map((m) => `  FAIL  ${m}`).join('\n')}\n`,
  );
  return 0;
}

runMain(main);
