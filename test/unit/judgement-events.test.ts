// Which peer-status events a verdict's transition decides, in the order they go out.
import { expect } from 'chai';
import { eventsOf } from '../../src/alerts/judgement-events.js';
import { incidentOf } from '../../src/wire/incident.js';
import { COORDINATOR } from '../support/alerts.js';
import { deadRecord, upRecord } from '../support/verdicts.js';

const T = Date.UTC(2025, 0, 1);
const up = upRecord('worker-2', '10.0.0.2', T - 60_000);
const dead = deadRecord(up, T);
const path = { sinceMs: T - 30_000, witnesses: ['worker-3@10.0.0.3'], alerted: true };

describe('eventsOf (a judgement → its events)', () => {
  it('a death is one peer_dead, of the incident that started when the peer went down', () => {
    const events = eventsOf({ record: dead, transition: 'died', incidentMs: T }, COORDINATOR, 4, T);
    expect(events.map((e) => [e.event, e.epoch])).to.deep.equal([['peer_dead', 4]]);
    expect(incidentOf(events[0]!)).to.equal(`knh:${up.address}:${T}`);
  });

  it('a peer behind a broken path that dies closes the path incident first, then is dead', () => {
    const events = eventsOf(
      { record: dead, transition: 'died', incidentMs: T, restoredPath: path },
      COORDINATOR,
      4,
      T,
    );
    expect(events.map((e) => e.event)).to.deep.equal(['path_restored', 'peer_dead']);
    expect(incidentOf(events[0]!)).to.equal(
      `knh:${COORDINATOR.address}->${up.address}:${path.sinceMs}`,
    );
    expect(events[0]!.path?.witnesses).to.deep.equal(path.witnesses);
  });

  it('a restored path names the relays that reached the peer meanwhile', () => {
    const [restored] = eventsOf(
      { record: up, transition: 'path-restored', incidentMs: path.sinceMs, restoredPath: path },
      COORDINATOR,
      4,
      T,
    );
    expect(restored?.event).to.equal('path_restored');
    expect(restored?.path?.witnesses).to.deep.equal(path.witnesses);
  });

  it('decides nothing for the transitions the receivers do not hear of', () => {
    for (const transition of [
      'suspected',
      'cleared',
      'first-alive',
      'never-alive',
      'withheld',
      null,
    ] as const) {
      expect(
        eventsOf({ record: up, transition, incidentMs: null }, COORDINATOR, 4, T),
        String(transition),
      ).to.deep.equal([]);
    }
  });
});
