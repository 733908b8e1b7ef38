// The coordinator's rounds: suspicion, confirmation (retries, relays, the unhealthy duration),
// self-suspicion, the sanity check, slow peers, inherited verdicts.
import { expect } from 'chai';
import type { Outcome, SanityCheck } from '../../src/core/transport.js';
import type {
  PingResponse,
  RelayProbeRequest,
  RelayProbeResult,
} from '../../src/wire/peer-messages.js';
import { DEAD_RECHECKS_PER_ROUND } from '../../src/prober/dead-rechecks.js';
import type { RoundReport } from '../../src/prober/rounds.js';
import {
  overloadLagMs,
  overloadPatienceMs,
  type DetectionPolicy,
} from '../../src/prober/policy.js';
import { selfSuspect, toView, type Judgement, type Transition } from '../../src/prober/verdict.js';
import type { PeerView } from '../../src/wire/peer-view.js';
import { FakeClock } from '../support/fake-clock.js';
import { ABORTED, answer, pingResponse, REFUSED } from '../support/pings.js';
import { DETECTION, LEAD as SELF, probeRounds } from '../support/probe-rounds.js';

const addr = (n: number) => `10.0.0.${n}:8080`;
const idOf = (n: number) => `n${n}@10.0.0.${n}`;
const [A, B, C, D, E, F] = [1, 2, 3, 4, 5, 6].map(addr) as [
  string,
  string,
  string,
  string,
  string,
  string,
];

const POLICY: DetectionPolicy = { ...DETECTION, indirectProbes: 3 };
const INTERVAL = 1_000;

// A peer's transitions from its first round on, as the tests expect them.
const SUSPECTED: Transition[] = ['first-alive', 'suspected'];
const DIED: Transition[] = [...SUSPECTED, 'died'];
const WITHHELD: Transition[] = [...SUSPECTED, 'withheld'];
const PATH_BROKEN: Transition[] = [...SUSPECTED, 'path-broken'];
const CLEARED: Transition[] = [...SUSPECTED, 'cleared'];

/**
 * up: answers. refused: connection refused at once. hang: a black hole, failing only when the
 * client's 1 s timeout runs out (or the probe is aborted). fail-once: refuses one ping, then is up.
 */
type Behaviour = 'up' | 'refused' | 'hang' | 'fail-once';

interface RelayCall {
  relay: string;
  request: RelayProbeRequest;
  atMs: number;
}

/**
 * A network as seen from the coordinator, and from the relays: they reach `relaysReach` too, and
 * see the others as the coordinator does (a refusal, or silence), but those in `relaysRefused`
 * refused.
 */
function network(
  clock: FakeClock,
  behaviour: Map<string, Behaviour>,
  relaysReach: Set<string>,
  relaysRefused: Set<string>,
) {
  const pings: { address: string; atMs: number }[] = [];
  const relayCalls: RelayCall[] = [];
  const ping = (address: string, signal?: AbortSignal): Promise<Outcome<PingResponse>> => {
    pings.push({ address, atMs: clock.now() });
    const b = behaviour.get(address) ?? 'up';
    if (b === 'fail-once') behaviour.set(address, 'up');
    if (b === 'up') {
      const n = Number(address.split('.')[3]?.split(':')[0]);
      return Promise.resolve(answer(pingResponse(address, `n${n}`)));
    }
    if (b === 'refused' || b === 'fail-once') return Promise.resolve(REFUSED);
    return clock.sleep(1000, signal).then(
      () =>
        ({
          ok: false,
          reason: 'connect-timeout',
          phase: 'connect',
          detail: 'timeout',
          latencyMs: 1000,
        }) as const,
      () => ABORTED,
    );
  };
  const probeVia = (
    relay: string,
    request: RelayProbeRequest,
  ): Promise<Outcome<RelayProbeResult>> => {
    relayCalls.push({ relay, request, atMs: clock.now() });
    // A relay that is down itself answers nothing (as a failed ping of it would).
    const self = behaviour.get(relay) ?? 'up';
    if (self === 'hang' || self === 'refused') {
      return ping(relay).then((o): Outcome<RelayProbeResult> => {
        if (o.ok) throw new Error(`relay ${relay} is down but answered`);
        return o;
      });
    }
    const b = behaviour.get(request.target) ?? 'up';
    const reachable = relaysReach.has(request.target) || b === 'up';
    const refusedToo = relaysRefused.has(request.target) || b === 'refused';
    const detail = refusedToo ? 'refused (ECONNREFUSED)' : 'connect-timeout (timeout)';
    return Promise.resolve({
      ok: true,
      value: {
        target: request.target,
        reachable,
        attempts: 1,
        latency_ms: 1,
        ...(reachable ? {} : { detail }),
      },
      latencyMs: 2,
    });
  };
  return { ping, probeVia, pings, relayCalls };
}

interface Judged {
  atMs: number;
  judgement: Judgement;
}

