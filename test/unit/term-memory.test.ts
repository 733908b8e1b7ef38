// What a node remembers of the term it followed, to start from if it leads next.
import { expect } from 'chai';
import type { TermState } from '../../src/election/delegate.js';
import { TermMemory } from '../../src/election/term-memory.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import { newRecord } from '../../src/prober/verdict.js';

const SELF = { id: 'self@10.0.0.5', address: '10.0.0.5:8080' };
const A = { id: 'a@10.0.0.1', address: '10.0.0.1:8080' };
const LEADER = { id: 'top@10.0.0.9', address: '10.0.0.9:8080' };
const NOW = Date.UTC(2025, 0, 1);

const view = (ref: { id: string; address: string }, health: PeerView['health']): PeerView => ({
  id: ref.id,
  address: ref.address,
  node_name: ref.id.split('@')[0] ?? '',
  health,
  since: NOW - 5_000,
  alerted: health === 'dead',
});

/** A's peer_dead, as a coordinator would have it undelivered. */
const deadA = () =>
  peerStatusPayload({
    record: { ...newRecord(A.address, NOW), id: A.id, health: 'dead', lastFailure: 'refused' },
    event: 'peer_dead',
    incidentMs: NOW,
    coordinator: LEADER,
    epoch: 3,
    now: NOW,
  });

function state(over: Partial<TermState> = {}): TermState {
  return { peers: [], undelivered: [], alerts: [], cannotJudge: null, ...over };
}

describe('TermMemory', () => {
  it('starts from the followed verdicts, itself left out and its leader alive', () => {
    const memory = new TermMemory(SELF.address);
    memory.follow(state({ peers: [view(A, 'dead'), view(SELF, 'alive')] }), false);
    expect(memory.inherited(NOW, LEADER)).to.deep.equal([
      view(A, 'dead'),
      { ...view(LEADER, 'alive'), since: NOW, alerted: false },
    ]);
    expect(memory.inheritedSelf()).to.deep.equal(view(SELF, 'alive'));
  });

  it("keeps the leader's own verdict when the followed view has one", () => {
    const memory = new TermMemory(SELF.address);
    memory.follow(state({ peers: [view(LEADER, 'suspect')] }), false);
    expect(memory.inherited(NOW, LEADER)).to.deep.equal([view(LEADER, 'suspect')]);
  });

  it('keeps the open "cannot judge" incident when an announcement left the verdicts out', () => {
    const memory = new TermMemory(SELF.address);
    const opening = deadA();
    memory.follow(state({ cannotJudge: opening }), false);
    memory.follow(state(), true);
    expect(memory.cannotJudge).to.equal(opening);
    memory.follow(state(), false);
    expect(memory.cannotJudge).to.equal(null);
  });

  it('a coordinator stepping down keeps its own verdicts, but hands no event on twice', () => {
    const memory = new TermMemory(SELF.address);
    const pending = deadA();
    memory.takeOver(state({ undelivered: [pending], cannotJudge: pending }));
    memory.keepOwnView([view(A, 'alive')]);
    expect(memory.inherited(NOW, null)).to.deep.equal([view(A, 'alive')]);
    expect(memory.undelivered).to.deep.equal([]);
    expect(memory.cannotJudge).to.equal(null);
  });
});
