// Departures (peers that said they were leaving), and the status page's event list: which verdict
// changes become entries, and how many entries are kept.
import { expect } from 'chai';
import { Departures } from '../../src/discovery/departures.js';
import { newRecord, toView, type Judgement } from '../../src/prober/verdict.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import { judgementEntry, viewChanges } from '../../src/status/event-feed.js';
import { EventLog, MAX_EVENTS } from '../../src/status/event-log.js';
import { alive, answersAgain, confirmed, type Confirming } from '../support/verdicts.js';

const T = Date.UTC(2025, 0, 1);
const A = { id: 'a@10.0.0.1', address: '10.0.0.1:8080' };
const B = { id: 'b@10.0.0.2', address: '10.0.0.2:8080' };
const C = { id: 'c@10.0.0.3', address: '10.0.0.3:8080' };
const QUARANTINE = 3_000;
const EXPIRY = 300_000;

describe('Departures', () => {
  it('marks a discovered peer as departed, with who and when', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    expect(d.mark(A, [A.address, B.address], T)).to.be.true;
    expect(d.has(A.address)).to.be.true;
    expect(d.list()).to.deep.equal([{ address: A.address, id: A.id, atMs: T }]);
  });

  it('ignores a leave notice from an address discovery does not list', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    expect(d.mark(C, [A.address, B.address], T)).to.be.false;
    expect(d.has(C.address)).to.be.false;
    expect(d.list()).to.deep.equal([]);
  });

  it('leaves departed peers out of the present ones', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(B, [A.address, B.address, C.address], T);
    expect(d.present([A.address, B.address, C.address])).to.deep.equal([A.address, C.address]);
  });

  it('clear brings a peer back (it spoke again), and says whether it had left', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(A, [A.address, B.address], T);
    expect(d.clear(A.address)).to.be.true;
    expect(d.clear(A.address)).to.be.false;
    expect(d.present([A.address, B.address])).to.deep.equal([A.address, B.address]);
    expect(d.list()).to.deep.equal([]);
  });

  it('forgets the departure of a peer discovery no longer lists, so a new pod there takes part', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(A, [A.address, B.address], T);
    expect(d.present([B.address])).to.deep.equal([B.address]);
    expect(d.has(A.address)).to.be.false;
    expect(d.list()).to.deep.equal([]);
    // Listed again later (a new pod got the address): present, not left.
    expect(d.present([A.address, B.address])).to.deep.equal([A.address, B.address]);
  });

  it('ignores a message from the departed node within the quarantine (sent before it left), not after', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(A, [A.address], T);
    expect(d.spoke(A.address, T + QUARANTINE - 1)).to.be.false;
    expect(d.has(A.address)).to.be.true;
    expect(d.spoke(A.address, T + QUARANTINE)).to.be.true;
    expect(d.has(A.address)).to.be.false;
  });

  it('expires a departure after its time, returning it once, so the node is probed again', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(A, [A.address, B.address], T);
    d.mark(B, [A.address, B.address], T + 10_000);
    expect(d.expire(T + EXPIRY - 1)).to.deep.equal([]);
    expect(d.expire(T + EXPIRY)).to.deep.equal([{ address: A.address, id: A.id, atMs: T }]);
    expect(d.expire(T + EXPIRY)).to.deep.equal([]);
    expect(d.present([A.address, B.address])).to.deep.equal([A.address]);
  });

  it('keeps the latest notice of a peer that leaves twice', () => {
    const d = new Departures(QUARANTINE, EXPIRY);
    d.mark(A, [A.address], T);
    d.mark(A, [A.address], T + 5_000);
    expect(d.list()).to.deep.equal([{ address: A.address, id: A.id, atMs: T + 5_000 }]);
  });
});

