// What a node does as its terms begin and end: it starts probing and reporting once its own term
// is confirmed, hands what it has not sent to a successor that takes hand-overs (protocol 2) or
// drains it itself for one that does not, and once stopping never takes part again.
import { expect } from 'chai';
import { MaintenanceBook } from '../../src/maintenance/windows.js';
import { Leadership, type LeadershipOptions } from '../../src/node/leadership.js';
import { EventLog } from '../../src/status/event-log.js';
import type { AnnouncementReply } from '../../src/wire/peer-messages.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { DEFAULT_TIMING } from '../support/election-sim.js';
import { HIGH, LOW, failed, ok } from '../support/election-peers.js';
import { FakeClock } from '../support/fake-clock.js';

/** LOW, alone with HIGH, whose parts record what Leadership asks of them, in order. */
function lowNode() {
  const clock = new FakeClock();
  const calls: string[] = [];
  const note =
    (name: string) =>
    (...args: unknown[]) => {
      calls.push(args.length > 0 && typeof args[0] === 'string' ? `${name}:${args[0]}` : name);
    };
  let running = false;
  const o: LeadershipOptions = {
    config: { ...DEFAULT_TIMING, probeTimeoutMs: 1_000, roundIntervalMs: 1_000 },
    self: LOW,
    clock,
    logger: new CapturingLogger(),
    transport: {
      // HIGH does not answer an election (LOW wins), and takes LOW's announcements.
      sendElection: () => Promise.resolve(failed()),
      announce: (_to, a) =>
        Promise.resolve(
          ok<AnnouncementReply>({ accepted: true, epoch: a.epoch, coordinator: LOW }),
        ),
      takesHeartbeats: () => false,
      protocolOf: () => 2,
    },
    rounds: {
      get running() {
        return running;
      },
      start: () => {
        running = true;
        calls.push('rounds.start');
      },
      stop: () => {
        running = false;
        calls.push('rounds.stop');
      },
      snapshot: () => [],
      sanity: 'not-configured',
      selfSuspicion: { suspect: false, considered: 0, unreachable: 0, silent: 0 },
      adopt: note('rounds.adopt'),
    },
    shared: { views: () => [], successors: () => [] },
    reporter: {
      undelivered: () => [],
      cannotJudgeOpen: () => null,
      handOver: () => null,
      takeHandover: note('reporter.takeHandover'),
      resend: note('reporter.resend'),
      resolveCannotJudge: note('reporter.resolveCannotJudge'),
      selfRecovered: note('reporter.selfRecovered'),
      startLeading: note('reporter.startLeading'),
      stopLeading: note('reporter.stopLeading'),
      termRenewed: note('reporter.termRenewed'),
    },
    dispatcher: {
      enabled: true,
      shared: () => [],
      flushNow: note('dispatcher.flushNow'),
      stop: note('dispatcher.stop'),
      stopLeading: note('dispatcher.stopLeading'),
      startLeading: note('dispatcher.startLeading'),
      resolveInherited: note('dispatcher.resolveInherited'),
    },
    book: new MaintenanceBook(),
    events: new EventLog(() => clock.now()),
    metrics: {
      election: {
        electionStarted: () => undefined,
        coordinatorChanged: () => undefined,
        handoverRefused: () => undefined,
      },
    },
    present: () => [HIGH.address],
  };
  const leadership = new Leadership(o);
  leadership.election.setPeers([HIGH.address]);
  return { leadership, clock, calls };
}

async function leading() {
  const n = lowNode();
  n.leadership.listed(true);
  await n.clock.advanceAsync(DEFAULT_TIMING.heartbeatIntervalMs * 4);
  expect(n.leadership.election.role).to.equal('coordinator');
  return n;
}

describe('Leadership', () => {
  it('starts probing, then the other receivers, then reporting, once its term is confirmed', async () => {
    const { calls } = await leading();
    const started = calls.filter((c) => c.endsWith('startLeading') || c === 'rounds.start');
    expect(started).to.deep.equal([
      'rounds.start',
      'dispatcher.startLeading',
      'reporter.startLeading',
    ]);
  });

  it('hands what it has not sent to a successor of protocol 2', async () => {
    const { leadership, calls } = await leading();
    calls.length = 0;
    leadership.announcement({ from: HIGH, epoch: 9, peers: [] }, 2);
    expect(calls).to.include.members([
      'reporter.stopLeading:hand-over',
      'dispatcher.stopLeading:hand-over',
      'rounds.stop',
    ]);
  });

  it('drains what it has not sent itself when the successor is of protocol 1 (no hand-over)', async () => {
    const { leadership, calls } = await leading();
    calls.length = 0;
    leadership.announcement({ from: HIGH, epoch: 9, peers: [] }, 1);
    expect(calls).to.include.members([
      'reporter.stopLeading:drain',
      'dispatcher.stopLeading:drain',
    ]);
  });

  it('once stopping, does not take part again when listed', async () => {
    const { leadership } = await leading();
    await leadership.end();
    expect(leadership.election.started).to.equal(false);
    leadership.listed(true);
    expect(leadership.election.started).to.equal(false);
  });

  it('steps out when no longer listed, draining what its term decided', async () => {
    const { leadership, calls } = await leading();
    calls.length = 0;
    leadership.listed(false);
    expect(leadership.election.started).to.equal(false);
    expect(calls).to.include.members([
      'reporter.stopLeading:drain',
      'dispatcher.stopLeading:drain',
    ]);
  });
});
