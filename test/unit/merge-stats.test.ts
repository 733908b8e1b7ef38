// A node's figures from its paths' windows.
import { expect } from 'chai';
import fc from 'fast-check';
import { mergeStats } from '../../src/paths/merge-stats.js';
import { NO_SAMPLES, type WindowStats } from '../../src/paths/path-window.js';

function stats(samples: number, failures: number, p50Ms: number, p99Ms: number): WindowStats {
  const answered = samples > failures;
  return {
    samples,
    failures,
    lossRatio: samples === 0 ? 0 : failures / samples,
    p50Ms: answered ? p50Ms : null,
    p99Ms: answered ? p99Ms : null,
  };
}

describe('mergeStats', () => {
  it("adds samples and failures, so a node's loss ratio is that of all its probes", () => {
    const merged = mergeStats([stats(30, 3, 1, 2), stats(10, 5, 1, 2)]);
    expect(merged).to.include({ samples: 40, failures: 8, lossRatio: 0.2 });
  });

  it("weights each window's percentiles by its answered probes", () => {
    const merged = mergeStats([stats(30, 0, 1, 10), stats(10, 0, 5, 410)]);
    expect(merged).to.include({ p50Ms: 2, p99Ms: 110 });
  });

  it('leaves a window with no answered probe out of the percentiles, not out of the loss', () => {
    const merged = mergeStats([stats(20, 0, 3, 7), stats(20, 20, 0, 0)]);
    expect(merged).to.include({ samples: 40, lossRatio: 0.5, p50Ms: 3, p99Ms: 7 });
  });

  it('merges no windows, or empty ones, into no samples', () => {
    expect(mergeStats([])).to.deep.equal(NO_SAMPLES);
    expect(mergeStats([NO_SAMPLES, NO_SAMPLES])).to.deep.equal(NO_SAMPLES);
  });

  it("keeps the loss ratio within the windows' and p50 at most p99", () => {
    const window = fc
      .record({
        samples: fc.integer({ min: 1, max: 300 }),
        failed: fc.double({ min: 0, max: 1, noNaN: true }),
        p50Ms: fc.double({ min: 0, max: 1_000, noNaN: true }),
        spread: fc.double({ min: 0, max: 1_000, noNaN: true }),
      })
      .map((w) => stats(w.samples, Math.round(w.failed * w.samples), w.p50Ms, w.p50Ms + w.spread));
    fc.assert(
      fc.property(fc.array(window, { minLength: 1, maxLength: 20 }), (windows) => {
        const merged = mergeStats(windows);
        const ratios = windows.map((w) => w.lossRatio);
        expect(merged.lossRatio).to.be.within(Math.min(...ratios), Math.max(...ratios));
        if (merged.p50Ms !== null) expect(merged.p50Ms).to.be.at.most(merged.p99Ms! + 1e-9);
      }),
    );
  });
});
