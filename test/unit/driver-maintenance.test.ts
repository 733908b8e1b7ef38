// Maintenance windows riding on the election's messages: announcements carry the coordinator's,
// replies carry each follower's, so a window opened (or ended) on any node reaches every node.
import { expect } from 'chai';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
} from '../../src/wire/peer-messages.js';
import type { Outcome, PeerTransport } from '../../src/core/transport.js';
import { ElectionDriver } from '../../src/election/driver.js';
import { MaintenanceBook } from '../../src/maintenance/windows.js';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { DEFAULT_TIMING as TIMING } from '../support/election-sim.js';
import { FakeClock } from '../support/fake-clock.js';
import { LOW, MID, HIGH, failed, ok } from '../support/election-peers.js';
import { TestDelegate } from '../support/test-delegate.js';

const STRANGER: NodeRef = { id: 'other@10.9.9.9', address: '10.9.9.9:8080' };
const MIN = 60_000;
const schemas = loadSchemas();

function window(id: string, now: number, over: Partial<MaintenanceWindow> = {}): MaintenanceWindow {
  return {
    id,
    scope: 'mesh',
    nodes: [],
    starts: now,
    until: now + 30 * MIN,
    reason: 'node upgrades',
    cancelled: false,
    ...over,
  };
}

const views: PeerView[] = [
  {
    id: LOW.id,
    address: LOW.address,
    node_name: 'low',
    health: 'alive',
    since: 1_000,
    alerted: false,
  },
];

/** One node: a driver with its own maintenance book, on a transport the test provides. */
function node(
  self: NodeRef,
  peers: NodeRef[],
  clock: FakeClock,
  transport: Pick<PeerTransport, 'sendElection' | 'announce'>,
) {
  const book = new MaintenanceBook();
  const heard: MaintenanceWindow[][] = [];
  const followed: PeerView[][] = [];
  const driver = new ElectionDriver({
    self,
    timing: TIMING,
    transport,
    clock,
    logger: new CapturingLogger(),
    delegate: new TestDelegate(self, {
      view: () => views,
      maintenance: () => [...book.all()],
      onMaintenance: (windows) => {
        heard.push(structuredClone(windows));
        book.merge(windows, clock.now());
      },
      onFollowedView: (v) => followed.push(v ?? []),
    }),
    onCoordinatorChanged: () => undefined,
    onLeading: () => undefined,
  });
  driver.setPeers(peers.map((p) => p.address));
  return { self, book, heard, followed, driver };
}

/** A follower: LOW, whose higher-ranked peers answer its election, so it waits to be told. */
async function follower(clock: FakeClock) {
  const n = node(LOW, [MID, HIGH], clock, {
    sendElection: (to: string) =>
      Promise.resolve(
        ok<ElectionAnswer>({
          type: 'answer',
          from: to === HIGH.address ? HIGH : MID,
          epoch: 0,
          coordinator: null,
        }),
      ),
    announce: () => Promise.resolve(failed<AnnouncementReply>()),
  });
  n.driver.start();
  await clock.advanceAsync(0);
  return n;
}

type Node = ReturnType<typeof node>;

/** Nodes wired to each other in memory: each request is the receiver's driver handling it. */
function mesh(clock: FakeClock, refs: NodeRef[]) {
  const nodes = new Map<string, Node>();
  const announcements: Announcement[] = [];
  const replies: AnnouncementReply[] = [];
  for (const ref of refs) {
    const peers = refs.filter((r) => r !== ref);
    nodes.set(
      ref.address,
      node(ref, peers, clock, {
        sendElection: (to: string, request: ElectionRequest) => {
          const answer = nodes.get(to)?.driver.handleElection(structuredClone(request));
          return Promise.resolve(answer ? ok(answer) : failed<ElectionAnswer>());
        },
        announce: (to: string, announcement: Announcement) => {
          announcements.push(structuredClone(announcement));
          const reply = nodes.get(to)?.driver.handleAnnouncement(structuredClone(announcement));
          if (reply) replies.push(structuredClone(reply));
          return Promise.resolve(reply ? ok(reply) : failed<AnnouncementReply>());
        },
      }),
    );
  }
  const get = (ref: NodeRef) => nodes.get(ref.address) as Node;
  return { nodes: [...nodes.values()], get, announcements, replies };
}

