// The shipped program, built from tsc's output by esbuild: one CommonJS file for the node and the
// demo (dist/knh.cjs), and the Kubernetes client in a file of its own (dist/kube-client.cjs), which
// knh.cjs requires only when it discovers peers through the Kubernetes API. One file rather than
// some 300 modules of knh and its libraries: it starts faster and holds less (docs/benchmarks.md,
// "A pod's weight on the image's Node"). CommonJS rather than an ES module: Node's ES module
// loader alone costs a process several MB more. The libraries' code is unchanged, only packaged,
// save for what the plugins below say. dist/src/ (tsc's output, a module a file) is for the tests.
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions, type Metafile, type Plugin, type PluginBuild } from 'esbuild';
import { buildRevision, gitCheckout } from './build-revision.js';
import { modelsKept, trimModelIndex, trimObjectSerializer } from './kube-models.js';
import { thirdPartyNotices } from './third-party-notices.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST = fileURLToPath(new URL('../', import.meta.url));
const at = (path: string) => join(DIST, path);
const IN_NODE_MODULES = /[\\/]node_modules[\\/]/;
/** A published file's pointer to its source map, which is not shipped. */
const SOURCE_MAP_URL = /^\/\/# sourceMappingURL=.*$/gm;

/** What each shipped file is built from. */
const BUNDLES = {
  knh: { entry: at('src/cli.js'), out: at('knh.cjs') },
  kubeClient: { entry: at('src/discovery/kube-client.js'), out: at('kube-client.cjs') },
};

/** The Kubernetes client stays out of knh.cjs: required from beside it, when first imported. */
const kubeClientApart: Plugin = {
  name: 'knh-kube-client-apart',
  setup(b) {
    b.onResolve({ filter: /[\\/]kube-client\.js$/ }, (args) =>
      IN_NODE_MODULES.test(args.importer)
        ? undefined
        : { path: './kube-client.cjs', external: true },
    );
  },
};

/**
 * Registers with a plugin a module in place of the package `name` (when imported from a file that
 * `importer` matches; from anywhere when none): `contents`, whose own requires resolve from
 * `resolveDir` (default: nowhere, for a module that requires nothing).
 */
function replaceModule(
  b: PluginBuild,
  name: string,
  contents: string,
  { importer, resolveDir }: { importer?: RegExp; resolveDir?: string } = {},
): void {
  const exactly = new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
  b.onResolve({ filter: exactly }, (args) =>
    !importer || importer.test(args.importer) ? { path: name, namespace: 'knh' } : undefined,
  );
  b.onLoad({ filter: exactly, namespace: 'knh' }, () => ({ contents, resolveDir, loader: 'js' }));
}

/**
 * `import.meta.url` of each of knh's modules, as it would be in dist/src/: the two that use it
 * resolve files from it (schemas/, and the demo's own command), and the bundle sits where both
 * layouts agree (dist/knh.cjs beside dist/src/).
 */
const moduleUrls: Plugin = {
  name: 'knh-module-urls',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const own = JSON.stringify(relative(DIST, args.path));
      return { contents: text.replaceAll('import.meta.url', `knhModuleUrl(${own})`), loader: 'js' };
    });
  },
};

/**
 * prom-client's index also loads its Pushgateway (https, tls, zlib) and cluster aggregation
 * (`cluster`), which knh never uses: knh.cjs takes the five parts it does use from their files.
 */
const PROM_CLIENT_PARTS = `
exports.Registry = require('prom-client/lib/registry');
exports.Counter = require('prom-client/lib/counter');
exports.Gauge = require('prom-client/lib/gauge');
exports.Histogram = require('prom-client/lib/histogram');
exports.collectDefaultMetrics = require('prom-client/lib/defaultMetrics');
`;
const promClientParts: Plugin = {
  name: 'knh-prom-client-parts',
  setup(b) {
    replaceModule(b, 'prom-client', PROM_CLIENT_PARTS, { resolveDir: ROOT });
  },
};

/**
 * The Kubernetes client's serializer and index of models with only the models knh reads
 * (scripts/kube-models.ts). A module that imported a model dropped would fail the build.
 */
const kubeModelsKept: Plugin = {
  name: 'knh-kube-models-kept',
  setup(b) {
    b.onLoad(
      {
        filter:
          /[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]gen[\\/]models[\\/](ObjectSerializer|all)\.js$/,
      },
      async (args) => {
        const kept = modelsKept(dirname(args.path));
        const text = await readFile(args.path, 'utf8');
        const trim = args.path.endsWith('all.js') ? trimModelIndex : trimObjectSerializer;
        return { contents: trim(text, kept).replace(SOURCE_MAP_URL, ''), loader: 'js' };
      },
    );
  },
};

/**
 * iconv-lite (body-parser's decoder) with its Unicode codecs only. knh's JSON bodies reach it only
 * in a `utf-*` charset (body-parser answers 415 to any other first), and its raw ones are never
 * decoded; the single- and double-byte code pages were a quarter of knh.cjs, source V8 keeps.
 */
