// Whether dist/ was built from the sources as they are now, so `npm start` builds only when needed.
//
// Plain JavaScript, run by node as it is: it must work before anything is built. The rule: dist/
// is fresh when the last build finished (postbuild) and the digest of the build's inputs taken
// when that build began (prebuild) is the digest of the inputs now. Contents, not times: a file
// edited while the build ran, or restored with an old mtime (git stash, cp -p, an archive), still
// rebuilds; a file only touched does not.
//
//   node scripts/build-freshness.mjs begin    prebuild: remove dist/, note the inputs' digest
//   node scripts/build-freshness.mjs end      postbuild: the build succeeded with those inputs
//   node scripts/build-freshness.mjs ensure   `npm run build` unless dist/ is fresh
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative, sep } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

/** What the shipped program (dist/knh.cjs) is built from; package-lock.json stands for node_modules. */
export const BUILD_INPUTS = [
  'src',
  'schemas',
  'scripts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
];

/** What `npm start` runs: without it there is nothing to start. */
export const BUILT_PROGRAM = 'dist/knh.cjs';
const BEGUN = 'dist/.build-inputs.begun';
const BUILT = 'dist/.build-inputs';

/** The input's files (itself, if it is a file), as paths from root with '/'. */
function filesOf(root, path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  const entries = readdirSync(full, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split(sep).join('/'));
}

/** One digest of every input file's path and content: any change, addition or removal moves it. */
export function inputsDigest(root) {
  const hash = createHash('sha256');
  const files = BUILD_INPUTS.flatMap((path) => filesOf(root, path)).sort();
  for (const file of files) {
    const content = createHash('sha256')
      .update(readFileSync(join(root, file)))
      .digest('hex');
    hash.update(`${file}\0${content}\n`);
  }
  return hash.digest('hex');
}

/** prebuild: a full build starts from an empty dist/, and notes what it is built from. */
export function beginBuild(root) {
  rmSync(join(root, 'dist'), { recursive: true, force: true });
  mkdirSync(join(root, 'dist'));
  writeFileSync(join(root, BEGUN), `${inputsDigest(root)}\n`);
}

/** postbuild (npm runs it only after a build that succeeded): its inputs are what dist/ holds. */
export function endBuild(root) {
  renameSync(join(root, BEGUN), join(root, BUILT));
}

/** Why dist/ must be built again, or null when it is fresh. */
export function staleness(root) {
  if (!existsSync(join(root, BUILT_PROGRAM))) return `${BUILT_PROGRAM} is missing`;
  if (!existsSync(join(root, BUILT))) return 'dist/ has no record of what it was built from';
  const built = readFileSync(join(root, BUILT), 'utf8').trim();
  if (built !== inputsDigest(root)) {
    return `${BUILD_INPUTS.slice(0, -1).join(', ')} or ${BUILD_INPUTS.at(-1)} changed since dist/ was built`;
  }
  return null;
}

function npmRunBuild(root) {
  // Under npm, npm_execpath is npm's own script: the same npm, whatever PATH says.
  const npm = process.env.npm_execpath;
  const [command, args] = npm
    ? [process.execPath, [npm, 'run', 'build']]
    : ['npm', ['run', 'build']];
  const run = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (run.error) throw run.error;
  return run.status ?? 1;
}

function main(command) {
  const root = process.cwd(); // npm runs scripts from the package's folder
  switch (command) {
    case 'begin':
      beginBuild(root);
      return 0;
    case 'end':
      endBuild(root);
      return 0;
    case 'ensure': {
      const why = staleness(root);
      if (why === null) return 0;
      process.stderr.write(`building first (npm run build): ${why}\n`);
      return npmRunBuild(root);
    }
    default:
      process.stderr.write(
        `build-freshness: expected begin, end or ensure, not ${JSON.stringify(command ?? '')}\n`,
      );
      return 2;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = main(process.argv[2]);
}
