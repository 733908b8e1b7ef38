// What the election driver sends to a peer of each protocol: a node of f6578aa (protocol 1) refuses
// whole messages holding what it does not know, one of protocol 2 events and alert kinds it does
// not know, so what is new goes only to peers of the protocol that brought it.
import { expect } from 'chai';
import { judgementPayload, peerStatusPayload } from '../../src/alerts/payloads.js';
import { findingPayload } from '../../src/alerts/finding-events.js';
import { alertOf } from '../../src/alerts/lifecycle.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { Announcement, AnnouncementReply } from '../../src/wire/peer-messages.js';
import type { Outcome } from '../../src/core/transport.js';
import { ElectionDriver, type CoordinatorChange } from '../../src/election/driver.js';
import { newRecord } from '../../src/prober/verdict.js';
import type { Alert } from '../../src/wire/alert.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { cannotJudgeIncident, deadAlert } from '../support/alerts.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { DEFAULT_TIMING as TIMING } from '../support/election-sim.js';
import { FakeClock } from '../support/fake-clock.js';
import { TestDelegate } from '../support/test-delegate.js';

const OLD: NodeRef = { id: 'old@10.0.0.1', address: '10.0.0.1:8080' };
const NEW: NodeRef = { id: 'new@10.0.0.2', address: '10.0.0.2:8080' };
const P3: NodeRef = { id: 'p3@10.0.0.3', address: '10.0.0.3:8080' };
const CUR: NodeRef = { id: 'cur@10.0.0.4', address: '10.0.0.4:8080' };
const TOP: NodeRef = { id: 'top@10.0.0.9', address: '10.0.0.9:8080' };
const schemas = loadSchemas();
const PROTOCOL: Record<string, number> = {
  [OLD.address]: 1,
  [NEW.address]: 2,
  [P3.address]: 3,
  [CUR.address]: 4,
};

const { opened: judgeAlert } = cannotJudgeIncident(1_000, 2_000);
const deadOne: Alert = deadAlert(5, 1_000);
/** A finding of pair probing (protocol 3): a degraded node. */
const degradedEvent = findingPayload({
  finding: {
    id: 'node-degraded:10.0.0.6:8080',
    opened: { kind: 'node-degraded', node: '10.0.0.6:8080' },
    latest: { kind: 'node-degraded', node: '10.0.0.6:8080' },
    openedMs: 1_000,
  },
  closing: false,
  startMs: 1_000,
  coordinator: TOP,
  epoch: 1,
  now: 1_000,
  refOf: () => ({ id: 'n6@10.0.0.6', node_name: 'n6' }),
  figures: { samples: 20, failures: 5, lossRatio: 0.25, p50Ms: 3, p99Ms: 500 },
});
const degradedAlert: Alert = alertOf(degradedEvent);

/** A peer_dead, a cannot_judge opening, a finding and a peer_flapping, all undelivered. */
function undeliveredEvents(): PeerStatusPayload[] {
  const dead = peerStatusPayload({
    record: { ...newRecord('10.0.0.5:8080', 1_000), health: 'dead', alerted: true },
    event: 'peer_dead',
    incidentMs: 1_000,
    coordinator: TOP,
    epoch: 1,
    now: 1_000,
  });
  const judge = judgementPayload({
    event: 'cannot_judge',
    subject: TOP,
    coordinator: TOP,
    sinceMs: 1_000,
    epoch: 1,
    now: 1_000,
    facts: { reaches: 0, peers: 2, unreachable: [], unreachable_count: 2, corroborated_by: [] },
    reason: 'knh cannot judge the mesh',
  });
  const flapping: PeerStatusPayload = {
    ...dead,
    event: 'peer_flapping',
    dedup_key: dead.dedup_key.replace(/:dead$/, ':flapping'),
  };
  return [dead, judge, degradedEvent, flapping];
}

/**
 * `ledBy`: the mesh follows that node at that epoch: announcements up to it are refused as stale,
 * naming it (so the driver knows it as its predecessor, whose hand-over it takes).
 */
