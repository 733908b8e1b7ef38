// The coordinator's rounds: verdicts per peer, the sanity check, slow peers, inherited verdicts.
import { expect } from 'chai';
import type { Outcome, PingResponse, SanityCheck } from '../../src/core/transport.js';
import { ProbeRounds, type RoundReport } from '../../src/prober/rounds.js';
import type { Judgement, PeerView } from '../../src/prober/verdict.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';

const A = '10.0.0.1:8080';
const B = '10.0.0.2:8080';
const C = '10.0.0.3:8080';

type Behaviour = 'up' | 'refused' | 'hang';

/** A network where each address is up, refuses connections, or never answers (until aborted). */
function network(clock: FakeClock, behaviour: Map<string, Behaviour>) {
  const calls: string[] = [];
  const ping = (address: string, signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    calls.push(address);
    const b = behaviour.get(address) ?? 'up';
    if (b === 'up') {
      const value: PingResponse = {
        id: `n${address.split('.')[3]?.split(':')[0]}@${address.split(':')[0]}`,
        address,
        node_name: 'n',
        role: 'follower',
        epoch: 1,
        coordinator: null,
      };
      return Promise.resolve({ ok: true, value, latencyMs: 1 });
    }
    if (b === 'refused') {
      return Promise.resolve({
        ok: false,
        reason: 'refused',
        phase: 'connect',
        detail: 'ECONNREFUSED',
        latencyMs: 1,
      });
    }
    // A black hole: answers only when the 1 s timeout the real client has runs out.
    return clock.sleep(1000, signal).then(
      () =>
        ({
          ok: false,
          reason: 'connect-timeout',
          phase: 'connect',
          detail: 'timeout',
          latencyMs: 1000,
        }) as const,
      () =>
        ({ ok: false, reason: 'aborted', phase: 'send', detail: 'aborted', latencyMs: 0 }) as const,
    );
  };
  return { ping, calls };
}

function setup(opts: { behaviour?: Map<string, Behaviour>; sanity?: SanityCheck | null } = {}) {
  const clock = new FakeClock();
  const behaviour = opts.behaviour ?? new Map<string, Behaviour>();
  const net = network(clock, behaviour);
  const judgements: Judgement[] = [];
  const reports: RoundReport[] = [];
  const rounds = new ProbeRounds({
    transport: { ping: net.ping },
    sanity: opts.sanity ?? null,
    clock,
    logger: new CapturingLogger(),
    policy: {
      connectMaxRetries: 2,
      connectCooldownMs: 200,
      sendMaxRetries: 2,
      sendCooldownMs: 200,
    },
    intervalMs: 1000,
    onJudgement: (j) => judgements.push(j),
    onRound: (r) => reports.push(r),
  });
  rounds.setPeers([A, B, C]);
  return { clock, behaviour, net, judgements, reports, rounds };
}

const transitions = (js: Judgement[], address: string) =>
  js.filter((j) => j.record.address === address).map((j) => j.transition);

