// docs/benchmarks.md: each section of the bench writes only its own block there, between markers of
// its own (scripts/doc-blocks.ts), because the doc also holds notes written by hand around the
// blocks (dated runs, what they show) that a run must leave as they are. A section skipped by its
// switch (BENCH_HOSTILE=0, …) gives no markdown and its block keeps the previous run's figures.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { blockMarkers, checkBlocks, withBlocks, type BlockMarkers } from '../scripts/doc-blocks.js';

export const BENCHMARKS_DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

/** The sections, in the doc's order. */
export const SECTIONS = [
  'hosts',
  'loopback',
  'hostile',
  'scale',
  'peer-client',
  'election-scale',
  'localize',
  'path-memory',
  'mesh-settle',
] as const;
export type Section = (typeof SECTIONS)[number];

/** What a section gives: its markdown (null when skipped: its block is kept) and missed targets. */
export interface SectionResult {
  markdown: string | null;
  missed: string[];
}

export function sectionBlock(section: Section): BlockMarkers {
  return blockMarkers(`bench:${section}`, '`npm run bench`');
}

/**
 * Throws, naming the block, unless the doc has the markers of each section once: called before a
 * run, so that a run of half an hour does not end by failing to write.
 */
export function checkBenchmarksDoc(
  sections: readonly Section[] = SECTIONS,
  path = BENCHMARKS_DOC,
): void {
  try {
    checkBlocks(readFileSync(path, 'utf8'), sections.map(sectionBlock));
  } catch (err) {
    throw new Error(`${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** Markdown as the repository's Prettier settings lay it out (aligned tables), so lint passes. */
export async function prettyMarkdown(text: string): Promise<string> {
  return format(text, { ...(await resolveConfig(BENCHMARKS_DOC)), filepath: BENCHMARKS_DOC });
}

/**
 * `doc` with the block of each section given replaced by its markdown, formatted alone; a section
 * whose markdown is null keeps its block, and no line outside the blocks changes.
 */
export async function withSections(
  doc: string,
  markdown: Partial<Record<Section, string | null>>,
): Promise<string> {
  const contents = [];
  for (const section of SECTIONS) {
    const text = markdown[section];
    if (text === undefined || text === null) continue;
    // Blank lines between the markers and the markdown: without them Prettier would add them.
    contents.push({ block: sectionBlock(section), content: `\n\n${await prettyMarkdown(text)}\n` });
  }
  return withBlocks(doc, contents);
}

/** Writes the sections' blocks into docs/benchmarks.md (see withSections). */
export async function writeSections(
  markdown: Partial<Record<Section, string | null>>,
  path = BENCHMARKS_DOC,
): Promise<void> {
  writeFileSync(path, await withSections(readFileSync(path, 'utf8'), markdown));
}
