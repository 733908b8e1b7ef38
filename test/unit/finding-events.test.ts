// The events of the coordinator's findings: KNH's fields (valid against KNH's own schema and
// knh's), the peer each is about, alive, at warning severity, with its own facts; one incident's
// opening and closing share a dedup key stem that names what it is about and when it started.
import { expect } from 'chai';
import { findingPayload } from '../../src/alerts/finding-events.js';
import type { OpenFinding } from '../../src/paths/finding-tracker.js';
import type { Finding } from '../../src/paths/path-state.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { incidentOf } from '../../src/wire/incident.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';

const schemas = loadSchemas();
const COORD = { id: 'n1@10.0.0.1', address: '10.0.0.1:8080' };
const refOf = (address: string) => {
  const ip = address.split(':')[0]!;
  return { id: `n${ip.split('.')[3]}@${ip}`, node_name: `n${ip.split('.')[3]}` };
};
const STATS = { samples: 40, failures: 10, lossRatio: 0.25, p50Ms: 12.34, p99Ms: 480 };

function events(f: Finding) {
  const open: OpenFinding = { id: 'x', opened: f, latest: f, openedMs: 5_000 };
  const args = {
    finding: open,
    startMs: 4_000,
    coordinator: COORD,
    epoch: 7,
    now: 6_000,
    refOf,
    figures: STATS,
  };
  return {
    opening: findingPayload({ ...args, closing: false }),
    closing: findingPayload({ ...args, closing: true }),
  };
}

const FINDINGS: Finding[] = [
  { kind: 'path-broken', from: '10.0.0.2:8080', to: '10.0.0.3:8080', witnesses: ['10.0.0.4:8080'] },
  { kind: 'node-degraded', node: '10.0.0.3:8080' },
  { kind: 'path-degraded', from: '10.0.0.2:8080', to: '10.0.0.3:8080' },
  { kind: 'node-mtu', node: '10.0.0.3:8080', size: 1_400 },
  { kind: 'path-mtu', from: '10.0.0.2:8080', to: '10.0.0.3:8080', size: 1_400 },
  {
    kind: 'egress-broken',
    node: '10.0.0.3:8080',
    reaches: [],
    reachedBy: ['10.0.0.2:8080', '10.0.0.4:8080'],
  },
  {
    kind: 'partition',
    sides: [
      ['10.0.0.1:8080', '10.0.0.2:8080'],
      ['10.0.0.3:8080', '10.0.0.4:8080'],
    ],
  },
];

describe('finding events', () => {
  for (const f of FINDINGS) {
    it(`${f.kind}: valid for knh and KNH, alive, a warning, opening and closing one incident`, () => {
      const { opening, closing } = events(f);
      for (const e of [opening, closing]) {
        expect(schemas.check('peer-status', e), e.event).to.deep.equal({ ok: true });
        expect(referenceErrors('knh-peer-status', e), e.event).to.deep.equal([]);
        expect(e.severity).to.equal('warning');
        expect(e.peer.alive).to.equal(true);
        expect(e).to.deep.include({ coordinator: COORD.id, epoch: 7 });
      }
      expect(incidentOf(opening)).to.equal(incidentOf(closing));
      expect(incidentOf(opening)).to.match(/:4000$/);
      expect(opening.dedup_key).to.not.equal(closing.dedup_key);
    });
  }

  it('names the path by node ids, with its witnesses, and keys it by addresses', () => {
    const { opening, closing } = events(FINDINGS[0]!);
    expect(opening.event).to.equal('path_broken');
    expect(closing.event).to.equal('path_restored');
    expect(opening.peer).to.deep.include({ address: '10.0.0.3:8080', id: 'n3@10.0.0.3' });
    expect(opening.path).to.deep.equal({
      from: 'n2@10.0.0.2',
      to: 'n3@10.0.0.3',
      witnesses: ['n4@10.0.0.4'],
    });
    expect(opening.dedup_key).to.equal('knh:10.0.0.2:8080->10.0.0.3:8080:4000:path-broken');
  });

  it('gives a degraded node its figures, an MTU its size, a partition its sides', () => {
    const degraded = events(FINDINGS[1]!).opening;
    expect(degraded.event).to.equal('peer_degraded');
    expect(degraded.figures).to.deep.equal({
      samples: 40,
      loss_ratio: 0.25,
      p50_ms: 12.3,
      p99_ms: 480,
    });
    expect(events(FINDINGS[1]!).closing.event).to.equal('peer_healthy');
    expect(events(FINDINGS[3]!).opening).to.deep.include({
      event: 'peer_mtu',
      mtu: { size: 1_400 },
    });
    const partition = events(FINDINGS[6]!).opening;
    expect(partition.event).to.equal('partition');
    expect(partition.peer.address, 'the mesh: its coordinator').to.equal(COORD.address);
    expect(partition.partition?.sides).to.have.length(2);
    expect(events(FINDINGS[6]!).closing.event).to.equal('partition_healed');
  });
});
