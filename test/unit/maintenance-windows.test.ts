// Maintenance windows as a replicated set: how two copies merge, which window pauses which peer,
// and what a node's book reports when windows open and end.
import { expect } from 'chai';
import {
  covers,
  isActive,
  logWindowsHeard,
  MAX_WINDOWS,
  MaintenanceBook,
  mergeWindows,
  pausing,
} from '../../src/maintenance/windows.js';
import type { MaintenanceWindow, PeerNames } from '../../src/wire/maintenance-window.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { maintenanceWindow } from '../support/maintenance-window.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const T = Date.UTC(2025, 0, 1);
const MIN = 60_000;
const schemas = loadSchemas();

/** A window opening at T: every window here does, unless the test says otherwise. */
const win = (id: string, over: Partial<MaintenanceWindow> = {}) => maintenanceWindow(id, T, over);

const A: PeerNames = { address: '10.0.0.1:8080', id: 'node-a@10.0.0.1', nodeName: 'node-a' };
const B: PeerNames = { address: '10.0.0.2:8080', id: 'node-b@10.0.0.2', nodeName: 'node-b' };
const ids = (ws: readonly MaintenanceWindow[]) => ws.map((w) => w.id).sort();

describe('maintenance windows: isActive and covers', () => {
  it('is active from its start up to (not including) its end, and never once cancelled', () => {
    const w = win('w');
    expect(isActive(w, T - 1), 'before it starts').to.be.false;
    expect(isActive(w, T)).to.be.true;
    expect(isActive(w, w.until - 1)).to.be.true;
    expect(isActive(w, w.until), 'at its end').to.be.false;
    expect(isActive({ ...w, cancelled: true }, T + 1)).to.be.false;
  });

  it('a mesh window covers every peer; a nodes window its node names, ids or addresses only', () => {
    expect(covers(win('m'), A)).to.be.true;
    expect(covers(win('m'), B)).to.be.true;
    for (const name of [A.nodeName, A.id, A.address]) {
      const w = win('n', { scope: 'nodes', nodes: [name] });
      expect(covers(w, A), name).to.be.true;
      expect(covers(w, B), name).to.be.false;
    }
    // Not a prefix or substring match: node-a must not cover node-ab.
    const ab = { address: '10.0.0.3:8080', id: 'node-ab@10.0.0.3', nodeName: 'node-ab' };
    expect(covers(win('n', { scope: 'nodes', nodes: ['node-a'] }), ab)).to.be.false;
  });
});

describe('maintenance windows: pausing', () => {
  it('is the active window covering the peer that ends last', () => {
    const short = win('short', { until: T + 10 * MIN });
    const long = win('long', { scope: 'nodes', nodes: ['node-a'], until: T + 50 * MIN });
    const other = win('other', { scope: 'nodes', nodes: ['node-b'], until: T + 90 * MIN });
    const windows = [short, long, other];
    expect(pausing(windows, A, T + MIN)?.id).to.equal('long');
    expect(pausing(windows, B, T + MIN)?.id).to.equal('other');
    expect(pausing([short], A, T + 10 * MIN), 'over at its end').to.equal(null);
  });

  it('is null for cancelled windows and windows not yet started', () => {
    const windows = [win('c', { cancelled: true }), win('later', { starts: T + 5 * MIN })];
    expect(pausing(windows, A, T + MIN)).to.equal(null);
    expect(pausing(windows, A, T + 5 * MIN)?.id).to.equal('later');
    expect(pausing([], A, T)).to.equal(null);
  });
});

