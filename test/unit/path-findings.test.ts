// The coordinator's findings from every node's path reports: a finding found long enough opens a
// warning and closes with its resolution; one naming a node the coordinator's own verdicts do not
// hold alive is theirs to tell (peer_dead), never a warning; reports of another term are refused;
// a new term starts from an empty book.
import { expect } from 'chai';
import { PathFindings, type ElectionView } from '../../src/node/path-findings.js';
import type { PathReport, ReportedPath } from '../../src/wire/peer-messages.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { alertOf } from '../../src/alerts/lifecycle.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock, flushMicrotasks } from '../support/fake-clock.js';

const [K, A, B, C, D] = [1, 2, 3, 4, 5].map((i) => `10.0.0.${i}:8080`) as [
  string,
  string,
  string,
  string,
  string,
];
const NODES = [K, A, B, C, D];
/** PATH_WINDOW and DEGRADED_FOR, as the coordinator is told them. */
const QUALITY_MEMORY_MS = 20_000;

const path = (to: string, state: ReportedPath['state']): ReportedPath => ({
  to,
  state,
  since: 1_000,
  samples: 10,
  loss_ratio: state === 'failed' ? 1 : 0,
  p50_ms: 1,
  p99_ms: 2,
});

/** Every node's paths to every other, ok but for `failed` and `degraded` (as "from>to"). */
function reports(epoch: number, failed: string[] = [], degraded: string[] = []): PathReport[] {
  const stateOf = (key: string) =>
    failed.includes(key) ? 'failed' : degraded.includes(key) ? 'degraded' : 'ok';
  return NODES.map((from) => ({
    from: { id: `n@${from}`, address: from },
    epoch,
    seq: 0,
    full: true,
    paths: NODES.filter((to) => to !== from).map((to) => path(to, stateOf(`${from}>${to}`))),
  }));
}

function coordinator() {
  const clock = new FakeClock();
  const sent: PeerStatusPayload[] = [];
  const election: { view: ElectionView } = {
    view: { role: 'coordinator', epoch: 3, coordinator: { id: `k@${K}`, address: K } },
  };
  const dead = new Set<string>();
  const suspect = new Set<string>();
  /** Nodes not judged yet (new to this coordinator). */
  const unjudged = new Set<string>();
  /** Nodes the coordinator's own path to is broken (others reach them). */
  const cut = new Set<string>();
  /** What each node answers when asked for its paths (absent: it fails). */
  const answers = new Map<string, PathReport>();
  const asked: string[] = [];
  const findings = new PathFindings({
    self: { id: `k@${K}`, address: K },
    clock,
    logger: new CapturingLogger(),
    election: () => election.view,
    reporter: { onFinding: (p) => sent.push(p) },
    // As the prober keeps them: a verdict for every peer, none for this node itself.
    verdictOf: (address) =>
      address === K
        ? undefined
        : {
            id: `n@${address}`,
            health: dead.has(address)
              ? 'dead'
              : suspect.has(address)
                ? 'suspect'
                : unjudged.has(address)
                  ? 'unknown'
                  : 'alive',
            pathBroken: cut.has(address),
          },
    protocolOf: () => 3,
    perRound: 20,
    roundIntervalMs: 1_000,
    qualityMemoryMs: () => QUALITY_MEMORY_MS,
    transport: {
      pullPaths: (address) => {
        asked.push(address);
        const report = answers.get(address);
        return Promise.resolve(
          report
            ? { ok: true, value: report, latencyMs: 1 }
            : { ok: false, reason: 'timeout', phase: 'send', detail: 'no answer', latencyMs: 1 },
        );
      },
    },
  });
  // Its term confirmed, with nothing open left by a predecessor.
  findings.inherit([], [], NODES.length);
  return { clock, sent, election, dead, suspect, unjudged, cut, findings, answers, asked };
}

