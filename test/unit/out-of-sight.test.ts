// Nodes out of sight: a node that refuses the coordinator's signed messages gets one warning
// incident, KNH-valid, naming it, why and its clock; it ends when the node takes them again,
// leaves, or stops answering; a predecessor's incident is closed under its own key.
import { expect } from 'chai';
import {
  INHERITED_GRACE_MS,
  OutOfSight,
  sightPayload,
  UNAUTHENTICATED_AFTER_MS,
  type SightInput,
  type SightRefusal,
} from '../../src/alerts/out-of-sight.js';
import { alertOf } from '../../src/alerts/lifecycle.js';
import { incidentOf } from '../../src/wire/incident.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';

const schemas = loadSchemas();
const N7 = '10.0.0.7:8080';
const COORD = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const T = Date.UTC(2026, 10, 28);

function input(
  now: number,
  refusedBy: { address: string; reason: SightRefusal; sinceMs: number }[],
  {
    offsets = {},
    listed = [N7],
    dead = [],
  }: { offsets?: Record<string, number>; listed?: string[]; dead?: string[] } = {},
): SightInput {
  return {
    now,
    refusedBy,
    offsetOf: (a) => offsets[a] ?? 0,
    listed: (a) => listed.includes(a),
    answers: (a) => !dead.includes(a),
  };
}

const payloadOf = (
  sight: Parameters<typeof sightPayload>[0]['sight'],
  ended?: Parameters<typeof sightPayload>[0]['ended'],
) =>
  sightPayload({
    sight,
    ...(ended ? { ended } : {}),
    coordinator: COORD,
    epoch: 4,
    now: T + 10_000,
    ref: { id: 'node-7@10.0.0.7', node_name: 'node-7' },
    health: 'alive',
  });

