// Flap damping: a peer that goes down and up pages once, says once that it flaps, and is resolved
// once it has been stable; a real failure's first page is not delayed.
import { expect } from 'chai';
import { FlapDamper, type FlapSettings } from '../../src/alerts/flap-damper.js';
import { incidentOf } from '../../src/wire/incident.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { deadPayload, deathAndRecovery } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { loadSchemas } from '../../src/wire/schemas.js';

const schemas = loadSchemas();

const DEFAULTS: FlapSettings = {
  recoveryHoldMs: 10_000,
  windowMs: 60_000,
  changes: 4,
  stableMs: 30_000,
};

const A = upRecord('a', '10.0.0.1', 1);

interface Sent {
  at: number;
  payload: PeerStatusPayload;
}

/**
 * Drives a damper through `changes` (a peer's events, in time order), asking it every 100 ms for
 * what is due, until `untilMs`: what it sends, and when.
 */
function drive(
  damper: FlapDamper,
  changes: readonly { at: number; payload: PeerStatusPayload }[],
  untilMs: number,
): Sent[] {
  const sent: Sent[] = [];
  let next = 0;
  for (let now = 0; now <= untilMs; now += 100) {
    for (const p of damper.due(now)) sent.push({ at: now, payload: p });
    while (next < changes.length && changes[next]!.at <= now) {
      const { payload } = changes[next++]!;
      const d =
        payload.event === 'peer_dead' || payload.event === 'path_broken'
          ? damper.failed(payload, now)
          : damper.recovered(payload, now);
      for (const p of d.send) sent.push({ at: now, payload: p });
    }
  }
  return sent;
}

/** A link down `downMs` and up `upMs`, `cycles` times from 2 s: each death, then its recovery. */
function flapping(cycles: number, downMs: number, upMs: number) {
  const out: { at: number; payload: PeerStatusPayload }[] = [];
  for (let i = 0; i < cycles; i++) {
    const at = 2_000 + i * (downMs + upMs);
    const [dead, recovered] = deathAndRecovery(A, at, at + downMs);
    out.push({ at, payload: dead }, { at: at + downMs, payload: recovered });
  }
  return out;
}

const events = (sent: Sent[]) => sent.map((s) => s.payload.event);

