// The real clock: a deadline already past fires at once, without Node's negative-delay warning on
// stderr (Node 23 and later warn; a node's stderr is its operator's log).
import { expect } from 'chai';
import { systemClock } from '../../src/core/system-clock.js';

describe('systemClock', () => {
  it('runs a timer whose delay is negative at once, and Node warns of nothing', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const started = performance.now();
      await new Promise<void>((resolve) => systemClock.setTimeout(resolve, -275));
      await systemClock.sleep(-5);
      expect(performance.now() - started).to.be.below(1_000);
      // Warnings are emitted on the next tick.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).to.not.include('TimeoutNegativeWarning');
  });
});
