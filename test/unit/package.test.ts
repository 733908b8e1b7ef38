// The npm package (what `npm pack` would publish, and what the image ships): exactly the built
// program, its schemas, README and LICENSE; it runs on its dependencies alone; engines is honest.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import semver from 'semver';

const ROOT = new URL('../../../', import.meta.url);
const rootPath = fileURLToPath(ROOT);
const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as {
  license: string;
  bin: Record<string, string>;
  engines: { node: string };
  dependencies?: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Files under `dir` (relative to the repository), recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(new URL(dir, ROOT), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(rootPath, `${e.parentPath}/${e.name}`));
}

/** npm's own list of what it would pack; --ignore-scripts: nothing is built here (test:unit built). */
function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: rootPath,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(out) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
}

/**
 * Module specifiers a built file imports: static and dynamic imports, and require() calls. Only quoted words that can be specifiers count, so that text like
 * `' from ', el(` in the status page's code is not taken for one.
 */
function specifiers(code: string): string[] {
  const found = code.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+|require\s*\(\s*)["']([@\w.:/-]+)["']/gm,
  );
  return [...found].map((m) => m[1] ?? '');
}

/**
 * Packages that bundled libraries require() inside a try block and do without: node-fetch's
 * `encoding`, ws's native helpers. esbuild leaves such a require() to run time.
 */
const OPTIONAL = ['encoding', 'bufferutil', 'utf-8-validate'];

/** The package a bare specifier names: `@scope/name` or `name`. */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** `name@version` of each package a shipped bundle holds code of, as its source map lists it. */
function bundledPackages(): Set<string> {
  const found = new Set<string>();
  for (const map of ['dist/knh.cjs.map', 'dist/kube-client.cjs.map']) {
    const { sources } = JSON.parse(readFileSync(new URL(map, ROOT), 'utf8')) as {
      sources: string[];
    };
    for (const source of sources) {
      const at = source.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const [first = '', second = ''] = source.slice(at + 'node_modules/'.length).split('/');
      const dir = `${source.slice(0, at)}node_modules/${first.startsWith('@') ? `${first}/${second}` : first}`;
      const pkg = JSON.parse(
        readFileSync(new URL(`${dir}/package.json`, new URL('dist/', ROOT)), 'utf8'),
      ) as { name: string; version: string };
      found.add(`${pkg.name}@${pkg.version}`);
    }
  }
  return found;
}

/** THIRD-PARTY-NOTICES.txt's sections: the package (`name@version`) each names, and its text. */
function noticeSections(): { pkg: string; body: string }[] {
  const text = readFileSync(new URL('dist/THIRD-PARTY-NOTICES.txt', ROOT), 'utf8');
  return text
    .split(`\n${'-'.repeat(78)}\n\n`)
    .slice(1)
    .map((section) => {
      const [heading = '', ...rest] = section.split('\n');
      const pkg = /^(\S+@[^@\s]+) \(/.exec(heading)?.[1] ?? heading;
      return { pkg, body: rest.join('\n') };
    });
}

describe('the npm package', function () {
  this.timeout(30_000);
  let packed: string[] = [];
  before(() => (packed = packedFiles()));

  it('holds exactly the bundles (no source maps), their notices, the schemas, README, LICENSE and package.json', () => {
    const program = ['dist/knh.cjs', 'dist/kube-client.cjs', 'dist/THIRD-PARTY-NOTICES.txt'];
    const schemas = filesUnder('schemas').filter((f) => f.endsWith('.schema.json'));
    expect(schemas.length).to.be.greaterThan(0);
    const expected = ['package.json', 'README.md', 'LICENSE', ...program, ...schemas];
    expect([...packed].sort()).to.deep.equal(expected.sort());
  });

  it('ships the file its `knh` command runs', () => {
    expect(packed).to.include(pkg.bin.knh);
  });

  it('imports at run time only Node built-ins and its own bundles: every library is bundled', () => {
    expect(pkg.dependencies ?? {}).to.deep.equal({});
    for (const library of ['express', 'axios', 'ajv', 'pino', 'prom-client']) {
      expect(pkg.devDependencies).to.have.property(library);
    }
    const imported = new Set<string>();
    for (const file of packed.filter((f) => f.endsWith('.js'))) {
      const code = readFileSync(new URL(file, ROOT), 'utf8');
      for (const spec of specifiers(code)) {
        if (spec.startsWith('.') || isBuiltin(spec) || OPTIONAL.includes(spec)) continue;
        imported.add(packageOf(spec));
      }
    }
    expect([...imported]).to.deep.equal([]);
  });

  it('gives the licence text of every package the bundles hold (their source maps list them), and of no other', () => {
    const bundled = bundledPackages();
    expect(bundled.size, 'packages in the source maps').to.be.greaterThan(50);
    const sections = noticeSections();
    expect(sections.map((s) => s.pkg).sort()).to.deep.equal([...bundled].sort());
    for (const { pkg: name, body } of sections) {
      expect(body, `${name}'s licence text`).to.match(/copyright|permission|licen[sc]e/i);
      expect(body.length, `${name}'s licence text`).to.be.greaterThan(100);
    }
  });

  it('lists every bundled package in `npm sbom` (CycloneDX) of the repository', () => {
    const sbom = JSON.parse(
      execFileSync('npm', ['sbom', '--sbom-format', 'cyclonedx'], {
        cwd: rootPath,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as { components: { name: string; group?: string; version: string }[] };
    const listed = new Set(
      sbom.components.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`),
    );
    const missing = noticeSections()
      .map((s) => s.pkg)
      .filter((p) => !listed.has(p));
    expect(missing).to.deep.equal([]);
  });

  it('names the licence of every library it bundles', () => {
    const notices = readFileSync(new URL('dist/THIRD-PARTY-NOTICES.txt', ROOT), 'utf8');
    for (const library of [
      'express',
      'axios',
      'ajv',
      'pino',
      'prom-client',
      '@kubernetes/client-node',
    ]) {
      const version = (
        JSON.parse(readFileSync(new URL(`node_modules/${library}/package.json`, ROOT), 'utf8')) as {
          version: string;
        }
      ).version;
      expect(notices).to.include(`${library}@${version} (`);
    }
    expect(notices).to.include('Permission is hereby granted, free of charge');
  });

  it(`admits in engines the Node these tests run on (${process.version})`, () => {
    expect(semver.satisfies(process.version, pkg.engines.node), pkg.engines.node).to.equal(true);
  });

  it('is MIT-licensed, with the licence text beside it', () => {
    expect(pkg.license).to.equal('MIT');
    const text = readFileSync(new URL('LICENSE', ROOT), 'utf8');
    expect(text.split('\n')[0]).to.equal('MIT License');
    expect(text).to.match(/^Copyright \(c\) \d{4} The knh authors$/m);
    expect(text).to.include('THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND');
  });
});
