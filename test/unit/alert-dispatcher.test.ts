// The dispatcher end to end on a fake clock: peer-status events → grouped alerts → each receiver's
// own queue; a grouped PagerDuty page survives a change of coordinator; a hung receiver delays no
// other; heartbeats only while leading.
import { expect } from 'chai';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { alertmanagerAdapter } from '../../src/receivers/alertmanager.js';
import { AlertDispatcher } from '../../src/delivery/alert-dispatcher.js';
import { pagerDutyAdapter } from '../../src/receivers/pagerduty.js';
import { slackAdapter } from '../../src/receivers/slack.js';
import type { ReceiverAdapter } from '../../src/alerts/receiver-adapter.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { FakePoster, OK } from '../support/fake-poster.js';
import { testQueue } from '../support/test-notifier.js';
import { deathAndRecovery } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const schemas = loadSchemas();
const COORD = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const KEY = 'R0123456789abcdef0123456789abcde';
const PD = 'http://pd.test/v2/enqueue';
const SLACK = 'http://slack.test/hook';

interface PdEvent {
  event_action: string;
  dedup_key: string;
}

/** The peer_dead of each of `ips` (dead at `at`), and their peer_recovered once back at `t`. */
function events(
  at: number,
  ...ips: string[]
): { dead: PeerStatusPayload[]; back: (t: number) => PeerStatusPayload[] } {
  const ups = ips.map((ip) => upRecord(`n${ip}`, ip, at - 10_000));
  const incidents = (back: number) => ups.map((up) => deathAndRecovery(up, at, back, COORD));
  return {
    dead: incidents(at).map(([dead]) => dead),
    back: (t) => incidents(t).map(([, recovered]) => recovered),
  };
}

function dispatcher(clock: FakeClock, poster: FakePoster, adapters: ReceiverAdapter[]) {
  const logger = new CapturingLogger();
  return new AlertDispatcher({
    adapters,
    schemas,
    clock,
    logger,
    holdDownMs: 0,
    groupWaitMs: 2_000,
    makeQueue: (url) => testQueue(url, poster, clock, logger, { retryForMs: 60_000 }),
  });
}

