// Bounded key memories keep the newest keys.
import { expect } from 'chai';
import { trimOldest } from '../../src/core/trim-oldest.js';

describe('trimOldest', () => {
  it('drops the first inserted keys of a set until at most max are left', () => {
    const keys = new Set(['a', 'b', 'c', 'd', 'e']);
    trimOldest(keys, 3);
    expect([...keys]).to.deep.equal(['c', 'd', 'e']);
  });

  it('does the same for a map, by insertion order, not by value', () => {
    const at = new Map([
      ['old', 9],
      ['mid', 1],
      ['new', 5],
    ]);
    trimOldest(at, 2);
    expect([...at.keys()]).to.deep.equal(['mid', 'new']);
  });

  it('leaves a collection within its bound as it is', () => {
    const keys = new Set(['a', 'b']);
    trimOldest(keys, 2);
    expect([...keys]).to.deep.equal(['a', 'b']);
    trimOldest(keys, 5);
    expect([...keys]).to.deep.equal(['a', 'b']);
  });
});