describe('maintenance windows: mergeWindows', () => {
  it('is the union of both sets by id', () => {
    const mine = [win('a')];
    const merged = mergeWindows(mine, [win('b'), win('a')], T);
    expect(ids(merged)).to.deep.equal(['a', 'b']);
  });

  it('keeps the copy it has when a peer sends the same id uncancelled (ids do not get edited)', () => {
    const mine = [win('a', { until: T + 10 * MIN })];
    const merged = mergeWindows(mine, [win('a', { until: T + 99 * MIN })], T);
    expect(merged).to.equal(mine);
  });

  it('lets a cancellation win, whichever side has it', () => {
    const theirsCancelled = mergeWindows([win('a')], [win('a', { cancelled: true })], T);
    expect(theirsCancelled).to.deep.equal([win('a', { cancelled: true })]);
    const mine = [win('a', { cancelled: true })];
    expect(mergeWindows(mine, [win('a')], T), 'an uncancelled copy does not revive it').to.equal(
      mine,
    );
  });

  it('keeps a cancellation heard before the window itself, so the window never opens here', () => {
    const first = mergeWindows([], [win('a', { cancelled: true })], T);
    const then = mergeWindows(first, [win('a')], T + 1);
    expect(then).to.equal(first);
    expect(pausing(then, A, T + 1)).to.equal(null);
  });

  it('drops windows long over, on either side, and keeps one just over (so a cancel still wins)', () => {
    const longOver = win('old', { starts: T - 60 * MIN, until: T - 2 * MIN });
    const justOver = win('recent', { starts: T - 60 * MIN, until: T - 30_000 });
    expect(ids(mergeWindows([], [longOver, justOver], T))).to.deep.equal(['recent']);
    const mine = [longOver, justOver];
    const pruned = mergeWindows(mine, [], T);
    expect(pruned).to.not.equal(mine);
    expect(ids(pruned)).to.deep.equal(['recent']);
  });

  it('returns the very same array when nothing changed', () => {
    const mine = [win('a'), win('b', { cancelled: true })];
    expect(mergeWindows(mine, [], T)).to.equal(mine);
    expect(mergeWindows(mine, structuredClone(mine), T)).to.equal(mine);
    expect(mergeWindows(mine, [win('a')], T)).to.equal(mine);
  });

  it('does not modify either input', () => {
    const mine = [win('a')];
    const theirs = [win('a', { cancelled: true }), win('b')];
    const before = structuredClone([mine, theirs]);
    mergeWindows(mine, theirs, T);
    expect([mine, theirs]).to.deep.equal(before);
  });

  it(`holds at most MAX_WINDOWS (${MAX_WINDOWS}), keeping those that end last`, () => {
    const many = Array.from({ length: MAX_WINDOWS + 5 }, (_, i) =>
      win(`w${i}`, { until: T + (i + 1) * MIN }),
    );
    const merged = mergeWindows([], many, T);
    expect(merged).to.have.length(MAX_WINDOWS);
    const kept = new Set(merged.map((w) => w.id));
    for (let i = 0; i < 5; i++) expect(kept.has(`w${i}`), `w${i} ends first`).to.be.false;
    expect(kept.has(`w${MAX_WINDOWS + 4}`)).to.be.true;
    // A peer can neither push the set past the bound nor push a running window out of it.
    const again = mergeWindows(merged, [win('late', { until: T + 999 * MIN })], T);
    expect(again).to.equal(merged);
    // A window ended early makes room.
    const ended = merged.map((w) => (w.id === 'w5' ? { ...w, cancelled: true } : w));
    const room = mergeWindows(ended, [win('late', { until: T + 999 * MIN })], T);
    expect(room).to.have.length(MAX_WINDOWS);
    expect(room.some((w) => w.id === 'late')).to.be.true;
    expect(room.some((w) => w.id === 'w5')).to.be.false;
  });

  it('ignores windows heard from a peer that last longer than 7 days or end further ahead', () => {
    const day = 24 * 60 * MIN;
    const heard = [
      win('forever', { until: 8_640_000_000_000_000 }),
      win('long', { starts: T - day, until: T + 7 * day }),
      win('future', { starts: T + 30 * day, until: T + 31 * day }),
      win('fine', { until: T + 7 * day }),
    ];
    expect(mergeWindows([], heard, T).map((w) => w.id)).to.deep.equal(['fine']);
  });

  it('returns the very same array when the cap drops just the window heard', () => {
    const full = Array.from({ length: MAX_WINDOWS }, (_, i) =>
      win(`w${i}`, { until: T + (i + 10) * MIN }),
    );
    const early = win('early', { until: T + MIN });
    expect(mergeWindows(full, [early], T)).to.equal(full);
    const book = new MaintenanceBook();
    book.merge(full, T);
    expect(book.merge([early], T), 'nothing changed: nothing to share').to.be.false;
  });

  it('produces windows that match the wire schema', () => {
    const merged = mergeWindows([win('a', { scope: 'nodes', nodes: ['node-a'] })], [win('b')], T);
    for (const w of merged)
      expect(schemas.check('maintenance-window', w)).to.deep.equal({ ok: true });
  });
});

