// `npm run docs`: rewrites the docs' generated parts from src/config/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { GENERATED_DOCS, withBlock } from '../src/config/settings-table.js';

for (const { file, block } of GENERATED_DOCS) {
  const path = new URL(`../../${file}`, import.meta.url);
  writeFileSync(path, withBlock(readFileSync(path, 'utf8'), block));
  process.stdout.write(`${file} updated\n`);
}
