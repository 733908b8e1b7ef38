// Degraded and healthy again: thresholds held for DEGRADED_FOR, on enough samples, with hysteresis.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  judgeDegradation,
  newDegradation,
  type DegradationOptions,
  type DegradationRecord,
  type DegradationTransition,
} from '../../src/paths/degradation.js';
import { DEFAULT_PATH_DEGRADATION } from '../../src/paths/defaults.js';
import { PathWindow, type WindowStats } from '../../src/paths/path-window.js';

const T0 = 1_700_000_000_000;
const SECOND = 1_000;
const OPTIONS: DegradationOptions = {
  degradedLossRatio: 0.1,
  degradedLatencyMs: 500,
  degradedForMs: 10_000,
  minSamples: 5,
  recoveryFraction: 0.5,
};

function window(lossRatio: number, p99Ms: number | null, samples = 30): WindowStats {
  const failures = Math.round(lossRatio * samples);
  return {
    samples,
    failures,
    lossRatio: failures / samples,
    p50Ms: p99Ms === null ? null : Math.min(1, p99Ms),
    p99Ms,
  };
}
const clean = window(0, 2);
const lossy = window(0.2, 2);
const slow = window(0, 600);
/** Past neither threshold, but not below the lower bounds (5 % loss, 250 ms). */
const edgy = window(0.07, 2);

interface Step {
  atMs: number;
  transition: DegradationTransition;
  stats: WindowStats;
  heldSinceMs?: number;
}

/** Judges `inputs[i]` at T0 + i seconds, from `start`; returns the end record and the transitions. */
function judgeEachSecond(
  inputs: readonly WindowStats[],
  start: DegradationRecord = newDegradation(T0),
  options = OPTIONS,
): { record: DegradationRecord; steps: Step[] } {
  let record = start;
  const steps: Step[] = [];
  inputs.forEach((stats, i) => {
    const atMs = T0 + i * SECOND;
    const j = judgeDegradation(record, stats, atMs, options);
    record = j.record;
    if (j.transition)
      steps.push({ atMs, transition: j.transition, stats: j.stats, heldSinceMs: j.heldSinceMs! });
  });
  return { record, steps };
}

const times = (n: number, stats: WindowStats): WindowStats[] => Array<WindowStats>(n).fill(stats);
/** A record that turned degraded at T0 − 1 min. */
const degraded: DegradationRecord = {
  health: 'degraded',
  sinceMs: T0 - 60_000,
  turningSinceMs: null,
};

describe('degradation: becoming degraded', () => {
  it('stays healthy while the loss has been past its threshold for less than DEGRADED_FOR', () => {
    const { record, steps } = judgeEachSecond(times(10, lossy));
    expect(steps).to.deep.equal([]);
    expect(record).to.include({ health: 'healthy', turningSinceMs: T0 });
  });

  it('turns degraded once the loss has been at or past its threshold for DEGRADED_FOR', () => {
    const { record, steps } = judgeEachSecond(times(11, lossy));
    expect(steps.map((s) => [s.transition, s.atMs - T0])).to.deep.equal([
      ['became-degraded', 10_000],
    ]);
    expect(record).to.deep.equal({
      health: 'degraded',
      sinceMs: T0 + 10_000,
      turningSinceMs: null,
    });
  });

  it('turns degraded on a p99 latency past its threshold alone, without loss', () => {
    const { steps } = judgeEachSecond(times(11, slow));
    expect(steps.map((s) => s.transition)).to.deep.equal(['became-degraded']);
  });

  it('decides nothing on fewer than minSamples samples, however bad they are', () => {
    const { record, steps } = judgeEachSecond(times(60, window(1, null, 4)));
    expect(steps).to.deep.equal([]);
    expect(record.turningSinceMs).to.equal(null);
  });

  it('starts the count again after a judgement that finds the figures below the threshold', () => {
    const inputs = [...times(9, lossy), edgy, ...times(10, lossy)];
    expect(judgeEachSecond(inputs).steps).to.deep.equal([]);
    expect(judgeEachSecond([...inputs, lossy]).steps.map((s) => s.atMs - T0)).to.deep.equal([
      20_000,
    ]);
  });

  it('tells the figures judged, and since when they had been past the threshold', () => {
    const { steps } = judgeEachSecond([clean, ...times(11, slow)]);
    expect(steps).to.deep.equal([
      { atMs: T0 + 11_000, transition: 'became-degraded', stats: slow, heldSinceMs: T0 + 1_000 },
    ]);
  });
});

