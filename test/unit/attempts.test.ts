// One probe with KNH's retry budgets: connect and send failures counted apart, cooldowns on a clock.
import { expect } from 'chai';
import type { FailureReason, Outcome } from '../../src/core/transport.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { probeWithRetries, type RetryBounds } from '../../src/prober/attempts.js';
import type { RetryPolicy } from '../../src/prober/policy.js';
import { FakeClock } from '../support/fake-clock.js';
import { blackHole, pingResponse } from '../support/pings.js';

const pong = pingResponse('10.0.0.2:8080', 'worker-2');

type Step = 'ok' | FailureReason;
const PHASE: Record<FailureReason, 'connect' | 'send'> = {
  refused: 'connect',
  unreachable: 'connect',
  'connect-timeout': 'connect',
  timeout: 'send',
  reset: 'send',
  'http-status': 'send',
  'bad-response': 'send',
  aborted: 'send',
};

/** A ping that answers from a script, taking `latencyMs` of clock time per attempt. */
function scriptedPing(clock: FakeClock, script: Step[], latencyMs = 0) {
  const calls: number[] = [];
  const ping = async (signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    calls.push(clock.now());
    if (latencyMs > 0) await clock.sleep(latencyMs, signal);
    const next = script[calls.length - 1] ?? script[script.length - 1] ?? 'ok';
    if (next === 'ok') return { ok: true, value: pong, latencyMs };
    return { ok: false, reason: next, phase: PHASE[next], detail: next, latencyMs };
  };
  return { ping, calls };
}

const policy: RetryPolicy = {
  connectMaxRetries: 2,
  connectCooldownMs: 200,
  sendMaxRetries: 3,
  sendCooldownMs: 700,
};

/** Runs a probe to its end, letting fake time pass as fast as it is needed. */
async function run(
  clock: FakeClock,
  script: Step[],
  {
    latencyMs = 0,
    p = policy,
    bounds = {},
  }: { latencyMs?: number; p?: RetryPolicy; bounds?: RetryBounds } = {},
) {
  const { ping, calls } = scriptedPing(clock, script, latencyMs);
  const started = clock.now();
  let settled = false;
  const probing = probeWithRetries(ping, p, clock, undefined, bounds).finally(
    () => (settled = true),
  );
  for (let i = 0; !settled; i++) {
    if (i > 1_000) throw new Error('probe never finished');
    await clock.advanceAsync(50);
  }
  const result = await probing;
  return { result, offsets: calls.map((t) => t - started) };
}

describe('probeWithRetries', () => {
  it('stops at the first success', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['refused', 'ok', 'refused']);
    expect(result.outcome.ok).to.be.true;
    expect(result.attempts).to.equal(2);
    expect(offsets).to.deep.equal([0, 200]);
    expect(result.elapsedMs).to.equal(200);
  });

  it('gives connect failures 1 + connectMaxRetries attempts, connectCooldownMs apart', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['refused']);
    expect(result.attempts).to.equal(1 + policy.connectMaxRetries);
    expect(offsets).to.deep.equal([0, 200, 400]);
    expect(result.elapsedMs).to.equal(2 * policy.connectCooldownMs);
    expect(result.outcome).to.deep.include({ ok: false, reason: 'refused', phase: 'connect' });
  });

  it('gives send failures 1 + sendMaxRetries attempts, sendCooldownMs apart', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['timeout']);
    expect(result.attempts).to.equal(1 + policy.sendMaxRetries);
    expect(offsets).to.deep.equal([0, 700, 1_400, 2_100]);
    expect(result.elapsedMs).to.equal(3 * policy.sendCooldownMs);
    expect(result.outcome).to.deep.include({ ok: false, reason: 'timeout', phase: 'send' });
  });

  it('counts each phase against its own budget and cooldown', async () => {
    const clock = new FakeClock();
    // connect budget 2, send budget 3: the third connect failure ends it, after 2 send failures.
    const { result, offsets } = await run(clock, [
      'refused',
      'reset',
      'connect-timeout',
      'http-status',
      'unreachable',
    ]);
    expect(result.attempts).to.equal(5);
    expect(offsets).to.deep.equal([0, 200, 900, 1_100, 1_800]);
    expect(result.outcome).to.deep.include({ reason: 'unreachable', phase: 'connect' });
  });

  it('never makes more than 1 + connectMaxRetries + sendMaxRetries attempts', async () => {
    const clock = new FakeClock();
    const alternating: Step[] = Array.from({ length: 20 }, (_, i) =>
      i % 2 ? 'bad-response' : 'unreachable',
    );
    const { result } = await run(clock, alternating);
    expect(result.attempts).to.be.at.most(1 + policy.connectMaxRetries + policy.sendMaxRetries);
    expect(result.outcome.ok).to.be.false;
  });

  it('makes one attempt when both budgets are 0', async () => {
    const clock = new FakeClock();
    const none = { ...policy, connectMaxRetries: 0, sendMaxRetries: 0 };
    for (const step of ['refused', 'timeout'] as const) {
      const { result } = await run(clock, [step], { p: none });
      expect(result.attempts, step).to.equal(1);
      expect(result.elapsedMs, step).to.equal(0);
    }
  });

  it('counts the time attempts take as well as the cooldowns', async () => {
    const clock = new FakeClock();
    const { result } = await run(clock, ['refused', 'timeout', 'ok'], { latencyMs: 150 });
    expect(result.attempts).to.equal(3);
    expect(result.elapsedMs).to.equal(3 * 150 + 200 + 700);
    expect(result.outcome.ok).to.be.true;
  });

  it('stops during a cooldown when aborted, without another attempt', async () => {
    const clock = new FakeClock();
    const { ping, calls } = scriptedPing(clock, ['refused']);
    const controller = new AbortController();
    const probing = probeWithRetries(ping, policy, clock, controller.signal);
    await clock.advanceAsync(100); // inside the first 200 ms cooldown
    controller.abort(new Error('stopped leading'));
    const result = await probing;
    expect(result.attempts).to.equal(1);
    expect(calls).to.have.length(1);
    expect(result.outcome.ok).to.be.false;
    await clock.advanceAsync(10_000);
    expect(calls).to.have.length(1);
  });

  it('stops after an attempt that fails because the signal was aborted during it', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    let calls = 0;
    const ping = (): Promise<Outcome<PingResponse>> => {
      calls++;
      controller.abort(new Error('stop'));
      return Promise.resolve({
        ok: false,
        reason: 'reset',
        phase: 'send',
        detail: 'ECONNRESET',
        latencyMs: 1,
      });
    };
    const result = await probeWithRetries(ping, policy, clock, controller.signal);
    expect(calls).to.equal(1);
    expect(result.attempts).to.equal(1);
  });
});

