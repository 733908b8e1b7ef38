// Measured figures quoted outside docs/benchmarks.md, and whether the bench's blocks still hold
// them. The convention (docs/development.md): a measured figure is quoted as a link to the section
// of benchmarks.md it comes from, `[186 MB](benchmarks.md#scale-…)`; a sentence that speaks of a
// measurement (measured, simulated, a bench, benchmarks.md) may quote a figure with a unit only so.

/** A figure as a sentence quotes it: a number and, if it has one, its unit. */
const UNITS = 'MB|MiB|KB|KiB|GB|GiB|ms|s|%|seconds|minutes';
const FIGURE = new RegExp(
  `(?<![\\w.,])(\\d[\\d,]*(?:\\.\\d+)?)(?:\\s?(${UNITS}))?(?![\\w%]|[.,]\\d)`,
  'g',
);
const MEASUREMENT = /\bmeasured\b|\bsimulated\b|\bbench(?:es|marks?)?\b|benchmarks\.md/i;
const LINK = /\[([^\]]*)\]\(([^)\s]*)\)/g;

export interface Figure {
  number: string;
  unit: string | undefined;
}

/** A figure quoted as a link to benchmarks.md: where, what, and the heading it points at. */
export interface MarkedFigure {
  file: string;
  text: string;
  anchor: string | undefined;
}

/** Every number in `text`, each with the unit that follows it. */
export function figuresIn(text: string): Figure[] {
  return [...text.matchAll(FIGURE)].map((m) => ({ number: m[1] ?? '', unit: m[2] }));
}

/**
 * Markdown outside code (fenced blocks, inline spans: an example of the convention is no quote), in
 * sentences (a list item or a table row ends one too).
 */
export function sentencesOf(markdown: string): string[] {
  const prose: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced) prose.push(line);
  }
  return prose
    .join('\n')
    .replace(/`(?:[^`\n]|\n(?!\s*\n))*`/g, '') // a span may wrap, but not past its paragraph
    .split(/\n\s*\n|\n(?=\s*(?:[-*|]|\d+\.) )/)
    .flatMap((paragraph) => paragraph.replace(/\s+/g, ' ').split(/(?<=[.;])\s+(?=[^\s\d])/))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Whether a link target is docs/benchmarks.md (from README or from docs/). */
const toBenchmarks = (target: string) => /^(?:\.\/)?(?:docs\/)?benchmarks\.md(?:#|$)/.test(target);

/** The links to benchmarks.md whose text quotes a figure. */
export function markedFigures(file: string, markdown: string): MarkedFigure[] {
  const marked: MarkedFigure[] = [];
  for (const sentence of sentencesOf(markdown)) {
    for (const m of sentence.matchAll(LINK)) {
      const [text = '', target = ''] = [m[1], m[2]];
      if (!toBenchmarks(target) || !/\d/.test(text)) continue;
      marked.push({ file, text, anchor: target.split('#')[1] });
    }
  }
  return marked;
}

/**
 * Sentences that speak of a measurement and quote a figure with a unit, none of them as a link to
 * benchmarks.md: a figure someone forgot to mark, or a measurement whose source is not the bench.
 * A sentence that marks one is taken as following the convention: its other figures may be the
 * settings or the conditions of the measurement.
 */
export function unmarkedFigures(file: string, markdown: string): string[] {
  const found: string[] = [];
  for (const sentence of sentencesOf(markdown)) {
    if (!MEASUREMENT.test(sentence) || markedFigures(file, sentence).length > 0) continue;
    const bare = sentence.replace(LINK, (link, _text: string, target: string) =>
      toBenchmarks(target) ? '' : link,
    );
    const loose = figuresIn(bare).filter((f) => f.unit !== undefined);
    if (loose.length > 0) {
      const quoted = loose.map((f) => `${f.number} ${f.unit}`).join(', ');
      found.push(`${file}: ${quoted} in "${sentence}"`);
    }
  }
  return found;
}

/** The bench's generated blocks of docs/benchmarks.md, each with the anchors of its headings. */
export interface BenchBlock {
  text: string;
  anchors: Set<string>;
}

/** Whether `block` quotes `figure`, with the same unit if it has one (bold and spacing aside). */
export function quotes(block: string, figure: Figure): boolean {
  const plain = block.replace(/\*\*/g, '');
  const number = figure.number.replace(/[.]/g, '\\.');
  const unit = figure.unit === undefined ? '' : `\\s?${figure.unit}(?![\\w])`;
  return new RegExp(`(?<![\\w.,])${number}(?![\\d]|[.,]\\d)${unit}`).test(plain);
}

/**
 * Why a marked figure is stale: a number of it that the block its anchor names (or, when the
 * anchor names a heading outside every block, any block) does not quote; null if none.
 */
export function staleFigure(marked: MarkedFigure, blocks: readonly BenchBlock[]): string | null {
  const own = blocks.filter((b) => marked.anchor !== undefined && b.anchors.has(marked.anchor));
  const searched = own.length > 0 ? own : blocks;
  const missing = figuresIn(marked.text).filter((f) => !searched.some((b) => quotes(b.text, f)));
  if (missing.length === 0) return null;
  const where = own.length > 0 ? `#${marked.anchor ?? ''}` : "any of benchmarks.md's blocks";
  const what = missing.map((f) => (f.unit ? `${f.number} ${f.unit}` : f.number)).join(', ');
  return `${marked.file}: [${marked.text}]: ${what} not in ${where}`;
}
