// A node's probes of the paths from it: every path from it is probed within a cover of rounds, a
// path whose probes keep failing is failed, a slow or lossy one that stays so is degraded (never
// failed for an occasional loss), and each change is told once.
import { expect } from 'chai';
import type { Outcome } from '../../src/core/transport.js';
import { DEFAULT_PATH_DEGRADATION } from '../../src/paths/defaults.js';
import { PairProber, type ProbedPath } from '../../src/paths/pair-prober.js';
import type { PingResponse } from '../../src/wire/peer-messages.js';
import { FakeClock } from '../support/fake-clock.js';
import { REFUSED, TIMED_OUT, answer, pingResponse } from '../support/pings.js';

const NODES = [1, 2, 3, 4, 5].map((i) => `10.0.0.${i}:8080`);
const SELF = NODES[0]!;
const [, B, C] = NODES as [string, string, string];

/** SELF's prober, 2 peers a round; each peer answers as `behave` says for that probe. */
function prober(
  behave: (to: string, n: number) => Outcome<PingResponse> = (to) => answer(pingResponse(to, 'n')),
) {
  const clock = new FakeClock();
  const changes: ProbedPath[] = [];
  const probes = new Map<string, number>();
  const p = new PairProber({
    self: SELF,
    clock,
    perRound: 2,
    roundIntervalMs: 1_000,
    failAfter: 2,
    degradation: DEFAULT_PATH_DEGRADATION,
    transport: {
      ping: (to) => {
        const n = (probes.get(to) ?? 0) + 1;
        probes.set(to, n);
        return Promise.resolve(behave(to, n));
      },
    },
    onChange: (r) => changes.push(r),
  });
  p.setNodes(NODES);
  /** `count` rounds, a second apart. */
  const rounds = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await p.probeRound();
      clock.advance(1_000);
    }
  };
  return { p, clock, changes, probes, rounds };
}

const stateOf = (p: PairProber, to: string) => p.reports().find((r) => r.to === to)?.state;

