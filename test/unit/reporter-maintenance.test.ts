// The reporter during maintenance: alerts about paused peers are held (and still handed over to a
// successor), cancelled by their resolution, or sent once the window is over; nothing else changes.
import { expect } from 'chai';
import { MaintenanceHold } from '../../src/alerts/maintenance-hold.js';
import type { FlapSettings } from '../../src/alerts/flap-damper.js';
import { pausing } from '../../src/maintenance/windows.js';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import type { Judgement, PeerRecord } from '../../src/prober/verdict.js';
import { FakeClock } from '../support/fake-clock.js';
import { maintenanceWindow } from '../support/maintenance-window.js';
import { SELF, setupReporter } from '../support/reporter-fixture.js';
import { answersAgain, confirmed, upRecord as up } from '../support/verdicts.js';

const SUCCESSOR = { id: 'next@10.0.0.8', address: '10.0.0.8:8080' };
const MIN = 60_000;

/**
 * A leading reporter whose hold reads `windows`, posting to a fake receiver that accepts all; its
 * leader's verdicts are what every judgement handed to it left behind.
 */
function setup(
  clock: FakeClock,
  windows: () => readonly MaintenanceWindow[],
  self = SELF,
  flap?: FlapSettings,
) {
  const fx = setupReporter({
    clock,
    self,
    holdShares: false,
    intervalMs: 0,
    ...(flap ? { flap } : {}),
    hold: new MaintenanceHold((peer, now) => pausing(windows(), peer, now)),
  });
  const records = new Map<string, PeerRecord>();
  fx.leadership.records = () => [...records.values()];
  fx.lead();
  const onJudgement = fx.reporter.onJudgement.bind(fx.reporter);
  fx.reporter.onJudgement = (j: Judgement) => {
    records.set(j.record.address, j.record);
    onJudgement(j);
  };
  return { ...fx, records };
}

/** Its probes fail from `at`; confirmed dead a second later. */
function dies(record: PeerRecord, at: number): Judgement {
  const { verdict } = confirmed(record, at);
  expect(verdict.transition).to.equal('died');
  return verdict;
}

function recovers(died: Judgement, at: number): Judgement {
  const back = answersAgain(died.record, at);
  expect(back.transition).to.equal('recovered');
  return back;
}