describe('event feed: judgementEntry', () => {
  const up = alive(A.address, A.id, T);
  /** A's confirmation: its probes failing from T + 1, over at T + 2 s. */
  const confirmedAs = (over: Confirming = {}) =>
    confirmed(up.record, T + 1, { at: T + 2_000, ...over });
  const { suspected, verdict: died } = confirmedAs();
  const recovered = answersAgain(died.record, T + 9_000);

  const cases: [string, Judgement, string][] = [
    ['first-alive', up, 'alive'],
    ['suspected', suspected, 'suspected'],
    ['died', died, 'peer_dead'],
    ['recovered', recovered, 'peer_recovered'],
  ];
  for (const [transition, judgement, kind] of cases) {
    it(`${transition} → ${kind}, naming the peer`, () => {
      expect(judgement.transition).to.equal(transition);
      const entry = judgementEntry(judgement);
      expect(entry).to.deep.include({ kind, peer: A.id });
      expect(entry?.text).to.include(A.id);
    });
  }

  it('a withheld verdict and a broken path have entries of their own', () => {
    const withheld = confirmedAs({ withhold: 'self-suspect' }).verdict;
    expect(judgementEntry(withheld)?.kind).to.equal('withheld');
    expect(judgementEntry(withheld)?.text).to.match(/most of the mesh/);
    const late = confirmedAs({ withhold: 'overloaded' }).verdict;
    expect(judgementEntry(late)).to.deep.include({ kind: 'withheld', peer: A.id });
    expect(judgementEntry(late)?.text).to.match(/ran too late to tell/);
    const broken = confirmedAs({ reachedBy: [B.id] }).verdict;
    expect(broken.transition).to.equal('path-broken');
    expect(judgementEntry(broken)?.kind).to.equal('path_broken');
  });

  it('names a peer not yet heard from by its address, not its placeholder id', () => {
    const never = confirmed(newRecord(C.address, T), T + 1, { at: T + 2_000 }).verdict;
    expect(never.transition).to.equal('never-alive');
    const entry = judgementEntry(never);
    expect(entry?.kind).to.equal('never_alive');
    expect(entry?.text).to.include(C.address);
    expect(entry?.text).to.not.include('unknown@');
  });

  it('no entry when nothing changed', () => {
    const again = answersAgain(up.record, T + 500);
    expect(again.transition).to.equal(null);
    expect(judgementEntry(again)).to.equal(null);
  });
});

describe('event feed: viewChanges (a follower)', () => {
  const view = (ref: typeof A, health: PeerView['health'], alerted = false): PeerView => ({
    ...toView(newRecord(ref.address, T)),
    id: ref.id,
    node_name: ref.id.split('@')[0] ?? '',
    health,
    alerted,
  });

  it('reports deaths, recoveries of alerted deaths, and suspicions between two announcements', () => {
    const before = [view(A, 'alive'), view(B, 'dead', true), view(C, 'alive')];
    const after = [view(A, 'dead', true), view(B, 'alive'), view(C, 'suspect')];
    const changes = viewChanges(before, after);
    expect(changes.map((e) => [e.kind, e.peer])).to.deep.equal([
      ['peer_dead', A.id],
      ['peer_recovered', B.id],
      ['suspected', C.id],
    ]);
    expect(changes[0]?.text).to.include(A.id);
  });

  it('a suspect peer that dies is reported dead', () => {
    const changes = viewChanges([view(A, 'suspect')], [view(A, 'dead', true)]);
    expect(changes.map((e) => e.kind)).to.deep.equal(['peer_dead']);
  });

  it('reports nothing for unchanged health, a cleared suspicion, or a peer new to the view', () => {
    const before = [view(A, 'alive'), view(B, 'suspect')];
    const after = [view(A, 'alive'), view(B, 'alive'), view(C, 'dead', true)];
    expect(viewChanges(before, after)).to.deep.equal([]);
    expect(viewChanges(after, after)).to.deep.equal([]);
  });

  it('reports no death of a peer never seen alive, nor a recovery no alert preceded', () => {
    const neverAlive = viewChanges([view(A, 'unknown')], [view(A, 'dead')]);
    expect(neverAlive).to.deep.equal([]);
    const firstAlive = viewChanges([view(B, 'dead')], [view(B, 'alive')]);
    expect(firstAlive).to.deep.equal([]);
  });
});

describe('EventLog', () => {
  it('keeps events newest first, timed by the injected clock', () => {
    let now = T;
    const log = new EventLog(() => now);
    log.add('coordinator', 'coordinator is a');
    now += 1_000;
    log.add('peer_dead', 'b is dead', B.id, true);
    expect(log.recent()).to.deep.equal([
      {
        time: new Date(T + 1_000).toISOString(),
        kind: 'peer_dead',
        peer: B.id,
        text: 'b is dead',
        suppressed: true,
      },
      {
        time: new Date(T).toISOString(),
        kind: 'coordinator',
        peer: null,
        text: 'coordinator is a',
        suppressed: false,
      },
    ]);
  });

  it(`keeps at most MAX_EVENTS (${MAX_EVENTS}) by default, dropping the oldest`, () => {
    const log = new EventLog(() => T);
    for (let i = 0; i < MAX_EVENTS + 10; i++) log.add('k', `event ${i}`);
    const recent = log.recent();
    expect(recent).to.have.length(MAX_EVENTS);
    expect(recent[0]?.text).to.equal(`event ${MAX_EVENTS + 9}`);
    expect(recent.at(-1)?.text).to.equal('event 10');
  });

  it('honours a smaller bound', () => {
    const log = new EventLog(() => T, 2);
    for (const text of ['one', 'two', 'three']) log.add('k', text);
    expect(log.recent().map((e) => e.text)).to.deep.equal(['three', 'two']);
  });

  it('hands out a copy: a caller cannot change the log', () => {
    const log = new EventLog(() => T);
    log.add('k', 'one');
    log.recent().length = 0;
    expect(log.recent()).to.have.length(1);
  });
});
