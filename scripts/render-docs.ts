// `npm run docs`: rewrites the docs' generated parts from src/config/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_DOCS } from '../src/config/settings-table.js';
import { withBlocks } from './doc-blocks.js';

for (const { file, block } of GENERATED_DOCS) {
  const path = new URL(`../../${file}`, import.meta.url);
  writeFileSync(path, withBlocks(readFileSync(path, 'utf8'), [{ block, content: block.render() }]));
  process.stdout.write(`${file} updated\n`);
}
