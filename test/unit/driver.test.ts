// The election driver's handover: what a coordinator's announcements carry, what a follower keeps
// of them, and what a restarted higher-ranked node adopts from the peers that reject its epoch.
import { expect } from 'chai';
import { peerStatusPayload } from '../../src/alerts/payloads.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
} from '../../src/wire/peer-messages.js';
import type { Outcome, PeerTransport } from '../../src/core/transport.js';
import {
  ElectionDriver,
  FULL_VIEW_PEERS,
  LARGE_MESH_HEARTBEAT_EVERY,
  LARGE_MESH_REFRESH_EVERY,
} from '../../src/election/driver.js';
import { newRecord } from '../../src/prober/verdict.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { DEFAULT_TIMING as TIMING } from '../support/election-sim.js';
import { FakeClock } from '../support/fake-clock.js';
import { LOW, MID, HIGH, failed, highAnswers, ok } from '../support/election-peers.js';
import { TestDelegate } from '../support/test-delegate.js';

const schemas = loadSchemas();

const view = (ref: NodeRef, health: PeerView['health'], since = 1_000, alerted = false) => ({
  id: ref.id,
  address: ref.address,
  node_name: ref.id.split('@')[0] ?? '',
  health,
  since,
  alerted,
});

function deadAlert(ref: NodeRef, coordinator: NodeRef, incidentMs: number): PeerStatusPayload {
  return peerStatusPayload({
    record: {
      ...newRecord(ref.address, incidentMs),
      id: ref.id,
      nodeName: ref.id.split('@')[0] ?? '',
      health: 'dead',
      alerted: true,
      lastFailure: 'refused',
    },
    event: 'peer_dead',
    incidentMs,
    coordinator,
    epoch: 4,
    now: incidentMs,
  });
}

/** A driver whose transport answers from the test's functions, recording what it sends. */
function node(
  self: NodeRef,
  peers: NodeRef[],
  transport: {
    election?: (to: string, request: ElectionRequest) => Outcome<ElectionAnswer>;
    announce?: (to: string, announcement: Announcement) => Outcome<AnnouncementReply>;
    /** Announcements are answered this long after they are sent (default: at once). */
    announceAfterMs?: number | ((to: string) => number);
  },
  {
    handover = false,
    takesHeartbeats,
    successors,
    probeEveryMs,
  }: {
    handover?: boolean;
    takesHeartbeats?: (address: string) => boolean;
    successors?: () => string[];
    probeEveryMs?: number;
  } = {},
) {
  const clock = new FakeClock();
  const sent: { to: string; announcement: Announcement }[] = [];
  /** The announcement objects themselves, as the transport got them. */
  const sentObjects: Announcement[] = [];
  let ownView: PeerView[] = [];
  let ownUndelivered: PeerStatusPayload[] = [];
  const leading: number[] = [];
  const handovers: { views: PeerView[]; undelivered: PeerStatusPayload[] }[] = [];
  let atLeading: {
    inherited: PeerView[];
    self: PeerView | null;
    undelivered: PeerStatusPayload[];
  } | null = null;
  const fake: Pick<PeerTransport, 'sendElection' | 'announce'> = {
    sendElection: (to, request) =>
      Promise.resolve(transport.election?.(to, request) ?? failed<ElectionAnswer>()),
    announce: (to, announcement) => {
      sent.push({ to, announcement: structuredClone(announcement) });
      sentObjects.push(announcement);
      const outcome = transport.announce?.(to, announcement) ?? failed<AnnouncementReply>();
      const wait = transport.announceAfterMs;
      const after = typeof wait === 'function' ? wait(to) : wait;
      return after === undefined
        ? Promise.resolve(outcome)
        : clock.sleep(after).then(() => outcome);
    },
  };
  const delegate = new TestDelegate(self, {
    view: () => ownView,
    undelivered: () => ownUndelivered,
    ...(handover
      ? {
          onHandover: (views: PeerView[], undelivered: PeerStatusPayload[]) =>
            handovers.push({ views, undelivered }),
        }
      : {}),
  });
  const driver: ElectionDriver = new ElectionDriver({
    self,
    timing: TIMING,
    transport: fake,
    clock,
    logger: new CapturingLogger(),
    delegate,
    onCoordinatorChanged: () => undefined,
    onLeading: (epoch) => {
      leading.push(epoch);
      atLeading = {
        inherited: delegate.inherited(clock.now()),
        self: delegate.memory.inheritedSelf(),
        undelivered: delegate.memory.undelivered,
      };
    },
    ...(takesHeartbeats ? { takesHeartbeats } : {}),
    ...(successors ? { successors } : {}),
    ...(probeEveryMs === undefined ? {} : { probeEveryMs }),
  });
  delegate.leader = () => driver.lastLeader;
  driver.setPeers(peers.map((p) => p.address));
  return {
    clock,
    driver,
    delegate,
    sent,
    sentObjects,
    leading,
    handovers,
    atLeading: () => atLeading,
    setView: (v: PeerView[]) => (ownView = v),
    setUndelivered: (u: PeerStatusPayload[]) => (ownUndelivered = u),
  };
}