describe('PairProber', () => {
  it('probes every path from this node within a cover of rounds, each ok once', async () => {
    const t = prober();
    await t.rounds(2);
    expect(t.p.reports().map((r) => r.to)).to.have.members(NODES.slice(1));
    expect(t.p.reports().every((r) => r.state === 'ok')).to.equal(true);
    expect(t.changes, 'each path told once').to.have.length(4);
  });

  it('calls a path failed once its probes fail twice in a row, and ok at its next answer', async () => {
    let down = true;
    const t = prober((to) => (to === B && down ? REFUSED : answer(pingResponse(to, 'n'))));
    await t.rounds(1);
    expect(stateOf(t.p, B), 'one failure is no verdict').to.equal('ok');
    await t.rounds(1);
    expect(stateOf(t.p, B)).to.equal('failed');
    down = false;
    await t.rounds(2);
    expect(stateOf(t.p, B)).to.equal('ok');
    expect(t.changes.filter((r) => r.to === B).map((r) => r.state)).to.deep.equal([
      'ok',
      'failed',
      'ok',
    ]);
  });

  it('probes a path whose last probe failed again the next round, out of its turn, until decided', async () => {
    const t = prober((to) => (to === B ? REFUSED : answer(pingResponse(to, 'n'))));
    // Round 0 is B's and C's turn, round 1 the others': B comes again, C does not.
    await t.rounds(2);
    expect(t.probes.get(B)).to.equal(2);
    expect(t.probes.get(C)).to.equal(1);
    // Failed now (twice in a row): still probed each round, so that it is seen back at once.
    await t.rounds(2);
    expect(t.probes.get(B)).to.equal(4);
    expect(t.probes.get(C)).to.equal(2);
  });

  it('forgets what an outage cost a path once it is back: not degraded for the failures', async () => {
    let down = true;
    const t = prober((to) => (to === B && down ? REFUSED : answer(pingResponse(to, 'n'))));
    await t.rounds(12);
    expect(stateOf(t.p, B)).to.equal('failed');
    down = false;
    await t.rounds(20);
    expect(t.changes.filter((r) => r.to === B).map((r) => r.state)).to.deep.equal([
      'ok',
      'failed',
      'ok',
    ]);
  });

  it('widens the window of a large mesh, whose paths come round seldom, to hold enough probes', () => {
    const t = prober();
    expect(t.p.settings.pathWindowMs, 'a path every other second: 5 in 10 s').to.equal(10_000);
    const many = Array.from({ length: 41 }, (_, i) => `10.0.1.${i + 1}:8080`);
    t.p.setNodes([SELF, ...many]);
    // 41 others, 2 a round: each path every 21 s; 5 of its probes take 105 s.
    expect(t.p.settings.pathWindowMs).to.equal(105_000);
    expect(t.p.settings.degradedForMs).to.equal(DEFAULT_PATH_DEGRADATION.degradedForMs + 95_000);
  });

  it('tells a path again when its figures move far, not on every probe', async () => {
    let slow = false;
    const t = prober((to) => answer(pingResponse(to, 'n'), to === C && slow ? 50 : 2));
    await t.rounds(4);
    const told = () => t.changes.filter((r) => r.to === C).length;
    expect(told(), 'once, when first probed').to.equal(1);
    slow = true;
    await t.rounds(20);
    expect(told(), 'its median went from 2 to 50 ms').to.be.greaterThan(1);
    const afterMove = told();
    await t.rounds(20);
    expect(told(), 'steady at 50 ms: nothing more to tell').to.equal(afterMove);
  });

  it('calls a path degraded when it stays slow, without ever calling it failed', async () => {
    const t = prober((to) => answer(pingResponse(to, 'n'), to === C ? 600 : 2));
    // 2 peers a round of 4: each path is probed every other second; the window needs 5 samples.
    await t.rounds(40);
    expect(stateOf(t.p, C)).to.equal('degraded');
    expect(stateOf(t.p, B)).to.equal('ok');
    expect(t.changes.filter((r) => r.to === C).map((r) => r.state)).to.deep.equal([
      'ok',
      'degraded',
    ]);
  });

  it('calls a lossy path degraded, not failed, when its failures do not come in a row', async () => {
    const t = prober((to, n) =>
      to === C && n % 3 === 0 ? TIMED_OUT : answer(pingResponse(to, 'n')),
    );
    await t.rounds(40);
    expect(stateOf(t.p, C)).to.equal('degraded');
    expect(t.changes.some((r) => r.to === C && r.state === 'failed')).to.equal(false);
  });

  it("takes a refusal for no loss of the path's (its peer's host answered: a pod restarting)", async () => {
    const t = prober((to, n) =>
      to === C && n % 3 === 0 ? REFUSED : answer(pingResponse(to, 'n')),
    );
    await t.rounds(40);
    expect(stateOf(t.p, C)).to.equal('ok');
  });

  it('forgets the path to a node that left the list, and an answer that comes after it left', async () => {
    let answerLate: (() => void) | null = null;
    const t = prober();
    await t.rounds(2);
    const p = new PairProber({
      self: SELF,
      clock: t.clock,
      perRound: 4,
      roundIntervalMs: 1_000,
      failAfter: 2,
      degradation: DEFAULT_PATH_DEGRADATION,
      transport: {
        ping: (to) =>
          new Promise((resolve) => {
            const outcome = answer(pingResponse(to, 'n'));
            if (to === B) answerLate = () => resolve(outcome);
            else resolve(outcome);
          }),
      },
    });
    p.setNodes(NODES);
    const round = p.probeRound();
    p.setNodes(NODES.filter((a) => a !== B));
    (answerLate as (() => void) | null)?.();
    await round;
    expect(p.reports().map((r) => r.to)).to.not.include(B);
    t.p.setNodes(NODES.filter((a) => a !== B));
    expect(t.p.reports().map((r) => r.to)).to.not.include(B);
  });

  describe('full-size probes (MTU_PROBE_SIZE)', () => {
    const TIMEOUT: Outcome<void> = {
      ok: false,
      reason: 'timeout',
      phase: 'send',
      detail: 'no answer within 1000 ms',
      latencyMs: 1_000,
    };
    const HTTP_404: Outcome<void> = { ...TIMEOUT, reason: 'http-status', detail: 'HTTP 404' };

    /** SELF probing every peer each round; each echo of 1,400 bytes as `echo` says. */
    function mtuProber(
      echo: (to: string) => Outcome<void>,
      ping = (to: string) => answer(pingResponse(to, 'n')),
      fullSizeEveryRounds?: number,
      perRound = 4,
    ) {
      const clock = new FakeClock();
      const calls: string[] = [];
      const p = new PairProber({
        self: SELF,
        clock,
        perRound,
        roundIntervalMs: 1_000,
        failAfter: 3,
        mtuProbeSize: 1_400,
        ...(fullSizeEveryRounds === undefined ? {} : { fullSizeEveryRounds }),
        degradation: DEFAULT_PATH_DEGRADATION,
        transport: {
          ping: (to) => {
            calls.push(`ping ${to}`);
            return Promise.resolve(ping(to));
          },
          echo: (to, size) => {
            calls.push(`echo ${to} ${size}`);
            return Promise.resolve(echo(to));
          },
        },
      });
      p.setNodes(NODES);
      const rounds = async (count: number) => {
        for (let i = 0; i < count; i++) {
          await p.probeRound();
          clock.advance(1_000);
        }
      };
      return { p, calls, rounds };
    }

    it('calls a path mtu, naming the size, when small probes pass and full-size ones keep failing', async () => {
      const t = mtuProber((to) => (to === B ? TIMEOUT : answer(undefined)));
      await t.rounds(2);
      expect(stateOf(t.p, B)).to.equal('ok');
      await t.rounds(1);
      const b = t.p.reports().find((r) => r.to === B);
      expect(b).to.deep.include({ state: 'mtu', mtuSize: 1_400 });
      expect(stateOf(t.p, C)).to.equal('ok');
    });

    it('sends the full-size probe after the small one, and only when it passed', async () => {
      const t = mtuProber(
        () => answer(undefined),
        (to) => (to === B ? REFUSED : answer(pingResponse(to, 'n'))),
      );
      await t.rounds(1);
      const calls = t.calls.filter((c) => c.includes(C));
      expect(calls).to.deep.equal([`ping ${C}`, `echo ${C} 1400`]);
      expect(
        t.calls.filter((c) => c.startsWith(`echo ${B}`)),
        'B refused the ping',
      ).to.deep.equal([]);
    });

    describe('full-size probes once in a while (fullSizeEveryRounds)', () => {
      const count = (calls: string[], what: string) =>
        calls.filter((c) => c.startsWith(what)).length;

      it('sends a path that passes them one in 5 rounds, and a small probe every round', async () => {
        const t = mtuProber(() => answer(undefined), undefined, 5);
        await t.rounds(10);
        expect(t.calls.filter((c) => c === `ping ${C}`)).to.have.length(10);
        expect(count(t.calls, `echo ${C} `)).to.equal(2);
        expect(stateOf(t.p, C)).to.equal('ok');
      });

      it("counts a path's own probes: where it comes round every 2 rounds, one in 3 of them", async () => {
        const t = mtuProber(() => answer(undefined), undefined, 5, 2);
        await t.rounds(12);
        expect(t.calls.filter((c) => c === `ping ${C}`)).to.have.length(6);
        expect(t.calls.filter((c) => c.startsWith(`echo ${C} `))).to.have.length(2);
      });

      it('once one fails, sends one every round, and calls the black hole within 5 + 3 rounds', async () => {
        let hole = false;
        const t = mtuProber((to) => (to === B && hole ? TIMEOUT : answer(undefined)), undefined, 5);
        await t.rounds(1); // B's first full-size probe passed: its next is due in 5 rounds
        hole = true;
        let rounds = 0;
        while (stateOf(t.p, B) !== 'mtu' && rounds < 20) {
          await t.rounds(1);
          rounds++;
        }
        expect(rounds).to.be.within(3, 5 + 3);
        const echoesAfter = count(t.calls, `echo ${B} `);
        await t.rounds(3);
        expect(count(t.calls, `echo ${B} `) - echoesAfter, 'while mtu, each round').to.equal(3);
        hole = false;
        await t.rounds(1);
        expect(stateOf(t.p, B), 'mended at its next full-size probe').to.equal('ok');
      });
    });

    it('takes an echo that got an answer (a peer without the route: 404) as no MTU problem', async () => {
      const t = mtuProber((to) => (to === B ? HTTP_404 : answer(undefined)));
      await t.rounds(5);
      expect(stateOf(t.p, B)).to.equal('ok');
    });
  });

  it('forgets, telling it unknown, a path not probed for the age given', async () => {
    const t = prober();
    await t.rounds(2);
    t.changes.length = 0;
    t.clock.advance(30_000);
    t.p.expire(20_000);
    expect(t.p.reports()).to.deep.equal([]);
    expect(t.changes.map((c) => c.state)).to.deep.equal([
      'unknown',
      'unknown',
      'unknown',
      'unknown',
    ]);
  });
});
