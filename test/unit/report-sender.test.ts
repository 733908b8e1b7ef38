// What a node tells its coordinator of its paths: every path when the coordinator has none (a new
// term, or it asks), only what changed otherwise, nothing lost when a report fails, and a report
// now and then while nothing changes.
import { expect } from 'chai';
import type { ProbedPath } from '../../src/paths/pair-prober.js';
import { NO_SAMPLES } from '../../src/paths/path-window.js';
import { MAX_REPORTED_PATHS, ReportSender } from '../../src/paths/report-sender.js';

const SELF = { id: 'a@10.0.0.1', address: '10.0.0.1:8080' };
const C = { address: '10.0.0.9:8080', epoch: 3 };

const path = (to: string, state: ProbedPath['state'] = 'ok', sinceMs = 1_000): ProbedPath => ({
  to,
  state,
  sinceMs,
  stats: { ...NO_SAMPLES, samples: 4 },
});

function sender(known: ProbedPath[]) {
  return new ReportSender({ self: SELF, current: () => known, refreshMs: 5_000 });
}

describe('ReportSender', () => {
  it('sends every path, full, to a new coordinator, then only what changed', () => {
    const known = [path('10.0.0.2:8080'), path('10.0.0.3:8080')];
    const s = sender(known);
    s.reportTo(C);
    const first = s.next(0);
    expect(first?.to).to.equal(C.address);
    expect(first?.report).to.deep.include({ full: true, epoch: 3, seq: 0, from: SELF });
    expect(first?.report.paths.map((p) => p.to)).to.deep.equal(['10.0.0.2:8080', '10.0.0.3:8080']);
    s.settled(first!.report, { accepted: true, resync: false });

    expect(s.next(100), 'nothing changed').to.equal(null);
    s.changedPath(path('10.0.0.3:8080', 'failed', 2_000));
    const second = s.next(200);
    expect(second?.report.full).to.equal(false);
    expect(second?.report.seq).to.equal(1);
    expect(second?.report.paths).to.deep.equal([
      {
        to: '10.0.0.3:8080',
        state: 'failed',
        since: 2_000,
        samples: 4,
        loss_ratio: 0,
        p50_ms: null,
        p99_ms: null,
      },
    ]);
  });

  it('sends nothing without a coordinator, and one report at a time', () => {
    const s = sender([path('10.0.0.2:8080')]);
    expect(s.next(0)).to.equal(null);
    s.reportTo(C);
    const first = s.next(0);
    s.changedPath(path('10.0.0.2:8080', 'failed'));
    expect(s.next(1), 'the first is on its way').to.equal(null);
    s.settled(first!.report, { accepted: true, resync: false });
    expect(s.next(2)?.report.paths[0]?.state).to.equal('failed');
  });

  it('tells again what a failed report carried, but not over a newer change', () => {
    const s = sender([]);
    s.reportTo(C);
    s.settled(s.next(0)!.report, { accepted: true, resync: false });
    s.changedPath(path('10.0.0.2:8080', 'failed'));
    s.changedPath(path('10.0.0.3:8080', 'degraded'));
    const lost = s.next(10)!;
    s.changedPath(path('10.0.0.3:8080', 'ok', 5_000));
    s.settled(lost.report, null);
    const again = s.next(20)!;
    expect(again.report.seq, 'a new seq: the coordinator sees a gap if it missed one').to.equal(
      lost.report.seq + 1,
    );
    expect(again.report.paths.map((p) => `${p.to} ${p.state}`)).to.have.members([
      '10.0.0.2:8080 failed',
      '10.0.0.3:8080 ok',
    ]);
  });

  it('sends everything again when the coordinator asks (resync) or changes', () => {
    const known = [path('10.0.0.2:8080')];
    const s = sender(known);
    s.reportTo(C);
    s.settled(s.next(0)!.report, { accepted: true, resync: false });
    s.changedPath(path('10.0.0.2:8080', 'failed'));
    s.settled(s.next(1)!.report, { accepted: true, resync: true });
    expect(s.next(2)?.report.full).to.equal(true);

    s.reportTo({ address: C.address, epoch: 4 });
    const next = s.next(3);
    expect(next?.report).to.deep.include({ full: true, epoch: 4 });
  });

  it('still reports now and then while nothing changes', () => {
    const s = sender([]);
    s.reportTo(C);
    s.settled(s.next(0)!.report, { accepted: true, resync: false });
    expect(s.next(4_999)).to.equal(null);
    const refresh = s.next(5_000);
    expect(refresh?.report).to.deep.include({ full: false, paths: [] });
  });

  it(`carries at most ${MAX_REPORTED_PATHS} paths a report, the rest in the next`, () => {
    const known = Array.from({ length: MAX_REPORTED_PATHS + 5 }, (_, i) =>
      path(`10.0.${Math.floor(i / 250)}.${(i % 250) + 1}:8080`),
    );
    const s = sender(known);
    s.reportTo(C);
    const first = s.next(0)!;
    expect(first.report.paths).to.have.length(MAX_REPORTED_PATHS);
    s.settled(first.report, { accepted: true, resync: false });
    const rest = s.next(1)!;
    expect(rest.report).to.deep.include({ full: false });
    expect(rest.report.paths).to.have.length(5);
  });
});