describe('ElectionDriver: maintenance windows', () => {
  let clock: FakeClock;
  let t0: number;

  beforeEach(() => {
    clock = new FakeClock();
    t0 = clock.now();
  });

  it("a coordinator's announcements carry its windows, and none while it has none", async () => {
    const m = mesh(clock, [LOW, MID, HIGH]);
    for (const n of m.nodes) n.driver.start();
    await clock.advanceAsync(2_000);
    expect(m.get(HIGH).driver.role).to.equal('coordinator');
    expect(m.announcements).to.not.be.empty;
    expect(m.announcements.every((a) => !('maintenance' in a))).to.be.true;
    expect(m.replies.every((r) => !('maintenance' in r))).to.be.true;

    const w = window('w1', clock.now());
    m.get(HIGH).book.merge([w], clock.now());
    m.announcements.length = 0;
    await clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(m.announcements).to.not.be.empty;
    for (const a of m.announcements) {
      expect(a.maintenance).to.deep.equal([w]);
      expect(schemas.check('announcement', a)).to.deep.equal({ ok: true });
    }
    for (const n of [m.get(LOW), m.get(MID)]) expect(n.book.all()).to.deep.equal([w]);
    for (const n of m.nodes) n.driver.stop();
  });

  it('a window opened on a follower reaches the coordinator in its reply, then every follower', async () => {
    const m = mesh(clock, [LOW, MID, HIGH]);
    for (const n of m.nodes) n.driver.start();
    await clock.advanceAsync(2_000);
    const w = window('from-low', clock.now(), { scope: 'nodes', nodes: ['mid'] });
    m.get(LOW).book.merge([w], clock.now());
    await clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(m.get(HIGH).book.all(), 'from the reply to one heartbeat').to.deep.equal([w]);
    const withWindow = m.replies.filter((r) => r.maintenance);
    expect(withWindow).to.not.be.empty;
    for (const r of withWindow) {
      expect(schemas.check('announcement-reply', r)).to.deep.equal({ ok: true });
    }
    await clock.advanceAsync(TIMING.heartbeatIntervalMs);
    expect(m.get(MID).book.all(), 'by the next heartbeat').to.deep.equal([w]);

    // Ended on MID: the cancellation travels the same way and wins everywhere.
    expect(m.get(MID).book.cancel('from-low', clock.now())).to.not.equal(null);
    await clock.advanceAsync(2 * TIMING.heartbeatIntervalMs);
    for (const n of m.nodes) {
      expect(
        n.book.all().map((x) => [x.id, x.cancelled]),
        n.self.id,
      ).to.deep.equal([['from-low', true]]);
      expect(n.book.active(clock.now())).to.deep.equal([]);
    }
    for (const n of m.nodes) n.driver.stop();
  });

  it("a follower merges the coordinator's windows, reports the views it accepted, and replies with its own", async () => {
    const n = await follower(clock);
    const mine = window('mine', t0);
    n.book.merge([mine], t0);
    const theirs = window('theirs', t0, { until: t0 + 5 * MIN });
    const reply = n.driver.handleAnnouncement({
      from: HIGH,
      epoch: 4,
      peers: views,
      maintenance: [theirs],
    });
    expect(reply).to.deep.include({ accepted: true, epoch: 4 });
    expect(n.heard).to.deep.equal([[theirs]]);
    expect(n.followed).to.deep.equal([views]);
    expect(
      n.book
        .all()
        .map((w) => w.id)
        .sort(),
    ).to.deep.equal(['mine', 'theirs']);
    // The reply is built after the merge: it carries the union.
    expect(reply?.maintenance?.map((w) => w.id).sort()).to.deep.equal(['mine', 'theirs']);
    expect(schemas.check('announcement-reply', reply)).to.deep.equal({ ok: true });
    n.driver.stop();
  });

  it('a follower with no windows replies without a maintenance field', async () => {
    const n = await follower(clock);
    const reply = n.driver.handleAnnouncement({ from: HIGH, epoch: 4, peers: views });
    expect(reply).to.deep.equal({ accepted: true, epoch: 4, coordinator: HIGH });
    expect(n.heard, 'nothing to merge').to.deep.equal([]);
    n.driver.stop();
  });

  it('takes no windows and no views from a sender outside its peer list', async () => {
    const n = await follower(clock);
    const reply = n.driver.handleAnnouncement({
      from: STRANGER,
      epoch: 9,
      peers: views,
      maintenance: [window('hijack', t0)],
    });
    expect(reply).to.deep.include({ accepted: false, reason: 'unknown-sender' });
    expect(n.heard).to.deep.equal([]);
    expect(n.followed).to.deep.equal([]);
    expect(n.book.all()).to.deep.equal([]);
    n.driver.stop();
  });

  it("takes no windows from an announcement it refuses: only its coordinator's count", async () => {
    const n = await follower(clock);
    n.driver.handleAnnouncement({ from: HIGH, epoch: 4, peers: views });
    n.followed.length = 0;
    // MID claims an older term: stale, rejected; its windows reach this node through the
    // coordinator once MID follows it (its reply carries them).
    const w = window('from-mid', t0);
    const reply = n.driver.handleAnnouncement({
      from: MID,
      epoch: 2,
      peers: [],
      maintenance: [w],
    });
    expect(reply).to.deep.include({ accepted: false, reason: 'stale-epoch' });
    expect(n.followed, 'no views taken from a rejected announcement').to.deep.equal([]);
    expect(n.book.all()).to.deep.equal([]);
    expect(reply?.maintenance).to.equal(undefined);
    expect(schemas.check('announcement-reply', reply)).to.deep.equal({ ok: true });
    // From the coordinator it follows, the same window is taken.
    n.driver.handleAnnouncement({ from: HIGH, epoch: 4, peers: views, maintenance: [w] });
    expect(n.book.all()).to.deep.equal([w]);
    n.driver.stop();
  });

  it("a coordinator merges the windows its followers' replies carry", async () => {
    const w = window('from-reply', t0);
    const replyFrom = (to: string, a: Announcement): Outcome<AnnouncementReply> =>
      ok({
        accepted: true,
        epoch: a.epoch,
        coordinator: HIGH,
        ...(to === LOW.address ? { maintenance: [w] } : {}),
      });
    const n = node(HIGH, [LOW, MID], clock, {
      sendElection: () => Promise.resolve(failed<ElectionAnswer>()),
      announce: (to, a) => Promise.resolve(replyFrom(to, a)),
    });
    n.driver.start();
    await clock.advanceAsync(0);
    expect(n.driver.role).to.equal('coordinator');
    expect(n.heard).to.deep.equal([[w]]);
    expect(n.book.all()).to.deep.equal([w]);
    n.driver.stop();
  });

  it('ignores a failed reply', async () => {
    const n = node(HIGH, [LOW], clock, {
      sendElection: () => Promise.resolve(failed<ElectionAnswer>()),
      announce: () => Promise.resolve(failed<AnnouncementReply>()),
    });
    n.driver.start();
    await clock.advanceAsync(2_000);
    expect(n.heard).to.deep.equal([]);
    n.driver.stop();
  });
});
