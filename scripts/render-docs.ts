// `npm run docs`: rewrites the README's settings table from src/config/settings.ts.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../src/config/settings-table.js';

const path = new URL('../../README.md', import.meta.url);
writeFileSync(path, withSettingsTable(readFileSync(path, 'utf8')));
process.stdout.write('README.md settings table updated\n');