/** LOW, started: HIGH answered its election, so it waits to be told who leads. */
async function lowWaitingForHigh() {
  const n = node(LOW, [MID, HIGH], { election: highAnswers });
  n.driver.start();
  await n.clock.advanceAsync(0);
  return n;
}

describe('ElectionDriver handover', () => {
  it('sends its view and its undelivered events with every announcement', async () => {
    const n = node(HIGH, [LOW, MID], {
      announce: (_to, a) => ok({ accepted: true, epoch: a.epoch, coordinator: HIGH }),
    });
    const views = [view(LOW, 'alive'), view(MID, 'dead', 2_000, true)];
    const pending = [deadAlert(MID, HIGH, 2_000)];
    n.setView(views);
    n.setUndelivered(pending);
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.leading).to.deep.equal([1]);
    expect(n.sent.map((s) => s.to)).to.have.members([LOW.address, MID.address]);
    for (const { announcement } of n.sent) {
      expect(announcement).to.deep.equal({
        from: HIGH,
        epoch: 1,
        peers: views,
        undelivered: pending,
        // Next in line, highest-ranked first (by default its highest-ranked peers).
        successors: [MID.address, LOW.address],
      });
      expect(schemas.check('announcement', announcement)).to.deep.equal({ ok: true });
    }
    // Heartbeats carry the current list: once delivered, an event is no longer handed over.
    n.setUndelivered([]);
    n.sent.length = 0;
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.sent).to.not.be.empty;
    expect(n.sent.every((s) => s.announcement.undelivered?.length === 0)).to.be.true;
    n.driver.stop();
  });

  it('ignores a late stale-epoch answer of a term it left: its leader stays the one it follows', async () => {
    // MID claims epoch 1; LOW answers at once that it follows HIGH in that epoch (MID steps down
    // to HIGH), LOW2 answers late with its stale view of HIGH and the coordinator it had then.
    const LOW2: NodeRef = { id: 'low2@10.0.0.0', address: '10.0.0.0:8080' };
    const n = node(MID, [LOW, LOW2, HIGH], {
      announce: (to, a) => {
        if (to === LOW.address) {
          return ok({ accepted: false, reason: 'conflict', epoch: 1, coordinator: HIGH });
        }
        if (to === LOW2.address) {
          return ok({
            accepted: false,
            reason: 'stale-epoch',
            epoch: a.epoch,
            coordinator: LOW2,
            peers: [view(HIGH, 'unknown')],
          });
        }
        return failed<AnnouncementReply>();
      },
      announceAfterMs: (to) => (to === LOW2.address ? 800 : 0),
    });
    n.driver.start();
    await n.clock.advanceAsync(400);
    expect(n.driver.coordinator).to.deep.equal(HIGH);
    // HIGH's own announcement, then the late answer.
    n.driver.handleAnnouncement({ from: HIGH, epoch: 2, peers: [view(LOW, 'alive')] });
    await n.clock.advanceAsync(1_000);
    const inherited = n.delegate.inherited(n.clock.now());
    expect(inherited.map((v) => [v.address, v.health])).to.deep.equal([
      [LOW.address, 'alive'],
      [HIGH.address, 'alive'],
    ]);
    n.driver.stop();
  });

  it('a follower keeps the views and undelivered events of the announcement it accepts', async () => {
    const n = node(LOW, [MID, HIGH], {
      // Higher-ranked peers answer the election: LOW waits for an announcement.
      election: (to) =>
        ok({
          type: 'answer',
          from: to === HIGH.address ? HIGH : MID,
          epoch: 0,
          coordinator: null,
        }),
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.delegate.memory.undelivered).to.deep.equal([]);
    const pending = [deadAlert(MID, HIGH, 3_000)];
    const peers = [view(LOW, 'dead', 1_500, true), view(MID, 'dead', 3_000, true)];
    const reply = n.driver.handleAnnouncement({
      from: HIGH,
      epoch: 4,
      peers,
      undelivered: pending,
    });
    expect(reply).to.deep.include({ accepted: true, epoch: 4 });
    expect(n.driver.coordinator).to.deep.equal(HIGH);
    expect(n.delegate.memory.undelivered).to.deep.equal(pending);
    expect(n.delegate.memory.inheritedSelf(), 'itself as the coordinator saw it').to.deep.equal(
      peers[0],
    );
    const now = n.clock.now();
    const inherited = n.delegate.inherited(now);
    // Not itself; the coordinator it followed, as alive.
    expect(inherited.map((v) => v.address)).to.have.members([MID.address, HIGH.address]);
    expect(inherited.find((v) => v.address === HIGH.address)).to.deep.include({
      id: HIGH.id,
      health: 'alive',
      alerted: false,
      since: now,
    });

    // A later announcement without undelivered events: nothing is pending any more.
    n.driver.handleAnnouncement({ from: HIGH, epoch: 4, peers });
    expect(n.delegate.memory.undelivered).to.deep.equal([]);
    n.driver.stop();
  });

  it("answers a restarted higher-ranked node's stale epoch with its view and undelivered events", async () => {
    const n = await lowWaitingForHigh();
    n.driver.handleAnnouncement({ from: HIGH, epoch: 5, peers: [] });
    const mine = [view(MID, 'dead', 3_000, true), view(HIGH, 'alive')];
    const pending = [deadAlert(MID, HIGH, 3_000)];
    n.setView(mine);
    n.setUndelivered(pending);
    // HIGH restarted: its epoch is back at 1.
    const reply = n.driver.handleAnnouncement({ from: HIGH, epoch: 1, peers: [] });
    expect(reply).to.deep.include({
      accepted: false,
      reason: 'stale-epoch',
      epoch: 5,
      peers: mine,
      undelivered: pending,
    });
    expect(schemas.check('announcement-reply', reply)).to.deep.equal({ ok: true });
    // Other rejections carry no view: MID announcing at the same epoch while HIGH leads.
    const conflict = n.driver.handleAnnouncement({ from: MID, epoch: 5, peers: [] });
    expect(conflict).to.deep.include({ accepted: false, reason: 'conflict' });
    expect(conflict).to.not.have.property('peers');
    expect(conflict).to.not.have.property('undelivered');
    n.driver.stop();
  });

  it('a restarted node adopts the view of the highest-epoch stale-epoch rejection before leading', async () => {
    const fromLow = {
      peers: [view(MID, 'alive'), view(HIGH, 'alive')],
      undelivered: [deadAlert(LOW, MID, 1_000)],
    };
    const fromMid = {
      peers: [view(LOW, 'dead', 4_000, true), view(HIGH, 'dead', 2_000, true)],
      undelivered: [deadAlert(LOW, MID, 4_000)],
    };
    const n = node(HIGH, [LOW, MID], {
      announce: (to, a) => {
        // The mesh is at epoch 7 (LOW lagging at 4); both follow MID until HIGH's epoch is newer.
        if (a.epoch <= 7) {
          const [epoch, handed] = to === LOW.address ? [4, fromLow] : [7, fromMid];
          return ok({ accepted: false, reason: 'stale-epoch', epoch, coordinator: MID, ...handed });
        }
        return ok({ accepted: true, epoch: a.epoch, coordinator: HIGH });
      },
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.leading, 'leads at an epoch past the mesh epoch').to.deep.equal([8]);
    const at = n.atLeading();
    expect(at?.undelivered).to.deep.equal(fromMid.undelivered);
    expect(at?.self, 'itself as the mesh saw it: reported dead').to.deep.equal(fromMid.peers[1]);
    expect(at?.inherited.map((v) => v.address)).to.have.members([LOW.address, MID.address]);
    expect(at?.inherited.find((v) => v.address === LOW.address)).to.deep.equal(fromMid.peers[0]);
    // The coordinator they followed, not in its own view, is taken as alive.
    expect(at?.inherited.find((v) => v.address === MID.address)).to.deep.include({
      health: 'alive',
      alerted: false,
    });
    n.driver.stop();
  });

  it('a leading node does not adopt the views of later rejections', async () => {
    let mesh: {
      epoch: number;
      handed: { peers: PeerView[]; undelivered: PeerStatusPayload[] };
    } | null = null;
    const n = node(HIGH, [LOW, MID], {
      announce: (_to, a) =>
        mesh && a.epoch <= mesh.epoch
          ? ok({
              accepted: false,
              reason: 'stale-epoch',
              epoch: mesh.epoch,
              coordinator: null,
              ...mesh.handed,
            })
          : ok({ accepted: true, epoch: a.epoch, coordinator: HIGH }),
    });
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.leading).to.deep.equal([1]);
    const before = n.delegate.inherited(n.clock.now());
    mesh = {
      epoch: 3,
      handed: { peers: [view(LOW, 'dead', 9, true)], undelivered: [deadAlert(LOW, MID, 9)] },
    };
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.driver.epoch, 'it moved past the newer epoch').to.be.greaterThan(3);
    expect(n.delegate.inherited(n.clock.now())).to.deep.equal(before);
    expect(n.delegate.memory.undelivered).to.deep.equal([]);
    n.driver.stop();
  });

  it("a leading node hands the highest-epoch rejection's views and events to onHandover instead", async () => {
    let mesh: Map<
      string,
      { epoch: number; peers: PeerView[]; undelivered?: PeerStatusPayload[] }
    > | null = null;
    const n = node(
      HIGH,
      [LOW, MID],
      {
        announce: (to, a) => {
          const side = mesh?.get(to);
          return side && a.epoch <= side.epoch
            ? ok({
                accepted: false,
                reason: 'stale-epoch',
                epoch: side.epoch,
                coordinator: MID,
                peers: side.peers,
                ...(side.undelivered ? { undelivered: side.undelivered } : {}),
              })
            : ok({ accepted: true, epoch: a.epoch, coordinator: HIGH });
        },
      },
      { handover: true },
    );
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.leading).to.deep.equal([1]);
    expect(n.handovers, 'nothing handed over while every peer accepts').to.deep.equal([]);
    const before = n.delegate.inherited(n.clock.now());
    const newer = {
      epoch: 5,
      peers: [view(LOW, 'dead', 9, true), view(HIGH, 'dead', 7, true)],
      undelivered: [deadAlert(LOW, MID, 9)],
    };
    const older = { epoch: 3, peers: [view(MID, 'dead', 4, true)], undelivered: [] };
    mesh = new Map([
      [LOW.address, older],
      [MID.address, newer],
    ]);
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.driver.epoch, 'it moved past the newer epoch').to.be.greaterThan(5);
    expect(n.leading, 'still the same term of leadership').to.deep.equal([1]);
    expect(n.handovers).to.have.length(1);
    expect(n.handovers[0]).to.deep.equal({ views: newer.peers, undelivered: newer.undelivered });
    // Not adopted as what it would inherit.
    expect(n.delegate.inherited(n.clock.now())).to.deep.equal(before);
    expect(n.delegate.memory.undelivered).to.deep.equal([]);
    expect(n.delegate.memory.inheritedSelf()).to.equal(null);
    n.driver.stop();
  });

  it('hands over an empty event list when the rejection carries none', async () => {
    let mesh: { epoch: number; peers: PeerView[] } | null = null;
    const n = node(
      HIGH,
      [LOW],
      {
        announce: (_to, a) =>
          mesh && a.epoch <= mesh.epoch
            ? ok({
                accepted: false,
                reason: 'stale-epoch',
                epoch: mesh.epoch,
                coordinator: null,
                peers: mesh.peers,
              })
            : ok({ accepted: true, epoch: a.epoch, coordinator: HIGH }),
      },
      { handover: true },
    );
    n.driver.start();
    await n.clock.advanceAsync(0);
    mesh = { epoch: 2, peers: [view(LOW, 'alive')] };
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.handovers[0]).to.deep.equal({ views: mesh.peers, undelivered: [] });
    n.driver.stop();
  });

  it('keepOwnView replaces what it would inherit (minus itself), with no events to hand on', async () => {
    const n = await lowWaitingForHigh();
    n.driver.handleAnnouncement({
      from: HIGH,
      epoch: 4,
      peers: [view(LOW, 'alive'), view(MID, 'alive')],
      undelivered: [deadAlert(MID, HIGH, 3_000)],
    });
    expect(n.delegate.memory.undelivered).to.have.length(1);
    const own = [
      view(LOW, 'alive', 50),
      view(MID, 'dead', 6_000, true),
      view(HIGH, 'dead', 7_000, true),
    ];
    n.delegate.memory.keepOwnView(own);
    expect(n.delegate.inherited(n.clock.now())).to.deep.equal([own[1], own[2]]);
    expect(n.delegate.memory.undelivered).to.deep.equal([]);
    n.driver.stop();
  });
});