describe('MaintenanceBook', () => {
  function book() {
    const changes: { added: string[]; ended: string[] }[] = [];
    const b = new MaintenanceBook((added, ended) =>
      changes.push({ added: added.map((w) => w.id), ended: ended.map((w) => w.id) }),
    );
    return { b, changes };
  }

  it('reports windows added, once, and tells whether a merge changed anything', () => {
    const { b, changes } = book();
    expect(b.merge([win('a'), win('b')], T)).to.be.true;
    expect(b.merge([win('a')], T + 1), 'heard again: no change').to.be.false;
    expect(changes).to.deep.equal([{ added: ['a', 'b'], ended: [] }]);
    expect(ids(b.all())).to.deep.equal(['a', 'b']);
  });

  it('does not report a window first heard already cancelled as added', () => {
    const { b, changes } = book();
    b.merge([win('a', { cancelled: true })], T);
    expect(changes).to.deep.equal([]);
    expect(b.active(T)).to.deep.equal([]);
  });

  it('cancels a running window: reported ended, no longer active, kept so the cancel spreads', () => {
    const { b, changes } = book();
    b.merge([win('a'), win('b')], T);
    const ended = b.cancel('a', T + MIN);
    expect(ended).to.deep.include({ id: 'a', cancelled: true });
    expect(changes.at(-1)).to.deep.equal({ added: [], ended: ['a'] });
    expect(b.active(T + MIN).map((w) => w.id)).to.deep.equal(['b']);
    expect(b.all().find((w) => w.id === 'a')?.cancelled).to.be.true;
  });

  it('reports a cancellation heard from a peer as ended', () => {
    const { b, changes } = book();
    b.merge([win('a')], T);
    b.merge([win('a', { cancelled: true })], T + MIN);
    expect(changes.at(-1)).to.deep.equal({ added: [], ended: ['a'] });
  });

  it('refuses to cancel an unknown, already cancelled or ended window', () => {
    const { b, changes } = book();
    b.merge([win('a', { until: T + 10 * MIN })], T);
    expect(b.cancel('nope', T)).to.equal(null);
    expect(b.cancel('a', T + 10 * MIN), 'ended').to.equal(null);
    expect(b.cancel('a', T + MIN)).to.not.equal(null);
    expect(b.cancel('a', T + 2 * MIN), 'already cancelled').to.equal(null);
    expect(changes.filter((c) => c.ended.length > 0)).to.have.length(1);
  });

  it('prune drops windows long over without reporting them', () => {
    const { b, changes } = book();
    b.merge([win('a', { until: T + 10 * MIN }), win('b')], T);
    b.prune(T + 10 * MIN + 30_000);
    expect(ids(b.all()), 'just over: kept a while').to.deep.equal(['a', 'b']);
    b.prune(T + 10 * MIN + MIN);
    expect(ids(b.all())).to.deep.equal(['b']);
    expect(changes).to.have.length(1);
  });

  it('active lists only windows in force', () => {
    const { b } = book();
    b.merge([win('now'), win('later', { starts: T + 5 * MIN })], T);
    expect(b.active(T).map((w) => w.id)).to.deep.equal(['now']);
    expect(ids(b.active(T + 5 * MIN))).to.deep.equal(['later', 'now']);
  });
});

describe('windows heard from a peer are on record by their source', () => {
  it('names the peer whose message brought a window or its end, and nothing for one opened here', () => {
    const logger = new CapturingLogger();
    const book = new MaintenanceBook((added, ended, from) => {
      if (from !== undefined) logWindowsHeard(logger, from, added, ended);
    });
    book.merge([win('here')], T);
    expect(logger.records, 'opened here: the route logs it').to.deep.equal([]);
    book.merge([win('w1', { reason: 'cni upgrade' })], T, '10.0.0.9:8080');
    book.merge([win('w1', { cancelled: true })], T + MIN, '10.0.0.7:8080');
    const lines = logger.records.map((r) => `${r.level} ${r.msg}`);
    expect(lines).to.have.length(2);
    expect(lines[0]).to.match(
      /^warn maintenance window w1 heard from 10\.0\.0\.9:8080: .*cni upgrade/,
    );
    expect(lines[1]).to.equal('info maintenance window w1 ended, as heard from 10.0.0.7:8080');
  });
});
