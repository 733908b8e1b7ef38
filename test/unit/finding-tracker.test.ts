// Which findings are incidents: one opens once found for a while without a break, stays open
// through short gaps, and closes once gone for a while.
import { expect } from 'chai';
import { FindingTracker, findingId } from '../../src/paths/finding-tracker.js';
import type { Finding } from '../../src/paths/path-state.js';

const broken: Finding = { kind: 'path-broken', from: 'a', to: 'b', witnesses: ['c'] };
const degraded: Finding = { kind: 'node-degraded', node: 'c' };

describe('FindingTracker', () => {
  it('opens a finding found without a break for openAfterMs, once', () => {
    const t = new FindingTracker({ openAfterMs: () => 1_000, closeAfterMs: 10_000 });
    expect(t.update([broken], 0).opened).to.deep.equal([]);
    const { opened } = t.update([broken], 1_000);
    expect(opened.map((f) => f.id)).to.deep.equal([findingId(broken)]);
    expect(t.update([broken], 2_000).opened).to.deep.equal([]);
    expect(t.isOpen(findingId(broken))).to.equal(true);
  });

  it('holds each finding as long as openAfterMs says for it', () => {
    const t = new FindingTracker({
      openAfterMs: (f) => (f.kind === 'node-degraded' ? 5_000 : 0),
      closeAfterMs: 10_000,
    });
    expect(t.update([broken, degraded], 0).opened.map((f) => f.id)).to.deep.equal([
      findingId(broken),
    ]);
    expect(t.update([broken, degraded], 4_999).opened).to.deep.equal([]);
    expect(t.update([broken, degraded], 5_000).opened.map((f) => f.id)).to.deep.equal([
      findingId(degraded),
    ]);
  });

  it('does not open a finding that comes and goes', () => {
    const t = new FindingTracker({ openAfterMs: () => 1_000, closeAfterMs: 10_000 });
    t.update([broken], 0);
    t.update([], 500);
    expect(t.update([broken], 1_000).opened, 'found again: it starts over').to.deep.equal([]);
    expect(t.update([broken], 2_000).opened).to.have.length(1);
  });

  it('closes an open finding once it has not been found for closeAfterMs', () => {
    const t = new FindingTracker({ openAfterMs: () => 0, closeAfterMs: 10_000 });
    t.update([broken, degraded], 0);
    expect(t.update([degraded], 5_000).closed, 'a short gap').to.deep.equal([]);
    t.update([broken, degraded], 6_000);
    expect(t.update([degraded], 15_999).closed).to.deep.equal([]);
    const { closed } = t.update([degraded], 16_000);
    expect(closed.map((f) => f.id)).to.deep.equal([findingId(broken)]);
    expect(t.open().map((f) => f.id)).to.deep.equal([findingId(degraded)]);
  });

  it('keeps the finding as opened and as last found (witnesses change while it lasts)', () => {
    const t = new FindingTracker({ openAfterMs: () => 0, closeAfterMs: 0 });
    t.update([broken], 0);
    const later: Finding = { ...broken, witnesses: ['c', 'd'] };
    t.update([later], 1);
    const [open] = t.open();
    expect(open?.opened).to.deep.equal(broken);
    expect(open?.latest).to.deep.equal(later);
  });
});
