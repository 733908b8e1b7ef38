// The alert hold: which alerts a maintenance window keeps back, which resolutions cancel them, and
// what goes out when the window is over.
import { expect } from 'chai';
import { MaintenanceHold } from '../../src/alerts/maintenance-hold.js';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import { incidentOf } from '../../src/wire/incident.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { pausing } from '../../src/maintenance/windows.js';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import { maintenanceWindow } from '../support/maintenance-window.js';
import { FINDINGS, findingIncident } from '../support/alerts.js';

const T = Date.UTC(2025, 0, 1);
const MIN = 60_000;
const COORDINATOR = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };

function record(name: string, address: string, over: Partial<PeerRecord> = {}): PeerRecord {
  const ip = address.slice(0, address.lastIndexOf(':'));
  return { ...newRecord(address, T), id: `${name}@${ip}`, nodeName: name, ...over };
}

const A = record('node-a', '10.0.0.1:8080');
const B = record('node-b', '10.0.0.2:8080');

function payload(
  peer: PeerRecord,
  event: PeerStatusPayload['event'],
  incidentMs: number,
): PeerStatusPayload {
  const dead = event === 'peer_dead';
  const broken = event === 'path_broken';
  return peerStatusPayload({
    record: {
      ...peer,
      health: dead ? 'dead' : 'alive',
      alerted: dead,
      lastFailure: dead || broken ? 'refused' : null,
      brokenPath: broken ? { sinceMs: incidentMs, witnesses: ['w@10.0.0.5'], alerted: true } : null,
    },
    event,
    incidentMs,
    coordinator: COORDINATOR,
    epoch: 3,
    now: incidentMs,
  });
}

/** A hold over a window list the test changes, as main wires it to the book. */
function hold(initial: MaintenanceWindow[]) {
  let windows = initial;
  const h = new MaintenanceHold((peer, now) => pausing(windows, peer, now));
  return { h, set: (w: MaintenanceWindow[]) => (windows = w) };
}