function driverOf(
  self: NodeRef,
  peers: NodeRef[],
  handover: TermHandover | null = null,
  {
    repliesAfterMs = 0,
    ledBy,
  }: { repliesAfterMs?: number; ledBy?: { node: NodeRef; epoch: number } } = {},
) {
  const clock = new FakeClock();
  const sent = new Map<string, Announcement>();
  const taken: TermHandover[] = [];
  const changes: CoordinatorChange[] = [];
  const events = undeliveredEvents();
  const delegate = new TestDelegate(self, {
    undelivered: () => events,
    alerts: () => [deadOne, judgeAlert, degradedAlert],
    cannotJudge: () => events[1] ?? null,
    handover: () => handover,
    onTermHandover: (h) => taken.push(h),
  });
  const driver = new ElectionDriver({
    self,
    timing: TIMING,
    clock,
    logger: new CapturingLogger(),
    transport: {
      sendElection: () =>
        Promise.resolve({
          ok: false,
          reason: 'refused',
          phase: 'connect',
          detail: '',
          latencyMs: 1,
        }),
      announce: (to, announcement): Promise<Outcome<AnnouncementReply>> => {
        sent.set(to, structuredClone(announcement));
        const stale = ledBy && announcement.epoch <= ledBy.epoch;
        const reply: AnnouncementReply = stale
          ? { accepted: false, reason: 'stale-epoch', epoch: ledBy.epoch, coordinator: ledBy.node }
          : {
              accepted: true,
              epoch: announcement.epoch,
              coordinator: self,
              ...(to === NEW.address && handover ? { handover } : {}),
            };
        const outcome = { ok: true as const, value: reply, latencyMs: 1 };
        if (repliesAfterMs === 0) return Promise.resolve(outcome);
        return new Promise((resolve) => clock.setTimeout(() => resolve(outcome), repliesAfterMs));
      },
    },
    protocolOf: (address) => PROTOCOL[address] ?? 1,
    delegate,
    onCoordinatorChanged: (change) => changes.push(change),
    onLeading: () => undefined,
  });
  driver.setPeers(peers.map((p) => p.address));
  return { driver, delegate, clock, sent, taken, changes };
}