describe('ElectionDriver: confirming a new term', () => {
  /** HIGH leads LOW and MID; each announcement is answered by `answer` after `delayMs`. */
  function confirming(
    answers: Record<
      string,
      {
        delayMs: number;
        reply: AnnouncementReply | null | ((epoch: number) => AnnouncementReply | null);
      }
    >,
  ) {
    const clock = new FakeClock();
    const t0 = clock.now();
    const leading: { epoch: number; atMs: number }[] = [];
    const renewed: { epoch: number; atMs: number }[] = [];
    const sent: { to: string; epoch: number; atMs: number }[] = [];
    const driver = new ElectionDriver({
      self: HIGH,
      timing: TIMING,
      transport: {
        sendElection: () => Promise.resolve(failed<ElectionAnswer>()),
        announce: async (to, announcement) => {
          sent.push({ to, epoch: announcement.epoch, atMs: clock.now() - t0 });
          const a = answers[to];
          await clock.sleep(a?.delayMs ?? 0);
          const reply = typeof a?.reply === 'function' ? a.reply(announcement.epoch) : a?.reply;
          return reply ? { ok: true, value: reply, latencyMs: a?.delayMs ?? 0 } : failed();
        },
      },
      clock,
      logger: new CapturingLogger(),
      delegate: new TestDelegate(HIGH),
      onCoordinatorChanged: () => undefined,
      onLeading: (epoch) => leading.push({ epoch, atMs: clock.now() - t0 }),
      onTermRenewed: (epoch) => renewed.push({ epoch, atMs: clock.now() - t0 }),
    });
    driver.setPeers([LOW.address, MID.address]);
    return { clock, driver, leading, renewed, sent };
  }
  const accepted = (epoch: number): AnnouncementReply => ({
    accepted: true,
    epoch,
    coordinator: HIGH,
  });

  it('does not wait a whole request timeout for a peer that cannot answer', async () => {
    const { clock, driver, leading } = confirming({
      [LOW.address]: { delayMs: 1_000, reply: null }, // black-holed: times out after 1 s
      [MID.address]: { delayMs: 5, reply: accepted(1) },
    });
    driver.start();
    await clock.advanceAsync(299);
    expect(leading, 'not before the bound').to.deep.equal([]);
    await clock.advanceAsync(1);
    expect(leading).to.deep.equal([{ epoch: 1, atMs: 300 }]);
    driver.stop();
  });

  it('confirms as soon as every peer has answered', async () => {
    const { clock, driver, leading } = confirming({
      [LOW.address]: { delayMs: 20, reply: accepted(1) },
      [MID.address]: { delayMs: 40, reply: accepted(1) },
    });
    driver.start();
    await clock.advanceAsync(40);
    expect(leading).to.deep.equal([{ epoch: 1, atMs: 40 }]);
    driver.stop();
  });

  it('still acts on a late stale-epoch rejection: it moves past that epoch', async () => {
    const { clock, driver, leading, sent } = confirming({
      [LOW.address]: { delayMs: 5, reply: accepted(1) },
      [MID.address]: {
        delayMs: 600,
        reply: { accepted: false, reason: 'stale-epoch', epoch: 7, coordinator: MID },
      },
    });
    driver.start();
    await clock.advanceAsync(300);
    expect(leading.map((l) => l.epoch)).to.deep.equal([1]);
    await clock.advanceAsync(300);
    expect(driver.epoch, 'a newer term than the one the late rejection named').to.equal(8);
    expect(sent.some((s) => s.epoch === 8 && s.atMs === 600)).to.equal(true);
    driver.stop();
  });

  it('tells a confirmed leader that moves past a late rejection of its new term, and confirms that term by its own round', async () => {
    const { clock, driver, renewed } = confirming({
      [LOW.address]: { delayMs: 5, reply: (epoch) => accepted(epoch) },
      [MID.address]: {
        delayMs: 600,
        reply: (epoch) =>
          epoch === 1
            ? { accepted: false, reason: 'stale-epoch', epoch: 7, coordinator: MID }
            : accepted(epoch),
      },
    });
    driver.start();
    await clock.advanceAsync(600);
    expect(renewed).to.deep.equal([{ epoch: 8, atMs: 600 }]);
    let confirmed = false;
    void driver.termConfirmed.then(() => (confirmed = true));
    await clock.advanceAsync(599);
    expect(confirmed, 'epoch 8 is not confirmed before every peer answered its round').to.equal(
      false,
    );
    await clock.advanceAsync(1);
    expect(confirmed).to.equal(true);
    expect(driver.epoch).to.equal(8);
    driver.stop();
  });
});