function setup(
  opts: {
    peers?: string[];
    behaviour?: Map<string, Behaviour>;
    sanity?: SanityCheck | null;
    policy?: Partial<DetectionPolicy>;
    lastHeard?: (address: string) => number | null;
    loopLag?: { maxLagWithinMs(ms: number): number; precise?(on: boolean): void };
    nodeNameOf?: (address: string) => string | undefined;
    onSelfSuspicion?: (s: { suspect: boolean }) => void;
  } = {},
) {
  const clock = new FakeClock();
  const behaviour = opts.behaviour ?? new Map<string, Behaviour>();
  const relaysReach = new Set<string>();
  const relaysRefused = new Set<string>();
  const net = network(clock, behaviour, relaysReach, relaysRefused);
  const judged: Judged[] = [];
  const reports: RoundReport[] = [];
  const changedAt: number[] = [];
  const rounds = probeRounds({
    clock,
    ping: net.ping,
    probeVia: net.probeVia,
    sanity: opts.sanity ?? null,
    policy: { ...POLICY, ...opts.policy },
    intervalMs: INTERVAL,
    ...(opts.lastHeard ? { lastHeard: opts.lastHeard } : {}),
    ...(opts.loopLag ? { loopLag: opts.loopLag } : {}),
    ...(opts.nodeNameOf ? { nodeNameOf: opts.nodeNameOf } : {}),
    ...(opts.onSelfSuspicion ? { onSelfSuspicion: opts.onSelfSuspicion } : {}),
    random: () => 0.5,
    onJudgement: (judgement) => judged.push({ atMs: clock.now(), judgement }),
    onRound: (r) => reports.push(r),
    onVerdictsChanged: () => changedAt.push(clock.now()),
  });
  rounds.setPeers(opts.peers ?? [A, B, C]);
  const transitions = (address: string): Transition[] =>
    judged.filter((j) => j.judgement.record.address === address).map((j) => j.judgement.transition);
  /** When `address` first got `transition`, relative to the fake clock's start. */
  const when = (address: string, transition: Transition): number | undefined =>
    judged.find(
      (j) => j.judgement.record.address === address && j.judgement.transition === transition,
    )?.atMs;
  const health = (address: string) => rounds.snapshot().find((r) => r.address === address)?.health;
  /** Starts leading with every peer alive; returns at t0 + 10 ms, round 2 starting at t0 + 1 s. */
  const startAlive = async (inherited: PeerView[] = []) => {
    rounds.start(inherited);
    await clock.advanceAsync(10);
    return clock.now() - 10;
  };
  return {
    changedAt,
    clock,
    behaviour,
    relaysReach,
    relaysRefused,
    net,
    judged,
    reports,
    rounds,
    transitions,
    when,
    health,
    startAlive,
  };
}

const refusing = (): SanityCheck['check'] => () =>
  Promise.resolve({
    ok: false,
    reason: 'unreachable',
    phase: 'connect',
    detail: 'ENETUNREACH',
    latencyMs: 1,
  });

/**
 * 300 random steps 150 ms apart, from `seed`: a peer starts answering, refusing or hanging, the
 * peer list shrinks or comes back whole, or the term restarts. `before` and `after` run around each.
 */
async function randomSteps(
  seed: number,
  peers: string[],
  { clock, rounds, behaviour }: Pick<ReturnType<typeof setup>, 'clock' | 'rounds' | 'behaviour'>,
  { before, after }: { before?: () => void; after: (step: number) => void },
): Promise<void> {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  for (let step = 0; step < 300; step++) {
    before?.();
    const what = random();
    if (what < 0.7) behaviour.set(pick(peers), pick(['up', 'refused', 'hang'] as const));
    else if (what < 0.8) rounds.setPeers(peers.filter(() => random() < 0.8));
    else if (what < 0.9) rounds.setPeers(peers);
    else if (what < 0.93) {
      rounds.stop();
      rounds.start([]);
    }
    await clock.advanceAsync(150);
    after(step);
  }
}

