// Webhook payloads: valid against knh's schemas and against the original KNH's, which receivers use.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import Ajv04 from 'ajv-draft-04';
import { clusterStatusPayload, dedupKey, peerStatusPayload } from '../../src/alerts/payloads.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import { newRecord, type Judgement } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { alive, answersAgain, confirmed, failing } from '../support/verdicts.js';

const FIXTURES = new URL('../../../test/fixtures/knh-reference/', import.meta.url);
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as unknown;

interface ReferenceSchema {
  properties: { peer_map?: { items: object[] } };
}
const peerSchema = fixture('knh-peer-status.schema.json') as ReferenceSchema;
const clusterSchema = fixture('knh-cluster-status.schema.json') as ReferenceSchema;

// ajv-draft-04 is CommonJS: under NodeNext its class is the default import's `default` property.
// KNH's tuple-form `items` is deliberate here, so ajv's strict warning about it is turned off.
const ajv04 = new Ajv04.default({ allErrors: true, strictTuples: false });
const validatePeer04 = ajv04.compile(peerSchema);
const validateCluster04 = ajv04.compile(clusterSchema);
// KNH wrote peer_map's items in tuple form, which only constrains the first element; check each.
const peerMapItem = clusterSchema.properties.peer_map?.items[0];
if (!peerMapItem) throw new Error('the reference cluster schema has no peer_map item schema');
const validatePeerMapItem04 = ajv04.compile(peerMapItem);

const schemas = loadSchemas();

function expectValidReference(validate: typeof validatePeer04, value: unknown, what: string) {
  const ok = validate(value);
  expect(ok, `${what}: ${JSON.stringify(validate.errors)}`).to.be.true;
}

function expectValidPeerStatus(p: PeerStatusPayload, what: string) {
  expect(schemas.check('peer-status', p), what).to.deep.equal({ ok: true });
  expectValidReference(validatePeer04, p, `${what} (KNH)`);
}

function expectValidClusterStatus(p: ClusterStatusPayload, what: string) {
  expect(schemas.check('cluster-status', p), what).to.deep.equal({ ok: true });
  expectValidReference(validateCluster04, p, `${what} (KNH)`);
  p.peer_map.forEach((item, i) =>
    expectValidReference(validatePeerMapItem04, item, `${what} peer_map[${i}] (KNH)`),
  );
}

