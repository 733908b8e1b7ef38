// The README documents every setting exactly as src/config/settings.ts declares it.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { renderSettingsTable, TABLE_END, TABLE_START } from '../../src/config/settings-table.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('has the settings table generated from the declaration (run `npm run docs` to update)', () => {
    const start = readme.indexOf(TABLE_START);
    const end = readme.indexOf(TABLE_END);
    expect(start, 'settings table start marker').to.be.greaterThan(-1);
    expect(readme.slice(start, end + TABLE_END.length)).to.equal(renderSettingsTable());
  });
});
