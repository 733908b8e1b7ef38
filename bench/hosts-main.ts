// `node dist/bench/hosts-main.js` (root): runs the multi-host benchmark and prints its table.
// BENCH_REPEAT (default 5) runs of each timing; BENCH_LOSS_SECONDS (default 300) of packet loss.
// --write: its block of docs/benchmarks.md is rewritten with the run's figures.
// Ctrl-C: the harness's exit handler kills the nodes and deletes the namespaces.
import { positiveInt, runSectionAlone } from './entry.js';
import { rowPassed, runHostsBench } from './hosts.js';

runSectionAlone(async (progress) => {
  const result = await runHostsBench({
    repeat: positiveInt('BENCH_REPEAT', 5),
    lossSeconds: positiveInt('BENCH_LOSS_SECONDS', 300),
    progress,
  });
  return {
    markdown: result.markdown,
    missed: result.rows.filter((r) => !rowPassed(r)).map((r) => r.name),
  };
}, 'hosts');
