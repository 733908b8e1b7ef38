// The relay side of an indirect probe: only for peers, bounded in time and in number, with retries.
import { expect } from 'chai';
import type { Outcome } from '../../src/core/transport.js';
import type { PingResponse, RelayProbeRequest } from '../../src/wire/peer-messages.js';
import { Relay, type RelayAnswer, type RelayOptions } from '../../src/prober/relay.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { FakeClock } from '../support/fake-clock.js';
import { answer, blackHole, pingResponse, REFUSED } from '../support/pings.js';
import { RETRIES } from '../support/probe-rounds.js';

const COORDINATOR = { id: 'lead@10.0.0.9', address: '10.0.0.9:8080' };
const TARGET = '10.0.0.2:8080';
const PEERS = [COORDINATOR.address, TARGET, '10.0.0.3:8080'];
const schemas = loadSchemas();

const pong = pingResponse(TARGET, 'worker-2', { coordinator: COORDINATOR });

type Step = 'ok' | 'refused' | 'hang';

/** The target as the relay sees it: a script of answers, one per ping; the last one repeats. */
function setup(script: Step[], options: Partial<RelayOptions> = {}) {
  const clock = new FakeClock();
  const pings: { address: string; atMs: number }[] = [];
  const ping = (address: string, signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    pings.push({ address, atMs: clock.now() });
    const step = script[pings.length - 1] ?? script.at(-1) ?? 'ok';
    if (step === 'ok') return Promise.resolve(answer(pong, 2.4));
    if (step === 'refused') return Promise.resolve(REFUSED);
    return blackHole(clock, pong, signal);
  };
  const relay = new Relay({
    transport: { ping },
    clock,
    policy: RETRIES,
    isPeer: (address) => PEERS.includes(address),
    maxTimeoutMs: 2_000,
    ...options,
  });
  const start = clock.now();
  return { clock, relay, pings, start };
}

const request = (over: Partial<RelayProbeRequest> = {}): RelayProbeRequest => ({
  from: COORDINATOR,
  target: TARGET,
  timeout_ms: 850,
  ...over,
});

/** Handles `req`, letting fake time pass until it answers; returns the answer and when it came. */
async function handled(clock: FakeClock, relay: Relay, req: RelayProbeRequest) {
  const started = clock.now();
  let answer: RelayAnswer | null = null;
  const handling = relay.handle(req).then((a) => (answer = a));
  for (let i = 0; answer === null; i++) {
    if (i > 10_000) throw new Error('the relay never answered');
    await clock.advanceAsync(10);
  }
  await handling;
  return { answer: answer as RelayAnswer, tookMs: clock.now() - started };
}

function body(answer: RelayAnswer) {
  if (answer.status !== 200) expect.fail(`expected 200, got ${answer.status}: ${answer.error}`);
  expect(schemas.check('probe-result', answer.body)).to.deep.equal({ ok: true });
  return answer.body;
}

describe('Relay', () => {
  it('answers 200, reachable, with the target id, when the target answers', async () => {
    const { clock, relay, pings } = setup(['ok']);
    const { answer } = await handled(clock, relay, request());
    expect(body(answer)).to.deep.equal({
      target: TARGET,
      reachable: true,
      attempts: 1,
      latency_ms: 2,
      id: pong.id,
    });
    expect(pings.map((p) => p.address)).to.deep.equal([TARGET]);
  });

  it('retries the target until it answers', async () => {
    const { clock, relay, pings, start } = setup(['refused', 'refused', 'ok']);
    const { answer } = await handled(clock, relay, request());
    expect(body(answer)).to.deep.include({ reachable: true, attempts: 3 });
    expect(pings.map((p) => p.atMs - start)).to.deep.equal([0, 200, 400]);
  });

  it('answers unreachable, with the last failure, once the retries are spent', async () => {
    const { clock, relay, pings } = setup(['refused']);
    const { answer, tookMs } = await handled(clock, relay, request({ timeout_ms: 5_000 }));
    expect(body(answer)).to.deep.include({ reachable: false, attempts: 3 });
    expect(body(answer).detail).to.match(/refused/);
    expect(pings).to.have.length(3);
    expect(tookMs).to.be.below(1_000);
  });

  it('answers unreachable by its deadline when the target is a black hole', async () => {
    const { clock, relay } = setup(['hang']);
    const { answer, tookMs } = await handled(clock, relay, request({ timeout_ms: 850 }));
    expect(body(answer)).to.deep.include({ target: TARGET, reachable: false });
    expect(tookMs).to.be.within(850, 860);
  });

  it('caps the time it spends at maxTimeoutMs, whatever the request asks', async () => {
    const { clock, relay } = setup(['hang']);
    const { answer, tookMs } = await handled(clock, relay, request({ timeout_ms: 60_000 }));
    expect(body(answer).reachable).to.be.false;
    expect(tookMs).to.be.within(2_000, 2_010);
  });

  it('answers 403 to a sender that is not a peer, without probing', async () => {
    const { clock, relay, pings } = setup(['ok']);
    const stranger = { id: 'x@10.9.9.9', address: '10.9.9.9:8080' };
    const { answer } = await handled(clock, relay, request({ from: stranger }));
    expect(answer.status).to.equal(403);
    expect(answer).to.have.property('error').that.includes(stranger.address);
    expect(pings).to.deep.equal([]);
  });

  it('answers 403 to a target that is not a peer (no open proxy), without probing', async () => {
    const { clock, relay, pings } = setup(['ok']);
    const { answer } = await handled(clock, relay, request({ target: '10.9.9.9:22' }));
    expect(answer.status).to.equal(403);
    expect(answer).to.have.property('error').that.includes('10.9.9.9:22');
    expect(pings).to.deep.equal([]);
  });

  it('answers 429 past maxInFlight indirect probes at once, and accepts more once they end', async () => {
    const { clock, relay, pings } = setup(['hang'], { maxInFlight: 2 });
    const first = relay.handle(request());
    const second = relay.handle(request());
    const third = await relay.handle(request());
    expect(third.status).to.equal(429);
    expect(third).to.have.property('error').that.is.a('string');
    expect(pings, 'the refused one probed nothing').to.have.length(2);
    await clock.advanceAsync(1_000);
    expect((await first).status).to.equal(200);
    expect((await second).status).to.equal(200);
    const { answer } = await handled(clock, relay, request());
    expect(answer.status).to.equal(200);
  });
});