describe('PathFindings', () => {
  it('opens path_broken between two followers, a warning naming both, and resolves it', () => {
    const t = coordinator();
    for (const r of reports(3, [`${A}>${B}`, `${B}>${A}`])) t.findings.take(r);
    t.findings.round(NODES);
    expect(
      t.sent,
      "not in the term's first round: its first reports are still coming",
    ).to.deep.equal([]);
    t.clock.advance(2_000);
    t.findings.round(NODES);
    expect(t.sent.map((p) => [p.event, p.severity, p.path?.from, p.path?.to])).to.deep.equal([
      ['path_broken', 'warning', `n@${A}`, `n@${B}`],
      ['path_broken', 'warning', `n@${B}`, `n@${A}`],
    ]);
    for (const r of reports(3)) t.findings.take({ ...r, seq: 1, full: false });
    t.clock.advance(1_000);
    t.findings.round(NODES);
    expect(t.sent, 'not yet: a finding closes after 10 s unfound').to.have.length(2);
    t.clock.advance(10_000);
    t.findings.round(NODES);
    expect(t.sent.map((p) => p.event)).to.deep.equal([
      'path_broken',
      'path_broken',
      'path_restored',
      'path_restored',
    ]);
    expect(t.sent[2]!.dedup_key.replace(/:path-restored$/, '')).to.equal(
      t.sent[0]!.dedup_key.replace(/:path-broken$/, ''),
    );
  });

  it('names the coordinator by its id and node name in a finding about it, not by its bare address', () => {
    const t = coordinator();
    for (const r of reports(3, [`${A}>${K}`])) t.findings.take(r);
    t.findings.round(NODES);
    t.clock.advance(2_000);
    t.findings.round(NODES);
    const [broken] = t.sent;
    expect(broken?.event).to.equal('path_broken');
    expect(broken?.path?.to).to.equal(`k@${K}`);
    expect(broken?.peer).to.include({ id: `k@${K}`, node_name: 'k', address: K });
    expect(broken?.reason).to.match(/^n cannot reach k,/);
  });

  it('judges a path reported failed at once, not at the next round; once between two rounds', () => {
    const t = coordinator();
    for (const r of reports(3)) t.findings.take(r);
    t.findings.round(NODES);
    t.clock.advance(2_000);
    t.findings.round(NODES);
    /** Each node's paths that changed since its last report (seq), only. */
    const changes = (seq: number, failed: string[]) =>
      reports(3, failed).map((r) => ({
        ...r,
        seq,
        full: false,
        paths: r.paths.filter((p) => failed.includes(`${r.from.address}>${p.to}`)),
      }));
    for (const r of changes(1, [`${A}>${B}`, `${B}>${A}`])) t.findings.take(r);
    expect(t.sent, 'judged in a moment, not while the report is taken').to.deep.equal([]);
    t.clock.advance(0);
    expect(events(t), 'before the next round').to.deep.equal([
      `path_broken ${B}`,
      `path_broken ${A}`,
    ]);
    for (const r of changes(2, [`${C}>${D}`, `${D}>${C}`])) t.findings.take(r);
    t.clock.advance(0);
    expect(events(t), 'one early judgement a round').to.have.length(2);
    t.clock.advance(1_000);
    t.findings.round(NODES);
    expect(events(t)).to.have.length(4);
  });

  it('leaves a finding naming a node its verdicts do not hold alive to them', () => {
    const t = coordinator();
    t.dead.add(B);
    for (const r of reports(3, [`${A}>${B}`])) t.findings.take(r);
    t.clock.advance(2_000);
    t.findings.round(NODES);
    expect(t.sent).to.deep.equal([]);
    expect(
      t.findings.findings.map((f) => f.kind),
      'its paths count for nothing while it is not alive',
    ).to.deep.equal([]);
  });

  for (const [what, mark] of [
    ['dead', 'dead'],
    ['suspect', 'suspect'],
  ] as const) {
    it(`blames no survivor for its paths to nodes ${what}: 3 of 5 down at once`, () => {
      const t = coordinator();
      for (const r of reports(3)) t.findings.take(r);
      t.findings.round(NODES);
      t.clock.advance(2_000);
      t.findings.round(NODES);
      // B, C and D crash. A's paths to them fail first; the coordinator's own still show ok (its
      // pair probes have not failed 3 times yet), and the dead's last reports say they reach A.
      for (const n of [B, C, D]) (mark === 'dead' ? t.dead : t.suspect).add(n);
      t.findings.take({
        from: { id: `n@${A}`, address: A },
        epoch: 3,
        seq: 1,
        full: false,
        paths: [B, C, D].map((to) => path(to, 'failed')),
      });
      for (let i = 0; i < 15; i++) {
        t.clock.advance(1_000);
        t.findings.round(NODES);
      }
      expect(
        t.findings.findings.filter((f) => f.kind !== 'path-broken' && f.kind !== 'unreachable'),
        'no egress, partition or quality finding',
      ).to.deep.equal([]);
      expect(
        t.sent.map((p) => `${p.event} ${p.peer.address}`),
        "nothing sent: their deaths are the verdicts' to tell",
      ).to.deep.equal([]);
    });
  }

  it('refuses reports of another term, and while it does not lead', () => {
    const t = coordinator();
    const [first] = reports(2);
    expect(t.findings.take(first!)).to.deep.equal({ accepted: false, resync: false });
    t.election.view = { ...t.election.view, role: 'follower' };
    const [now] = reports(3);
    expect(t.findings.take(now!)).to.deep.equal({ accepted: false, resync: false });
  });

  it('starts a term after another node led from an empty book; leading on at a newer epoch keeps all', () => {
    const t = coordinator();
    for (const r of reports(3, [`${A}>${B}`, `${B}>${A}`])) t.findings.take(r);
    t.clock.advance(2_000);
    t.findings.round(NODES);
    expect(t.findings.open()).to.have.length(2);
    t.election.view = { ...t.election.view, epoch: 4 };
    t.findings.round(NODES);
    expect(t.findings.book.size.paths, 'renewed').to.equal(20);
    expect(t.findings.open()).to.have.length(2);
    t.election.view = { ...t.election.view, role: 'follower', epoch: 5 };
    t.findings.round(NODES);
    t.election.view = { ...t.election.view, role: 'coordinator', epoch: 6 };
    t.findings.round(NODES);
    expect(t.findings.book.size.paths).to.equal(0);
    expect(t.findings.findings).to.deep.equal([]);
    expect(t.findings.open()).to.deep.equal([]);
    // Until its term is confirmed (and what it inherits known), nothing opens.
    for (const r of reports(6, [`${A}>${B}`, `${B}>${A}`])) t.findings.take(r);
    t.clock.advance(5_000);
    t.findings.round(NODES);
    expect(t.findings.open(), 'not confirmed yet').to.deep.equal([]);
    t.findings.inherit([], [], NODES.length);
    t.findings.round(NODES);
    expect(t.findings.open()).to.have.length(2);
  });

  it('asks a live node whose reports stopped coming for its paths, and finds its egress cut from the answer', async () => {
    const t = coordinator();
    const all = reports(3);
    // D's reports never come (it cannot open connections); the others' show they reach D.
    for (const r of all) if (r.from.address !== D) t.findings.take(r);
    const cut = reports(
      3,
      NODES.filter((n) => n !== D).map((n) => `${D}>${n}`),
    );
    t.answers.set(D, { ...cut.find((r) => r.from.address === D)!, seq: 5 });
    t.findings.round(NODES);
    expect(t.asked, 'not before two refreshes').to.deep.equal([]);
    t.clock.advance(10_000);
    for (const r of all) if (r.from.address !== D) t.findings.take({ ...r, seq: 1, full: false });
    t.findings.round(NODES);
    expect(t.asked).to.deep.equal([D]);
    await flushMicrotasks();
    t.clock.advance(1_000);
    t.findings.round(NODES);
    expect(t.sent.map((p) => [p.event, p.peer.address])).to.deep.equal([['egress_broken', D]]);
    t.clock.advance(1_000);
    t.findings.round(NODES);
    expect(t.asked, 'once a half of two refreshes').to.deep.equal([D]);
  });

  it('waits longer with degraded paths that share a node: its node finding may explain them', () => {
    const opened = (degraded: string[]) => {
      const t = coordinator();
      const at: Record<string, number> = {};
      for (let s = 0; s <= 40; s++) {
        // The nodes report all along (a full report is as good as a refresh).
        if (s % 5 === 0) for (const r of reports(3, [], degraded)) t.findings.take(r);
        t.findings.round(NODES);
        for (const p of t.sent) at[`${p.event} ${p.path?.from}>${p.path?.to}`] ??= s;
        t.clock.advance(1_000);
      }
      return at;
    };
    expect(opened([`${A}>${B}`]), 'alone').to.deep.equal({
      [`path_degraded n@${A}>n@${B}`]: 8,
    });
    expect(opened([`${A}>${D}`, `${B}>${D}`]), 'both into D').to.deep.equal({
      [`path_degraded n@${A}>n@${D}`]: 30,
      [`path_degraded n@${B}>n@${D}`]: 30,
    });
  });

  /** Rounds a second apart, the nodes reporting `failed` (and `degraded`) all along. */
  function run(
    t: ReturnType<typeof coordinator>,
    seconds: number,
    failed: string[] = [],
    degraded: string[] = [],
  ) {
    for (let i = 0; i < seconds; i++) {
      if (i % 5 === 0) {
        for (const r of reports(t.election.view.epoch, failed, degraded)) t.findings.take(r);
      }
      t.findings.round(NODES);
      t.clock.advance(1_000);
    }
  }
  const events = (t: ReturnType<typeof coordinator>) =>
    t.sent.map((p) => `${p.event} ${p.peer.address}`);

  it('waits two rounds more with a path broken one way only: random loss fails one path alone', () => {
    const t = coordinator();
    t.clock.advance(2_000);
    run(t, 2, [`${A}>${B}`]);
    expect(t.sent, 'one way, one round').to.deep.equal([]);
    run(t, 2, [`${A}>${B}`]);
    expect(events(t)).to.deep.equal([`path_broken ${B}`]);
  });

  it('holds findings about a node back lately until its paths were probed again', () => {
    const t = coordinator();
    t.dead.add(D);
    run(t, 3);
    t.dead.delete(D);
    // Back: the paths into it recover one prober at a time.
    run(t, 5, [`${A}>${D}`]);
    expect(t.sent, 'a cover, the failures and a report: 6 s at this size').to.deep.equal([]);
    run(t, 4, [`${A}>${D}`]);
    expect(events(t), 'still broken once settled').to.deep.equal([`path_broken ${D}`]);
  });

  it('tells a lossy node degraded though its probes fail now and then, but not its failures', () => {
    const intoAndFromD = NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]);
    const t = coordinator();
    t.clock.advance(2_000);
    // All of one probe's retries lost: suspect for a round, every few seconds.
    for (let s = 0; s < 3; s++) {
      t.suspect.add(D);
      run(t, 1, [], intoAndFromD);
      t.suspect.delete(D);
      run(t, 2, [], intoAndFromD);
    }
    expect(events(t), 'its paths did not fail: nothing to wait for').to.deep.equal([
      `peer_degraded ${D}`,
    ]);

    const u = coordinator();
    u.clock.advance(2_000);
    u.suspect.add(D);
    run(u, 2);
    u.suspect.delete(D);
    // Back (a restart quicker than a verdict): the paths into it recover one prober at a time.
    run(u, 5, [`${A}>${D}`]);
    expect(u.sent, 'its failures wait for its paths to be probed again').to.deep.equal([]);
    run(u, 4, [`${A}>${D}`]);
    expect(events(u), 'still broken once settled').to.deep.equal([`path_broken ${D}`]);
  });

  it('does not tell a node degraded for the probes lost while it was down: a link that flapped', () => {
    const intoD = NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]);
    const t = coordinator();
    t.clock.advance(2_000);
    // Down and up three times; each time back, its paths' windows still hold the lost probes.
    for (let s = 0; s < 3; s++) {
      t.dead.add(D);
      run(t, 3, intoD);
      t.dead.delete(D);
      run(t, 3, [], intoD);
    }
    // Back for good: its paths read degraded until the lost probes leave their windows.
    run(t, 8, [], intoD);
    expect(t.sent, 'within a settling time and a window of its last death').to.deep.equal([]);
    run(t, 8);
    expect(t.sent, 'its figures clean once the window passed').to.deep.equal([]);

    // Degraded still once the window has passed: it is, and is told.
    const u = coordinator();
    u.clock.advance(2_000);
    u.dead.add(D);
    run(u, 3, intoD);
    u.dead.delete(D);
    run(u, 20, [], intoD);
    expect(u.sent).to.deep.equal([]);
    run(u, 10, [], intoD);
    expect(events(u)).to.deep.equal([`peer_degraded ${D}`]);
  });

  it('tells a node degraded as soon as its paths settle when it was only not judged yet, not dead', () => {
    const intoAndFromD = NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]);
    const t = coordinator();
    t.clock.advance(2_000);
    // A coordinator's first rounds: D not judged yet, having lost nothing.
    t.unjudged.add(D);
    run(t, 2, [], intoAndFromD);
    t.unjudged.delete(D);
    run(t, 12, [], intoAndFromD);
    expect(events(t), 'within a settling time, not a window more').to.deep.equal([
      `peer_degraded ${D}`,
    ]);
  });

  it('does not tell the path between the coordinator and a node degraded for a cut it judged broken', () => {
    const t = coordinator();
    t.clock.advance(2_000);
    // The coordinator's path to D broken and healed, three times: D's probes of it lost then.
    for (let s = 0; s < 3; s++) {
      t.cut.add(D);
      run(t, 4, [], [`${D}>${K}`]);
      t.cut.delete(D);
      run(t, 3, [], [`${D}>${K}`]);
    }
    run(t, 20, [], [`${D}>${K}`]);
    expect(t.sent, 'within a settling time and its memory of the cut').to.deep.equal([]);
    // Still degraded long after: it is.
    run(t, 20, [], [`${D}>${K}`]);
    expect(events(t)).to.have.length(1);
    expect(t.sent[0]!.event).to.equal('path_degraded');
  });

  it('judges a node degraded as ever while only its path from the coordinator stays cut', () => {
    const intoAndFromD = NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]);
    const t = coordinator();
    t.clock.advance(2_000);
    // A NetworkPolicy refusing the coordinator: the cut lasts; D's other paths are lossy.
    t.cut.add(D);
    run(t, 15, [], intoAndFromD);
    expect(events(t)).to.deep.equal([`peer_degraded ${D}`]);
  });

  it('keeps a finding open while a node it names is down, rather than telling it over', () => {
    const t = coordinator();
    t.clock.advance(2_000);
    run(t, 5, [`${A}>${B}`, `${B}>${A}`]);
    expect(events(t)).to.have.length(2);
    t.dead.add(B);
    run(t, 30);
    expect(events(t), 'nothing more while B is down').to.have.length(2);
  });

  it('closes a finding naming a node that left the mesh, saying so', () => {
    const t = coordinator();
    t.clock.advance(2_000);
    run(t, 3, [`${A}>${B}`, `${B}>${A}`]);
    const left = NODES.filter((n) => n !== B);
    for (let i = 0; i < 12; i++) {
      t.findings.round(left);
      t.clock.advance(1_000);
    }
    const closings = t.sent.filter((p) => p.event === 'path_restored');
    // Every node here is named `n` (its id n@address): B's name.
    expect(closings.map((p) => p.reason)).to.deep.equal([
      'no longer judged: n left the mesh',
      'no longer judged: n left the mesh',
    ]);
  });

  describe('a new coordinator', () => {
    /** What a predecessor's open degraded-node incident looks like to its successor. */
    function predecessorsOpen() {
      const p = coordinator();
      p.clock.advance(2_000);
      for (let i = 0; i < 3; i++) {
        for (const r of reports(
          3,
          [],
          NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]),
        )) {
          p.findings.take(r);
        }
        p.findings.round(NODES);
        p.clock.advance(1_000);
      }
      const opening = p.sent.find((e) => e.event === 'peer_degraded')!;
      return { opening, alert: alertOf(opening) };
    }

    it('shares what it opened as alerts, as its opening told it: what a successor takes over', () => {
      const { opening, alert } = predecessorsOpen();
      expect(alert.key).to.equal(opening.dedup_key.replace(/:degraded$/, ''));
      const t = coordinator();
      t.findings.inherit([alert], [], NODES.length);
      expect(t.findings.openAlerts()).to.deep.equal([alert]);
    });

    it('closes an incident it inherited open under its own key when it does not find it', () => {
      const { opening, alert } = predecessorsOpen();
      const t = coordinator();
      t.election.view = { ...t.election.view, epoch: 4 };
      t.findings.inherit([alert], [], NODES.length);
      run(t, 15);
      expect(events(t)).to.deep.equal([`peer_healthy ${D}`]);
      expect(t.sent[0]!.dedup_key.replace(/:healthy$/, '')).to.equal(
        opening.dedup_key.replace(/:degraded$/, ''),
      );
    });

    it('tells nothing of an inherited incident it finds too, and closes it when over', () => {
      const { opening, alert } = predecessorsOpen();
      const t = coordinator();
      t.election.view = { ...t.election.view, epoch: 4 };
      t.findings.inherit([], [opening], NODES.length);
      const degraded = NODES.filter((n) => n !== D).flatMap((n) => [`${n}>${D}`, `${D}>${n}`]);
      for (let i = 0; i < 20; i++) {
        for (const r of reports(4, [], degraded)) t.findings.take(r);
        t.findings.round(NODES);
        t.clock.advance(1_000);
      }
      expect(t.sent, 'found again: it is open already').to.deep.equal([]);
      expect(t.findings.isOpen(opening)).to.equal(true);
      run(t, 15);
      expect(events(t)).to.deep.equal([`peer_healthy ${D}`]);
      expect(alert.key).to.equal(opening.dedup_key.replace(/:degraded$/, ''));
    });
  });
});
