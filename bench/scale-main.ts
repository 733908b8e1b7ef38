// `node dist/bench/scale-main.js`: runs the scale benchmark (bench/scale.ts) alone and prints its
// section (with `--write`, into its block of docs/benchmarks.md too). BENCH_SCALE_SIZES (default
// 1000,5000) peers; BENCH_SCALE_SECONDS (default 20) of window.
import { runSectionAlone } from './entry.js';
import { scaleSection } from './scale.js';

runSectionAlone(scaleSection, 'scale');
