// An incident's identity: the dedup key of each of its events names it, and it is read back from
// any of them; every event opens an incident or resolves one.
import { expect } from 'chai';
import {
  eventKey,
  incidentKey,
  incidentOf,
  incidentStart,
  incidentSubject,
} from '../../src/wire/incident.js';
import { openingOf, RESOLVED_BY, type PeerStatusEvent } from '../../src/wire/webhooks.js';

const EVENTS: PeerStatusEvent[] = [
  'peer_dead',
  'peer_recovered',
  'path_broken',
  'path_restored',
  'cannot_judge',
  'can_judge',
];

describe('incident identity', () => {
  it('an event and its resolution name the same incident, read back with when it started', () => {
    const subjects = [
      incidentSubject.peer('[fd00::1]:8080'),
      incidentSubject.path('10.0.0.1:8080', '10.0.0.2:8080'),
      incidentSubject.judge('10.0.0.9:8080'),
    ];
    for (const subject of subjects) {
      const incident = incidentKey(subject, 1_234);
      for (const [opening, resolution] of Object.entries(RESOLVED_BY)) {
        const keys = [opening, resolution].map((e) => eventKey(incident, e as PeerStatusEvent));
        expect(keys[0]).to.not.equal(keys[1]);
        for (const dedup_key of keys) expect(incidentOf({ dedup_key })).to.equal(incident);
      }
      expect(incidentStart(incident)).to.equal(1_234);
    }
  });

  it('keeps the key format KNH-era receivers have seen', () => {
    const incident = incidentKey(incidentSubject.path('10.0.0.1:8080', '10.0.0.2:8080'), 5);
    expect(eventKey(incident, 'path_restored')).to.equal(
      'knh:10.0.0.1:8080->10.0.0.2:8080:5:path-restored',
    );
    expect(
      eventKey(incidentKey(incidentSubject.judge('10.0.0.9:8080'), 7), 'cannot_judge'),
    ).to.equal('knh:judge:10.0.0.9:8080:7:cannot-judge');
  });

  it('every event opens an incident or resolves one, whose opening names its kind', () => {
    expect(EVENTS.map(openingOf)).to.deep.equal([
      'peer_dead',
      'peer_dead',
      'path_broken',
      'path_broken',
      'cannot_judge',
      'cannot_judge',
    ]);
  });
});