describe('ProbeRounds', () => {
  it('probes every peer at once on start and reports the first round', async () => {
    const { clock, rounds, reports, judged } = setup();
    rounds.start([]);
    await clock.advanceAsync(10);
    expect(reports).to.have.length(1);
    expect(reports[0]).to.include({ round: 1, probed: 3, changed: 3 });
    expect(judged.map((j) => j.judgement.transition)).to.deep.equal([
      'first-alive',
      'first-alive',
      'first-alive',
    ]);
    expect(rounds.snapshot().map((r) => r.health)).to.deep.equal(['alive', 'alive', 'alive']);
    rounds.stop();
  });

  it('makes a refused peer suspect at once and dead unhealthyMs after its first failed probe, not before', async () => {
    const { clock, rounds, behaviour, transitions, when, health, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 1_000 - clock.now()); // round 2: B's probe fails
    expect(transitions(B)).to.deep.equal(SUSPECTED);
    expect(when(B, 'suspected')).to.equal(t0 + 1_000);
    expect(health(B)).to.equal('suspect');
    await clock.advanceAsync(999);
    expect(transitions(B), 'not dead before unhealthyMs').to.deep.equal(SUSPECTED);
    await clock.advanceAsync(1);
    expect(transitions(B)).to.deep.equal(DIED);
    expect(when(B, 'died')).to.equal(t0 + 2_000);
    expect(health(B)).to.equal('dead');
    rounds.stop();
  });

  it('reports a dead peer once, and its recovery once it answers again', async () => {
    const { clock, rounds, behaviour, transitions, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 7_000 - clock.now()); // dead since t0 + 2 s
    expect(transitions(B), 'a dead peer is reported once').to.deep.equal(DIED);
    behaviour.set(B, 'up');
    await clock.advanceAsync(2_000);
    expect(transitions(B)).to.deep.equal([...DIED, 'recovered']);
    expect(transitions(A)).to.deep.equal(['first-alive']);
    rounds.stop();
  });

  it('retries a refused probe CONNECT_MAX_RETRIES times, CONNECT_COOLDOWN_PERIOD apart', async () => {
    const { clock, rounds, behaviour, net, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 1_900 - clock.now()); // within round 2's confirmation
    const times = net.pings.filter((p) => p.address === B).map((p) => p.atMs - t0);
    // Round 1's successful probe, then round 2's failed one and its two retries.
    expect(times).to.deep.equal([0, 1_000, 1_200, 1_400]);
    rounds.stop();
  });

  it('tells of a verdict a confirmation changed between rounds at once, not at the next round', async () => {
    const { clock, rounds, behaviour, changedAt, reports, when, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 2_500 - clock.now());
    const died = when(B, 'died');
    expect(died).to.equal(t0 + 2_000);
    expect(changedAt, 'told when the confirmation ended').to.deep.equal([died]);
    const round3 = reports.find((r) => r.round === 3);
    expect(round3?.changed, 'and not counted again by the next round').to.equal(0);
    rounds.stop();
  });

  it('declares a black-holed peer dead about 2 s after its failed probe started (relays get a full probe timeout)', async () => {
    const { clock, rounds, behaviour, transitions, when, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'hang');
    await clock.advanceAsync(t0 + 1_000 - clock.now()); // round 2 starts B's probe
    expect(transitions(B)).to.deep.equal(['first-alive']);
    await clock.advanceAsync(1_000); // its 1 s timeout runs out
    expect(transitions(B)).to.deep.equal(SUSPECTED);
    expect(when(B, 'suspected')).to.equal(t0 + 2_000);
    // The relays' 1 s probe, plus their margin of 150 ms to answer within the confirmation.
    await clock.advanceAsync(1_149);
    expect(transitions(B)).to.deep.equal(SUSPECTED);
    await clock.advanceAsync(1);
    expect(transitions(B)).to.deep.equal(DIED);
    expect(when(B, 'died')).to.equal(t0 + 3_150);
    const died = transitions(B).length;
    await clock.advanceAsync(5_000);
    expect(transitions(B)).to.have.length(died);
    rounds.stop();
  });

  it('never declares dead a peer that fails once and then answers', async () => {
    const { clock, rounds, behaviour, transitions, health, startAlive } = setup();
    await startAlive();
    behaviour.set(B, 'fail-once');
    await clock.advanceAsync(10_000);
    expect(transitions(B)).to.deep.equal(CLEARED);
    expect(health(B)).to.equal('alive');
    rounds.stop();
  });

  /** B refusing probes from round 2, but answering an announcement during its confirmation. */
  async function heardDuringConfirmation() {
    const heard = new Map<string, number>();
    const fx = setup({ lastHeard: (address) => heard.get(address) ?? null });
    const t0 = await fx.startAlive();
    heard.set(B, t0); // answered an announcement before: no evidence for this incident
    fx.behaviour.set(B, 'refused');
    await fx.clock.advanceAsync(t0 + 1_500 - fx.clock.now());
    heard.set(B, fx.clock.now()); // answers an announcement during the confirmation
    await fx.clock.advanceAsync(500);
    return { ...fx, t0 };
  }

  it('clears a suspect peer that answered another request meanwhile (lastHeard)', async () => {
    const { rounds, transitions, health } = await heardDuringConfirmation();
    expect(transitions(B)).to.deep.equal(CLEARED);
    expect(health(B)).to.equal('alive');
    rounds.stop();
  });

  it('declares that peer dead once it is not heard from since its next failure started', async () => {
    const { clock, rounds, transitions, t0 } = await heardDuringConfirmation();
    await clock.advanceAsync(t0 + 3_000 - clock.now());
    await clock.advanceAsync(1_000);
    expect(transitions(B)).to.deep.equal([...CLEARED, 'suspected', 'died']);
    rounds.stop();
  });

  it('reports a peer that relays reach as a broken path, not dead, and its restoration', async () => {
    const { clock, rounds, behaviour, relaysReach, judged, transitions, when, health, startAlive } =
      setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    relaysReach.add(B);
    await clock.advanceAsync(t0 + 2_000 - clock.now());
    expect(transitions(B)).to.deep.equal(PATH_BROKEN);
    expect(when(B, 'path-broken')).to.equal(t0 + 2_000);
    const broken = judged.find((j) => j.judgement.transition === 'path-broken')?.judgement;
    expect(broken?.record.brokenPath?.witnesses).to.have.members([idOf(1), idOf(3)]);
    expect(broken?.incidentMs).to.equal(t0 + 1_000);
    expect(health(B)).to.equal('alive');
    await clock.advanceAsync(5_000);
    expect(transitions(B), 'reported once, never dead').to.deep.equal(PATH_BROKEN);
    behaviour.set(B, 'up');
    relaysReach.delete(B);
    await clock.advanceAsync(2_000);
    expect(transitions(B)).to.deep.equal([...PATH_BROKEN, 'path-restored']);
    rounds.stop();
  });

  it('asks up to INDIRECT_PROBES live peers other than the target, within the confirmation', async () => {
    const peers = [A, B, C, D, E, F];
    const { clock, rounds, behaviour, net, startAlive } = setup({ peers });
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 2_000 - clock.now());
    const calls = net.relayCalls;
    expect(calls).to.have.length(3);
    const relays = calls.map((c) => c.relay);
    expect(new Set(relays).size, 'distinct relays').to.equal(3);
    expect(relays).to.not.include(B);
    for (const c of calls) {
      expect(peers).to.include(c.relay);
      expect(c.request).to.deep.include({ from: SELF, target: B });
      expect(c.atMs).to.equal(t0 + 1_000);
      // The relay must be done before the verdict, due at t0 + 2 s.
      expect(c.request.timeout_ms).to.be.within(1, 1_000);
    }
    rounds.stop();
  });

  it('asks no relay with INDIRECT_PROBES=0', async () => {
    const off = setup({ peers: [A, B, C, D], policy: { indirectProbes: 0 } });
    const t0 = await off.startAlive();
    off.behaviour.set(B, 'refused');
    await off.clock.advanceAsync(t0 + 2_000 - off.clock.now());
    expect(off.net.relayCalls).to.deep.equal([]);
    expect(off.transitions(B)).to.deep.equal(DIED);
    off.rounds.stop();
  });

  it('never asks a peer it cannot reach itself to relay', async () => {
    const on = setup({ peers: [A, B, C, D, E], policy: { indirectProbes: 16 } });
    const t1 = await on.startAlive();
    on.behaviour.set(D, 'refused');
    await on.clock.advanceAsync(t1 + 2_100 - on.clock.now()); // D dead
    on.net.relayCalls.length = 0;
    on.behaviour.set(B, 'refused');
    await on.clock.advanceAsync(t1 + 4_000 - on.clock.now());
    expect(on.transitions(B)).to.deep.equal(DIED);
    const forB = on.net.relayCalls.filter((c) => c.request.target === B).map((c) => c.relay);
    expect(forB).to.have.members([A, C, E]);
    on.rounds.stop();
  });

  it('names a peer that has not answered yet by its node as discovery knows it, else by its IP', async () => {
    const { clock, rounds, behaviour, startAlive } = setup({
      peers: [A, B],
      nodeNameOf: (address) => (address === A ? 'worker-a' : undefined),
      behaviour: new Map([
        [A, 'refused'],
        [B, 'refused'],
      ]),
    });
    await startAlive();
    const names = () => rounds.snapshot().map((r) => [r.id, r.nodeName]);
    expect(names()).to.deep.equal([
      ['worker-a@10.0.0.1', 'worker-a'],
      ['10.0.0.2@10.0.0.2', '10.0.0.2'],
    ]);
    behaviour.set(A, 'up');
    await clock.advanceAsync(1_000);
    expect(names()[0], 'its own answer wins').to.deep.equal([idOf(1), 'n1']);
    rounds.stop();
  });

  /** A, B and C of four peers silent from round 2 on, their confirmations over. */
  async function mostFallSilent() {
    const fx = setup({ peers: [A, B, C, D] });
    const t0 = await fx.startAlive();
    for (const p of [A, B, C]) fx.behaviour.set(p, 'hang');
    // Round 2 (t0 + 1 s) times out at t0 + 2 s; the relays get a full timeout more.
    await fx.clock.advanceAsync(t0 + 3_500 - fx.clock.now());
    return fx;
  }

  it('suspects itself, not its peers, when most of them fall silent at once: withheld, no death', async () => {
    const { clock, rounds, judged, transitions } = await mostFallSilent();
    expect(rounds.selfSuspicion).to.deep.include({
      suspect: true,
      unreachable: 3,
      silent: 3,
      considered: 4,
    });
    for (const p of [A, B, C]) {
      expect(transitions(p), p).to.deep.equal(WITHHELD);
    }
    const withheld = judged.filter((j) => j.judgement.transition === 'withheld');
    expect(withheld.map((j) => j.judgement.withheld)).to.deep.equal([
      'self-suspect',
      'self-suspect',
      'self-suspect',
    ]);
    // D, the one peer it reaches, probed them for it and could not reach them either.
    expect(withheld.map((j) => j.judgement.corroboratedBy)).to.deep.equal([
      [idOf(4)],
      [idOf(4)],
      [idOf(4)],
    ]);
    await clock.advanceAsync(5_000);
    expect(judged.map((j) => j.judgement.transition)).to.not.include('died');
    expect(rounds.snapshot().map((r) => r.health)).to.not.include('dead');
    rounds.stop();
  });

  it('clears the peers it withheld, and its suspicion of itself, when its network comes back', async () => {
    const { clock, rounds, behaviour, transitions } = await mostFallSilent();
    await clock.advanceAsync(5_000);
    // Its network comes back: the peers were alive all along.
    for (const p of [A, B, C]) behaviour.set(p, 'up');
    await clock.advanceAsync(2_000);
    for (const p of [A, B, C]) expect(transitions(p).at(-1), p).to.equal('cleared');
    expect(rounds.selfSuspicion.suspect).to.equal(false);
    rounds.stop();
  });

  it('tells that its suspicion of itself ended when the silent peers leave the list', async () => {
    const told: boolean[] = [];
    const { clock, rounds, behaviour, startAlive } = setup({
      peers: [A, B, C, D],
      onSelfSuspicion: (s) => told.push(s.suspect),
    });
    await startAlive();
    for (const p of [A, B, C]) behaviour.set(p, 'hang');
    await clock.advanceAsync(3_000);
    expect(told).to.deep.equal([true]);
    rounds.setPeers([D, E]); // their nodes were deleted
    expect(rounds.selfSuspicion.suspect).to.equal(false);
    expect(told).to.deep.equal([true, false]);
    rounds.stop();
  });

  it('declares peers that refuse dead even when most fail at once: their hosts answered, as fast as one', async () => {
    const peers = [A, B, C, D];
    const { clock, rounds, behaviour, transitions, when, startAlive } = setup({ peers });
    const t0 = await startAlive();
    for (const p of [A, B, C]) behaviour.set(p, 'refused');
    await clock.advanceAsync(t0 + 2_000 - clock.now());
    for (const p of [A, B, C]) {
      expect(transitions(p), p).to.deep.equal(DIED);
      expect(when(p, 'died'), p).to.equal(t0 + 2_000);
    }
    expect(rounds.selfSuspicion.suspect).to.equal(false);
    rounds.stop();
  });

  it('declares a silent peer dead while suspecting itself when a relay was refused by it', async () => {
    const peers = [A, B, C, D];
    const { clock, rounds, behaviour, relaysRefused, transitions, startAlive } = setup({ peers });
    const t0 = await startAlive();
    for (const p of [A, B, C]) behaviour.set(p, 'hang');
    relaysRefused.add(B); // silent to this node, but B's host refuses D: B's process is down
    await clock.advanceAsync(t0 + 3_500 - clock.now());
    expect(rounds.selfSuspicion.suspect).to.equal(true);
    expect(transitions(B)).to.deep.equal(DIED);
    for (const p of [A, C]) {
      expect(transitions(p), p).to.deep.equal(WITHHELD);
    }
    rounds.stop();
  });

  /**
   * Its event loop running late from round 2 on, when A is black-holed, B too (but reached by the
   * relays) and C refuses; their confirmations over.
   */
  async function runningLate() {
    let lagMs = 0;
    const asked: number[] = [];
    const loopLag = {
      maxLagWithinMs: (ms: number) => (asked.push(ms), lagMs),
    };
    const fx = setup({ peers: [A, B, C, D, E, F], loopLag });
    const t0 = await fx.startAlive();
    lagMs = overloadLagMs(POLICY.probeTimeoutMs) + 1; // say 300 ms late
    fx.behaviour.set(A, 'hang'); // black-holed, or as slow as this node is
    fx.behaviour.set(B, 'hang');
    fx.relaysReach.add(B); // relays reach B: it would be a broken path
    fx.behaviour.set(C, 'refused'); // the kernel said so: no doubt
    await fx.clock.advanceAsync(t0 + 3_500 - fx.clock.now());
    return { ...fx, t0, asked };
  }

  it('declares no timed-out peer dead or behind a broken path while its own event loop runs late; a refused one, yes', async () => {
    const { rounds, transitions, health, asked } = await runningLate();
    expect(transitions(A)).to.deep.equal(WITHHELD);
    expect(transitions(B)).to.deep.equal(WITHHELD);
    expect(transitions(C)).to.deep.equal(DIED);
    expect(
      asked.every((ms) => ms >= 0 && ms <= 3_000),
      asked.join(),
    ).to.be.true;
    expect(health(A)).to.equal('suspect');
    rounds.stop();
  });

  it('judges a peer that both timed out and refused while its own event loop runs late: the refusal was no lateness of its own', async () => {
    const loopLag = { maxLagWithinMs: () => overloadLagMs(POLICY.probeTimeoutMs) + 1 };
    const { clock, rounds, behaviour, relaysReach, transitions, startAlive } = setup({
      peers: [A, B, C, D, E, F],
      loopLag,
    });
    const t0 = await startAlive();
    // The relays reach both, so either would be withheld as 'overloaded' if every attempt had
    // timed out; one refusal among its attempts, first or last, means the peer's host answered.
    relaysReach.add(A).add(B);
    behaviour.set(A, 'refused'); // refuses round 2's probe, then falls silent for the retries
    behaviour.set(B, 'hang'); // round 2's probe times out, then the retries are refused
    await clock.advanceAsync(t0 + 1_100 - clock.now());
    behaviour.set(A, 'hang');
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 3_500 - clock.now());
    expect(transitions(A)).to.deep.equal(PATH_BROKEN);
    expect(transitions(B)).to.deep.equal(PATH_BROKEN);
    rounds.stop();
  });

  it('judges a timed-out peer anyway, however late its event loop, once it was silent past its patience', async () => {
    const { clock, rounds, transitions, health, t0 } = await runningLate();
    // Still late, but a peer silent for UNHEALTHY_DURATION and 8 probe timeouts is judged anyway.
    const patience = overloadPatienceMs(POLICY);
    await clock.advanceAsync(t0 + 1_000 + patience - 500 - clock.now());
    expect(health(A), 'before its patience ran out').to.equal('suspect');
    await clock.advanceAsync(3_000);
    expect(transitions(A)).to.include('died');
    expect(transitions(B)).to.include('path-broken');
    rounds.stop();
  });

  it('has the event-loop lag measured finely while it leads, coarsely once it stops', async () => {
    const asked: boolean[] = [];
    const loopLag = { maxLagWithinMs: () => 0, precise: (on: boolean) => void asked.push(on) };
    const { rounds, startAlive } = setup({ loopLag });
    await startAlive();
    expect(asked).to.deep.equal([true]);
    rounds.stop();
    expect(asked).to.deep.equal([true, false]);
  });

  it('judges a timed-out peer at once when its event loop is on time', async () => {
    const loopLag = { maxLagWithinMs: () => overloadLagMs(POLICY.probeTimeoutMs) };
    const { clock, behaviour, rounds, transitions, startAlive } = setup({ loopLag });
    const t0 = await startAlive();
    behaviour.set(A, 'hang');
    await clock.advanceAsync(t0 + 3_500 - clock.now());
    expect(transitions(A)).to.deep.equal(DIED);
    rounds.stop();
  });

  it('still declares one failing peer of four dead', async () => {
    const { clock, rounds, behaviour, transitions, startAlive } = setup({ peers: [A, B, C, D] });
    const t0 = await startAlive();
    behaviour.set(C, 'refused');
    await clock.advanceAsync(t0 + 2_000 - clock.now());
    expect(transitions(C)).to.deep.equal(DIED);
    expect(rounds.selfSuspicion, 'a dead peer is left out').to.deep.include({
      suspect: false,
      unreachable: 0,
      considered: 3,
    });
    rounds.stop();
  });

  it('does not let a black-holed peer hold up the verdicts on the others', async () => {
    const { clock, rounds, behaviour, reports, when, transitions, startAlive } = setup({
      peers: [A, B, C, D, E],
    });
    const t0 = await startAlive();
    behaviour.set(A, 'hang');
    behaviour.set(C, 'refused');
    await clock.advanceAsync(t0 + 2_000 - clock.now());
    // C is judged on time while A's probe still runs. Round 3 (at t0 + 2 s) skips both A and C,
    // still in their confirmations, rather than waiting for them: it probes B, D and E.
    expect(transitions(C)).to.deep.equal(DIED);
    expect(when(C, 'died')).to.equal(t0 + 2_000);
    expect(transitions(A)).to.deep.equal(SUSPECTED);
    const round3 = reports.find((r) => r.round === 3);
    expect(round3?.probed).to.equal(3);
    await clock.advanceAsync(1_150);
    expect(transitions(A)).to.deep.equal(DIED);
    expect(when(A, 'died')).to.equal(t0 + 3_150);
    rounds.stop();
  });

  /**
   * SANITY_CHECK_URL out of reach until `reachSanityCheck()`; A and B silent from round 2 on and C
   * refusing, their confirmations over. `checks()`: how often the sanity check ran.
   */
  async function sanityCheckFailing() {
    let sanityOk = false;
    let checks = 0;
    const sanity: SanityCheck = {
      check: () => {
        checks++;
        return sanityOk
          ? Promise.resolve({ ok: true, value: undefined, latencyMs: 1 })
          : refusing()();
      },
    };
    const fx = setup({ peers: [A, B, C, D, E], sanity });
    const t0 = await fx.startAlive();
    const checksWhileAllAnswered = checks;
    fx.behaviour.set(A, 'hang');
    fx.behaviour.set(B, 'hang');
    fx.behaviour.set(C, 'refused'); // its host answered: the path from here works
    await fx.clock.advanceAsync(t0 + 3_500 - fx.clock.now());
    return {
      ...fx,
      checksWhileAllAnswered,
      checks: () => checks,
      reachSanityCheck: () => (sanityOk = true),
    };
  }

  it('withholds the death of silent peers when the coordinator cannot reach SANITY_CHECK_URL, checking it once a round; not of one that refuses', async () => {
    const { rounds, judged, transitions, health, checks, checksWhileAllAnswered } =
      await sanityCheckFailing();
    expect(checksWhileAllAnswered, 'no check while every peer answers').to.equal(0);
    expect(checks(), 'one check for the round, not one per failing peer').to.equal(1);
    expect(transitions(A)).to.deep.equal(WITHHELD);
    expect(transitions(B)).to.deep.equal(WITHHELD);
    expect(transitions(C)).to.deep.equal(DIED);
    expect(judged.filter((j) => j.judgement.withheld === 'sanity-check')).to.have.length(2);
    expect(health(A)).to.not.equal('dead');
    expect(rounds.sanity, 'what the cluster status shows').to.equal('failed');
    rounds.stop();
  });

  it('declares the withheld peers dead once SANITY_CHECK_URL answers again', async () => {
    const { clock, rounds, transitions, checks, reachSanityCheck } = await sanityCheckFailing();
    reachSanityCheck();
    await clock.advanceAsync(3_000);
    expect(transitions(A)).to.deep.equal([...WITHHELD, 'died']);
    expect(transitions(B)).to.deep.equal([...WITHHELD, 'died']);
    expect(checks(), 'one more check, for the next round with failing peers').to.equal(2);
    expect(rounds.sanity).to.equal('ok');
    rounds.stop();
  });

  it('starts from inherited verdicts: a peer already dead is not reported again', async () => {
    const view = (address: string, health: PeerView['health'], alerted = false): PeerView => ({
      id: `x@${address.split(':')[0] ?? ''}`,
      address,
      node_name: 'x',
      health,
      since: 5,
      alerted,
    });
    const inherited = [
      view(A, 'dead', true),
      view(B, 'alive'),
      view(C, 'suspect'),
      view(D, 'alive'),
    ];
    const behaviour = new Map<string, Behaviour>([
      [A, 'refused'],
      [B, 'refused'],
    ]);
    const { clock, rounds, transitions, health } = setup({
      peers: [A, B, C, D, E],
      behaviour,
    });
    rounds.start(inherited);
    expect(health(C), 'a suspicion is not inherited').to.equal('alive');
    await clock.advanceAsync(1_000);
    expect(transitions(A)).to.deep.equal([]);
    expect(health(A)).to.equal('dead');
    expect(transitions(B)).to.deep.equal(['suspected', 'died']);
    expect(transitions(C)).to.deep.equal([]);
    expect(transitions(E)).to.deep.equal(['first-alive']);
    rounds.stop();
  });

  const S = 4_242;
  /** Every peer alive, when it adopts a superseded term's views, dead since S where dead. */
  async function adopting() {
    const view = (address: string, health: PeerView['health'], alerted: boolean): PeerView => ({
      id: `x@${address.split(':')[0] ?? ''}`,
      address,
      node_name: 'x',
      health,
      since: S,
      alerted,
    });
    const fx = setup({ peers: [A, B, C, D] });
    const t0 = await fx.startAlive();
    const before = fx.rounds.snapshot();
    fx.rounds.adopt([
      view(B, 'dead', true),
      view(A, 'dead', false), // never alerted: nothing to resolve
      view(C, 'suspect', true),
      view(D, 'alive', false),
      view(E, 'dead', true), // not a peer here
    ]);
    return { ...fx, t0, before };
  }

  it("takes on a superseded term's alerted dead verdicts (adopt), and nothing else", async () => {
    const { rounds, transitions, before } = await adopting();
    expect(transitions(B), 'no transition at adopt').to.deep.equal(['first-alive']);
    const adopted = rounds.snapshot().find((r) => r.address === B);
    expect(adopted).to.deep.include({ health: 'dead', alerted: true, sinceMs: S });
    for (const p of [A, C, D]) {
      expect(
        rounds.snapshot().find((r) => r.address === p),
        p,
      ).to.deep.equal(before.find((r) => r.address === p));
    }
    expect(rounds.snapshot().map((r) => r.address)).to.deep.equal([A, B, C, D]);
    rounds.stop();
  });

  it("resolves an adopted death's incident when that peer answers", async () => {
    const { clock, rounds, judged, transitions, t0 } = await adopting();
    await clock.advanceAsync(t0 + 3_000 - clock.now());
    expect(transitions(B)).to.deep.equal(['first-alive', 'recovered']);
    const recovered = judged.find((j) => j.judgement.transition === 'recovered')?.judgement;
    expect(recovered?.incidentMs).to.equal(S);
    expect(recovered?.record).to.deep.include({ health: 'alive', alerted: false });
    for (const p of [A, C, D]) expect(transitions(p), p).to.deep.equal(['first-alive']);
    rounds.stop();
  });

  it('asks relays about a dead peer at most once per DEAD_RECHECK_ROUNDS rounds, not every round', async () => {
    const { clock, rounds, behaviour, net, transitions, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 25_500 - clock.now());
    expect(transitions(B)).to.deep.equal(DIED);
    const pingedAt = net.pings.filter((p) => p.address === B).map((p) => p.atMs - t0);
    expect(pingedAt, 'a dead peer is still probed every round').to.include.members([
      5_000, 6_000, 7_000, 8_000, 9_000, 10_000, 11_000, 12_000,
    ]);
    const askedAt = [
      ...new Set(net.relayCalls.filter((c) => c.request.target === B).map((c) => c.atMs - t0)),
    ];
    // The confirmation that found it dead (started at t0 + 1 s, dead at t0 + 2 s); then every 10
    // rounds from its death.
    expect(askedAt).to.deep.equal([1_000, 12_000, 22_000]);
    const dead = askedAt.slice(1);
    for (let i = 1; i < dead.length; i++) {
      expect((dead[i] ?? 0) - (dead[i - 1] ?? 0)).to.be.at.least(10 * INTERVAL);
    }
    rounds.stop();
  });

  it('rechecks at most DEAD_RECHECKS_PER_ROUND dead peers a round, the longest waiting first, asking relays only', async () => {
    // Over 10 rounds' worth of the budget dead at once: each still gets its turn.
    const at = (n: number) => `10.0.${Math.floor(n / 250)}.${(n % 250) + 1}:8080`;
    const peers = Array.from({ length: 1_100 }, (_, i) => at(i));
    const { clock, rounds, behaviour, net, when, transitions, startAlive } = setup({ peers });
    const t0 = await startAlive();
    await clock.advanceAsync(600); // over 64 peers, a round's probes are spread over 500 ms
    expect(rounds.snapshot().every((r) => r.health === 'alive')).to.be.true;
    const doomed = peers.slice(0, 550); // a zone lost at once
    for (const p of doomed) behaviour.set(p, 'refused');
    await clock.advanceAsync(t0 + 30_500 - clock.now());
    const died = doomed.map((p) => when(p, 'died'));
    expect(
      died.filter((t) => t === undefined),
      JSON.stringify(transitions(doomed[0]!)),
    ).to.deep.equal([]);
    const lastDeath = Math.max(...(died as number[]));
    const roundOf = (atMs: number) => Math.floor((atMs - t0) / INTERVAL);
    // Which dead peers the relays were asked about, round by round, once all were dead.
    const asked = new Map<number, Set<string>>();
    for (const c of net.relayCalls.filter((c) => c.atMs > lastDeath)) {
      const round = roundOf(c.atMs);
      asked.set(round, (asked.get(round) ?? new Set()).add(c.request.target));
    }
    const perRound = [...asked.values()].map((targets) => targets.size);
    expect(Math.max(...perRound)).to.equal(DEAD_RECHECKS_PER_ROUND);
    const rechecked = new Set([...asked.values()].flatMap((targets) => [...targets]));
    expect(rechecked.size, 'every dead peer rechecked within 28 s').to.equal(doomed.length);
    // No retries for a dead peer: one ping a round, recheck or not.
    for (const p of doomed) {
      const pings = net.pings.filter((q) => q.address === p && q.atMs > lastDeath + INTERVAL);
      const rounds = new Set(pings.map((q) => roundOf(q.atMs)));
      expect(pings.length, p).to.equal(rounds.size);
    }
    rounds.stop();
  });

  it('keeps its self-suspicion counts equal to a recount over its records, whatever happens', async () => {
    const peers = [1, 2, 3, 4, 5, 6, 7, 8].map(addr);
    const { clock, rounds, behaviour, startAlive } = setup({ peers });
    const recount = () => selfSuspect(rounds.snapshot());
    await startAlive();
    const seen = new Set<boolean>();
    await randomSteps(
      7,
      peers,
      { clock, rounds, behaviour },
      {
        after: (step) => {
          expect(rounds.selfSuspicion, `step ${step}`).to.deep.equal(recount());
          seen.add(rounds.selfSuspicion.suspect);
        },
      },
    );
    expect([...seen], 'both suspecting itself and not, on the way').to.have.members([true, false]);
    rounds.stop();
  });

  it('changes its verdicts version whenever a shared view would show a verdict otherwise, and not for rounds of answers', async () => {
    const peers = [1, 2, 3, 4, 5, 6, 7, 8].map(addr);
    const { clock, rounds, behaviour, startAlive } = setup({ peers });
    // What a successor inherits and a follower's page shows, latencies, probe times and why a
    // peer does not answer aside (they change at every probe, and are refreshed as latencies are).
    const shown = () =>
      JSON.stringify(
        rounds
          .snapshot()
          .map(toView)
          .map((v) => ({
            ...v,
            latency_ms: undefined,
            last_probe: undefined,
            last_seen: undefined,
            last_failure: undefined,
          })),
      );
    await startAlive();
    const steady = rounds.verdictsVersion;
    const probedBefore = rounds.snapshot().map((r) => r.lastProbeMs);
    await clock.advanceAsync(3_000);
    expect(rounds.snapshot().map((r) => r.lastProbeMs)).to.not.deep.equal(probedBefore);
    expect(rounds.verdictsVersion, 'three rounds of answers').to.equal(steady);
    let changes = 0;
    let before = { version: 0, shown: '' };
    await randomSteps(
      11,
      peers,
      { clock, rounds, behaviour },
      {
        before: () => (before = { version: rounds.verdictsVersion, shown: shown() }),
        after: (step) => {
          if (shown() === before.shown) return;
          changes++;
          expect(rounds.verdictsVersion, `step ${step}`).to.not.equal(before.version);
        },
      },
    );
    expect(changes, 'verdicts changed on the way').to.be.above(20);
    rounds.stop();
  });

  it('a dead peer that relays reach at a recheck is recovered, with a broken path', async () => {
    const { clock, rounds, behaviour, relaysReach, judged, transitions, health, startAlive } =
      setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 3_500 - clock.now()); // died at t0 + 2 s
    expect(transitions(B)).to.deep.equal(DIED);
    relaysReach.add(B); // only the path from the coordinator stays broken
    await clock.advanceAsync(t0 + 11_900 - clock.now());
    expect(transitions(B), 'not rechecked before it is due').to.deep.equal(DIED);
    expect(health(B)).to.equal('dead');
    await clock.advanceAsync(1_000); // the recheck at t0 + 12 s, 10 rounds after its death
    expect(transitions(B)).to.deep.equal([...DIED, 'recovered']);
    const recovered = judged.find((j) => j.judgement.transition === 'recovered')?.judgement;
    expect(recovered?.incidentMs).to.equal(t0 + 2_000);
    expect(recovered?.record).to.deep.include({ health: 'alive', alerted: false });
    expect(recovered?.record.brokenPath?.witnesses).to.have.members([idOf(1), idOf(3)]);
    expect(health(B)).to.equal('alive');
    rounds.stop();
  });

  it('waits for firstRoundAfter before its first round, alive meanwhile', async () => {
    const { clock, rounds, net, reports } = setup();
    let announced = () => undefined as void;
    const started = clock.now();
    rounds.start([], new Promise<void>((resolve) => (announced = resolve)));
    await clock.advanceAsync(700);
    expect(net.pings, 'no probe before the announcement settled').to.deep.equal([]);
    expect(rounds.lastRoundAt, 'liveness counts from the start').to.equal(started);
    announced();
    await clock.advanceAsync(10);
    expect(net.pings.map((p) => p.atMs - started)).to.deep.equal([700, 700, 700]);
    await clock.advanceAsync(1_000);
    expect(reports.map((r) => r.round)).to.include(1);
    expect(net.pings).to.have.length(6);
    rounds.stop();
  });

  it('runs no round when stopped while waiting for firstRoundAfter', async () => {
    const second = setup();
    let go = () => undefined as void;
    second.rounds.start([], new Promise<void>((resolve) => (go = resolve)));
    await second.clock.advanceAsync(300);
    second.rounds.stop();
    go();
    await second.clock.advanceAsync(2_000);
    expect(second.net.pings, 'stopped before its first round').to.deep.equal([]);
  });

  it('probeSoon probes a live peer at once, between rounds', async () => {
    const { clock, rounds, behaviour, net, transitions, startAlive } = setup();
    const t0 = await startAlive();
    await clock.advanceAsync(t0 + 1_500 - clock.now());
    const pingsOf = (address: string) =>
      net.pings.filter((p) => p.address === address).map((p) => p.atMs - t0);
    expect(pingsOf(B)).to.deep.equal([0, 1_000]);
    behaviour.set(B, 'refused');
    rounds.probeSoon(B);
    expect(pingsOf(B)).to.deep.equal([0, 1_000, 1_500]);
    await clock.advanceAsync(0);
    expect(transitions(B)).to.deep.equal(SUSPECTED);
    rounds.stop();
  });

  it('probeSoon is a no-op while the peer is being probed', async () => {
    const { clock, rounds, behaviour, net, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'hang');
    await clock.advanceAsync(t0 + 1_200 - clock.now()); // round 2's probe of B still runs
    expect(rounds.snapshot().find((r) => r.address === B)?.health).to.equal('alive');
    const count = () => net.pings.filter((p) => p.address === B).length;
    const pinged = count();
    rounds.probeSoon(B);
    rounds.probeSoon(B);
    expect(count()).to.equal(pinged);
    // Two calls in a row for a peer not in flight: one probe.
    rounds.probeSoon(A);
    rounds.probeSoon(A);
    expect(net.pings.filter((p) => p.address === A && p.atMs === clock.now())).to.have.length(1);
    rounds.stop();
  });

  it('probeSoon is a no-op for suspect, dead and unknown peers, and when not running', async () => {
    const { clock, rounds, behaviour, net, health, transitions, startAlive } = setup({
      peers: [A, B, C, D, E],
      sanity: { check: refusing() },
    });
    rounds.probeSoon(A); // not running yet
    expect(net.pings).to.deep.equal([]);
    const t0 = await startAlive();
    behaviour.set(A, 'hang'); // withheld (silent, and the sanity check fails): stays suspect
    await clock.advanceAsync(t0 + 3_500 - clock.now());
    expect(health(A)).to.equal('suspect');
    expect(transitions(A)).to.deep.equal(WITHHELD);
    const pingsOf = (address: string) =>
      net.pings.filter((p) => p.address === address).map((p) => p.atMs - t0);
    expect(pingsOf(A), 'its confirmation is over: not in flight').to.deep.equal([0, 1_000, 2_200]);
    rounds.setPeers([A, B, C, D, E, F]); // F: not probed yet
    expect(health(F)).to.equal('unknown');
    const before = net.pings.length;
    rounds.probeSoon(A);
    rounds.probeSoon(F);
    rounds.probeSoon('10.0.0.77:8080'); // not a peer
    expect(net.pings.length).to.equal(before);
    rounds.stop();
    rounds.probeSoon(B);
    expect(net.pings.length).to.equal(before);
  });

  it('probeSoon is a no-op for a dead peer', async () => {
    const { clock, rounds, behaviour, net, health, startAlive } = setup();
    const t0 = await startAlive();
    behaviour.set(B, 'refused');
    await clock.advanceAsync(t0 + 2_500 - clock.now()); // died at t0 + 2 s, not in flight
    expect(health(B)).to.equal('dead');
    const before = net.pings.filter((p) => p.address === B).length;
    expect(
      net.pings.filter((p) => p.address === B).map((p) => p.atMs - t0),
      'its confirmation is over: not in flight',
    ).to.deep.equal([0, 1_000, 1_200, 1_400]);
    rounds.probeSoon(B);
    expect(net.pings.filter((p) => p.address === B)).to.have.length(before);
    rounds.probeSoon(A); // a live one is probed
    expect(net.pings.at(-1)).to.deep.equal({ address: A, atMs: clock.now() });
    rounds.stop();
  });

  it('forgets a removed peer and stops probing everything when stopped', async () => {
    const { clock, rounds, net, reports } = setup();
    rounds.start([]);
    await clock.advanceAsync(10);
    rounds.setPeers([A, C]);
    expect(rounds.snapshot().map((r) => r.address)).to.deep.equal([A, C]);
    net.pings.length = 0;
    await clock.advanceAsync(1000);
    expect(net.pings.map((p) => p.address)).to.not.include(B);
    expect(
      reports.map((r) => r.membership),
      'the removal counts in the next round',
    ).to.deep.equal([0, 1]);
    rounds.stop();
    net.pings.length = 0;
    await clock.advanceAsync(5000);
    expect(net.pings).to.deep.equal([]);
    expect(rounds.snapshot()).to.deep.equal([]);
  });
});
