// One path's probes over a sliding window: what is counted, for how long, and in how much memory.
import { expect } from 'chai';
import fc from 'fast-check';
import { nearestRank, PathWindow, statsOf, type PathSample } from '../../src/paths/path-window.js';

const T0 = 1_700_000_000_000;
const WINDOW = 30_000;

const answer = (atMs: number, latencyMs: number): PathSample => ({ atMs, ok: true, latencyMs });
const failure = (atMs: number): PathSample => ({ atMs, ok: false, latencyMs: null });

function windowOf(samples: readonly PathSample[], maxSamples?: number): PathWindow {
  const w = new PathWindow({ pathWindowMs: WINDOW, ...(maxSamples ? { maxSamples } : {}) });
  for (const s of samples) w.record(s);
  return w;
}

describe('PathWindow', () => {
  it('counts failed probes into the loss ratio and only answered ones into the latencies', () => {
    const w = windowOf([
      answer(T0, 2),
      failure(T0 + 1_000),
      answer(T0 + 2_000, 4),
      failure(T0 + 3_000),
    ]);
    expect(w.stats(T0 + 3_000)).to.deep.equal({
      samples: 4,
      failures: 2,
      lossRatio: 0.5,
      p50Ms: 2,
      p99Ms: 4,
    });
  });

  it('forgets a probe once it was sent a whole window ago', () => {
    const w = windowOf([failure(T0), answer(T0 + 10_000, 1)]);
    expect(w.stats(T0 + WINDOW - 1).failures).to.equal(1);
    expect(w.stats(T0 + WINDOW)).to.include({ samples: 1, failures: 0, lossRatio: 0 });
  });

  it('reports no latency, and a loss ratio of 1, when no probe in the window was answered', () => {
    const w = windowOf([failure(T0), failure(T0 + 1_000)]);
    expect(w.stats(T0 + 1_000)).to.include({ lossRatio: 1, p50Ms: null, p99Ms: null });
  });

  it('reports an empty window as no samples and no loss', () => {
    expect(windowOf([]).stats(T0)).to.deep.equal({
      samples: 0,
      failures: 0,
      lossRatio: 0,
      p50Ms: null,
      p99Ms: null,
    });
  });

  it('leaves out a probe sent after now (a clock stepped back) until now passes it', () => {
    const w = windowOf([answer(T0, 1), answer(T0 + 5_000, 900)]);
    expect(w.stats(T0 + 1_000)).to.include({ samples: 1, p99Ms: 1 });
    expect(w.stats(T0 + 5_000)).to.include({ samples: 2, p99Ms: 900 });
  });

  it('holds no more than a window of samples at a steady probe rate', () => {
    const w = new PathWindow({ pathWindowMs: WINDOW });
    for (let i = 0; i < 3_600; i++) w.record(answer(T0 + i * 1_000, 1));
    expect(w.size).to.equal(WINDOW / 1_000);
  });

  it('holds at most maxSamples, the newest, however fast probes come', () => {
    const w = new PathWindow({ pathWindowMs: WINDOW, maxSamples: 100 });
    for (let i = 0; i < 10_000; i++) w.record(i < 9_900 ? failure(T0 + i) : answer(T0 + i, 1));
    expect(w.size).to.equal(100);
    expect(w.stats(T0 + 10_000)).to.include({ samples: 100, failures: 0 });
  });

  it('reports the plain figures of the samples in the window, whatever their order', () => {
    const sample = fc.record({
      atMs: fc.integer({ min: T0, max: T0 + 120_000 }),
      ok: fc.boolean(),
      latencyMs: fc.double({ min: 0, max: 1_000, noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.array(sample, { maxLength: 200 }),
        fc.integer({ min: 0, max: 40_000 }),
        (samples, later) => {
          const now = Math.max(T0, ...samples.map((s) => s.atMs)) + later;
          const stats = windowOf(samples, 1_000).stats(now);
          const inWindow = samples.filter((s) => s.atMs > now - WINDOW);
          expect(stats).to.deep.equal(statsOf(inWindow));
          expect(stats.lossRatio).to.be.within(0, 1);
          if (stats.p50Ms !== null) expect(stats.p50Ms).to.be.at.most(stats.p99Ms!);
        },
      ),
    );
  });
});

describe('nearestRank', () => {
  const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

  it('is the smallest value at least p % of the values are at or below', () => {
    expect(nearestRank(oneTo(100), 50)).to.equal(50);
    expect(nearestRank(oneTo(100), 99)).to.equal(99);
    expect(nearestRank(oneTo(4), 50)).to.equal(2);
  });

  it('makes p99 the largest value under 100 samples: one slow probe shows', () => {
    expect(nearestRank(oneTo(30), 99)).to.equal(30);
  });

  it('is never interpolated: always one of the values', () => {
    expect(nearestRank([1, 1_000], 50)).to.equal(1);
    expect(nearestRank([7], 1)).to.equal(7);
  });

  it('forgets the newest samples from a moment on, and counts on from what is left', () => {
    const w = new PathWindow({ pathWindowMs: 10_000 });
    for (let t = 0; t < 6; t++) w.record({ atMs: t * 1_000, ok: t < 3, latencyMs: 2 });
    w.dropSince(3_000);
    expect(w.stats(6_000)).to.deep.include({ samples: 3, failures: 0 });
    w.record({ atMs: 7_000, ok: true, latencyMs: 2 });
    expect(w.stats(7_000)).to.deep.include({ samples: 4, failures: 0 });
  });
});
