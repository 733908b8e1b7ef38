// Bundles src/discovery/kube-client.ts's output (after tsc) with what it imports from
// @kubernetes/client-node, in place: one module of the classes knh uses rather than the whole
// package's 2,500 modules (see kube-client.ts). The library's code is unchanged, only packaged,
// save for two Node built-ins that the bundle replaces (below) because Node deprecates them at run
// time for code outside node_modules, as the bundle is.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const target = fileURLToPath(new URL('../src/discovery/kube-client.js', import.meta.url));
const nodeFetchUrl = fileURLToPath(new URL('./node-fetch-url.js', import.meta.url));
const IN_NODE_MODULES = /[\\/]node_modules[\\/]/;

const deprecatedBuiltins: Plugin = {
  name: 'knh-deprecated-builtins',
  setup(b) {
    // whatwg-url and tr46 (under node-fetch) require('punycode'): Node's own is deprecated from
    // Node 22 on (DEP0040), and the userland package of the same code is its named replacement.
    b.onResolve({ filter: /^punycode$/ }, (args) =>
      b.resolve('punycode/', { kind: args.kind, resolveDir: args.resolveDir }),
    );
    // node-fetch calls url.parse() for every request, deprecated on Node 24 (DEP0169): it gets a
    // `url` whose parse() uses the WHATWG parser (scripts/node-fetch-url.ts).
    b.onResolve({ filter: /^(node:)?url$/ }, (args) =>
      /[\\/]node_modules[\\/]node-fetch[\\/]/.test(args.importer)
        ? { path: nodeFetchUrl }
        : undefined,
    );
  },
};

// The bundle's source map leads to the JavaScript files in node_modules. Left alone, esbuild would
// follow the packages' own maps on to TypeScript sources that they do not publish.
const publishedJavaScript: Plugin = {
  name: 'knh-published-javascript',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
      if (!IN_NODE_MODULES.test(args.path)) return undefined;
      const text = await readFile(args.path, 'utf8');
      return { contents: text.replace(/^\/\/# sourceMappingURL=.*$/gm, ''), loader: 'js' };
    });
  },
};

await build({
  entryPoints: [target],
  outfile: target,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [deprecatedBuiltins, publishedJavaScript],
  // Not minified: a stack trace's line and column point at readable code, under a comment naming
  // the package file it came from, with no source map needed where knh runs.
  minify: false,
  // For development only, like tsc's maps (package.json's `files` ships neither): run with
  // --enable-source-maps, Node names the file in node_modules and its line. Without the sources
  // embedded, since they are right there.
  sourcemap: 'linked',
  sourcesContent: false,
  // CommonJS dependencies inside the bundle require() Node's own modules.
  banner: {
    js: "import { createRequire as knhCreateRequire } from 'node:module'; const require = knhCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