const ICONV_UNICODE_CODECS = `
const merge = require('../lib/helpers/merge-exports');
for (const codecs of [require('./internal'), require('./utf32'), require('./utf16'), require('./utf7')]) {
  merge(exports, codecs);
}
`;
const iconvUnicodeOnly: Plugin = {
  name: 'knh-iconv-unicode-only',
  setup(b) {
    b.onLoad(
      { filter: /[\\/]node_modules[\\/]iconv-lite[\\/]encodings[\\/]index\.js$/ },
      (args) => ({
        contents: ICONV_UNICODE_CODECS,
        resolveDir: dirname(args.path),
        loader: 'js',
      }),
    );
  },
};

/**
 * axios loads the form-data package (and a second copy of the MIME database with it) to send
 * multipart forms, which knh never does: a FormData that says so if ever constructed.
 */
const NO_FORM_DATA = `
module.exports = class FormData {
  constructor() {
    throw new Error('knh.cjs does not bundle form-data: knh sends JSON, never multipart forms');
  }
};
`;
const noFormData: Plugin = {
  name: 'knh-no-form-data',
  setup(b) {
    replaceModule(b, 'form-data', NO_FORM_DATA, {
      importer: /[\\/]node_modules[\\/]axios[\\/]/,
    });
  },
};

const nodeFetchUrl = at('scripts/node-fetch-url.js');
const NODE_FETCH = /[\\/]node_modules[\\/]node-fetch[\\/]/;
const nodeFetchOnNode: Plugin = {
  name: 'knh-node-fetch-on-node',
  setup(b) {
    // node-fetch 2 takes Node's URL (`Url.URL || whatwgUrl.URL`) and never whatwg-url's, but its
    // require('whatwg-url') loads that package, tr46's Unicode table with it (a quarter of the
    // client's code, built at load), and Node's deprecated `punycode` (DEP0040, Node 22 on). It
    // gets the one name it reads, Node's own.
    replaceModule(b, 'whatwg-url', 'exports.URL = globalThis.URL;', { importer: NODE_FETCH });
    // node-fetch calls url.parse() for every request, deprecated on Node 24 (DEP0169): it gets a
    // `url` whose parse() uses the WHATWG parser (scripts/node-fetch-url.ts).
    b.onResolve({ filter: /^(node:)?url$/ }, (args) =>
      NODE_FETCH.test(args.importer) ? { path: nodeFetchUrl } : undefined,
    );
  },
};

// A source map leads to the JavaScript files in node_modules. Left alone, esbuild would follow the
// packages' own maps on to TypeScript sources that they do not publish.
const publishedJavaScript: Plugin = {
  name: 'knh-published-javascript',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
      if (!IN_NODE_MODULES.test(args.path)) return undefined;
      const text = await readFile(args.path, 'utf8');
      return { contents: text.replace(SOURCE_MAP_URL, ''), loader: 'js' };
    });
  },
};

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Whitespace and syntax: the file is half the size, so is the source text V8 keeps for it.
  // Names are kept, so a stack trace names knh's functions and classes; its line and column lead
  // to the code through the source map beside the file (development only, never shipped).
  minifyWhitespace: true,
  minifySyntax: true,
  // Pure ASCII: V8 keeps a script's source in one byte a character, or two for all of it once one
  // character is beyond Latin-1.
  charset: 'ascii',
  legalComments: 'none',
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
};

/** A character past Latin-1 doubles the source V8 keeps: the build stops rather than ship it. */
async function checkOneByte(file: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  const wide = /[\u{100}-\u{10ffff}]/u.exec(text);
  if (wide) {
    const near = text.slice(Math.max(0, wide.index - 40), wide.index + 10);
    throw new Error(
      `${file}: a character past Latin-1 near ${JSON.stringify(near)}: V8 would keep the whole file in two bytes a character; escape it in the source`,
    );
  }
}

/** One shipped file; what went into it. */
async function bundle(options: BuildOptions): Promise<Metafile> {
  const { metafile } = await build({ ...common, ...options });
  if (!metafile) throw new Error(`esbuild gave no metafile for ${String(options.outfile)}`);
  return metafile;
}

/** The package's version and the revision built (src/build-info.ts reads them). */
async function buildDefines(): Promise<Record<string, string>> {
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const revision = buildRevision(process.env, () => gitCheckout(ROOT));
  return {
    KNH_BUILD_VERSION: JSON.stringify(pkg.version),
    KNH_BUILD_REVISION: JSON.stringify(revision),
  };
}

async function main(): Promise<void> {
  const metafiles = [
    await bundle({
      entryPoints: [BUNDLES.knh.entry],
      outfile: BUNDLES.knh.out,
      define: await buildDefines(),
      plugins: [
        kubeClientApart,
        moduleUrls,
        promClientParts,
        iconvUnicodeOnly,
        noFormData,
        publishedJavaScript,
      ],
      banner: {
        js: "const knhModuleUrl = (p) => require('node:url').pathToFileURL(require('node:path').join(__dirname, p)).href;",
      },
    }),
    await bundle({
      entryPoints: [BUNDLES.kubeClient.entry],
      outfile: BUNDLES.kubeClient.out,
      plugins: [nodeFetchOnNode, kubeModelsKept, publishedJavaScript],
    }),
  ];
  for (const { out } of Object.values(BUNDLES)) await checkOneByte(out);
  await writeFile(at('THIRD-PARTY-NOTICES.txt'), await thirdPartyNotices(ROOT, metafiles));
}

await main();
