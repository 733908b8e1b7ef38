// Every schema in schemas/ compiles (nodes compile them lazily, so CI is where a broken one shows).
import { expect } from 'chai';
import { loadSchemas, type SchemaName } from '../../src/wire/schemas.js';

describe('schemas/', () => {
  it('has every schema knh uses, each valid against the meta-schema and compiling in strict mode', () => {
    const registry = loadSchemas(undefined, { validateSchemas: true });
    expect(registry.names).to.include.members([
      'node-ref',
      'election-request',
      'election-answer',
      'announcement',
      'announcement-reply',
      'peer-view',
      'ping-response',
      'error-response',
      'peer',
      'peer-status',
      'cluster-status',
    ]);
    for (const name of registry.names) {
      expect(() => registry.check(name as SchemaName, {}), name).to.not.throw();
    }
  });

  it('accepts only canonical dialable addresses as a peer-address', () => {
    const registry = loadSchemas();
    const ref = (address: string) => registry.check('node-ref', { id: 'a@b', address }).ok;
    expect(ref('10.0.0.1:8080')).to.equal(true);
    expect(ref('[fd00::1]:8080')).to.equal(true);
    for (const bad of [
      '10.0.0.01:8080',
      '[FD00::1]:8080',
      '10.0.0.1:0',
      'host:80',
      '[10.0.0.1]:80',
    ]) {
      expect(ref(bad), bad).to.equal(false);
    }
  });
});
