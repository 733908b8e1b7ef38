// Alerts for receivers other than KNH's webhooks: one firing and one resolved per problem, a
// hold-down against flapping, and changes close in time grouped into one message.
import { expect } from 'chai';
import { Grouper } from '../../src/alerts/grouping.js';
import { AlertLifecycle } from '../../src/alerts/lifecycle.js';
import type { PeerRecord } from '../../src/prober/verdict.js';
import { deathAndRecovery } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const T = Date.UTC(2026, 0, 1);
const COORD = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const HOLD = 30_000;

const up = upRecord;
const incident = (record: PeerRecord, at: number, back: number) =>
  deathAndRecovery(record, at, back, COORD);

describe('AlertLifecycle', () => {
  it('fires once for a death and resolves once, after the hold-down, with the recovery time', () => {
    const life = new AlertLifecycle(HOLD);
    const [dead, back] = incident(up('a', '10.0.0.1', T), T + 10_000, T + 60_000);
    const fired = life.onEvent(dead, T + 10_000);
    expect(fired.map((c) => c.type)).to.deep.equal(['firing']);
    expect(fired[0]?.alert).to.deep.include({
      key: `knh:10.0.0.1:8080:${T + 10_000}`,
      kind: 'peer_dead',
      startsAt: T + 10_000,
      endsAt: null,
    });
    expect(fired[0]?.alert.peer.node_name).to.equal('a');
    expect(life.onEvent(dead, T + 10_500), 'a repeat (handover) fires nothing').to.deep.equal([]);
    expect(life.onEvent(back, T + 60_000), 'resolution waits out the hold-down').to.deep.equal([]);
    expect(life.tick(T + 60_000 + HOLD - 1)).to.deep.equal([]);
    const resolved = life.tick(T + 60_000 + HOLD);
    expect(resolved.map((c) => [c.type, c.alert.key, c.alert.endsAt])).to.deep.equal([
      ['resolved', fired[0]?.alert.key, T + 60_000],
    ]);
    expect(life.firingAlerts()).to.deep.equal([]);
  });

  it('counts the hold-down from when the peer came back: a recovery RECOVERY_HOLD held waited part of it', () => {
    const life = new AlertLifecycle(HOLD);
    const [dead, back] = incident(up('a', '10.0.0.1', T), T + 10_000, T + 60_000);
    life.onEvent(dead, T + 10_000);
    // Sent 10 s after the peer came back (RECOVERY_HOLD): 20 s of the hold-down are left.
    expect(life.onEvent(back, T + 70_000)).to.deep.equal([]);
    expect(life.nextDue()).to.equal(T + 60_000 + HOLD);
    expect(life.tick(T + 60_000 + HOLD).map((c) => c.type)).to.deep.equal(['resolved']);
  });

  it('takes a peer_flapping as news of the alert firing, not its resolution', () => {
    const life = new AlertLifecycle(HOLD);
    const [dead] = incident(up('a', '10.0.0.1', T), T + 10_000, T + 60_000);
    life.onEvent(dead, T + 10_000);
    const flapping = {
      ...dead,
      event: 'peer_flapping' as const,
      dedup_key: dead.dedup_key.replace(/:dead$/, ':flapping'),
    };
    expect(life.onEvent(flapping, T + 20_000)).to.deep.equal([]);
    expect(life.firingAlerts().map((a) => a.kind)).to.deep.equal(['peer_dead']);
    expect(life.nextDue()).to.equal(null);
  });

  it('a peer that fails again within the hold-down continues the same alert: one page for a flapping peer', () => {
    const life = new AlertLifecycle(HOLD);
    const a = up('a', '10.0.0.1', T);
    const [dead1, back1] = incident(a, T + 10_000, T + 20_000);
    const [dead2, back2] = incident(a, T + 25_000, T + 30_000);
    const changes = [
      ...life.onEvent(dead1, T + 10_000),
      ...life.onEvent(back1, T + 20_000),
      ...life.tick(T + 24_000),
      ...life.onEvent(dead2, T + 25_000),
      ...life.onEvent(back2, T + 30_000),
      ...life.tick(T + 30_000 + HOLD),
    ];
    expect(changes.map((c) => [c.type, c.alert.startsAt])).to.deep.equal([
      ['firing', T + 10_000],
      ['resolved', T + 10_000],
    ]);
  });

  it('resolves at once with no hold-down, and resolves by its own key an alert fired under another coordinator', () => {
    const life = new AlertLifecycle(0);
    const [dead, back] = incident(up('a', '10.0.0.1', T), T + 10_000, T + 20_000);
    expect(life.onEvent(back, T + 20_000).map((c) => [c.type, c.alert.key])).to.deep.equal([
      ['resolved', `knh:10.0.0.1:8080:${T + 10_000}`],
    ]);
    life.onEvent(dead, T + 30_000);
    expect(life.onEvent(back, T + 31_000).map((c) => c.type)).to.deep.equal(['resolved']);
  });

  it('adopts the firing alerts of a predecessor without firing them again', () => {
    const life = new AlertLifecycle(HOLD);
    const [dead] = incident(up('a', '10.0.0.1', T), T + 10_000, T + 20_000);
    const first = new AlertLifecycle(HOLD);
    const fired = first.onEvent(dead, T + 10_000)[0]?.alert;
    if (!fired) throw new Error('no alert');
    life.adopt([fired]);
    expect(life.onEvent(dead, T + 11_000)).to.deep.equal([]);
    expect(life.firingAlerts()).to.deep.equal([fired]);
  });
});

describe('Grouper', () => {
  it('sends everything decided within the window of the first change as one group', () => {
    const life = new AlertLifecycle(0);
    const g = new Grouper(2_000);
    const payloads = ['1', '2', '3'].map(
      (n, i) => incident(up(`n${n}`, `10.0.0.${n}`, T), T + i * 500, T + 99_000)[0],
    );
    payloads.forEach((p, i) => g.add(life.onEvent(p, T + i * 500), T + i * 500));
    expect(g.dueAt()).to.equal(T + 2_000);
    expect(g.take(T + 1_999, life.firingAlerts())).to.equal(null);
    const group = g.take(T + 2_000, life.firingAlerts());
    expect(group?.changes.map((c) => c.alert.peer.node_name)).to.deep.equal(['n1', 'n2', 'n3']);
    expect(group?.firing).to.have.length(3);
    expect(group?.key).to.equal(group?.changes[0]?.alert.key);
    expect(g.dueAt(), 'the next change opens a new window').to.equal(null);
  });

  it('gives up its pending changes at once when forced (a coordinator stepping down)', () => {
    const life = new AlertLifecycle(0);
    const g = new Grouper(2_000);
    g.add(life.onEvent(incident(up('a', '10.0.0.1', T), T, T + 9_000)[0], T), T);
    expect(g.take(T + 10, [], true)?.changes).to.have.length(1);
  });
});
