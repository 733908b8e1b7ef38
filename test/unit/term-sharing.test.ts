// The node's side of the election's delegate: what it shares of a term (its own while it probes,
// else what the followed term left), and what it does with a peer's.
import { expect } from 'chai';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import { MaintenanceBook } from '../../src/maintenance/windows.js';
import { TermSharing } from '../../src/node/term-sharing.js';
import { newRecord } from '../../src/prober/verdict.js';
import { EventLog } from '../../src/status/event-log.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { deadAlert } from '../support/alerts.js';
import type { Alert } from '../../src/wire/alert.js';
import { FakeClock } from '../support/fake-clock.js';
import type { Logger } from '../../src/core/logger.js';
import type { TermHandover } from '../../src/wire/term-handover.js';

const SELF = { id: 'self@10.0.0.5', address: '10.0.0.5:8080' };
const A = { id: 'a@10.0.0.1', address: '10.0.0.1:8080' };
const LEADER = { id: 'top@10.0.0.9', address: '10.0.0.9:8080' };

const view = (ref: { id: string; address: string }, health: PeerView['health']): PeerView => ({
  id: ref.id,
  address: ref.address,
  node_name: ref.id.split('@')[0] ?? '',
  health,
  since: 1_000,
  alerted: health === 'dead',
});

const deadA = (incidentMs: number): PeerStatusPayload =>
  peerStatusPayload({
    record: {
      ...newRecord(A.address, incidentMs),
      id: A.id,
      health: 'dead',
      lastFailure: 'refused',
    },
    event: 'peer_dead',
    incidentMs,
    coordinator: LEADER,
    epoch: 3,
    now: incidentMs,
  });

function sharing({
  running = false,
  alertsOn = true,
  findings = [] as Alert[],
  logger,
}: { running?: boolean; alertsOn?: boolean; findings?: Alert[]; logger?: Logger } = {}) {
  const clock = new FakeClock();
  const events = new EventLog(() => clock.now());
  const own = { views: [view(A, 'alive')], undelivered: [] as PeerStatusPayload[] };
  const calls: string[] = [];
  const firing = [deadAlert(1, 1_000)];
  const s = new TermSharing({
    self: SELF,
    clock,
    rounds: { running, adopt: (views) => calls.push(`adopt ${views.length}`) },
    shared: { views: () => own.views },
    reporter: {
      undelivered: () => own.undelivered,
      cannotJudgeOpen: () => null,
      handOver: () => null,
      takeHandover: (h) => calls.push(`take ${h.epoch}`),
      resend: (events) => calls.push(`resend ${events.length}`),
      resolveCannotJudge: (opening) => calls.push(`resolve ${opening.event}`),
      selfRecovered: (v) => calls.push(`recovered ${v.id}`),
    },
    dispatcher: { enabled: alertsOn, shared: () => firing },
    book: new MaintenanceBook(),
    events,
    lastLeader: () => LEADER,
    findingAlerts: () => findings,
    logger,
  });
  return { s, clock, events, own, firing, calls };
}

