// The licences of the libraries the bundles redistribute: each package whose code esbuild put in a
// shipped file, with its version and its licence text as the package ships it.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Metafile } from 'esbuild';

const PACKAGE_DIR = /^(.*node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/;
const LICENCE_FILE = /^(licen[sc]e|copying)(\.(md|txt|markdown))?$/i;

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
    const file = (await readdir(dir)).find((f) => LICENCE_FILE.test(f));
    const text = file ? (await readFile(join(dir, file), 'utf8')).trim() : null;
    // A few packages state their licence only in package.json (and their README).
    const body =
      text ?? `No licence file in the package; its package.json says: ${pkg.license ?? 'nothing'}.`;
    sections.push(`${pkg.name}@${pkg.version} (${pkg.license ?? 'unstated'})\n\n${body}\n`);
  }
  return [
    'knh bundles code of these packages, unchanged but for packaging; their licences follow.\n',
    ...sections,
  ].join(`\n${'-'.repeat(78)}\n\n`);
}
