// Webhook payloads: valid against knh's schemas and against the original KNH's, which receivers use.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import Ajv04 from 'ajv-draft-04';
import {
  clusterStatusPayload,
  dedupKey,
  peerStatusPayload,
  type ClusterStatusPayload,
  type PeerStatusPayload,
} from '../../src/alerts/payloads.js';
import type { NodeRef } from '../../src/core/node-ref.js';
import { judge, newRecord, type PeerRecord, type ProbeResult } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';

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
const up = (address: string, nodeName: string): ProbeResult => ({
  ok: true,
  latencyMs: 2,
  id: `${nodeName}@${address.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')}`,
  nodeName,
});
const down: ProbeResult = { ok: false, latencyMs: 1_000, failure: 'refused (ECONNREFUSED)' };
const judged = (r: PeerRecord, result: ProbeResult, now: number) =>
  judge(r, result, now, { withholdDeath: false });

/** A peer seen alive at T0, dead at T0+10s (alerted), alive again at T0+70s. */
function incident(address = '10.0.0.5:8080', nodeName = 'worker-5') {
  const alive = judged(newRecord(address, T0), up(address, nodeName), T0);
  const died = judged(alive.record, down, T0 + 10_000);
  const recovered = judged(died.record, up(address, nodeName), T0 + 70_000);
  expect([died.transition, recovered.transition]).to.deep.equal(['died', 'recovered']);
  const payload = (j: typeof died, event: PeerStatusPayload['event'], now: number) =>
    peerStatusPayload({
      record: j.record,
      event,
      incidentMs: j.incidentMs ?? -1,
      coordinator,
      epoch: 3,
      now,
    });
  return {
    dead: payload(died, 'peer_dead', T0 + 10_000),
    deadAgain: payload(died, 'peer_dead', T0 + 12_345),
    recovered: payload(recovered, 'peer_recovered', T0 + 70_000),
  };
}

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
      reason: 'refused (ECONNREFUSED)',
    });
    expect(dead.peer).to.deep.equal({
      id: 'worker-5@10.0.0.5',
      address: '10.0.0.5:8080',
      alive: false,
      node_name: 'worker-5',
      health: 'dead',
      since: new Date(T0 + 10_000).toISOString(),
    });
    expect(recovered.peer.alive).to.be.true;
    expect(recovered).to.not.have.property('reason');
  });

  it('an IPv6 peer is valid against both schemas', () => {
    const { dead, recovered } = incident('[fd00::5]:8080', 'worker-5');
    expectValidPeerStatus(dead, 'IPv6 peer_dead');
    expectValidPeerStatus(recovered, 'IPv6 peer_recovered');
    expect(dead.peer.id).to.equal('worker-5@fd00::5');
  });

  it('cluster status is valid against both schemas, for every health and reason', () => {
    const alive = judged(newRecord('10.0.0.1:8080', T0), up('10.0.0.1:8080', 'worker-1'), T0);
    const dead = judged(alive.record, down, T0 + 1).record;
    const unknown = newRecord('[fd00::2]:8080', T0);
    for (const reason of ['election', 'change', 'periodic'] as const) {
      for (const sanity of ['ok', 'failed', 'not-configured'] as const) {
        const payload = clusterStatusPayload({
          records: [alive.record, dead, unknown],
          coordinator,
          epoch: 2,
          reason,
          sanity,
          now: T0 + 5,
        });
        expectValidClusterStatus(payload, `${reason}/${sanity}`);
        expect(payload.peer_map.map((p) => [p.alive, p.health])).to.deep.equal([
          [true, 'alive'],
          [false, 'dead'],
          [false, 'unknown'],
        ]);
      }
    }
  });

  it('an empty cluster is valid against both schemas', () => {
    const payload = clusterStatusPayload({
      records: [],
      coordinator,
      epoch: 1,
      reason: 'election',
      sanity: 'not-configured',
      now: T0,
    });
    expectValidClusterStatus(payload, 'empty');
  });

  it("knh's schemas reject a dead alert that says the peer is alive", () => {
    const { dead } = incident();
    const wrong = { ...dead, peer: { ...dead.peer, alive: true } };
    expect(schemas.check('peer-status', wrong).ok).to.be.false;
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
      ]);
      expect(keys.size).to.equal(4);
    });
  });
});
