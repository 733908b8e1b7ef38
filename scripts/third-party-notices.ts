// The licences of the libraries the bundles redistribute: each package whose code esbuild put in a
// shipped file, with its version and its licence text as the package ships it.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';

const PACKAGE_DIR = /^(.*node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/;
const LICENCE_FILE = /^(licen[sc]e|copying)(\.(md|txt|markdown))?$/i;
const README_FILE = /^readme(\.(md|markdown|txt))?$/i;
/** A README's heading of its licence section: `## License` or `License` over a line of dashes. */
const LICENCE_HEADING = /^(?:#{1,6}\s*licen[sc]e\s*\n|licen[sc]e\s*\n[-=]{3,}\s*\n)/im;
/** The next heading of either kind. */
const NEXT_HEADING = /^(?:#{1,6}\s|[^\n]+\n[-=]{3,}\s*$)/m;

/**
 * The licence section of a README (a few packages, e.g. agent-base 6, ship their licence only
 * there): its text up to the next heading, or null when it has none.
 */
function licenceSection(readme: string): string | null {
  const text = readme.replace(/\r\n/g, '\n');
  const heading = LICENCE_HEADING.exec(text);
  if (!heading) return null;
  const rest = text.slice(heading.index + heading[0].length);
  const end = NEXT_HEADING.exec(rest);
  const section = (end ? rest.slice(0, end.index) : rest).trim();
  return section === '' ? null : section;
}

/** The folders of the packages that contributed code to any of the outputs. */
function packageDirs(root: string, metafiles: Metafile[]): string[] {
  const dirs = new Set<string>();
  for (const meta of metafiles) {
    for (const output of Object.values(meta.outputs)) {
      for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
        const dir = PACKAGE_DIR.exec(input)?.[1];
        if (dir && bytesInOutput > 0) dirs.add(join(root, dir));
      }
    }
  }
  return [...dirs].sort();
}

export async function thirdPartyNotices(root: string, metafiles: Metafile[]): Promise<string> {
  const sections: string[] = [];
  for (const dir of packageDirs(root, metafiles)) {
    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: string;
    };
    const files = await readdir(dir);
    const file = files.find((f) => LICENCE_FILE.test(f));
    const readme = files.find((f) => README_FILE.test(f));
    const text = file
      ? (await readFile(join(dir, file), 'utf8')).trim()
      : readme && licenceSection(await readFile(join(dir, readme), 'utf8'));
    if (!text) {
      throw new Error(
        `${pkg.name}@${pkg.version} is bundled but ships no licence text (no LICENSE file, no License section in its README): its notice needs one`,
      );
    }
    const body = file ? text : `From the package's README (it has no licence file):\n\n${text}`;
    sections.push(`${pkg.name}@${pkg.version} (${pkg.license ?? 'unstated'})\n\n${body}\n`);
  }
  return [
    'knh bundles code of these packages, unchanged but for packaging; their licences follow.\n',
    ...sections,
  ].join(`\n${'-'.repeat(78)}\n\n`);
}
