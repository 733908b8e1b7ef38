// What a new coordinator carries on at the other receivers, and what it resolves.
import { expect } from 'chai';
import type { PeerRecord } from '../../src/prober/verdict.js';
import type { Alert } from '../../src/wire/alert.js';
import { judgementPayload, peerStatusPayload } from '../../src/alerts/payloads.js';
import { succession } from '../../src/alerts/succession.js';
import { confirmed, upRecord } from '../support/verdicts.js';

const T = Date.UTC(2026, 0, 1);
const SELF = { id: 'next@10.0.0.8', address: '10.0.0.8:8080' };
const OLD = { id: 'old@10.0.0.9', address: '10.0.0.9:8080' };

/** Node n at `ip`, alive at T; if `dead`, its probes failing from T + 1 and it dead at T + 2 s. */
function record(ip: string, dead: boolean): PeerRecord {
  const up = upRecord('n', ip, T);
  return dead ? confirmed(up, T + 1, { at: T + 2_000 }).verdict.record : up;
}

const alert = (ip: string, over: Partial<Alert> = {}): Alert => ({
  key: `knh:${ip}:8080:${T + 2_000}`,
  kind: 'peer_dead',
  peer: { id: `n@${ip}`, address: `${ip}:8080`, node_name: 'n' },
  coordinator: OLD,
  reason: 'refused',
  path: null,
  startsAt: T + 2_000,
  endsAt: null,
  ...over,
});

describe('succession of alerts', () => {
  it('carries on shared alerts of peers still dead (with their group), resolves the rest, and rebuilds the missing', () => {
    const records = [record('10.0.0.1', true), record('10.0.0.2', false), record('10.0.0.3', true)];
    const grouped = alert('10.0.0.1', { group: 'knh:g' });
    const recovered = alert('10.0.0.2');
    const path = alert('10.0.0.3', {
      kind: 'path_broken',
      key: `knh:${OLD.address}->10.0.0.3:8080:${T}`,
    });
    const { carried, over } = succession({
      inherited: [grouped, recovered, path],
      records,
      undelivered: [],
      self: SELF,
      epoch: 3,
      now: T + 9_000,
    });
    expect(carried.map((a) => [a.peer.address, a.key, a.group])).to.deep.equal([
      ['10.0.0.1:8080', grouped.key, 'knh:g'],
      ['10.0.0.3:8080', `knh:10.0.0.3:8080:${T + 2_000}`, undefined],
    ]);
    expect(over).to.deep.equal([recovered, path]);
  });

  const judgement = (event: 'cannot_judge' | 'can_judge', sinceMs: number) =>
    judgementPayload({
      event,
      subject: OLD,
      coordinator: OLD,
      sinceMs,
      epoch: 2,
      now: T + 5_000,
      facts: { reaches: 0, peers: 3, unreachable: [], unreachable_count: 3, corroborated_by: [] },
      reason: 'test',
    });
  const judgeAlert = (sinceMs: number) =>
    alert('10.0.0.9', {
      kind: 'cannot_judge',
      key: `knh:judge:${OLD.address}:${sinceMs}`,
      peer: { id: OLD.id, address: OLD.address, node_name: 'old' },
    });

  it('leaves a cannot_judge alert the reporter resolves (inherited open, or its can_judge undelivered) to that can_judge, and resolves any other', () => {
    const open = judgeAlert(T);
    const closing = judgeAlert(T + 1_000);
    const stale = judgeAlert(T + 2_000);
    const { carried, over } = succession({
      inherited: [open, closing, stale],
      records: [record('10.0.0.1', false)],
      undelivered: [judgement('can_judge', T + 1_000)],
      cannotJudge: judgement('cannot_judge', T),
      self: SELF,
      epoch: 3,
      now: T + 9_000,
    });
    expect(carried).to.deep.equal([]);
    // Its can_judge went out and the resolution did not reach this receiver: resolved here.
    expect(over).to.deep.equal([stale]);
  });

  it('resolves an inherited cannot_judge alert when no incident is inherited open (an unsent opening is never sent)', () => {
    const stale = judgeAlert(T);
    const { over } = succession({
      inherited: [stale],
      records: [record('10.0.0.1', false)],
      undelivered: [judgement('cannot_judge', T)],
      self: SELF,
      epoch: 3,
      now: T + 9_000,
    });
    expect(over).to.deep.equal([stale]);
  });

  it('rebuilds no alert for a peer whose peer_dead was not sent yet (held, undelivered), nor for itself', () => {
    const dead = record('10.0.0.1', true);
    const held = peerStatusPayload({
      record: dead,
      event: 'peer_dead',
      incidentMs: dead.sinceMs,
      coordinator: OLD,
      epoch: 2,
      now: T + 2_000,
    });
    const own = alert('10.0.0.8');
    const { carried, over } = succession({
      inherited: [own],
      records: [dead],
      undelivered: [held],
      self: SELF,
      epoch: 3,
      now: T + 9_000,
    });
    expect(carried).to.deep.equal([]);
    expect(over, 'its own alert is resolved by its own recovery').to.deep.equal([]);
  });

  it("carries the findings' alerts on when it judges findings itself, and resolves them otherwise", () => {
    const finding = alert('10.0.0.4', {
      kind: 'peer_degraded',
      key: `knh:degraded:10.0.0.4:8080:${T}`,
      severity: 'warning',
    });
    const args = {
      inherited: [finding],
      records: [record('10.0.0.4', false)],
      undelivered: [],
      self: SELF,
      epoch: 4,
      now: T + 10_000,
    };
    expect(succession({ ...args, findingsJudged: true }).carried).to.deep.equal([finding]);
    expect(succession({ ...args, findingsJudged: false }).over).to.deep.equal([finding]);
  });
});
