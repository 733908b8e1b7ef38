// Measured figures live in docs/benchmarks.md's generated blocks: a doc that quotes one links it
// to its section, and the figure must still be there, so a bench run that changes it fails here
// until the quote is brought up to date (docs/development.md, "Measured figures").
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { blockContent } from '../../scripts/doc-blocks.js';
import { SECTIONS, sectionBlock } from '../../bench/benchmarks-doc.js';
import {
  markedFigures,
  staleFigure,
  unmarkedFigures,
  type BenchBlock,
} from '../support/measured-figures.js';
import { anchorOf } from '../support/markdown-anchors.js';

const ROOT = new URL('../../../', import.meta.url).pathname;
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const QUOTING = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md') && f !== 'benchmarks.md')
    .map((f) => `docs/${f}`),
];

function blockOf(text: string): BenchBlock {
  const headings = [...text.matchAll(/^#{1,6} (.*)$/gm)].map((m) => anchorOf(m[1] ?? ''));
  return { text, anchors: new Set(headings) };
}

const SCALE: BenchBlock = blockOf(
  '## Scale: one coordinator\n\n| Coordinator RSS | ≤ 150 MB | **FAIL**: 186 MB |\n| Rounds | — | 0.69 s (1.11 s) |\n',
);
const HOSTS: BenchBlock = blockOf('## Hosts\n\n| Crashed peer → peer_dead | 1.21 s |\n');

describe('measured figures outside docs/benchmarks.md', () => {
  it('takes a figure linked to benchmarks.md as current while its section quotes it', () => {
    const [marked] = markedFigures(
      'docs/x.md',
      'The coordinator took [186 MB](benchmarks.md#scale-one-coordinator) at most.',
    );
    expect(marked).to.deep.equal({
      file: 'docs/x.md',
      text: '186 MB',
      anchor: 'scale-one-coordinator',
    });
    expect(staleFigure(marked!, [SCALE, HOSTS])).to.equal(null);
  });

  it('names a figure its section no longer quotes, even when another section does', () => {
    const [stale] = markedFigures(
      'docs/x.md',
      'A crash is seen in [1.21 s](benchmarks.md#scale-one-coordinator).',
    );
    expect(staleFigure(stale!, [SCALE, HOSTS])).to.equal(
      'docs/x.md: [1.21 s]: 1.21 s not in #scale-one-coordinator',
    );
    const [old] = markedFigures(
      'docs/x.md',
      'It took [144 MB](benchmarks.md#scale-one-coordinator).',
    );
    expect(staleFigure(old!, [SCALE, HOSTS])).to.include('144 MB not in');
  });

  it('matches the number and its unit whole: not a part of a larger number, not another unit', () => {
    const [part] = markedFigures(
      'README.md',
      'Rounds of [0.6 s](docs/benchmarks.md#scale-one-coordinator).',
    );
    expect(staleFigure(part!, [SCALE])).to.include('0.6 s not in');
    const [unit] = markedFigures(
      'README.md',
      'Rounds of [0.69 ms](docs/benchmarks.md#scale-one-coordinator).',
    );
    expect(staleFigure(unit!, [SCALE])).to.include('0.69 ms not in');
    const [both] = markedFigures(
      'README.md',
      'Rounds of [0.69 s (1.11 s)](docs/benchmarks.md#scale-one-coordinator).',
    );
    expect(staleFigure(both!, [SCALE])).to.equal(null);
  });

  it('searches every block when the link names a heading written by hand', () => {
    const [marked] = markedFigures('docs/x.md', 'A crash: [1.21 s](benchmarks.md#notes-by-hand).');
    expect(staleFigure(marked!, [SCALE, HOSTS])).to.equal(null);
  });

  it('takes a link to benchmarks.md without a figure as no quote', () => {
    expect(
      markedFigures('docs/x.md', 'See [benchmarks](benchmarks.md#scale-one-coordinator).'),
    ).to.deep.equal([]);
  });

  it('names a sentence about a measurement that quotes a figure with a unit and marks none', () => {
    const doc = [
      'The coordinator took 144 MB in the scale bench.',
      '',
      'Measured on hosts: a crash is seen in 1.2 s; the timeout is 1 s.',
      '',
      'The timeout is 1 s. See [benchmarks](benchmarks.md) for [186 MB](benchmarks.md#scale).',
      '',
      'Measured with a 1 s timeout: [1.21 s](benchmarks.md#hosts).',
      '',
      'Measured with a 1 s timeout ([benchmarks](benchmarks.md#hosts)).',
      '',
      '```sh',
      'npm run bench   # 5 minutes',
      '```',
    ].join('\n');
    expect(unmarkedFigures('docs/x.md', doc)).to.deep.equal([
      'docs/x.md: 144 MB in "The coordinator took 144 MB in the scale bench."',
      'docs/x.md: 1.2 s in "Measured on hosts: a crash is seen in 1.2 s;"',
      'docs/x.md: 1 s in "Measured with a 1 s timeout ([benchmarks](benchmarks.md#hosts))."',
    ]);
  });

  describe('in the docs', () => {
    const doc = read('docs/benchmarks.md');
    const blocks = SECTIONS.map((s) => blockOf(blockContent(doc, sectionBlock(s))));

    it("quote only figures the bench's blocks hold now (a run changed them: update the quote)", () => {
      const stale = QUOTING.flatMap((file) => markedFigures(file, read(file)))
        .map((m) => staleFigure(m, blocks))
        .filter((why) => why !== null);
      expect(stale).to.deep.equal([]);
    });

    it('quote a measured figure only as a link to its section of benchmarks.md', () => {
      expect(QUOTING.flatMap((file) => unmarkedFigures(file, read(file)))).to.deep.equal([]);
    });
  });
});
