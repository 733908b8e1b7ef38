// The Dockerfile, checked without a Docker engine: what it copies exists, it runs what the build
// produces and the package ships, as a non-root user, on a Node line package.json's engines admits.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import semver from 'semver';
import { imageNodeEnv } from '../../bench/image-node.js';

const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const pkg = JSON.parse(read('package.json')) as { bin: { knh: string }; engines: { node: string } };
const tsconfig = JSON.parse(read('tsconfig.json')) as {
  compilerOptions: { outDir: string; rootDir: string };
};

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Instructions in order, line continuations joined, comments dropped, numbered by FROM stage. */
function instructions(text: string): Instruction[] {
  let stage = -1;
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => {
      const [op = '', ...rest] = l.split(/\s+/);
      if (op.toUpperCase() === 'FROM') stage++;
      return { op: op.toUpperCase(), args: rest.join(' '), stage };
    });
}

const steps = instructions(read('Dockerfile'));
const finalStage = Math.max(...steps.map((s) => s.stage));
const dockerignore = read('.dockerignore')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

describe('Dockerfile', () => {
  it('is multi-stage, every stage on the same Node line, one that engines admits', () => {
    const froms = steps.filter((s) => s.op === 'FROM').map((s) => s.args);
    expect(froms.length).to.be.greaterThan(1);
    const majors = froms.map((from) => /^node:(\d+)[.-]/.exec(from)?.[1]);
    expect(new Set(majors).size, froms.join(', ')).to.equal(1);
    // Every release of the line, since the tag follows the line's newest.
    expect(semver.subset(`${majors[0]}.x`, pkg.engines.node), pkg.engines.node).to.equal(true);
  });

  it('copies from the build context only paths that exist and that .dockerignore lets through', () => {
    const copies = steps.filter((s) => s.op === 'COPY' && !s.args.includes('--from='));
    expect(copies.length).to.be.greaterThan(0);
    for (const copy of copies) {
      const sources = copy.args
        .split(/\s+/)
        .filter((a) => !a.startsWith('--'))
        .slice(0, -1);
      for (const source of sources) {
        expect(existsSync(new URL(source, root)), `${source} exists`).to.equal(true);
        expect(dockerignore, `${source} is not ignored`).to.not.include(source.replace(/\/$/, ''));
      }
    }
  });

  it('runs, as its entrypoint, the file the build produces for the knh bin', () => {
    const entry = steps.find((s) => s.op === 'ENTRYPOINT' && s.stage === finalStage);
    const argv = JSON.parse(entry?.args ?? '[]') as string[];
    expect(argv[0]).to.equal('node');
    expect(pkg.bin.knh).to.equal(`${tsconfig.compilerOptions.outDir}/knh.cjs`);
    expect(argv.at(-1)).to.equal(`/app/${pkg.bin.knh}`);
    // The final stage takes, from the build stage, the package as `npm pack` makes it (the bundles
    // and the schemas they load at run time: test/unit/package.test.ts), and nothing else.
    const workdir = steps.filter((s) => s.stage === finalStage && s.op === 'WORKDIR').at(-1);
    expect(workdir?.args).to.equal('/app');
    const copied = steps
      .filter((s) => s.stage === finalStage && s.op === 'COPY')
      .map((s) => s.args.split(/\s+/));
    const unpacked = /tar -xzf \S+ -C (\S+) --strip-components=1/.exec(
      steps
        .filter((s) => s.op === 'RUN' && s.stage < finalStage)
        .map((s) => s.args)
        .join(' '),
    )?.[1];
    expect(unpacked, 'the build stage unpacks the package it packed').to.be.a('string');
    expect(copied).to.deep.equal([['--from=build', unpacked, './']]);
  });

  it("builds with the package's build script (tsc, then the bundles), as packing runs it", () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.build).to.include('dist/scripts/bundle.js');
    expect(scripts.prepack).to.equal('npm run build');
    const runs = steps.filter((s) => s.op === 'RUN' && s.stage < finalStage).map((s) => s.args);
    const pack = runs.find((r) => /npm pack\b/.test(r));
    expect(pack, 'the build stage packs').to.be.a('string');
    expect(pack, 'with its prepack').to.not.include('--ignore-scripts');
  });

  it('takes the revision to bake in as a build argument, before it builds', () => {
    const build = steps.filter((s) => s.stage < finalStage);
    const arg = build.findIndex((s) => s.op === 'ARG' && /^KNH_REVISION(=|$)/.test(s.args));
    const pack = build.findIndex((s) => s.op === 'RUN' && /npm pack\b/.test(s.args));
    expect(arg, 'ARG KNH_REVISION in the build stage').to.be.greaterThan(-1);
    expect(arg).to.be.lessThan(pack);
  });

  it("labels the image as OCI's annotations do, its version and revision the build's", () => {
    const pkgInfo = JSON.parse(read('package.json')) as {
      name: string;
      description: string;
      license: string;
    };
    const final = steps.filter((s) => s.stage === finalStage);
    const label = final.find((s) => s.op === 'LABEL');
    const labels: Record<string, string> = {};
    for (const m of (label?.args ?? '').matchAll(/([\w.]+)="([^"]*)"/g)) labels[m[1]!] = m[2]!;
    expect(labels).to.deep.equal({
      'org.opencontainers.image.title': pkgInfo.name,
      'org.opencontainers.image.description': pkgInfo.description,
      'org.opencontainers.image.licenses': pkgInfo.license,
      'org.opencontainers.image.version': '$KNH_VERSION',
      'org.opencontainers.image.revision': '$KNH_REVISION',
    });
    // A stage sees only the build arguments it declares itself.
    const args = final.filter((s) => s.op === 'ARG').map((s) => s.args.split('=')[0]);
    expect(args).to.include.members(['KNH_VERSION', 'KNH_REVISION']);
  });

  it("stops the build when KNH_VERSION is not the package's version, as its shell runs it", () => {
    const check = steps.find(
      (s) => s.stage < finalStage && s.op === 'RUN' && s.args.includes('$KNH_VERSION'),
    );
    expect(check, 'a RUN checking KNH_VERSION in the build stage').to.not.equal(undefined);
    const dir = mkdtempSync(join(tmpdir(), 'knh-dockerfile-'));
    try {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ version: '1.2.3' }));
      const run = (version: string | undefined) =>
        spawnSync('sh', ['-c', check!.args], {
          cwd: dir,
          encoding: 'utf8',
          env: {
            PATH: process.env.PATH,
            ...(version === undefined ? {} : { KNH_VERSION: version }),
          },
        });
      expect(run(undefined).status, 'not given').to.equal(0);
      expect(run('1.2.3').status, "the package's").to.equal(0);
      const wrong = run('1.2.4');
      expect(wrong.status, 'another').to.not.equal(0);
      expect(wrong.stderr).to.include("KNH_VERSION=1.2.4 is not package.json's version");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('packs the package, and runs as a non-root user, by number', () => {
    const runs = steps.filter((s) => s.op === 'RUN' && s.stage < finalStage).map((s) => s.args);
    expect(runs.some((r) => /npm pack\b/.test(r))).to.equal(true);
    const user =
      steps.filter((s) => s.op === 'USER' && s.stage === finalStage).at(-1)?.args ?? 'root';
    const uid = user.split(':')[0] ?? '';
    expect(uid).to.match(/^\d+$/);
    expect(Number(uid)).to.be.greaterThan(0);
  });

  it("runs node with one malloc arena, and the benchmarks take the final stage's environment", () => {
    expect(imageNodeEnv()).to.deep.equal({ NODE_ENV: 'production', MALLOC_ARENA_MAX: '1' });
    const twoStages = 'FROM a AS build\nENV X=1\nRUN x\nFROM b\nENV Y=2\n# ENV Z=3\nENV W=4\n';
    expect(imageNodeEnv(twoStages)).to.deep.equal({ Y: '2', W: '4' });
    expect(() => imageNodeEnv('FROM b\nENV A=1 B=2\n')).to.throw(/ENV A=1 B=2/);
  });
});