describe('TermSharing', () => {
  it('while probing, shares its own verdicts, undelivered events and firing alerts', () => {
    const { s, own, firing } = sharing({ running: true });
    own.undelivered = [deadA(2_000)];
    expect(s.localState()).to.deep.equal({
      peers: own.views,
      undelivered: own.undelivered,
      alerts: firing,
      cannotJudge: null,
    });
  });

  it("shares no alerts when no receiver other than KNH's webhooks is set", () => {
    const { s } = sharing({ running: true, alertsOn: false });
    expect(s.localState().alerts).to.deep.equal([]);
  });

  it("shares its open findings' alerts whatever the receivers, once each, and a follower passes them on", () => {
    const finding = {
      ...deadAlert(2, 1_000),
      kind: 'peer_degraded' as const,
      severity: 'warning' as const,
    };
    const alone = sharing({ running: true, alertsOn: false, findings: [finding] });
    expect(alone.s.localState().alerts).to.deep.equal([finding]);
    const both = sharing({ running: true, findings: [finding, ...[deadAlert(1, 1_000)]] });
    expect(both.s.localState().alerts.map((a) => a.key)).to.deep.equal([
      deadAlert(1, 1_000).key,
      finding.key,
    ]);
    const follower = sharing({ alertsOn: false });
    follower.s.mergeFollowed(
      { peers: [], undelivered: [], alerts: [deadAlert(1, 1_000), finding], cannotJudge: null },
      false,
    );
    expect(follower.s.localState().alerts).to.deep.equal([finding]);
  });

  it('as a follower, passes on the followed term, its leader alive, each event once', () => {
    const { s, own, clock } = sharing();
    const pending = deadA(2_000);
    s.mergeFollowed(
      { peers: [view(A, 'dead')], undelivered: [pending], alerts: [], cannotJudge: null },
      false,
    );
    own.undelivered = [pending, deadA(3_000)];
    const local = s.localState();
    expect(local.peers.map((v) => [v.address, v.health])).to.deep.equal([
      [A.address, 'dead'],
      [LEADER.address, 'alive'],
    ]);
    expect(local.undelivered.map((p) => p.dedup_key)).to.deep.equal(
      own.undelivered.map((p) => p.dedup_key),
    );
    expect(s.inherited(clock.now())).to.deep.equal(local.peers);
  });

  it("shows the followed coordinator's verdicts, and their changes in the event feed", () => {
    const { s, events } = sharing();
    const empty = { undelivered: [], alerts: [], cannotJudge: null };
    s.mergeFollowed({ ...empty, peers: [view(A, 'alive')] }, false);
    s.mergeFollowed({ ...empty, peers: [view(A, 'dead')] }, false);
    expect(s.followed?.views).to.deep.equal([view(A, 'dead')]);
    expect(events.recent()[0]).to.deep.include({ kind: 'peer_dead', peer: A.id });
    s.mergeFollowed({ ...empty, peers: [] }, true);
    expect(s.followed, 'a large mesh: the map is on the coordinator').to.equal(null);
  });

  it('remembers a window changed here until a reply to an announcement carries it', () => {
    const { s } = sharing();
    expect(s.windowsToTell).to.be.false;
    s.windowsChanged();
    expect(s.windowsToTell).to.be.true;
    s.windowsTold();
    expect(s.windowsToTell).to.be.false;
  });

  it('after a partition healed, resolves what the other side opened: its dead, its events, itself', () => {
    const { s, calls } = sharing({ running: true });
    const otherSide = {
      peers: [view(A, 'dead'), view(SELF, 'dead')],
      undelivered: [deadA(2_000)],
      alerts: [],
      cannotJudge: { ...deadA(1_000), event: 'cannot_judge' as const },
    };
    s.mergeSuperseded(otherSide, true);
    expect(calls).to.deep.equal([
      'adopt 2',
      'resend 1',
      'resolve cannot_judge',
      `recovered ${SELF.id}`,
    ]);
    expect(s.memory.undelivered, 'not what it would start from').to.deep.equal([]);
  });

  it('not yet leading, starts its term from the newer term handed over', () => {
    const { s, calls } = sharing();
    const pending = deadA(2_000);
    s.mergeSuperseded(
      { peers: [view(A, 'dead')], undelivered: [pending], alerts: [], cannotJudge: null },
      false,
    );
    expect(calls).to.deep.equal([]);
    expect(s.memory.undelivered).to.deep.equal([pending]);
  });

  it('takes every copy of a hand-over but logs it once, and again only when it changed', () => {
    const lines: string[] = [];
    const logger: Logger = {
      error: () => undefined,
      warn: () => undefined,
      debug: () => undefined,
      info: (...args: [object, string] | [string]) =>
        void lines.push(typeof args[0] === 'string' ? args[0] : String(args[1])),
      child: () => logger,
    };
    const { s, calls } = sharing({ logger });
    const handover: TermHandover = { epoch: 4, settled: ['k1'], in_flight: [], undelivered: [] };
    // The predecessor repeats it in each reply for a minute.
    for (let i = 0; i < 3; i++) s.mergeHandover(handover, LEADER.address);
    expect(calls).to.deep.equal(['take 4', 'take 4', 'take 4']);
    expect(lines).to.deep.equal([
      `took the hand-over of ${LEADER.address}'s term 4: 0 events to send, 1 sent, 0 in flight`,
    ]);
    s.mergeHandover({ ...handover, settled: ['k1', 'k2'] }, LEADER.address);
    s.mergeHandover({ ...handover, settled: ['k1', 'k2'] }, LEADER.address);
    expect(lines).to.have.length(2);
    expect(lines[1]).to.contain('2 sent');
  });
});
