// The coordinator's findings from every node's path reports: a finding found long enough opens a
// warning and closes with its resolution; one naming a node the coordinator's own verdicts do not
// hold alive is theirs to tell (peer_dead), never a warning; reports of another term are refused;
// a new term starts from an empty book.
import { expect } from 'chai';
import { PathFindings, type ElectionView } from '../../src/node/path-findings.js';
import type { PathReport, ReportedPath } from '../../src/wire/peer-messages.js';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
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
  /** What each node answers when asked for its paths (absent: it fails). */
  const answers = new Map<string, PathReport>();
  const asked: string[] = [];
  const findings = new PathFindings({
    self: { id: `k@${K}`, address: K },
    clock,
    logger: new CapturingLogger(),
    election: () => election.view,
    reporter: { onFinding: (p) => sent.push(p) },
    verdictOf: (address) => ({ id: `n@${address}`, alive: !dead.has(address) }),
    protocolOf: () => 3,
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
  return { clock, sent, election, dead, findings, answers, asked };
}

describe('PathFindings', () => {
  it('opens path_broken between two followers, a warning naming both, and resolves it', () => {
    const t = coordinator();
    for (const r of reports(3, [`${A}>${B}`])) t.findings.take(r);
    t.findings.round(NODES);
    expect(t.sent.map((p) => [p.event, p.severity, p.path?.from, p.path?.to])).to.deep.equal([
      ['path_broken', 'warning', `n@${A}`, `n@${B}`],
    ]);
    for (const r of reports(3)) t.findings.take({ ...r, seq: 1, full: false });
    t.clock.advance(1_000);
    t.findings.round(NODES);
    expect(t.sent, 'not yet: a finding closes after 10 s unfound').to.have.length(1);
    t.clock.advance(10_000);
    t.findings.round(NODES);
    expect(t.sent.map((p) => p.event)).to.deep.equal(['path_broken', 'path_restored']);
    expect(t.sent[1]!.dedup_key.replace(/:path-restored$/, '')).to.equal(
      t.sent[0]!.dedup_key.replace(/:path-broken$/, ''),
    );
  });

  it('leaves a finding naming a node its verdicts do not hold alive to them', () => {
    const t = coordinator();
    t.dead.add(B);
    for (const r of reports(3, [`${A}>${B}`])) t.findings.take(r);
    t.findings.round(NODES);
    expect(t.sent).to.deep.equal([]);
    expect(
      t.findings.findings.map((f) => f.kind),
      'found all the same',
    ).to.deep.equal(['path-broken']);
  });

  it('refuses reports of another term, and while it does not lead', () => {
    const t = coordinator();
    const [first] = reports(2);
    expect(t.findings.take(first!)).to.deep.equal({ accepted: false, resync: false });
    t.election.view = { ...t.election.view, role: 'follower' };
    const [now] = reports(3);
    expect(t.findings.take(now!)).to.deep.equal({ accepted: false, resync: false });
  });

  it('starts a new term from an empty book, and finds nothing it was told in the last', () => {
    const t = coordinator();
    for (const r of reports(3, [`${A}>${B}`])) t.findings.take(r);
    t.findings.round(NODES);
    expect(t.findings.book.size.paths).to.equal(20);
    t.election.view = { ...t.election.view, epoch: 4 };
    t.findings.round(NODES);
    expect(t.findings.book.size.paths).to.equal(0);
    expect(t.findings.findings).to.deep.equal([]);
    expect(t.findings.open()).to.deep.equal([]);
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
});