describe('OutOfSight', () => {
  it('opens one incident for a node refusing for UNAUTHENTICATED_AFTER_MS, naming why and its clock', () => {
    const t = new OutOfSight();
    const refusing = [{ address: N7, reason: 'expired' as const, sinceMs: T }];
    expect(t.update(input(T + 1_000, refusing))).to.deep.equal([]);
    const [opened] = t.update(
      input(T + UNAUTHENTICATED_AFTER_MS, refusing, { offsets: { [N7]: 120_400 } }),
    );
    expect(opened?.type).to.equal('opened');
    expect(t.update(input(T + 5_000, refusing)), 'once').to.deep.equal([]);
    const payload = payloadOf(opened!.sight);
    expect(payload.event).to.equal('peer_unauthenticated');
    expect(payload.reason).to.match(
      /^node-7 refuses this coordinator's signed messages \(expired\): its clock is 120 s ahead of the coordinator's/,
    );
    expect(payload.auth).to.deep.equal({ refusal: 'expired', offset_ms: 120_400 });
    expect(payload.severity).to.equal('warning');
    expect(payload.peer.alive, 'it answers: never dead for this').to.equal(true);
    expect(payload.dedup_key).to.equal(`knh:auth:${N7}:${T}:unauthenticated`);
    expect(schemas.check('peer-status', payload)).to.deep.equal({ ok: true });
    expect(referenceErrors('knh-peer-status', payload), 'KNH-valid').to.deep.equal([]);
    expect(schemas.check('alert', alertOf(payload))).to.deep.equal({ ok: true });
  });

  it('says another secret for bad-signature, and closes when the node takes the messages again', () => {
    const t = new OutOfSight();
    const [opened] = t.update(
      input(T + 3_000, [{ address: N7, reason: 'bad-signature', sinceMs: T }]),
    );
    expect(payloadOf(opened!.sight).reason).to.match(/another PEER_SECRET/);
    const [closed] = t.update(input(T + 9_000, []));
    expect(closed).to.deep.include({ type: 'closed', why: 'takes' });
    const end = payloadOf(closed!.sight, 'takes');
    expect(end.event).to.equal('peer_authenticated');
    expect(incidentOf(end)).to.equal(incidentOf(payloadOf(opened!.sight)));
    expect(end.reason).to.equal("node-7 takes the coordinator's signed messages again");
    expect(schemas.check('peer-status', end)).to.deep.equal({ ok: true });
  });

  it('names a node whose answers to probes prove nothing, and closes when they are signed again', () => {
    const t = new OutOfSight();
    const [opened] = t.update(
      input(T + 3_000, [{ address: N7, reason: 'ping-unsigned', sinceMs: T }]),
    );
    const payload = payloadOf(opened!.sight);
    expect(payload.reason).to.match(
      /^node-7 answers this coordinator's probes unproven \(ping-unsigned\): .*something else answers for its address/,
    );
    expect(payload.auth).to.deep.equal({ refusal: 'ping-unsigned', offset_ms: null });
    expect(referenceErrors('knh-peer-status', payload), 'KNH-valid').to.deep.equal([]);
    // A node answering refusals of the coordinator's messages as well: the latest reason is kept.
    expect(
      t.update(input(T + 4_000, [{ address: N7, reason: 'bad-signature', sinceMs: T }])),
    ).to.deep.equal([]);
    expect(t.sights()[0]?.refusal).to.equal('bad-signature');
    const ping = new OutOfSight();
    ping.update(input(T + 3_000, [{ address: N7, reason: 'ping-bad-signature', sinceMs: T }]));
    const [closed] = ping.update(input(T + 9_000, []));
    expect(payloadOf(closed!.sight, 'takes').reason).to.equal(
      "node-7 answers the coordinator's probes signed again",
    );
  });

  it('names a node that answers unsigned: it has no PEER_SECRET', () => {
    const t = new OutOfSight();
    const [opened] = t.update(input(T + 3_000, [{ address: N7, reason: 'unsigned', sinceMs: T }]));
    const payload = payloadOf(opened!.sight);
    expect(payload.reason).to.match(
      /^node-7 answers this coordinator's signed messages unsigned: it has no PEER_SECRET set/,
    );
    expect(payload.auth).to.deep.equal({ refusal: 'unsigned', offset_ms: null });
    expect(schemas.check('peer-status', payload)).to.deep.equal({ ok: true });
    expect(referenceErrors('knh-peer-status', payload), 'KNH-valid').to.deep.equal([]);
  });

  it('closes when the node leaves the mesh, or is judged dead; ignores busy and replayed refusals', () => {
    const t = new OutOfSight();
    const bad = [{ address: N7, reason: 'bad-signature' as const, sinceMs: T }];
    t.update(input(T + 3_000, bad));
    expect(t.update(input(T + 4_000, bad, { dead: [N7] }))[0]).to.deep.include({ why: 'silent' });
    t.update(input(T + 7_000, bad));
    expect(t.update(input(T + 8_000, bad, { listed: [] }))[0]).to.deep.include({ why: 'left' });
    expect(
      t.update(input(T + 9_000, [{ address: N7, reason: 'busy', sinceMs: T }])),
      'busy is no proof of anything',
    ).to.deep.equal([]);
  });

  it("keeps a predecessor's incident while it is seen, and closes it under its key when it is not", () => {
    const t = new OutOfSight();
    const before = new OutOfSight();
    const [opened] = before.update(
      input(T + 3_000, [{ address: N7, reason: 'bad-signature', sinceMs: T }]),
    );
    const alert = alertOf(payloadOf(opened!.sight));
    t.inherit([alert], T + 20_000);
    expect(
      t.update(input(T + 21_000, [])),
      'not yet: it may not have refused here yet',
    ).to.deep.equal([]);
    const [closed] = t.update(input(T + 20_000 + INHERITED_GRACE_MS, []));
    expect(closed).to.deep.include({ type: 'closed', why: 'not-seen' });
    expect(incidentOf(payloadOf(closed!.sight, 'not-seen'))).to.equal(alert.key);
    // Seen refusing here: the inherited incident goes on, under its own key.
    const again = new OutOfSight();
    again.inherit([alert], T + 20_000);
    expect(
      again.update(
        input(T + 21_000, [{ address: N7, reason: 'bad-signature', sinceMs: T + 20_500 }]),
      ),
    ).to.deep.equal([]);
    expect(again.sights()[0]?.startMs).to.equal(T);
  });
});
