// The README and docs/ stay true of the code: generated parts match the declaration they come
// from, every link leads somewhere, and every command they show exists.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { expect } from 'chai';
import { GENERATED_DOCS } from '../../src/config/settings-table.js';
import { parseDemoArgs } from '../../src/demo/demo-options.js';
import { blockContent } from '../../scripts/doc-blocks.js';
import {
  SECTIONS,
  checkBenchmarksDoc,
  sectionBlock,
  withSections,
} from '../../bench/benchmarks-doc.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { anchorOf } from '../support/markdown-anchors.js';
import { RESOLVED_BY } from '../../src/wire/webhooks.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

/** The headings of a markdown text, outside fenced code blocks. */
function anchorsIn(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (heading) anchors.add(anchorOf(heading[1] ?? ''));
  }
  return anchors;
}

/** Markdown links outside fenced code blocks: [text](target). */
function linksIn(text: string): string[] {
  const links: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced) continue;
    for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) links.push(m[1] ?? '');
  }
  return links;
}

describe('README and docs', () => {
  for (const { file, block } of GENERATED_DOCS) {
    it(`${file} has its generated part as the declaration renders it (run \`npm run docs\` to update)`, () => {
      expect(blockContent(read(file), block)).to.equal(block.render());
    });
  }

  it("docs/runbooks.md has a section for each kind of incident, under its name, as RUNBOOK_URL's {kind} links it", () => {
    const kinds = Object.keys(RESOLVED_BY);
    expect(kinds.length).to.be.above(5);
    const text = read('docs/runbooks.md');
    const sections = [...text.matchAll(/^## (.*)$/gm)].map((m) => m[1]!);
    const anchors = anchorsIn(text);
    for (const kind of kinds) {
      expect(sections, `a section "## ${kind}"`).to.include(kind);
      // The anchor is the kind itself: `runbooks.md#{kind}` lands on it.
      expect(anchors.has(kind), `#${kind}`).to.equal(true);
    }
    // Every other section is the shared one before them: none for a kind knh no longer sends.
    expect(sections.filter((s) => !kinds.includes(s))).to.deep.equal([
      'Before anything: what knh sees',
    ]);
  });

  it('docs/benchmarks.md has the markers of every section of the bench, once each', () => {
    expect(() => checkBenchmarksDoc()).to.not.throw();
  });

  it("docs/benchmarks.md's blocks are laid out as `npm run bench` writes them", async () => {
    const doc = read('docs/benchmarks.md');
    const own = Object.fromEntries(
      SECTIONS.map((s) => [s, blockContent(doc, sectionBlock(s)).trim()]),
    );
    expect(await withSections(doc, own)).to.equal(doc);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of DOCS) {
      for (const link of linksIn(read(file))) {
        if (/^[a-z]+:/.test(link)) continue; // https:, mailto:
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : normalize(join(dirname(file), path));
        if (!existsSync(join(ROOT, target))) {
          broken.push(`${file}: ${link} (no ${target})`);
          continue;
        }
        if (
          anchor !== undefined &&
          target.endsWith('.md') &&
          !anchorsIn(read(target)).has(anchor)
        ) {
          broken.push(`${file}: ${link} (no heading #${anchor} in ${target})`);
        }
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it('names only source files that exist', () => {
    const missing: string[] = [];
    for (const file of DOCS) {
      for (const m of read(file).matchAll(/\b((?:src|test|bench|scripts)\/[\w./-]+\.ts)\b/g)) {
        if (!existsSync(join(ROOT, m[1] ?? ''))) missing.push(`${file}: ${m[1]}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it('shows only npm commands that package.json defines, and demo options that exist', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> })
      .scripts;
    const missing: string[] = [];
    for (const file of DOCS) {
      const text = read(file);
      for (const m of text.matchAll(
        /`[^`\n]*?\bnpm (?:run )?([a-z][\w:-]*)([^`\n]*)`|^npm (?:run )?([a-z][\w:-]*)(.*)$/gm,
      )) {
        const name = m[1] ?? m[3] ?? '';
        const rest = m[2] ?? m[4] ?? '';
        if (['ci', 'install', 'pack', 'publish', 'sbom', 'version'].includes(name)) continue; // npm's own commands
        if (!(name in scripts)) missing.push(`${file}: npm ${name}`);
        const demoArgs = name === 'start' ? /--\s+(--[\w-]+)/.exec(rest) : null;
        if (demoArgs?.[1] && 'error' in parseDemoArgs([demoArgs[1]])) {
          missing.push(`${file}: npm start -- ${demoArgs[1]}`);
        }
      }
    }
    expect(missing).to.deep.equal([]);
  });

  it("docs/webhooks.md's example payloads are valid, against knh's schemas and KNH's", () => {
    const schemas = loadSchemas();
    const examples = [...read('docs/webhooks.md').matchAll(/```json\n([\s\S]*?)```/g)].map(
      (m) => JSON.parse(m[1] ?? '') as { event?: string },
    );
    expect(examples.map((e) => e.event)).to.include.members(['peer_dead', 'peer_degraded']);
    for (const e of examples) {
      const status = e.event === 'cluster_status';
      expect(schemas.check(status ? 'cluster-status' : 'peer-status', e), e.event).to.deep.equal({
        ok: true,
      });
      expect(referenceErrors(status ? 'knh-cluster-status' : 'knh-peer-status', e), e.event).to.be
        .empty;
    }
  });

  it('keeps the README a front door: the two commands, at most 250 lines', () => {
    const readme = read('README.md');
    expect(readme).to.include('npm ci && npm start');
    expect(readme).to.include('npm test');
    expect(readme.split('\n').length).to.be.at.most(250);
  });
});