const T0 = Date.UTC(2025, 4, 1, 12, 0, 0);
const coordinator: NodeRef = { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' };
const REFUSED = 'refused (ECONNREFUSED) after 3 attempts';

/** Node `nodeName` at `address` answering at T0, by the id it tells (`name@ip`, IPv6 unbracketed). */
const seen = (address: string, nodeName: string) =>
  alive(address, `${nodeName}@${address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}`, T0, 2);

function payload(j: Judgement, event: PeerStatusPayload['event'], now: number) {
  return peerStatusPayload({
    record: j.record,
    event,
    incidentMs: j.incidentMs ?? -1,
    coordinator,
    epoch: 3,
    now,
    ...(j.restoredPath ? { witnesses: j.restoredPath.witnesses } : {}),
  });
}

/** A peer seen alive at T0, dead at T0+10s (alerted), alive again at T0+70s. */
function incident(address = '10.0.0.5:8080', nodeName = 'worker-5') {
  const up = seen(address, nodeName);
  const died = confirmed(up.record, T0 + 9_000, { detail: REFUSED }).verdict;
  const recovered = answersAgain(died.record, T0 + 70_000, 2);
  expect([up.transition, died.transition, recovered.transition]).to.deep.equal([
    'first-alive',
    'died',
    'recovered',
  ]);
  return {
    dead: payload(died, 'peer_dead', T0 + 10_000),
    deadAgain: payload(died, 'peer_dead', T0 + 12_345),
    recovered: payload(recovered, 'peer_recovered', T0 + 70_000),
  };
}

/** The coordinator cannot reach a peer from T0+9s, relays can; it is reachable again at T0+70s. */
function brokenPath(address = '10.0.0.5:8080', nodeName = 'worker-5') {
  const up = seen(address, nodeName);
  const reachedBy = ['worker-1@10.0.0.1', 'worker-2@10.0.0.2'];
  const broken = confirmed(up.record, T0 + 9_000, { reachedBy, detail: REFUSED }).verdict;
  const restored = answersAgain(broken.record, T0 + 70_000, 2);
  expect([broken.transition, restored.transition]).to.deep.equal(['path-broken', 'path-restored']);
  return {
    record: broken.record,
    broken: payload(broken, 'path_broken', T0 + 10_000),
    restored: payload(restored, 'path_restored', T0 + 70_000),
  };
}

const noSuspicion = { suspect: false, unreachable: 0 };

describe('webhook payloads', () => {
  it("KNH's example payloads are valid against KNH's schemas (fixture sanity)", () => {
    expectValidReference(validatePeer04, fixture('knh-peer-status.example.json'), 'peer example');
    const cluster = fixture('knh-cluster-status.example.json') as { peer_map: unknown[] };
    expectValidReference(validateCluster04, cluster, 'cluster example');
    for (const item of cluster.peer_map) expectValidReference(validatePeerMapItem04, item, 'item');
  });

  it("KNH's schemas do reject a payload without its fields (the validator is live)", () => {
    expect(validatePeer04({ peer: { id: 'x' }, coordinator: 'c' })).to.be.false;
    expect(validatePeerMapItem04({ id: 'x', address: 'a', alive: 'yes', node_name: 'n' })).to.be
      .false;
  });

  it('peer_dead and peer_recovered are valid against both schemas', () => {
    const { dead, recovered } = incident();
    expectValidPeerStatus(dead, 'peer_dead');
    expectValidPeerStatus(recovered, 'peer_recovered');
    expect(dead).to.deep.include({
      coordinator: coordinator.id,
      coordinator_address: coordinator.address,
      event: 'peer_dead',
      epoch: 3,
      timestamp: new Date(T0 + 10_000).toISOString(),
      reason: REFUSED,
    });
    expect(dead.peer).to.deep.equal({
      id: 'worker-5@10.0.0.5',
      address: '10.0.0.5:8080',
      alive: false,
      node_name: 'worker-5',
      health: 'dead',
      path_broken: false,
      since: new Date(T0 + 10_000).toISOString(),
    });
    expect(dead).to.not.have.property('path');
    expect(recovered.peer.alive).to.be.true;
    expect(recovered).to.not.have.property('reason');
    expect(recovered).to.not.have.property('path');
  });

  it('an IPv6 peer is valid against both schemas', () => {
    const { dead, recovered } = incident('[fd00::5]:8080', 'worker-5');
    expectValidPeerStatus(dead, 'IPv6 peer_dead');
    expectValidPeerStatus(recovered, 'IPv6 peer_recovered');
    expect(dead.peer.id).to.equal('worker-5@fd00::5');
    const { broken, restored } = brokenPath('[fd00::5]:8080', 'worker-5');
    expectValidPeerStatus(broken, 'IPv6 path_broken');
    expectValidPeerStatus(restored, 'IPv6 path_restored');
  });

  it('path_broken and path_restored are valid against both schemas and name the path', () => {
    const { broken, restored } = brokenPath();
    expectValidPeerStatus(broken, 'path_broken');
    expectValidPeerStatus(restored, 'path_restored');
    const path = {
      from: coordinator.id,
      to: 'worker-5@10.0.0.5',
      witnesses: ['worker-1@10.0.0.1', 'worker-2@10.0.0.2'],
    };
    expect(broken).to.deep.include({ event: 'path_broken', reason: REFUSED, path });
    expect(broken.peer).to.deep.include({ alive: true, health: 'alive', path_broken: true });
    // The peer was never dead: since is when it became alive.
    expect(broken.peer.since).to.equal(new Date(T0).toISOString());
    expect(restored).to.deep.include({ event: 'path_restored', path });
    expect(restored).to.not.have.property('reason');
    expect(restored.peer).to.deep.include({ alive: true, path_broken: false });
  });

  it('cluster status is valid against both schemas, for every health, reason and suspicion', () => {
    const up = seen('10.0.0.1:8080', 'worker-1');
    const dead = confirmed(up.record, T0 + 1, { detail: REFUSED }).verdict.record;
    const unknown = newRecord('[fd00::2]:8080', T0);
    const suspect = failing(up.record, T0 + 2, { detail: REFUSED }).record;
    const { record: broken } = brokenPath('10.0.0.4:8080', 'worker-4');
    const records = [up.record, dead, unknown, suspect, broken];
    for (const reason of ['election', 'change', 'periodic'] as const) {
      for (const sanity of ['ok', 'failed', 'not-configured'] as const) {
        for (const selfSuspicion of [noSuspicion, { suspect: true, unreachable: 3 }]) {
          const what = `${reason}/${sanity}/${String(selfSuspicion.suspect)}`;
          const payload = clusterStatusPayload({
            startGraceMs: 0,
            records,
            coordinator,
            epoch: 2,
            reason,
            sanity,
            selfSuspicion,
            now: T0 + 5,
          });
          expectValidClusterStatus(payload, what);
          expect(payload, what).to.deep.include({
            sanity_check: sanity,
            self_suspect: selfSuspicion.suspect,
            unreachable_peers: selfSuspicion.unreachable,
          });
          expect(payload.peer_map.map((p) => [p.health, p.path_broken])).to.deep.equal([
            ['alive', false],
            ['dead', false],
            ['unknown', false],
            ['suspect', false],
            ['alive', true],
          ]);
        }
      }
    }
  });

  it('leaves a peer that has never answered out for START_GRACE, counting it, then lists it dead', () => {
    const up = seen('10.0.0.1:8080', 'worker-1');
    const starting = newRecord('10.0.0.2:8080', T0, 'worker-2');
    const refusedSoFar = confirmed(starting, T0, { detail: REFUSED }).verdict.record;
    expect(refusedSoFar).to.deep.include({ health: 'dead', alerted: false, sinceMs: T0 });
    const status = (now: number) =>
      clusterStatusPayload({
        startGraceMs: 60_000,
        records: [up.record, refusedSoFar],
        coordinator,
        epoch: 2,
        reason: 'change',
        sanity: 'ok',
        selfSuspicion: noSuspicion,
        now,
      });
    const early = status(T0 + 59_999);
    expect(
      early.peer_map.map((p) => p.address),
      'still starting',
    ).to.deep.equal(['10.0.0.1:8080']);
    expect(early.unseen_peers).to.equal(1);
    expectValidClusterStatus(early, 'early');
    const late = status(T0 + 60_000);
    expect(late.peer_map.map((p) => [p.id, p.alive])).to.deep.equal([
      ['worker-1@10.0.0.1', true],
      ['worker-2@10.0.0.2', false],
    ]);
    expect(late.unseen_peers).to.equal(0);
  });

  it('shows a peer that is only suspect as alive: it has not been declared dead', () => {
    const up = seen('10.0.0.1:8080', 'worker-1');
    const suspect = failing(up.record, T0 + 2, { detail: REFUSED }).record;
    const payload = clusterStatusPayload({
      startGraceMs: 0,
      records: [up.record, suspect],
      coordinator,
      epoch: 2,
      reason: 'change',
      sanity: 'ok',
      selfSuspicion: noSuspicion,
      now: T0 + 5,
    });
    // schemas/peer.schema.json: "a suspect peer (a probe failed, confirmation running) is still
    // alive=true"; a KNH receiver that reads alive=false takes it for dead.
    expect(payload.peer_map.map((p) => [p.health, p.alive])).to.deep.equal([
      ['alive', true],
      ['suspect', true],
    ]);
  });

  it('an empty cluster is valid against both schemas', () => {
    const payload = clusterStatusPayload({
      startGraceMs: 0,
      records: [],
      coordinator,
      epoch: 1,
      reason: 'election',
      sanity: 'not-configured',
      selfSuspicion: noSuspicion,
      now: T0,
    });
    expectValidClusterStatus(payload, 'empty');
  });

  it("knh's schemas reject a dead alert that says the peer is alive, and a path event saying it is dead", () => {
    const { dead } = incident();
    const wrong = { ...dead, peer: { ...dead.peer, alive: true } };
    expect(schemas.check('peer-status', wrong).ok).to.be.false;
    const { broken } = brokenPath();
    expect(schemas.check('peer-status', { ...broken, peer: { ...broken.peer, alive: false } }).ok)
      .to.be.false;
  });

  describe('dedup_key', () => {
    it('is the same for every delivery of the same transition', () => {
      const { dead, deadAgain } = incident();
      expect(deadAgain.timestamp).to.not.equal(dead.timestamp);
      expect(deadAgain.dedup_key).to.equal(dead.dedup_key);
    });

    it('differs between the dead alert and its recovery, which share the incident', () => {
      const { dead, recovered } = incident();
      expect(recovered.dedup_key).to.not.equal(dead.dedup_key);
      const stem = (key: string) => key.slice(0, key.lastIndexOf(':'));
      expect(stem(recovered.dedup_key)).to.equal(stem(dead.dedup_key));
    });

    it('differs between two incidents of the same peer and between peers', () => {
      const keys = new Set([
        dedupKey('peer_dead', '10.0.0.5:8080', T0),
        dedupKey('peer_dead', '10.0.0.5:8080', T0 + 1),
        dedupKey('peer_dead', '10.0.0.6:8080', T0),
        dedupKey('peer_recovered', '10.0.0.5:8080', T0),
        dedupKey('path_broken', '10.0.0.5:8080', T0, '10.0.0.9:8080'),
        dedupKey('path_broken', '10.0.0.5:8080', T0, '10.0.0.8:8080'),
        dedupKey('path_restored', '10.0.0.5:8080', T0, '10.0.0.9:8080'),
      ]);
      expect(keys.size).to.equal(7);
    });

    it('names the path from->to for path events, shared by the break and its restoration', () => {
      const { broken, restored } = brokenPath();
      expect(broken.dedup_key).to.include(`${coordinator.address}->10.0.0.5:8080`);
      expect(broken.dedup_key).to.include(String(T0 + 9_000));
      const stem = (key: string) => key.slice(0, key.lastIndexOf(':'));
      expect(stem(restored.dedup_key)).to.equal(stem(broken.dedup_key));
      expect(restored.dedup_key).to.not.equal(broken.dedup_key);
      const { dead } = incident();
      expect(broken.dedup_key).to.not.equal(dead.dedup_key);
    });
  });
});