/** A black hole: never answers; reports 'aborted' once its signal aborts, as the peer client does. */
function hangingPing(clock: FakeClock) {
  const calls: number[] = [];
  const ping = (signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    calls.push(clock.now());
    return blackHole(clock, pong, signal);
  };
  return { ping, calls };
}

describe('probeWithRetries with bounds', () => {
  it('counts failures already seen against the budgets', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['refused'], {
      bounds: { spent: { connect: 1, send: 0 } },
    });
    expect(result.attempts).to.equal(policy.connectMaxRetries);
    expect(offsets).to.deep.equal([0, 200]);
    const none = await run(clock, ['timeout'], { bounds: { spent: { connect: 0, send: 3 } } });
    expect(none.result.attempts, 'send budget already spent').to.equal(1);
  });

  it('cuts an attempt short at the deadline and reports it as a timeout, not an abort', async () => {
    const clock = new FakeClock();
    const { ping, calls } = hangingPing(clock);
    const started = clock.now();
    let settled = false;
    const probing = probeWithRetries(ping, policy, clock, undefined, {
      deadlineMs: started + 1_000,
    }).finally(() => (settled = true));
    await clock.advanceAsync(999);
    expect(settled).to.be.false;
    await clock.advanceAsync(1);
    expect(settled).to.be.true;
    const result = await probing;
    expect(result.outcome).to.deep.include({ ok: false, reason: 'timeout' });
    expect(result.elapsedMs).to.equal(1_000);
    expect(calls).to.deep.equal([started]);
    expect(clock.pendingTimers, 'no timer left behind').to.equal(0);
  });

  it('starts no retry whose cooldown would end at or after the deadline', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['refused'], {
      bounds: { deadlineMs: clock.now() + 300 },
    });
    expect(offsets).to.deep.equal([0, 200]);
    expect(result.attempts).to.equal(2);
    expect(result.elapsedMs).to.equal(200);
  });

  it('still succeeds within the deadline', async () => {
    const clock = new FakeClock();
    const { result, offsets } = await run(clock, ['refused', 'ok'], {
      latencyMs: 100,
      bounds: { deadlineMs: clock.now() + 1_000 },
    });
    expect(result.outcome.ok).to.be.true;
    expect(offsets).to.deep.equal([0, 300]);
  });

  it("reports the caller's abort as an abort, at once, even with a deadline", async () => {
    const clock = new FakeClock();
    const { ping, calls } = hangingPing(clock);
    const controller = new AbortController();
    const probing = probeWithRetries(ping, policy, clock, controller.signal, {
      deadlineMs: clock.now() + 10_000,
    });
    await clock.advanceAsync(100);
    controller.abort(new Error('stopped leading'));
    const result = await probing;
    expect(result.outcome).to.deep.include({ ok: false, reason: 'aborted' });
    expect(result.attempts).to.equal(1);
    await clock.advanceAsync(20_000);
    expect(calls).to.have.length(1);
  });
});