/** Every follower accepts `leader`'s announcements. */
const acceptedBy =
  (leader: NodeRef) =>
  (_to: string, a: Announcement): Outcome<AnnouncementReply> =>
    ok({ accepted: true, epoch: a.epoch, coordinator: leader });

describe('ElectionDriver: announcements in a large mesh', () => {
  const many = Array.from({ length: FULL_VIEW_PEERS + 50 }, (_, i) => ({
    id: `n${i}@10.0.${i >> 8}.${(i & 255) + 1}`,
    address: `10.0.${i >> 8}.${(i & 255) + 1}:8080`,
  }));
  const TOP: NodeRef = { id: 'top@10.9.9.9', address: '10.9.9.9:8080' };

  it(`sends the verdicts, undelivered events and alerts to its successors only, above ${FULL_VIEW_PEERS} peers`, async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    const views = many.map((p) => view(p, 'alive'));
    n.setView(views);
    n.setUndelivered([deadAlert(many[0]!, TOP, 2_000)]);
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.sent).to.have.length(many.length);
    const successors = many
      .slice(-3)
      .map((p) => p.address)
      .reverse();
    for (const { to, announcement } of n.sent) {
      expect(announcement.successors).to.deep.equal(successors);
      expect(schemas.check('announcement', announcement)).to.deep.equal({ ok: true });
      if (successors.includes(to)) {
        expect(announcement.peers).to.have.length(many.length);
        expect(announcement.undelivered).to.have.length(1);
        expect(announcement.peers_omitted).to.equal(undefined);
      } else {
        expect(announcement).to.deep.equal({
          from: TOP,
          epoch: 1,
          successors,
          peers: [],
          peers_omitted: true,
          heartbeat_ms: TIMING.heartbeatIntervalMs * LARGE_MESH_HEARTBEAT_EVERY,
        });
      }
    }
    const thin = JSON.stringify(n.sent.find((s) => !successors.includes(s.to))?.announcement);
    expect(thin.length).to.be.below(300);
    n.driver.stop();
  });

  it('heartbeats its successors with the same announcement (serialized once) while nothing in it changed', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    const views = many.map((p) => view(p, 'alive'));
    n.setView(views);
    n.driver.start();
    await n.clock.advanceAsync(0);
    const successor = many[many.length - 1]!.address;
    const toSuccessor = () => n.sentObjects.filter((_, i) => n.sent[i]!.to === successor);
    await n.clock.advanceAsync(3 * TIMING.heartbeatIntervalMs);
    const steady = toSuccessor();
    expect(steady).to.have.length(4);
    expect(new Set(steady).size, 'one object, sent four times').to.equal(1);
    // An undelivered event, then new views: each a new announcement, carrying it.
    n.setUndelivered([deadAlert(many[0]!, TOP, 2_000)]);
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    const withEvent = toSuccessor().at(-1)!;
    expect(withEvent).to.not.equal(steady[0]);
    expect(withEvent.undelivered).to.have.length(1);
    const changed = views.map((v, i) => (i === 5 ? { ...v, health: 'dead' as const } : v));
    n.setView(changed);
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    const withView = toSuccessor().at(-1)!;
    expect(withView).to.not.equal(withEvent);
    expect(withView.peers[5]?.health).to.equal('dead');
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(toSuccessor().at(-1)).to.equal(withView);
    n.driver.stop();
  });

  it("has a new term's first round wait, in a large mesh only, for its first announcement to be answered by every follower", async () => {
    const settledAt = async (peers: NodeRef[]) => {
      // One follower answers at once (a term is confirmed only once some peer is heard from).
      const quick = peers[0]?.address;
      const n = node(TOP, peers, {
        announce: acceptedBy(TOP),
        announceAfterMs: (to) => (to === quick ? 0 : 800),
      });
      let leadingAt: number | null = null;
      let firstRoundAt: number | null = null;
      const started = n.clock.now();
      n.driver.start();
      for (let t = 0; t < 2_000 && firstRoundAt === null; t += 50) {
        if (leadingAt === null && n.leading.length > 0) {
          leadingAt = n.clock.now() - started;
          void n.driver.firstRoundAfter.then(() => (firstRoundAt = n.clock.now() - started));
        }
        await n.clock.advanceAsync(50);
      }
      n.driver.stop();
      return { leadingAt, firstRoundAt };
    };
    // Most answers take 800 ms: the term is confirmed after CONFIRM_WAIT_MS (300 ms) all the same.
    const large = await settledAt(many);
    expect(large.leadingAt).to.be.within(300, 400);
    expect(large.firstRoundAt).to.be.within(800, 900);
    const small = await settledAt([LOW, MID]);
    expect(small.leadingAt).to.be.within(300, 400);
    expect(small.firstRoundAt, 'a small mesh probes at once').to.equal(small.leadingAt);
  });

  it('a follower sent no verdicts tells its status page so, and hands nothing to a restarted node', async () => {
    const followed: (PeerView[] | null)[] = [];
    const clock = new FakeClock();
    const driver = new ElectionDriver({
      self: LOW,
      timing: TIMING,
      transport: {
        sendElection: () =>
          Promise.resolve(ok({ type: 'answer', from: HIGH, epoch: 0, coordinator: null })),
        announce: () => Promise.resolve(failed<AnnouncementReply>()),
      },
      clock,
      logger: new CapturingLogger(),
      delegate: new TestDelegate(LOW, { onFollowedView: (v) => followed.push(v) }),
      onCoordinatorChanged: () => undefined,
      onLeading: () => undefined,
    });
    driver.setPeers([MID.address, HIGH.address]);
    driver.start();
    await clock.advanceAsync(0);
    driver.handleAnnouncement({ from: HIGH, epoch: 2, peers: [view(MID, 'alive')] });
    driver.handleAnnouncement({ from: HIGH, epoch: 2, peers: [], peers_omitted: true });
    expect(followed).to.deep.equal([[view(MID, 'alive')], null]);
    // HIGH restarted (epoch back at 1): only a node that holds verdicts hands them over, or a
    // restarted coordinator would take this follower's near-empty view for the mesh's.
    const stale = driver.handleAnnouncement({ from: HIGH, epoch: 1, peers: [] });
    expect(stale).to.deep.include({ accepted: false, reason: 'stale-epoch', epoch: 2 });
    expect(stale).to.not.have.property('peers');
    expect(stale).to.not.have.property('undelivered');
    expect(stale).to.not.have.property('alerts');
    driver.stop();
  });

  it('a restarted coordinator of a large mesh takes the fullest view handed over, whatever the order of replies', async () => {
    const full = many.map((p, i) => view(p, i === 7 ? 'dead' : 'alive', 3_000, i === 7));
    const successor = many[many.length - 1]!.address;
    const n = node(TOP, many, {
      announce: (to, a) => {
        if (a.epoch > 4) {
          return ok({ accepted: true, epoch: a.epoch, coordinator: TOP });
        }
        // The mesh is at epoch 4; thin followers of an older knh hand over only their leader.
        const peers = to === successor ? full : [view(many[0]!, 'alive')];
        const value: AnnouncementReply = {
          accepted: false,
          reason: 'stale-epoch',
          epoch: 4,
          coordinator: many[0]!,
          peers,
        };
        return { ok: true, value, latencyMs: 1 };
      },
    });
    const inheritedAtLeading: PeerView[][] = [];
    n.driver.start();
    await n.clock.advanceAsync(0);
    await n.clock.advanceAsync(1_000);
    expect(n.leading).to.deep.equal([5]);
    inheritedAtLeading.push(n.atLeading()?.inherited ?? []);
    const dead = inheritedAtLeading[0]!.filter((v) => v.health === 'dead');
    expect(dead.map((v) => v.address)).to.deep.equal([many[7]!.address]);
    n.driver.stop();
  });

  it(`heartbeats its successors every interval and the others every ${LARGE_MESH_HEARTBEAT_EVERY}th`, async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.sent.length = 0;
    const beats = 2 * LARGE_MESH_HEARTBEAT_EVERY;
    for (let i = 0; i < beats; i++) await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    const to = (address: string) => n.sent.filter((s) => s.to === address).length;
    const successor = many[many.length - 1]!.address;
    expect(to(successor)).to.equal(beats);
    expect(to(many[0]!.address)).to.equal(2);
    expect(n.sent).to.have.length(beats * 3 + 2 * (many.length - 3));
    n.driver.stop();
  });

  it(`leaves the heartbeats of followers that take them in probes to the probes, announcing to them every ${LARGE_MESH_REFRESH_EVERY}th and when the successors change`, async () => {
    const oldVersion = many[0]!.address;
    let successors = many
      .slice(-3)
      .map((p) => p.address)
      .reverse();
    const n = node(
      TOP,
      many,
      { announce: acceptedBy(TOP) },
      { takesHeartbeats: (a) => a !== oldVersion, successors: () => successors },
    );
    n.driver.start();
    await n.clock.advanceAsync(0);
    expect(n.sent).to.have.length(many.length);
    n.sent.length = 0;
    const to = (address: string) => n.sent.filter((s) => s.to === address).length;
    const beats = LARGE_MESH_REFRESH_EVERY;
    for (let i = 0; i < beats; i++) await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(to(successors[0]!)).to.equal(beats);
    // A follower of an older version: every 8th and the refresh; the others: only the refresh.
    expect(to(oldVersion)).to.equal(Math.floor((beats - 1) / LARGE_MESH_HEARTBEAT_EVERY) + 1);
    expect(to(many[1]!.address)).to.equal(1);
    // A successor judged dead: every follower hears of the new line at the next heartbeat.
    successors = [successors[1]!, successors[2]!, many[many.length - 4]!.address];
    n.sent.length = 0;
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.sent).to.have.length(many.length);
    expect(n.sent.every((s) => s.announcement.successors?.[0] === successors[0])).to.equal(true);
    n.sent.length = 0;
    await n.clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(n.sent.map((s) => s.to)).to.have.members(successors);
    n.driver.stop();
  });

  it('announces at once to a peer that stopped taking its heartbeats, and only as coordinator', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    const stray = many[5]!.address;
    n.driver.announceTo(stray); // not leading yet: nothing
    expect(n.sent).to.deep.equal([]);
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.sent.length = 0;
    n.driver.announceTo(stray);
    n.driver.announceTo('10.99.99.99:8080'); // not a peer: nothing
    await n.clock.advanceAsync(0);
    expect(n.sent.map((s) => [s.to, s.announcement.epoch])).to.deep.equal([[stray, 1]]);
    n.driver.stop();
  });

  it('tells thin followers to expect a heartbeat at least once a probe interval', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) }, { probeEveryMs: 10_000 });
    n.driver.start();
    await n.clock.advanceAsync(0);
    const told = new Set(n.sent.map((s) => s.announcement.heartbeat_ms));
    expect(told).to.deep.equal(new Set([undefined, 10_000]));
    n.driver.stop();
  });

  it('keeps one view in flight to the successors however many decisions share at once', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    n.driver.start();
    await n.clock.advanceAsync(0);
    await n.clock.advanceAsync(200);
    n.sent.length = 0;
    n.setView(many.map((p) => view(p, 'alive')));
    // A storm: 50 decisions in one turn, the verdicts changing after the first went out.
    const shares = Array.from({ length: 50 }, () => n.driver.shareNow(100));
    n.setView(many.map((p) => view(p, 'suspect')));
    await Promise.all(shares);
    const successors = many.slice(-3).map((p) => p.address);
    expect(n.sent.map((s) => s.to)).to.have.members([...successors, ...successors]);
    const healths = (s: { announcement: Announcement }) =>
      new Set(s.announcement.peers.map((v) => v.health));
    expect(n.sent.slice(0, 3).map(healths), 'the first').to.deep.equal(
      successors.map(() => new Set(['alive'])),
    );
    expect(n.sent.slice(3).map(healths), 'the one behind it: the latest').to.deep.equal(
      successors.map(() => new Set(['suspect'])),
    );
    n.driver.stop();
  });

  it('sends a share queued behind a slow one before its caller goes on, even once stopped', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP), announceAfterMs: 1_000 });
    n.driver.start();
    await n.clock.advanceAsync(0);
    await n.clock.advanceAsync(200);
    n.sent.length = 0;
    void n.driver.shareNow(100); // in flight for 1 s
    n.setUndelivered([deadAlert(many[0]!, TOP, 2_000)]);
    let shared = false;
    void n.driver.shareNow(100).then(() => (shared = true));
    const carrying = () => n.sent.filter((s) => (s.announcement.undelivered ?? []).length > 0);
    await n.clock.advanceAsync(500);
    expect(shared, 'not before its announcement has gone').to.be.false;
    await n.clock.advanceAsync(600);
    expect(new Set(carrying().map((s) => s.to))).to.deep.equal(
      new Set(many.slice(-3).map((p) => p.address)),
    );
    await n.clock.advanceAsync(200);
    expect(shared, 'then waits at most its 100 ms').to.be.true;
    // The last share before stop() (a node leaving) goes too, behind the one in flight.
    await n.clock.advanceAsync(2_000);
    n.sent.length = 0;
    void n.driver.shareNow(300);
    n.setUndelivered([deadAlert(many[1]!, TOP, 3_000)]);
    void n.driver.shareNow(300);
    n.driver.stop();
    await n.clock.advanceAsync(2_500);
    const last = n.sent.filter((s) =>
      (s.announcement.undelivered ?? []).some((u) => u.peer.address === many[1]!.address),
    );
    expect(last.map((s) => [s.to, s.announcement.epoch])).to.have.deep.members(
      many.slice(-3).map((p) => [p.address, 1]),
    );
  });

  it('shares a decision with its successors only, and keeps every heartbeat on time', async () => {
    const n = node(TOP, many, { announce: acceptedBy(TOP) });
    n.driver.start();
    await n.clock.advanceAsync(0);
    n.sent.length = 0;
    await n.clock.advanceAsync(200);
    await n.driver.shareNow(100);
    const successors = many.slice(-3).map((p) => p.address);
    expect(n.sent.map((s) => s.to)).to.have.members(successors);
    n.sent.length = 0;
    // The next heartbeat is still due 500 ms after the last one (to the successors: it is not
    // one of the every-8th that go to everyone).
    await n.clock.advanceAsync(300);
    expect(n.sent.map((s) => s.to)).to.have.members(successors);
    n.driver.stop();
  });
});

