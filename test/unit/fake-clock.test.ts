// The FakeClock keeps the Clock contract the system clock keeps, and moves only when told to.
import { expect } from 'chai';
import type { Clock } from '../../src/core/clock.js';
import { systemClock } from '../../src/core/system-clock.js';
import { FakeClock, flushMicrotasks } from '../support/fake-clock.js';

interface Subject {
  clock: Clock;
  /** Lets at least `ms` of the clock's time pass, firing what falls due. */
  pass: (ms: number) => Promise<void>;
}

const subjects: Record<string, () => Subject> = {
  systemClock: () => ({
    clock: systemClock,
    pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms + 50)),
  }),
  FakeClock: () => {
    const clock = new FakeClock();
    return { clock, pass: (ms) => clock.advanceAsync(ms) };
  },
};

for (const [name, make] of Object.entries(subjects)) {
  describe(`Clock contract: ${name}`, () => {
    it('fires timers in due-time order, whatever order they were set in', async () => {
      const { clock, pass } = make();
      const fired: number[] = [];
      for (const ms of [30, 10, 20]) clock.setTimeout(() => fired.push(ms), ms);
      await pass(30);
      expect(fired).to.deep.equal([10, 20, 30]);
    });

    it('fires timers due at the same time in the order they were set', async () => {
      const { clock, pass } = make();
      const fired: string[] = [];
      for (const label of ['a', 'b', 'c']) clock.setTimeout(() => fired.push(label), 10);
      await pass(10);
      expect(fired).to.deep.equal(['a', 'b', 'c']);
    });

    it('never fires a cleared timer', async () => {
      const { clock, pass } = make();
      let fired = false;
      const handle = clock.setTimeout(() => (fired = true), 10);
      clock.clearTimeout(handle);
      await pass(10);
      expect(fired).to.be.false;
    });

    it('resolves a sleep once its time has passed', async () => {
      const { clock, pass } = make();
      let done = false;
      void clock.sleep(10).then(() => (done = true));
      await pass(10);
      expect(done).to.be.true;
    });

    it("rejects an aborted sleep with the signal's reason", async () => {
      const { clock } = make();
      const controller = new AbortController();
      const reason = new Error('stop');
      const sleeping = clock.sleep(60_000, controller.signal);
      controller.abort(reason);
      const err = await sleeping.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.equal(reason);
    });

    it('rejects a sleep on an already aborted signal at once', async () => {
      const { clock } = make();
      const reason = new Error('already');
      const err = await clock.sleep(60_000, AbortSignal.abort(reason)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.equal(reason);
    });
  });
}

describe('FakeClock', () => {
  it('does not move on its own', async () => {
    const clock = new FakeClock(1_000);
    let fired = false;
    clock.setTimeout(() => (fired = true), 0);
    await flushMicrotasks();
    expect(clock.now()).to.equal(1_000);
    expect(fired).to.be.false;
  });

  it('moves by exactly what advance asks, and shows the due time inside a firing timer', () => {
    const clock = new FakeClock(1_000);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 300);
    clock.advance(299);
    expect(seen).to.deep.equal([]);
    expect(clock.now()).to.equal(1_299);
    clock.advance(1_000);
    expect(seen).to.deep.equal([1_300]);
    expect(clock.now()).to.equal(2_299);
  });

  it('fires, in the same advance, a timer set by a timer when it falls due within the window', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => {
      fired.push(clock.now());
      clock.setTimeout(() => fired.push(clock.now()), 50);
      clock.setTimeout(() => fired.push(clock.now()), 500);
    }, 100);
    clock.advance(200);
    expect(fired).to.deep.equal([100, 150]);
    expect(clock.pendingTimers).to.equal(1);
  });

  it('lets a promise chain that sleeps repeatedly progress within one advanceAsync', async () => {
    const clock = new FakeClock(0);
    const wokeAt: number[] = [];
    const loop = (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(100);
        wokeAt.push(clock.now());
      }
    })();
    await clock.advanceAsync(499);
    expect(wokeAt).to.deep.equal([100, 200, 300, 400]);
    await clock.advanceAsync(1);
    await loop;
    expect(wokeAt).to.deep.equal([100, 200, 300, 400, 500]);
  });

  it('removes the timer of an aborted sleep', () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    clock.sleep(100, controller.signal).catch(() => undefined);
    expect(clock.pendingTimers).to.equal(1);
    controller.abort(new Error('stop'));
    expect(clock.pendingTimers).to.equal(0);
  });
});