describe('Reporter during maintenance', () => {
  let clock: FakeClock;
  let t0: number;
  let windows: MaintenanceWindow[];
  const meshWindow = () => maintenanceWindow('mw1', t0, { until: t0 + 10 * MIN });

  beforeEach(() => {
    clock = new FakeClock();
    t0 = clock.now();
    windows = [];
  });

  it('holds the peer_dead of a peer that dies during a window, and keeps it undelivered', async () => {
    windows = [meshWindow()];
    const { reporter, suppressed, peerPosts } = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    await clock.advanceAsync(2_000);
    reporter.onJudgement(died);
    await clock.advanceAsync(5_000);
    expect(peerPosts()).to.deep.equal([]);
    const [held] = reporter.undelivered();
    expect(held?.event).to.equal('peer_dead');
    expect(reporter.undelivered()).to.have.length(1);
    expect(suppressed).to.deep.equal([{ event: 'peer_dead', key: held?.dedup_key, window: 'mw1' }]);
  });

  it('posts nothing at all when the peer recovers during the window', async () => {
    windows = [meshWindow()];
    const { reporter, suppressed, peerPosts } = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    await clock.advanceAsync(2_000);
    reporter.onJudgement(died);
    await clock.advanceAsync(60_000);
    reporter.onJudgement(recovers(died, clock.now()));
    await clock.advanceAsync(1_000);
    expect(reporter.undelivered()).to.deep.equal([]);
    expect(suppressed.map((s) => [s.event, s.window])).to.deep.equal([
      ['peer_dead', 'mw1'],
      ['peer_recovered', null],
    ]);
    // Nor after the window, nor on any later release.
    await clock.advanceAsync(20 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(1_000);
    expect(peerPosts()).to.deep.equal([]);
  });

  it('posts the held peer_dead, same dedup key, once the window is over and the peer still dead', async () => {
    windows = [meshWindow()];
    const { reporter, peerPosts } = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    await clock.advanceAsync(2_000);
    reporter.onJudgement(died);
    const [held] = reporter.undelivered();
    await clock.advanceAsync(5 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts(), 'window still open').to.deep.equal([]);
    await clock.advanceAsync(10 * MIN);
    reporter.releaseHeld();
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts()).to.deep.equal([held]);
    expect(reporter.undelivered(), 'delivered').to.deep.equal([]);
    // Its recovery now resolves a sent alert, so it goes out too.
    reporter.onJudgement(recovers(died, clock.now()));
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead', 'peer_recovered']);
  });

  it('posts the held peer_dead as soon as the window is cancelled early', async () => {
    windows = [meshWindow()];
    const { reporter, peerPosts } = setup(clock, () => windows);
    reporter.onJudgement(dies(up('a', '10.0.0.1', t0), t0 + 1_000));
    await clock.advanceAsync(MIN);
    windows = [{ ...meshWindow(), cancelled: true }];
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
  });

  it('posts the peer_recovered of a peer dead before the window that recovers during it', async () => {
    const { reporter, peerPosts, suppressed } = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    reporter.onJudgement(died);
    await clock.advanceAsync(MIN);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
    windows = [{ ...meshWindow(), starts: clock.now(), until: clock.now() + 10 * MIN }];
    reporter.onJudgement(recovers(died, clock.now() + 1_000));
    await clock.advanceAsync(2_000);
    const [dead, recovered] = peerPosts();
    expect(recovered?.event).to.equal('peer_recovered');
    expect(recovered?.dedup_key.replace(':recovered', '')).to.equal(
      dead?.dedup_key.replace(':dead', ''),
    );
    expect(suppressed).to.deep.equal([]);
  });

  it('a successor given the undelivered events holds them during the window and posts them after', async () => {
    windows = [meshWindow()];
    const first = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    first.reporter.onJudgement(died);
    await clock.advanceAsync(MIN);
    const handedOver = structuredClone(first.reporter.undelivered());
    expect(handedOver.map((p) => p.event)).to.deep.equal(['peer_dead']);
    first.reporter.stopLeading();

    const next = setup(clock, () => windows, SUCCESSOR);
    next.records.set(died.record.address, died.record); // inherited: dead
    next.reporter.resend(handedOver);
    await clock.advanceAsync(MIN);
    expect(next.peerPosts(), 'held by the successor too').to.deep.equal([]);
    expect(next.suppressed.map((s) => s.window)).to.deep.equal(['mw1']);
    expect(next.reporter.undelivered(), 'and handed on again').to.deep.equal(handedOver);

    await clock.advanceAsync(10 * MIN);
    next.reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(next.peerPosts(), 'the very payload, same dedup key').to.deep.equal(handedOver);
    expect(first.peerPosts()).to.deep.equal([]);
  });

  it('a successor cancels a held peer_dead it inherited when the peer recovers in the window', async () => {
    windows = [meshWindow()];
    const first = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    first.reporter.onJudgement(died);
    const handedOver = structuredClone(first.reporter.undelivered());
    first.reporter.stopLeading();
    const next = setup(clock, () => windows, SUCCESSOR);
    next.reporter.startLeading(next.leadership, handedOver);
    await clock.advanceAsync(MIN);
    next.reporter.onJudgement(recovers(died, clock.now()));
    await clock.advanceAsync(20 * MIN);
    next.reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(next.peerPosts()).to.deep.equal([]);
    expect(next.reporter.undelivered()).to.deep.equal([]);
  });

  it('a window for node A does not hold alerts about node B', async () => {
    windows = [{ ...meshWindow(), scope: 'nodes', nodes: ['a'] }];
    const { reporter, peerPosts, suppressed } = setup(clock, () => windows);
    reporter.onJudgement(dies(up('a', '10.0.0.1', t0), t0 + 1_000));
    reporter.onJudgement(dies(up('b', '10.0.0.2', t0), t0 + 1_000));
    await clock.advanceAsync(MIN);
    expect(peerPosts().map((p) => [p.event, p.peer.node_name])).to.deep.equal([['peer_dead', 'b']]);
    expect(suppressed.map((s) => s.window)).to.deep.equal(['mw1']);
    expect(reporter.undelivered().map((p) => p.peer.node_name)).to.deep.equal(['a']);
  });

  it('holds a broken path too, and lets its closing path_restored cancel it when the peer then dies', async () => {
    windows = [meshWindow()];
    const { reporter, peerPosts, suppressed } = setup(clock, () => windows);
    const { verdict: broken } = confirmed(up('a', '10.0.0.1', t0), t0 + 1_000, {
      reachedBy: ['b@10.0.0.2'],
    });
    expect(broken.transition).to.equal('path-broken');
    reporter.onJudgement(broken);
    const died = dies(broken.record, t0 + 5_000);
    expect(died.restoredPath?.alerted).to.be.true;
    reporter.onJudgement(died);
    await clock.advanceAsync(MIN);
    expect(peerPosts()).to.deep.equal([]);
    expect(suppressed.map((s) => [s.event, s.window])).to.deep.equal([
      ['path_broken', 'mw1'],
      ['path_restored', null],
      ['peer_dead', 'mw1'],
    ]);
    expect(reporter.undelivered().map((p) => p.event)).to.deep.equal(['peer_dead']);
    await clock.advanceAsync(10 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
  });

  it('posts the held peer_dead of a peer down again after a recovery flap damping hid, once the window is over', async () => {
    windows = [meshWindow()];
    const hold: FlapSettings = { recoveryHoldMs: 10_000, windowMs: MIN, changes: 0, stableMs: 0 };
    const { reporter, peerPosts } = setup(clock, () => windows, SELF, hold);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    await clock.advanceAsync(2_000);
    reporter.onJudgement(died);
    const [held] = reporter.undelivered();
    await clock.advanceAsync(1_000);
    const back = recovers(died, clock.now());
    reporter.onJudgement(back);
    await clock.advanceAsync(3_000);
    // Down again within RECOVERY_HOLD: the same incident, though the verdict's start moved on.
    reporter.onJudgement(dies(back.record, clock.now()));
    await clock.advanceAsync(20 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts(), 'still dead: the held alert is true').to.deep.equal([held]);
  });

  it('drops a held alert that is no longer true when released (another coordinator saw the recovery)', async () => {
    windows = [meshWindow()];
    const { reporter, records, peerPosts } = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    reporter.onJudgement(died);
    // Meanwhile a successor led, saw the recovery, and this node leads again from its view.
    records.set(died.record.address, recovers(died, t0 + 5 * MIN).record);
    await clock.advanceAsync(20 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts()).to.deep.equal([]);
    expect(reporter.undelivered()).to.deep.equal([]);
  });

  it('a leader handed a stale alert (its verdicts show the peer alive again) drops it and its resolution', async () => {
    windows = [meshWindow()];
    const first = setup(clock, () => windows);
    const died = dies(up('a', '10.0.0.1', t0), t0 + 1_000);
    first.reporter.onJudgement(died);
    const stale = structuredClone(first.reporter.undelivered());
    windows = [];
    await clock.advanceAsync(20 * MIN);
    const next = setup(clock, () => windows, SUCCESSOR);
    next.records.set(died.record.address, recovers(died, t0 + 5 * MIN).record);
    next.reporter.resend(stale);
    next.reporter.releaseHeld();
    await clock.advanceAsync(MIN);
    expect(next.peerPosts()).to.deep.equal([]);
    expect(next.reporter.undelivered()).to.deep.equal([]);
  });

  it('releases nothing while it does not lead', async () => {
    windows = [meshWindow()];
    const { reporter, peerPosts, leadership } = setup(clock, () => windows);
    reporter.onJudgement(dies(up('a', '10.0.0.1', t0), t0 + 1_000));
    reporter.stopLeading();
    await clock.advanceAsync(20 * MIN);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts()).to.deep.equal([]);
    reporter.startLeading(leadership);
    reporter.releaseHeld();
    await clock.advanceAsync(0);
    expect(peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
  });
});
