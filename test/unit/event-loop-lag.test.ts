// Event-loop lag as timer drift: a stall shows, over the window asked about and no further back.
import { expect } from 'chai';
import { EventLoopLag } from '../../src/health/event-loop-lag.js';

const stall = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until); // nothing else runs meanwhile
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('EventLoopLag', function () {
  this.timeout(10_000);

  it('shows a stall over a window that covers it, and not over a later one', async () => {
    const lag = new EventLoopLag({ sampleMs: 20, windowMs: 5_000 });
    lag.start();
    try {
      await sleep(100);
      expect(lag.maxLagWithinMs(5_000), 'a quiet loop').to.be.below(250);
      stall(400);
      // Overdue right now: counted before the sampler gets to run.
      expect(lag.maxLagWithinMs(100)).to.be.at.least(300);
      await sleep(50);
      expect(lag.maxLagWithinMs(1_000)).to.be.at.least(300);
      expect(lag.maxLagMs()).to.be.at.least(300);
      await sleep(600);
      expect(lag.maxLagWithinMs(300), 'the stall is older than that').to.be.below(300);
      expect(lag.maxLagWithinMs(2_000)).to.be.at.least(300);
    } finally {
      lag.stop();
    }
    expect(lag.maxLagWithinMs(5_000), 'stopped: nothing measured').to.equal(0);
  });

  it('samples finely only while precision is asked for, and sees a short stall only then', async () => {
    const opts = { sampleMs: 5_000, preciseSampleMs: 20, windowMs: 10_000 };
    const coarse = new EventLoopLag(opts);
    const fine = new EventLoopLag(opts);
    coarse.start();
    fine.start();
    try {
      fine.precise(true);
      await sleep(60);
      stall(400);
      await sleep(30);
      expect(fine.maxLagWithinMs(2_000), 'sampled every 20 ms').to.be.at.least(300);
      expect(coarse.maxLagWithinMs(2_000), 'its sample is not due for seconds').to.be.below(100);
      fine.precise(false);
      await sleep(100);
      expect(fine.maxLagWithinMs(2_000), 'what it saw stays in the window').to.be.at.least(300);
    } finally {
      coarse.stop();
      fine.stop();
    }
  });
});