describe('FlapDamper', () => {
  it('sends the first peer_dead at once, and its recovery once the peer stayed up for RECOVERY_HOLD', () => {
    const [dead, recovered] = deathAndRecovery(A, 2_000, 20_000);
    const sent = drive(
      new FlapDamper(DEFAULTS),
      [
        { at: 2_000, payload: dead },
        { at: 20_000, payload: recovered },
      ],
      60_000,
    );
    expect(sent.map((s) => [s.at, s.payload.event])).to.deep.equal([
      [2_000, 'peer_dead'],
      [30_000, 'peer_recovered'],
    ]);
    expect(sent[1]!.payload).to.deep.equal(recovered);
  });

  it('continues the same incident when the peer is down again within the hold: no second page', () => {
    // Four changes would make it flapping (next test): here only the hold is at work.
    const damper = new FlapDamper({ ...DEFAULTS, changes: 0 });
    const [dead1, recovered1] = deathAndRecovery(A, 2_000, 5_000);
    const [dead2, recovered2] = deathAndRecovery(A, 9_000, 12_000);
    expect(damper.failed(dead1, 2_000).send).to.deep.equal([dead1]);
    const held = damper.recovered(recovered1, 5_000);
    expect(held.send).to.deep.equal([]);
    expect(held.hidden).to.equal(true);
    const again = damper.failed(dead2, 9_000);
    expect(again.send).to.deep.equal([]);
    expect(again.cancelled, 'the held recovery is dropped').to.deep.equal(recovered1);
    const back = damper.recovered(recovered2, 12_000);
    expect(back.held!.dedup_key, 'resolves the incident the receivers know').to.equal(
      `${incidentOf(dead1)}:recovered`,
    );
    expect(damper.due(21_999)).to.deep.equal([]);
    const [final] = damper.due(22_000);
    expect(final!.event).to.equal('peer_recovered');
    expect(final!.dedup_key).to.equal(`${incidentOf(dead1)}:recovered`);
    expect(damper.nextDue()).to.equal(null);
  });

  it('a link flapping every few seconds for a minute: three events in all, the first at once', () => {
    // Down 3 s, up 3 s, ten times (a minute), then up for good.
    const sent = drive(new FlapDamper(DEFAULTS), flapping(10, 3_000, 3_000), 150_000);
    expect(events(sent)).to.deep.equal(['peer_dead', 'peer_flapping', 'peer_recovered']);
    expect(sent[0]!.at).to.equal(2_000);
    const stem = incidentOf(sent[0]!.payload);
    expect(
      sent.map((s) => incidentOf(s.payload)),
      'one incident',
    ).to.deep.equal([stem, stem, stem]);
    // Flapping after the 4th change (down, up, down, up): the second recovery, at 11 s.
    expect(sent[1]!.at).to.equal(11_000);
    expect(sent[1]!.payload.reason).to.match(/went down and up 4 times in 9 s/);
    for (const { payload } of sent) {
      expect(schemas.check('peer-status', payload), payload.event).to.deep.equal({ ok: true });
      expect(referenceErrors('knh-peer-status', payload), 'KNH-valid').to.deep.equal([]);
    }
    // The last recovery (at 59 s) stays up FLAP_STABLE: resolved at 89 s, saying why so late.
    expect(sent[2]!.at).to.equal(89_000);
    expect(sent[2]!.payload.reason).to.match(/up for 30 s after flapping/);
  });

  it('a flapping peer that then stays down: its final state is a second peer_dead, keyed dead-stable', () => {
    const changes = [...flapping(3, 2_000, 2_000), { at: 14_000, payload: deadPayload(A, 14_000) }];
    const sent = drive(new FlapDamper(DEFAULTS), changes, 100_000);
    expect(events(sent)).to.deep.equal(['peer_dead', 'peer_flapping', 'peer_dead']);
    expect(sent[2]!.at).to.equal(44_000);
    expect(sent[2]!.payload.dedup_key).to.equal(`${incidentOf(sent[0]!.payload)}:dead-stable`);
    expect(sent[2]!.payload.peer.alive).to.equal(false);
    expect(schemas.check('peer-status', sent[2]!.payload)).to.deep.equal({ ok: true });
  });

  it('a slower flap (up longer than the hold): changes count across incidents, so it flaps too', () => {
    // Down 5 s, up 12 s: the first recovery goes; the 4th change (the second recovery) flaps.
    const sent = drive(new FlapDamper(DEFAULTS), flapping(4, 5_000, 12_000), 200_000);
    expect(events(sent)).to.deep.equal([
      'peer_dead',
      'peer_recovered',
      'peer_dead',
      'peer_flapping',
      'peer_recovered',
    ]);
    // The second incident's: the first was resolved.
    expect(incidentOf(sent[3]!.payload)).to.equal(incidentOf(sent[2]!.payload));
    expect(incidentOf(sent[4]!.payload)).to.equal(incidentOf(sent[2]!.payload));
  });

  it('sends every event at once with RECOVERY_HOLD 0 and FLAP_CHANGES 0', () => {
    const damper = new FlapDamper({ ...DEFAULTS, recoveryHoldMs: 0, changes: 0 });
    const sent = drive(damper, flapping(3, 3_000, 3_000), 30_000);
    expect(events(sent)).to.deep.equal([
      'peer_dead',
      'peer_recovered',
      'peer_dead',
      'peer_recovered',
      'peer_dead',
      'peer_recovered',
    ]);
  });

  it("resolves at once a death it did not send (a predecessor's)", () => {
    const [, recovered] = deathAndRecovery(A, 2_000, 5_000);
    expect(new FlapDamper(DEFAULTS).recovered(recovered, 5_000).send).to.deep.equal([recovered]);
  });

  it("forgets a peer's changes once they are older than the window", () => {
    const damper = new FlapDamper(DEFAULTS);
    const [dead, recovered] = deathAndRecovery(A, 2_000, 5_000);
    damper.failed(dead, 2_000);
    damper.recovered(recovered, 5_000);
    expect(damper.due(15_000)).to.have.length(1);
    expect(damper.size, 'its changes still count towards a flap').to.equal(1);
    damper.sweep(70_000);
    expect(damper.size).to.equal(0);
  });

  it('gives back the held recovery of a peer that left, and forgets it', () => {
    const damper = new FlapDamper(DEFAULTS);
    const [dead, recovered] = deathAndRecovery(A, 2_000, 5_000);
    damper.failed(dead, 2_000);
    damper.recovered(recovered, 5_000);
    expect(damper.forget(A.address)).to.deep.equal([recovered]);
    expect(damper.size).to.equal(0);
    expect(damper.nextDue()).to.equal(null);
  });
});