describe('MaintenanceHold', () => {
  it('sends alerts about a peer no window pauses', () => {
    const { h } = hold([maintenanceWindow('w', T + 10 * MIN)]);
    expect(h.admit(payload(A, 'peer_dead', T), T)).to.deep.equal({ send: true });
    expect(h.size).to.equal(0);
  });

  it('holds a peer_dead or path_broken about a paused peer, naming the window', () => {
    const w = maintenanceWindow('w', T);
    const { h } = hold([w]);
    expect(h.admit(payload(A, 'peer_dead', T + MIN), T + MIN)).to.deep.equal({
      send: false,
      window: w,
      cancels: null,
    });
    expect(h.admit(payload(B, 'path_broken', T + MIN), T + MIN)).to.deep.equal({
      send: false,
      window: w,
      cancels: null,
    });
    expect(h.size).to.equal(2);
  });

  it('holds a finding about a path or a partition when any node it names is paused', () => {
    const paused = (node: string) =>
      hold([maintenanceWindow('w', T, { scope: 'nodes', nodes: [node] })]);
    const path = findingIncident(FINDINGS.pathDegraded, T + MIN, T + 2 * MIN).opening;
    // The path from worker-2 to worker-3: its peer is worker-3, and worker-2 is paused.
    expect(paused('worker-2').h.admit(path, T + MIN).send).to.equal(false);
    expect(paused('worker-9').h.admit(path, T + MIN).send).to.equal(true);
    const lead = { id: 'worker-9@10.0.0.9', address: '10.0.0.9:8080' };
    const split = findingIncident(FINDINGS.partition, T + MIN, T + 2 * MIN, {
      coordinator: lead,
    }).opening;
    expect(paused(FINDINGS.partition.sides[1]![0]!).h.admit(split, T + MIN).send).to.equal(false);
    expect(
      paused(lead.address).h.admit(split, T + MIN).send,
      'its peer, the coordinator, is not what it is about',
    ).to.equal(true);
  });

  it('cancels a held opening with its resolution: neither is sent, nothing is left to release', () => {
    const { h } = hold([maintenanceWindow('w', T)]);
    const dead = payload(A, 'peer_dead', T + MIN);
    h.admit(dead, T + MIN);
    const recovered = payload(A, 'peer_recovered', T + MIN);
    expect(h.admit(recovered, T + 2 * MIN)).to.deep.equal({
      send: false,
      window: null,
      cancels: dead.dedup_key,
    });
    expect(h.size).to.equal(0);
    expect(h.release(T + 60 * MIN)).to.deep.equal([]);
  });

  it('cancels a held path_broken with its path_restored', () => {
    const { h } = hold([maintenanceWindow('w', T)]);
    const broken = payload(A, 'path_broken', T + MIN);
    h.admit(broken, T + MIN);
    expect(h.admit(payload(A, 'path_restored', T + MIN), T + 2 * MIN)).to.deep.include({
      send: false,
      cancels: broken.dedup_key,
    });
    expect(h.size).to.equal(0);
  });

  it('sends a resolution whose opening was not held (it went out before the window)', () => {
    const { h } = hold([maintenanceWindow('w', T)]);
    expect(h.admit(payload(A, 'peer_recovered', T - MIN), T + MIN)).to.deep.equal({ send: true });
    expect(h.admit(payload(A, 'path_restored', T - MIN), T + MIN)).to.deep.equal({ send: true });
  });

  it('does not let a resolution of another incident cancel a held opening', () => {
    const { h } = hold([maintenanceWindow('w', T)]);
    const dead = payload(A, 'peer_dead', T + 5 * MIN);
    h.admit(dead, T + 5 * MIN);
    // An older dead spell of the same peer, a path incident of the same peer, another peer.
    expect(h.admit(payload(A, 'peer_recovered', T - MIN), T + 6 * MIN).send).to.be.true;
    expect(h.admit(payload(A, 'path_restored', T + 5 * MIN), T + 6 * MIN).send).to.be.true;
    expect(h.admit(payload(B, 'peer_recovered', T + 5 * MIN), T + 6 * MIN).send).to.be.true;
    expect(h.size).to.equal(1);
    expect(h.release(T + 30 * MIN)).to.deep.equal([dead]);
  });

  it('releases a held opening once its pause is over, exactly once', () => {
    const { h } = hold([maintenanceWindow('w', T)]);
    const dead = payload(A, 'peer_dead', T + MIN);
    h.admit(dead, T + MIN);
    expect(h.release(T + 30 * MIN - 1), 'still paused').to.deep.equal([]);
    expect(h.release(T + 30 * MIN)).to.deep.equal([dead]);
    expect(h.release(T + 31 * MIN)).to.deep.equal([]);
    // Released and sent: its resolution must go out too.
    expect(h.admit(payload(A, 'peer_recovered', T + MIN), T + 32 * MIN)).to.deep.equal({
      send: true,
    });
  });

  it('releases when the window is cancelled early', () => {
    const { h, set } = hold([maintenanceWindow('w', T)]);
    const dead = payload(A, 'peer_dead', T + MIN);
    h.admit(dead, T + MIN);
    set([maintenanceWindow('w', T, { cancelled: true })]);
    expect(h.release(T + 2 * MIN)).to.deep.equal([dead]);
  });

  it('releases each peer when its own pause ends, in the order they were held', () => {
    const { h } = hold([
      maintenanceWindow('a', T, { scope: 'nodes', nodes: ['node-a'], until: T + 10 * MIN }),
      maintenanceWindow('b', T, { scope: 'nodes', nodes: [B.address], until: T + 20 * MIN }),
      maintenanceWindow('mesh', T, { until: T + 5 * MIN }),
    ]);
    const deadB = payload(B, 'peer_dead', T + MIN);
    const brokenA = payload(A, 'path_broken', T + 2 * MIN);
    const deadA = payload(A, 'peer_dead', T + 3 * MIN);
    for (const p of [deadB, brokenA, deadA]) expect(h.admit(p, T + 3 * MIN).send).to.be.false;
    expect(h.release(T + 5 * MIN), 'the mesh window is over, not theirs').to.deep.equal([]);
    expect(h.release(T + 10 * MIN)).to.deep.equal([brokenA, deadA]);
    expect(h.release(T + 20 * MIN)).to.deep.equal([deadB]);
  });

  it('names the incident by the dedup key without its event suffix, IPv6 addresses too', () => {
    const v6 = record('node-6', '[fd00::1]:8080');
    const dead = payload(v6, 'peer_dead', 1_234);
    const back = payload(v6, 'peer_recovered', 1_234);
    expect(incidentOf(dead)).to.equal('knh:[fd00::1]:8080:1234');
    expect(incidentOf(back)).to.equal(incidentOf(dead));
    const { h } = hold([maintenanceWindow('w', T)]);
    h.admit(dead, T);
    expect(h.admit(back, T)).to.deep.include({ cancels: dead.dedup_key });
  });
});