describe('AlertDispatcher', () => {
  it('pages once for failures at once; a successor given the shared alerts resolves that one page', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock);
    const first = dispatcher(clock, poster, [pagerDutyAdapter({ routingKey: KEY, url: PD })]);
    first.startLeading([]);
    const t0 = clock.now();
    const { dead, back } = events(t0, '10.0.0.1', '10.0.0.2', '10.0.0.3');
    for (const p of dead) first.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    const triggers = (poster.bodies as PdEvent[]).filter((e) => e.event_action === 'trigger');
    expect(triggers.map((e) => e.dedup_key)).to.have.length(1);
    const groupKey = triggers[0]?.dedup_key ?? '';
    expect(groupKey).to.match(/^knh:group:/);

    // The coordinator dies; its successor starts from the alerts it shared (a fresh adapter: no memory).
    const shared = structuredClone(first.firing());
    first.stopLeading();
    const next = dispatcher(clock, poster, [pagerDutyAdapter({ routingKey: KEY, url: PD })]);
    next.startLeading(shared);
    const recovered = back(clock.now());
    next.onPeerStatus(recovered[0] as PeerStatusPayload);
    next.onPeerStatus(recovered[1] as PeerStatusPayload);
    await clock.advanceAsync(2_000);
    const resolves = () =>
      (poster.bodies as PdEvent[]).filter(
        (e) => e.event_action === 'resolve' && e.dedup_key === groupKey,
      );
    expect(resolves(), 'not while one of its nodes is still down').to.have.length(0);
    next.onPeerStatus(recovered[2] as PeerStatusPayload);
    await clock.advanceAsync(2_000);
    expect(resolves(), 'the grouped page resolves with its last node').to.have.length(1);
  });

  it('a receiver that hangs delays no other receiver', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock, (call) => (call.url === SLACK ? 'hang' : OK));
    const d = dispatcher(clock, poster, [
      slackAdapter({ webhookUrl: SLACK }),
      pagerDutyAdapter({ routingKey: KEY, url: PD }),
    ]);
    d.startLeading([]);
    const first = events(clock.now(), '10.0.0.1');
    for (const p of first.dead) d.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    const later = events(clock.now(), '10.0.0.2');
    for (const p of later.dead) d.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    expect(
      poster.calls.filter((c) => c.url === PD).map((c) => (c.body as PdEvent).event_action),
    ).to.deep.equal(['trigger', 'trigger']);
    expect(
      poster.calls.filter((c) => c.url === SLACK),
      'the hung one is still on its first',
    ).to.have.length(1);
  });

  it('sends heartbeats (Alertmanager re-posts and watchdog) only while leading', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock);
    const d = dispatcher(clock, poster, [
      alertmanagerAdapter({ baseUrl: 'http://am.test', resendMs: 1_000 }),
    ]);
    d.startLeading([]);
    await clock.advanceAsync(3_500);
    const beats = poster.calls.length;
    expect(beats, 'one at once, then every second').to.equal(4);
    d.stopLeading();
    await clock.advanceAsync(5_000);
    expect(poster.calls.length).to.equal(beats);
  });

  it('forgets its alerts when it steps down: leading again, it starts from what it is handed', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock);
    const d = dispatcher(clock, poster, [pagerDutyAdapter({ routingKey: KEY, url: PD })]);
    d.startLeading([]);
    const { dead, back } = events(clock.now(), '10.0.0.1');
    for (const p of dead) d.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    d.stopLeading();
    expect(d.firing()).to.deep.equal([]);
    // Another coordinator saw it recover; this one leads again from an empty hand-over, and the
    // peer fails anew: a new page, not silence.
    d.startLeading([]);
    const again = events(clock.now(), '10.0.0.1');
    for (const p of again.dead) d.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    expect((poster.bodies as PdEvent[]).filter((e) => e.event_action === 'trigger')).to.have.length(
      2,
    );
    void back;
  });

  it('resolves the alert of a peer discovery no longer lists', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock);
    const d = dispatcher(clock, poster, [pagerDutyAdapter({ routingKey: KEY, url: PD })]);
    d.startLeading([]);
    const { dead } = events(clock.now(), '10.0.0.1');
    for (const p of dead) d.onPeerStatus(p);
    await clock.advanceAsync(2_000);
    d.reconcile(['10.0.0.2:8080']);
    await clock.advanceAsync(2_000);
    expect((poster.bodies as PdEvent[]).map((e) => e.event_action)).to.deep.equal([
      'trigger',
      'resolve',
    ]);
    expect(d.firing()).to.deep.equal([]);
  });

  it('a successor sends the alerts its predecessor shared before sending them (grouping window)', async () => {
    const clock = new FakeClock();
    const poster = new FakePoster(clock);
    // Its own clock, never advanced: it crashes inside the window and sends nothing.
    const first = dispatcher(new FakeClock(clock.now()), poster, [
      pagerDutyAdapter({ routingKey: KEY, url: PD }),
    ]);
    first.startLeading([]);
    for (const p of events(clock.now(), '10.0.0.1').dead) first.onPeerStatus(p);
    const shared = structuredClone(first.shared());
    expect(shared.map((a) => a.unsent)).to.deep.equal([true]);
    // It crashes inside the window: nothing was sent.
    const next = dispatcher(clock, poster, [pagerDutyAdapter({ routingKey: KEY, url: PD })]);
    next.startLeading(shared);
    await clock.advanceAsync(2_000);
    expect((poster.bodies as PdEvent[]).map((e) => e.event_action)).to.deep.equal(['trigger']);
    expect(next.shared().map((a) => a.unsent)).to.deep.equal([undefined]);
  });
});
