// docs/benchmarks.md's blocks (bench/benchmarks-doc.ts): a run rewrites only the blocks of the
// sections it ran; notes written by hand around them, and a skipped section's block, stay as they
// are, and a missing marker stops a run before it starts.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  SECTIONS,
  checkBenchmarksDoc,
  sectionBlock,
  withSections,
  writeSections,
  type Section,
} from '../../bench/benchmarks-doc.js';

/** A block as a run writes it: its markers, blank lines, the markdown. */
const block = (section: Section, markdown: string) =>
  `${sectionBlock(section).start}\n\n${markdown}\n${sectionBlock(section).end}`;

// Hand-written parts as Prettier would not leave them (a trailing space, a table not aligned), so
// that a run reformatting the whole doc rather than writing its blocks would show.
const NOTES = 'Notes by hand, 2026-11-25:  \n\n| a | b |\n|-|-|\n| 1 | 2 |\n';
const oldBlock = (section: Section) =>
  block(section, `## ${section}\n\nOld figures of ${section}, |x|y| not aligned.\n`);

/** A doc of every section's block, each followed by notes, then the given edit. */
function sampleDoc(edit: (doc: string) => string = (d) => d): string {
  return edit(
    `# Benchmarks\n\n${SECTIONS.map((s) => `${oldBlock(s)}\n\n${NOTES}`).join('\n')}\nThe end, no newline`,
  );
}

describe('docs/benchmarks.md blocks', () => {
  it('rewrites only the blocks of the sections given, each formatted, and every other byte as it was', async () => {
    const doc = sampleDoc();
    const out = await withSections(doc, {
      scale: '## Scale\n\n|a|b|\n|-|-|\n|1|2|\n',
      'mesh-settle': '## Mesh\n\nNew figures.',
    });
    const expected = doc
      .replace(
        oldBlock('scale'),
        block('scale', '## Scale\n\n| a   | b   |\n| --- | --- |\n| 1   | 2   |\n'),
      )
      .replace(oldBlock('mesh-settle'), block('mesh-settle', '## Mesh\n\nNew figures.\n'));
    expect(expected).to.not.equal(doc);
    expect(out).to.equal(expected);
  });

  it('keeps the block of a section skipped (null markdown) as it was', async () => {
    const doc = sampleDoc();
    const out = await withSections(doc, { hostile: null, 'peer-client': '## Peer client\n' });
    expect(out).to.include(oldBlock('hostile'));
    expect(out).to.not.include(oldBlock('peer-client'));
    expect(out.replace(block('peer-client', '## Peer client\n'), oldBlock('peer-client'))).to.equal(
      doc,
    );
  });

  it('rewrites nothing when a marker is missing, and names its block', async () => {
    const doc = sampleDoc((d) => d.replace(sectionBlock('peer-client').end, ''));
    let failure: unknown = null;
    await withSections(doc, { hosts: '## Hosts\n', 'peer-client': '## Peer client\n' }).catch(
      (err: unknown) => (failure = err),
    );
    expect(String(failure)).to.include(
      'block bench:peer-client: no marker <!-- bench:peer-client:end -->',
    );
  });

  it('takes a doubled marker for a fault too', async () => {
    const twice = sectionBlock('scale').start;
    const doc = sampleDoc((d) => `${d}\n${twice}\n`);
    let failure: unknown = null;
    await withSections(doc, { scale: '## Scale\n' }).catch((err: unknown) => (failure = err));
    expect(String(failure)).to.include('block bench:scale: marker');
  });

  describe('in a file', () => {
    let dir = '';
    let path = '';
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'knh-benchmarks-doc-'));
      path = join(dir, 'benchmarks.md');
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('checks the markers before a run, naming the file and the block', () => {
      writeFileSync(
        path,
        sampleDoc((d) => d.replace(sectionBlock('hostile').start, '')),
      );
      expect(() => checkBenchmarksDoc(['scale'], path)).to.not.throw();
      expect(() => checkBenchmarksDoc(SECTIONS, path)).to.throw(
        `${path}: block bench:hostile: no marker <!-- bench:hostile:start`,
      );
    });

    it('writes the blocks given into the file', async () => {
      writeFileSync(path, sampleDoc());
      await writeSections({ loopback: '## Loopback\n\nNew.\n', hosts: null }, path);
      expect(readFileSync(path, 'utf8')).to.equal(
        sampleDoc((d) =>
          d.replace(oldBlock('loopback'), block('loopback', '## Loopback\n\nNew.\n')),
        ),
      );
    });
  });
});
