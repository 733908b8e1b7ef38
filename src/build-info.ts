// Which knh this is: the package's version and the git revision it was built from. The bundle step
// (scripts/bundle.ts) bakes both into dist/knh.cjs; tsc's output alone (dist/src/, what the tests
// import) reads the version from package.json and knows no revision.
import { readFileSync } from 'node:fs';

export interface BuildInfo {
  /** The package's semantic version. */
  version: string;
  /** The short git hash, `-dirty` when the tree had changes; `unknown` when the build had none. */
  revision: string;
}

// Replaced by their values in the bundle (esbuild's `define`); undeclared in tsc's output.
declare const KNH_BUILD_VERSION: string | undefined;
declare const KNH_BUILD_REVISION: string | undefined;

function unbundled(): BuildInfo {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return { version: pkg.version, revision: 'unknown' };
}

/** This program's build. */
export const BUILD: BuildInfo =
  typeof KNH_BUILD_VERSION === 'string' && typeof KNH_BUILD_REVISION === 'string'
    ? { version: KNH_BUILD_VERSION, revision: KNH_BUILD_REVISION }
    : unbundled();

/** The User-Agent of every request knh sends: webhooks, peers, the sanity check. */
export const userAgentOf = (build: BuildInfo): string =>
  `knh/${build.version} (revision ${build.revision})`;

/** `knh --version`'s line, and the start-up log's words. */
export const describeBuild = (build: BuildInfo): string =>
  `knh ${build.version} (revision ${build.revision})`;
