// `node dist/bench/mesh-settle-main.js`: runs the mesh-size benchmark (bench/mesh-settle.ts) alone
// and prints its section. BENCH_REPEAT (default 3) meshes of BENCH_MESH_SIZE (default 50) nodes;
// BENCH_MESH_STAGGER_MS, BENCH_MESH_STARTING: how they are spawned (see bench/mesh-settle.ts).
// Ctrl-C: the section's exit handler kills every node.
import { runSectionAlone } from './entry.js';
import { meshSettleSection } from './mesh-settle.js';

runSectionAlone(meshSettleSection);