describe('ElectionDriver: a node its peers cannot authenticate', () => {
  /** HIGH, whose announcements LOW and MID answer with `outcome` (a refusal, or acceptance). */
  function refusedBy(outcome: (epoch: number) => Outcome<AnnouncementReply>) {
    const clock = new FakeClock();
    const leading: number[] = [];
    const driver = new ElectionDriver({
      self: HIGH,
      timing: TIMING,
      transport: {
        sendElection: () => Promise.resolve(failed<ElectionAnswer>()),
        announce: (_to, announcement) => Promise.resolve(outcome(announcement.epoch)),
      },
      clock,
      logger: new CapturingLogger(),
      delegate: new TestDelegate(HIGH),
      onCoordinatorChanged: () => undefined,
      onLeading: (epoch) => leading.push(epoch),
    });
    driver.setPeers([LOW.address, MID.address]);
    return { clock, driver, leading };
  }
  const unauthenticated = <T>(): Outcome<T> => ({
    ok: false,
    reason: 'http-status',
    phase: 'send',
    detail: 'HTTP 401: not authenticated (bad-signature)',
    latencyMs: 1,
    authRefused: 'bad-signature',
  });

  it('does not lead, and claims no more than candidate, while every peer refuses to authenticate it', async () => {
    let refusing = true;
    const { clock, driver, leading } = refusedBy((epoch) =>
      refusing ? unauthenticated() : ok({ accepted: true, epoch, coordinator: HIGH }),
    );
    driver.start();
    await clock.advanceAsync(5 * TIMING.heartbeatIntervalMs);
    expect(leading, 'a 401 is not a peer hearing it').to.deep.equal([]);
    expect(driver.role).to.equal('coordinator');
    expect(driver.claimedRole, 'what /ping and /status say').to.equal('candidate');
    // The secret fixed: its next heartbeat is taken, and it leads.
    refusing = false;
    await clock.advanceAsync(2 * TIMING.heartbeatIntervalMs);
    expect(leading).to.have.length(1);
    expect(driver.claimedRole).to.equal('coordinator');
    driver.stop();
  });

  it('leads when its peers refuse it otherwise (a refused connection is their host hearing it)', async () => {
    const { clock, driver, leading } = refusedBy(() => failed());
    driver.start();
    await clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(leading).to.have.length(1);
    expect(driver.claimedRole).to.equal('coordinator');
    driver.stop();
  });
});
