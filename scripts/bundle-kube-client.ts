// Bundles src/discovery/kube-client.ts's output (after tsc) with what it imports from
// @kubernetes/client-node, in place: one module of the classes knh uses rather than the whole
// package's 2,500 modules (see kube-client.ts). The library's code is unchanged, only packaged.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const target = fileURLToPath(new URL('../src/discovery/kube-client.js', import.meta.url));

await build({
  entryPoints: [target],
  outfile: target,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Whitespace and syntax only: its source is kept in the heap, and names stay for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
  // CommonJS dependencies inside the bundle require() Node's own modules.
  banner: {
    js: "import { createRequire as knhCreateRequire } from 'node:module'; const require = knhCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// tsc's source map described the module before bundling.
rmSync(`${target}.map`, { force: true });
