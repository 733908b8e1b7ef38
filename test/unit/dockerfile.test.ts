// The Dockerfile, checked without a Docker engine: what it copies exists, it runs what the build
// produces, as a non-root user, on the Node major version package.json's engines asks for.
import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'chai';

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
  it('is multi-stage on the Node major version that engines requires', () => {
    const froms = steps.filter((s) => s.op === 'FROM').map((s) => s.args);
    expect(froms.length).to.be.greaterThan(1);
    const major = /(\d+)/.exec(pkg.engines.node)?.[1];
    for (const from of froms) expect(from).to.match(new RegExp(`^node:${major}[.-]`));
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
    const built = `${tsconfig.compilerOptions.outDir}/src/cli.js`;
    expect(tsconfig.compilerOptions.rootDir).to.equal('.');
    expect(pkg.bin.knh).to.equal(built);
    expect(argv[1]).to.equal(`/app/${built}`);
    // The final stage takes the built code and the schemas it loads at run time from the build stage.
    const copied = steps
      .filter((s) => s.stage === finalStage && s.op === 'COPY')
      .map((s) => s.args);
    expect(copied.some((c) => c.includes('--from=build') && c.includes('/app/dist/src'))).to.equal(
      true,
    );
    expect(copied.some((c) => c.includes('/app/schemas'))).to.equal(true);
    expect(copied.some((c) => c.includes('node_modules'))).to.equal(true);
  });

  it("builds with the package's build script (tsc, then the Kubernetes client bundled)", () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> })
      .scripts;
    expect(scripts.build).to.include('bundle-kube-client');
    const runs = steps.filter((s) => s.op === 'RUN' && s.stage < finalStage).map((s) => s.args);
    expect(runs.some((r) => /(^|&&\s*)npm run build(\s|$)/.test(r))).to.equal(true);
  });

  it('prunes dev dependencies and runs as a non-root user, by number', () => {
    expect(steps.some((s) => s.op === 'RUN' && /npm prune --omit=dev/.test(s.args))).to.equal(true);
    const user =
      steps.filter((s) => s.op === 'USER' && s.stage === finalStage).at(-1)?.args ?? 'root';
    const uid = user.split(':')[0] ?? '';
    expect(uid).to.match(/^\d+$/);
    expect(Number(uid)).to.be.greaterThan(0);
  });
});
