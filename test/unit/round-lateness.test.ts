// Whether probe rounds start on time: ProbeRounds measures each start against the previous one plus
// the interval (on a fake clock whose timers can fire late, as a starved event loop's do), and
// ProbeMetrics counts the late ones.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { ProbeMetrics } from '../../src/metrics/probe-metrics.js';
import { lateThresholdMs } from '../../src/prober/policy.js';
import { FakeClock } from '../support/fake-clock.js';
import { sampleOf as sample } from '../support/metrics-text.js';
import { answer, pingResponse } from '../support/pings.js';
import { probeRounds } from '../support/probe-rounds.js';

const INTERVAL = 1_000;

/** A FakeClock whose next sleep ends `lagNextMs` after it is due: a blocked event loop. */
class LaggingClock extends FakeClock {
  lagNextMs = 0;

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    const lag = this.lagNextMs;
    this.lagNextMs = 0;
    return super.sleep(ms + lag, signal);
  }
}

function setup(intervalMs = INTERVAL) {
  const clock = new LaggingClock();
  const lateness: { atMs: number; lateByMs: number }[] = [];
  const rounds = probeRounds({
    clock,
    ping: (address) => Promise.resolve(answer(pingResponse(address, 'n'))),
    intervalMs,
    onRoundStart: (lateByMs) => lateness.push({ atMs: clock.now(), lateByMs }),
  });
  rounds.setPeers(['10.0.0.1:8080', '10.0.0.2:8080']);
  return { clock, rounds, lateness };
}

describe('probe round lateness', () => {
  it('is 0 for the first round and for every round that starts when due', async () => {
    const { clock, rounds, lateness } = setup();
    const t0 = clock.now();
    rounds.start([]);
    await clock.advanceAsync(3_500);
    rounds.stop();
    expect(lateness).to.deep.equal([
      { atMs: t0, lateByMs: 0 },
      { atMs: t0 + 1_000, lateByMs: 0 },
      { atMs: t0 + 2_000, lateByMs: 0 },
      { atMs: t0 + 3_000, lateByMs: 0 },
    ]);
  });

  it('is how long after the previous start plus the interval a round started', async () => {
    const { clock, rounds, lateness } = setup();
    const t0 = clock.now();
    clock.lagNextMs = 700; // the sleep after round 1 ends 700 ms late
    rounds.start([]);
    await clock.advanceAsync(2_710);
    rounds.stop();
    expect(lateness).to.deep.equal([
      { atMs: t0, lateByMs: 0 },
      { atMs: t0 + 1_700, lateByMs: 700 },
      // Due one interval after the late round, not on the original grid: lateness never piles up.
      { atMs: t0 + 2_700, lateByMs: 0 },
    ]);
  });

  it('starts afresh with each term: the first round after a restart is not late', async () => {
    const { clock, rounds, lateness } = setup();
    rounds.start([]);
    await clock.advanceAsync(1_500);
    rounds.stop();
    await clock.advanceAsync(10_000);
    rounds.start([]);
    await clock.advanceAsync(10);
    rounds.stop();
    expect(lateness.map((l) => l.lateByMs)).to.deep.equal([0, 0, 0]);
  });

  it('late means past max(100 ms, half the interval)', () => {
    expect(lateThresholdMs(1_000)).to.equal(500);
    expect(lateThresholdMs(100)).to.equal(100);
    expect(lateThresholdMs(60_000)).to.equal(30_000);
  });

  it('counts late rounds in knh_probe_rounds_late_total and every start in the lateness histogram', async () => {
    const registry = new Registry();
    const metrics = new ProbeMetrics(registry, { records: () => [] });
    let body = await registry.metrics();
    expect(sample(body, 'knh_probe_rounds_late_total'), 'present at 0 from the start').to.equal(0);
    metrics.roundStarted(0, 1_000);
    metrics.roundStarted(500, 1_000); // exactly at the threshold: on time
    metrics.roundStarted(501, 1_000);
    metrics.roundStarted(150, 200); // past 100 ms with a 200 ms interval
    metrics.roundStarted(99, 100);
    body = await registry.metrics();
    expect(sample(body, 'knh_probe_rounds_late_total')).to.equal(2);
    expect(sample(body, 'knh_probe_round_lateness_seconds_count')).to.equal(5);
    expect(sample(body, 'knh_probe_round_lateness_seconds_sum')).to.be.closeTo(1.25, 1e-9);
    expect(sample(body, 'knh_probe_round_lateness_seconds_bucket{le="0.1"}')).to.equal(2);
  });
});