describe('degradation: healthy again', () => {
  it('stays degraded while the figures are between the lower bound and the threshold', () => {
    const { record, steps } = judgeEachSecond(times(120, edgy), degraded);
    expect(steps).to.deep.equal([]);
    expect(record.health).to.equal('degraded');
  });

  it('stays degraded while the p99 is past half its threshold, even without loss', () => {
    const { steps } = judgeEachSecond(times(120, window(0, 300)), degraded);
    expect(steps).to.deep.equal([]);
  });

  it('turns healthy once both figures have been below half their thresholds for DEGRADED_FOR', () => {
    const { record, steps } = judgeEachSecond(times(11, clean), degraded);
    expect(steps).to.deep.equal([
      { atMs: T0 + 10_000, transition: 'became-healthy', stats: clean, heldSinceMs: T0 },
    ]);
    expect(record).to.deep.equal({ health: 'healthy', sinceMs: T0 + 10_000, turningSinceMs: null });
  });

  it('stays degraded when the probes stop (too few samples to call it healthy)', () => {
    const { record } = judgeEachSecond(times(120, window(0, 1, 2)), degraded);
    expect(record.health).to.equal('degraded');
  });
});

describe('degradation: no flapping', () => {
  it('turns once, and stays degraded, on figures swinging across the threshold but not below the lower bound', () => {
    const swinging = Array.from({ length: 300 }, (_, i) =>
      Math.floor(i / 15) % 2 === 0 ? lossy : edgy,
    );
    expect(judgeEachSecond(swinging).steps.map((s) => s.transition)).to.deep.equal([
      'became-degraded',
    ]);
  });

  it('never turns degraded on figures past the threshold for shorter spells than DEGRADED_FOR', () => {
    const spells = Array.from({ length: 300 }, (_, i) => (i % 10 < 8 ? lossy : clean));
    expect(judgeEachSecond(spells).steps).to.deep.equal([]);
  });

  it('turns at most once on figures that do not change', () => {
    const stats = fc
      .record({
        samples: fc.integer({ min: 0, max: 60 }),
        failed: fc.double({ min: 0, max: 1, noNaN: true }),
        p99Ms: fc.option(fc.double({ min: 0, max: 2_000, noNaN: true })),
      })
      .map((s) => window(s.failed, s.p99Ms, s.samples));
    fc.assert(
      fc.property(stats, fc.boolean(), (s, startDegraded) => {
        const start = startDegraded ? degraded : newDegradation(T0);
        expect(judgeEachSecond(times(200, s), start).steps.length).to.be.at.most(1);
      }),
    );
  });

  it('alternates its transitions, each at least DEGRADED_FOR after the one before', () => {
    const stats = fc.constantFrom(clean, lossy, slow, edgy, window(1, null, 3));
    fc.assert(
      fc.property(fc.array(stats, { maxLength: 300 }), (inputs) => {
        const { steps } = judgeEachSecond(inputs);
        steps.forEach((step, i) => {
          expect(step.transition).to.equal(i % 2 === 0 ? 'became-degraded' : 'became-healthy');
          if (i > 0) expect(step.atMs - steps[i - 1]!.atMs).to.be.at.least(OPTIONS.degradedForMs);
        });
      }),
    );
  });
});

describe('degradation: the defaults', () => {
  const d = DEFAULT_PATH_DEGRADATION;

  /** A path probed once a second at the defaults; returns its transitions. */
  function probed(latencies: readonly (number | null)[]): DegradationTransition[] {
    const window = new PathWindow(d);
    let record = newDegradation(T0);
    const seen: DegradationTransition[] = [];
    latencies.forEach((latencyMs, i) => {
      const atMs = T0 + i * SECOND;
      window.record({ atMs, ok: latencyMs !== null, latencyMs });
      const j = judgeDegradation(record, window.stats(atMs), atMs, d);
      record = j.record;
      if (j.transition) seen.push(j.transition);
    });
    return seen;
  }

  it('never turn a path degraded for one slow probe, nor for one lost probe', () => {
    const latencies = Array.from({ length: 120 }, (_, i) => (i === 30 ? 900 : i === 70 ? null : 2));
    expect(probed(latencies)).to.deep.equal([]);
  });

  it('turn a path degraded whose slow probes keep coming, and healthy once they stop', () => {
    const latencies = Array.from({ length: 120 }, (_, i) => (i < 60 && i % 4 === 0 ? 450 : 2));
    expect(probed(latencies)).to.deep.equal(['became-degraded', 'became-healthy']);
  });
});