describe('election driver: what each protocol gets', () => {
  it('announces each peer what its protocol takes: peer_flapping to 4, findings to 3, cannot_judge to 2 and up', async () => {
    const { driver, clock, sent } = driverOf(TOP, [OLD, NEW, P3, CUR]);
    driver.start();
    await clock.advanceAsync(0);
    const toOld = sent.get(OLD.address) as Announcement;
    const toNew = sent.get(NEW.address) as Announcement;
    const toCur = sent.get(CUR.address) as Announcement;
    const toP3 = sent.get(P3.address) as Announcement;
    expect(toCur.undelivered?.map((e) => e.event)).to.deep.equal([
      'peer_dead',
      'cannot_judge',
      'peer_degraded',
      'peer_flapping',
    ]);
    expect(toP3.undelivered?.map((e) => e.event)).to.deep.equal([
      'peer_dead',
      'cannot_judge',
      'peer_degraded',
    ]);
    expect(toCur.alerts?.map((a) => a.kind)).to.deep.equal([
      'peer_dead',
      'cannot_judge',
      'peer_degraded',
    ]);
    expect(toCur.cannot_judge?.event).to.equal('cannot_judge');
    expect(schemas.check('announcement', toCur)).to.deep.equal({ ok: true });
    expect(toNew.cannot_judge?.event).to.equal('cannot_judge');
    expect(toNew.undelivered?.map((e) => e.event)).to.deep.equal(['peer_dead', 'cannot_judge']);
    expect(toNew.alerts?.map((a) => a.kind)).to.deep.equal(['peer_dead', 'cannot_judge']);
    expect(toOld).to.not.have.property('cannot_judge');
    expect(toOld.undelivered?.map((e) => e.event)).to.deep.equal(['peer_dead']);
    expect(toOld.alerts?.map((a) => a.kind)).to.deep.equal(['peer_dead']);
    for (const a of [toOld, toNew, toP3]) {
      expect(schemas.check('announcement', a)).to.deep.equal({ ok: true });
    }
    driver.stop();
  });

  it('hands an ended term over in its replies to protocol 2 announcers only', () => {
    const handover: TermHandover = { epoch: 3, settled: ['k1'], in_flight: [], undelivered: [] };
    const { driver } = driverOf(NEW, [OLD, TOP], handover);
    driver.start();
    const announcement: Announcement = { from: TOP, epoch: 5, peers: [] };
    const toNew = driver.handleAnnouncement(announcement, 2);
    expect(toNew?.handover).to.deep.equal(handover);
    expect(schemas.check('announcement-reply', toNew)).to.deep.equal({ ok: true });
    const toOld = driver.handleAnnouncement({ ...announcement, epoch: 6 }, 1);
    expect(toOld).to.not.have.property('handover');
    driver.stop();
  });

  it("leaves out of a hand-over's undelivered events what the announcer's protocol does not know", () => {
    const handover: TermHandover = {
      epoch: 3,
      settled: [],
      in_flight: [],
      undelivered: undeliveredEvents(),
    };
    const { driver } = driverOf(NEW, [OLD, TOP, CUR], handover);
    driver.start();
    const announcement: Announcement = { from: TOP, epoch: 5, peers: [] };
    const to2 = driver.handleAnnouncement(announcement, 2);
    expect(to2?.handover?.undelivered.map((e) => e.event)).to.deep.equal([
      'peer_dead',
      'cannot_judge',
    ]);
    const to3 = driver.handleAnnouncement({ ...announcement, epoch: 6 }, 3);
    expect(to3?.handover?.undelivered.map((e) => e.event)).to.deep.equal([
      'peer_dead',
      'cannot_judge',
      'peer_degraded',
    ]);
    driver.stop();
  });

  it("passes on a reply's hand-over, and keeps a followed coordinator's open cannot_judge", async () => {
    const handover: TermHandover = {
      epoch: 1,
      settled: ['k1'],
      in_flight: ['k2'],
      undelivered: [],
    };
    // NEW led epoch 1 when TOP started: it yields to TOP's epoch 2 and hands epoch 1 over.
    const top = driverOf(TOP, [OLD, NEW], handover, { ledBy: { node: NEW, epoch: 1 } });
    top.driver.start();
    await top.clock.advanceAsync(0);
    expect(top.driver.epoch).to.equal(2);
    expect(top.taken).to.deep.equal([handover]);
    top.driver.stop();

    const follower = driverOf(NEW, [OLD, TOP]);
    follower.driver.start();
    const opening = undeliveredEvents()[1];
    follower.driver.handleAnnouncement(
      { from: TOP, epoch: 2, peers: [], cannot_judge: opening },
      2,
    );
    expect(follower.delegate.memory.cannotJudge?.dedup_key).to.equal(opening?.dedup_key);
    follower.driver.stop();
  });

  it('takes no hand-over from a reply that comes after its term ended', async () => {
    const handover: TermHandover = { epoch: 1, settled: ['k1'], in_flight: [], undelivered: [] };
    const ledBy = { node: NEW, epoch: 1 };
    // The refusals come at 200 ms, the replies to its epoch 2 at 400 ms.
    const kept = driverOf(TOP, [OLD, NEW], handover, { repliesAfterMs: 200, ledBy });
    kept.driver.start();
    await kept.clock.advanceAsync(500);
    expect(kept.taken, 'taken while its term lasts').to.deep.equal([handover]);
    kept.driver.stop();

    const top = driverOf(TOP, [OLD, NEW], handover, { repliesAfterMs: 200, ledBy });
    top.driver.start();
    await top.clock.advanceAsync(300);
    top.driver.stop(); // its term ends while the replies are on their way
    await top.clock.advanceAsync(500);
    expect(top.taken).to.deep.equal([]);
  });

  it('names the protocol of the announcement that made a node coordinator', () => {
    for (const protocol of [1, 2]) {
      const follower = driverOf(NEW, [OLD, TOP]);
      follower.driver.start();
      follower.driver.handleAnnouncement({ from: TOP, epoch: 2, peers: [] }, protocol);
      const change = follower.changes.at(-1);
      expect(change?.coordinator?.id).to.equal(TOP.id);
      expect(change?.protocol).to.equal(protocol);
      follower.driver.stop();
    }
  });
});
