// `npm start` builds only when dist/ is not what the sources make: the rule of
// scripts/build-freshness.mjs, on real files in a folder of their own.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect } from 'chai';
import type * as Freshness from '../../scripts/build-freshness.mjs';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// The script is run by node as it is (tsc does not copy it to dist/): imported from the source.
const { beginBuild, endBuild, staleness } = (await import(
  pathToFileURL(join(ROOT, 'scripts/build-freshness.mjs')).href
)) as typeof Freshness;

describe('build freshness (npm start)', () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  /** What `npm run build` does: begin (prebuild), the build's output, end (postbuild). */
  const build = (during: () => void = () => {}) => {
    beginBuild(root);
    during();
    write('dist/knh.cjs', 'bundle');
    endBuild(root);
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'knh-freshness-'));
    write('src/cli.ts', 'cli');
    write('src/demo/demo.ts', 'demo');
    write('schemas/peer.schema.json', '{}');
    write('scripts/bundle.ts', 'bundle');
    write('package.json', '{}');
    write('package-lock.json', '{}');
    write('tsconfig.json', '{}');
    write('test/unit/a.test.ts', 'test');
    write('docs/a.md', 'doc');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds a fresh clone (no dist/)', () => {
    expect(staleness(root)).to.equal('dist/knh.cjs is missing');
  });

  it('starts without building when nothing changed since the build', () => {
    build();
    expect(staleness(root)).to.equal(null);
  });

  for (const [what, change] of [
    ['a source file changed', () => write('src/demo/demo.ts', 'demo, changed')],
    ['a source file added', () => write('src/demo/new.ts', 'new')],
    ['a source file removed', () => rmSync(join(root, 'src/demo/demo.ts'))],
    ['a source file renamed', () => renameSync(join(root, 'src/cli.ts'), join(root, 'src/x.ts'))],
    ['a schema changed', () => write('schemas/peer.schema.json', '{"type":"object"}')],
    ['a build script changed', () => write('scripts/bundle.ts', 'bundle, changed')],
    ['the lockfile changed', () => write('package-lock.json', '{"v":2}')],
    ['tsconfig.json changed', () => write('tsconfig.json', '{"strict":true}')],
  ] as const) {
    it(`builds again when ${what}`, () => {
      build();
      change();
      expect(staleness(root)).to.be.a('string');
    });
  }

  it('builds again when a changed file carries an old mtime (git stash, cp -p, an archive)', () => {
    build();
    write('src/cli.ts', 'cli, as restored by git stash');
    utimesSync(join(root, 'src/cli.ts'), new Date(2000, 0, 1), new Date(2000, 0, 1));
    expect(staleness(root)).to.be.a('string');
  });

  it('builds again when a file changed while the build ran', () => {
    build(() => write('src/cli.ts', 'cli, edited during the build'));
    expect(staleness(root)).to.be.a('string');
  });

  it('builds again after a build that failed (begun, never ended)', () => {
    build();
    beginBuild(root);
    write('dist/knh.cjs', 'half a bundle');
    expect(staleness(root)).to.equal('dist/ has no record of what it was built from');
  });

  it('does not build for a file only touched, or for tests and docs', () => {
    build();
    utimesSync(join(root, 'src/cli.ts'), new Date(), new Date(Date.now() + 60_000));
    write('test/unit/a.test.ts', 'test, changed');
    write('docs/a.md', 'doc, changed');
    expect(staleness(root)).to.equal(null);
  });

  it('starts a full build from an empty dist/', () => {
    build();
    write('dist/leftover.js', 'old');
    beginBuild(root);
    write('dist/knh.cjs', 'bundle');
    endBuild(root);
    expect(existsSync(join(root, 'dist/leftover.js'))).to.equal(false);
    expect(staleness(root)).to.equal(null);
  });
});