describe('ProbeRounds', () => {
  it('probes every peer at once on start and reports the first round', async () => {
    const { clock, rounds, reports, judgements } = setup();
    rounds.start([]);
    await clock.advanceAsync(10);
    expect(reports).to.have.length(1);
    expect(reports[0]).to.include({ round: 1, probed: 3, changed: 3 });
    expect(judgements.map((j) => j.transition)).to.deep.equal([
      'first-alive',
      'first-alive',
      'first-alive',
    ]);
    expect(rounds.snapshot().map((r) => r.health)).to.deep.equal(['alive', 'alive', 'alive']);
    rounds.stop();
  });

  it('declares a peer that stops answering dead after its retries, once, and alive again after', async () => {
    const { clock, rounds, behaviour, judgements } = setup();
    rounds.start([]);
    await clock.advanceAsync(10);
    behaviour.set(B, 'refused');
    await clock.advanceAsync(1000 + 400 + 10); // next round + 2 retries 200 ms apart
    expect(transitions(judgements, B)).to.deep.equal(['first-alive', 'died']);
    await clock.advanceAsync(5000);
    expect(transitions(judgements, B), 'a dead peer is reported once').to.deep.equal([
      'first-alive',
      'died',
    ]);
    behaviour.set(B, 'up');
    await clock.advanceAsync(1000);
    expect(transitions(judgements, B)).to.deep.equal(['first-alive', 'died', 'recovered']);
    expect(transitions(judgements, A)).to.deep.equal(['first-alive']);
    rounds.stop();
  });

  it('does not let a black-holed peer hold up the verdicts on the others', async () => {
    const behaviour = new Map<string, Behaviour>([[A, 'hang']]);
    const { clock, rounds, judgements } = setup({ behaviour });
    rounds.start([
      { id: 'a@10.0.0.1', address: A, node_name: 'a', health: 'alive', since: 0, alerted: false },
      { id: 'c@10.0.0.3', address: C, node_name: 'c', health: 'alive', since: 0, alerted: false },
    ]);
    await clock.advanceAsync(10);
    behaviour.set(C, 'refused');
    // C dies in round 2 (t=1000) and is judged by t≈1400, while A's probe (3 × 1 s + 0.4 s) is still running.
    await clock.advanceAsync(1500);
    expect(transitions(judgements, C)).to.deep.equal(['died']);
    expect(transitions(judgements, A)).to.deep.equal([]);
    await clock.advanceAsync(2500);
    expect(transitions(judgements, A)).to.deep.equal(['died']);
    rounds.stop();
  });

  it('withholds death when the coordinator cannot reach SANITY_CHECK_URL, and checks it once a round', async () => {
    let sanityOk = false;
    let checks = 0;
    const sanity: SanityCheck = {
      check: () => {
        checks++;
        return Promise.resolve(
          sanityOk
            ? { ok: true, value: undefined, latencyMs: 1 }
            : {
                ok: false,
                reason: 'unreachable',
                phase: 'connect',
                detail: 'ENETUNREACH',
                latencyMs: 1,
              },
        );
      },
    };
    const { clock, rounds, behaviour, judgements, reports } = setup({ sanity });
    rounds.start([]);
    await clock.advanceAsync(10);
    expect(checks, 'no check while every peer answers').to.equal(0);
    behaviour.set(A, 'refused');
    behaviour.set(B, 'refused');
    await clock.advanceAsync(1500);
    expect(checks, 'one check for the round, not one per failing peer').to.equal(1);
    expect(transitions(judgements, A)).to.deep.equal(['first-alive', 'withheld']);
    expect(rounds.snapshot().find((r) => r.address === A)?.health).to.equal('alive');
    expect(reports.at(-1)?.sanity).to.equal('failed');
    sanityOk = true;
    await clock.advanceAsync(1000);
    expect(transitions(judgements, A)).to.deep.equal(['first-alive', 'withheld', 'died']);
    expect(reports.at(-1)?.sanity).to.equal('ok');
    rounds.stop();
  });

  it('starts from inherited verdicts: a peer already dead is not reported again', async () => {
    const inherited: PeerView[] = [
      { id: 'a@10.0.0.1', address: A, node_name: 'a', health: 'dead', since: 5, alerted: true },
      { id: 'b@10.0.0.2', address: B, node_name: 'b', health: 'alive', since: 5, alerted: false },
    ];
    const behaviour = new Map<string, Behaviour>([
      [A, 'refused'],
      [B, 'refused'],
    ]);
    const { clock, rounds, judgements } = setup({ behaviour });
    rounds.start(inherited);
    await clock.advanceAsync(1000);
    expect(transitions(judgements, A)).to.deep.equal([]);
    expect(transitions(judgements, B)).to.deep.equal(['died']);
    expect(transitions(judgements, C)).to.deep.equal(['first-alive']);
    rounds.stop();
  });

  it('forgets a removed peer and stops probing everything when stopped', async () => {
    const { clock, rounds, net, reports } = setup();
    rounds.start([]);
    await clock.advanceAsync(10);
    rounds.setPeers([A, C]);
    expect(rounds.snapshot().map((r) => r.address)).to.deep.equal([A, C]);
    net.calls.length = 0;
    await clock.advanceAsync(1000);
    expect(net.calls).to.not.include(B);
    expect(
      reports.map((r) => r.membership),
      'the removal counts in the next round',
    ).to.deep.equal([0, 1]);
    rounds.stop();
    net.calls.length = 0;
    await clock.advanceAsync(5000);
    expect(net.calls).to.deep.equal([]);
    expect(rounds.snapshot()).to.deep.equal([]);
  });
});
