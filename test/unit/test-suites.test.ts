// The loopback suite (`npm run test:loopback`, .mocharc.loopback.json): every test but those that
// need network namespaces, for a machine without them (or a quicker run). A multi-host file left in
// it would need namespaces where none are; a loopback file left out would run nowhere but CI.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const config = JSON.parse(readFileSync(join(ROOT, '.mocharc.loopback.json'), 'utf8')) as {
  spec: string[];
  ignore: string[];
};
// The module that runs `ip netns`: whatever reaches it needs network namespaces.
const NAMESPACES = normalize('test/support/netns-shell.ts');

/** The repository's TypeScript files that `file` imports, directly or not (relative imports). */
function importClosure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const code = readFileSync(join(ROOT, file), 'utf8');
  for (const [, spec] of code.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)\.js'/g)) {
    importClosure(normalize(join(dirname(file), `${spec}.ts`)), seen);
  }
  return seen;
}

describe('the loopback test suite', () => {
  const integration = readdirSync(join(ROOT, 'test/integration'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/integration/${f}`);

  it('covers every test file (unit and integration)', () => {
    expect(config.spec).to.deep.equal(['dist/test/**/*.test.js']);
  });

  it('leaves out exactly the integration files that need network namespaces', () => {
    const needNamespaces = integration.filter((f) => importClosure(f).has(NAMESPACES));
    expect(needNamespaces.length).to.be.greaterThan(0);
    const compiled = needNamespaces.map((f) => `dist/${f.replace(/\.ts$/, '.js')}`);
    expect([...config.ignore].sort()).to.deep.equal(compiled.sort());
  });
});
