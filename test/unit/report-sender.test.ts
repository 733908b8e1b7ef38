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

  describe('in a large mesh (keeps: a sample and what is not ok)', () => {
    const SAMPLE = '10.0.0.2:8080';
    const OTHER = '10.0.0.3:8080';
    const keeps = (p: ProbedPath) => p.to === SAMPLE || p.state !== 'ok';

    function large(known: ProbedPath[]) {
      const s = new ReportSender({ self: SELF, current: () => known, refreshMs: 5_000, keeps });
      s.reportTo(C);
      const first = s.next(0)!;
      s.settled(first.report, { accepted: true, resync: false });
      return { s, first };
    }
    /** What the report due at `at` tells, taken by the coordinator; null: none is due. */
    const told = (s: ReportSender, at: number) => {
      const next = s.next(at);
      if (!next) return null;
      s.settled(next.report, { accepted: true, resync: false });
      return next.report.paths.map((p) => `${p.to} ${p.state}`);
    };

    it('sends in full only the sample and the paths not ok', () => {
      const { first } = large([path(SAMPLE), path(OTHER), path('10.0.0.4:8080', 'failed')]);
      expect(first.report.paths.map((p) => `${p.to} ${p.state}`)).to.deep.equal([
        `${SAMPLE} ok`,
        '10.0.0.4:8080 failed',
      ]);
    });

    it('tells a path out of the sample when it fails, and unknown once when it works again', () => {
      const { s } = large([path(SAMPLE)]);
      s.changedPath(path(OTHER));
      expect(told(s, 100), 'an ok path out of the sample is not told').to.equal(null);
      s.changedPath(path(OTHER, 'failed'));
      expect(told(s, 200)).to.deep.equal([`${OTHER} failed`]);
      s.changedPath(path(OTHER));
      expect(told(s, 300), 'the coordinator forgets it').to.deep.equal([`${OTHER} unknown`]);
      s.changedPath(path(OTHER));
      expect(told(s, 400), 'once').to.equal(null);
    });
  });

  describe('pace', () => {
    it('sends at most one report a gap, however much changes', () => {
      const s = sender([]);
      s.pace({ gapMs: 1_000, refreshMs: 5_000, spreadMs: 0 });
      s.reportTo(C, 0);
      const first = s.next(1_000)!;
      s.settled(first.report, { accepted: true, resync: false });
      s.changedPath(path('10.0.0.2:8080', 'failed'));
      expect(s.next(1_999)).to.equal(null);
      expect(s.next(2_000)?.report.paths).to.have.length(1);
    });

    it("spreads a new coordinator's first report as paced", () => {
      const at = (random: number) => {
        const s = new ReportSender({
          self: SELF,
          current: () => [],
          refreshMs: 5_000,
          random: () => random,
        });
        s.pace({ gapMs: 2_500, refreshMs: 40_000, spreadMs: 10_000 });
        s.reportTo(C, 0);
        return [s.next(2_499), s.next(2_500)].map((r) => r !== null);
      };
      expect(at(0.25)).to.deep.equal([false, true]);
      expect(at(0)).to.deep.equal([true, false]);
    });

    it('refreshes as seldom as paced', () => {
      const s = sender([]);
      s.pace({ gapMs: 1_000, refreshMs: 20_000, spreadMs: 0 });
      s.reportTo(C, 0);
      s.settled(s.next(1_000)!.report, { accepted: true, resync: false });
      expect(s.next(20_999)).to.equal(null);
      expect(s.next(21_000)?.report.paths).to.deep.equal([]);
    });
  });

  it('answers a coordinator that asks with every path, full, and goes on from it', () => {
    const known = [path('10.0.0.2:8080'), path('10.0.0.3:8080', 'failed')];
    const s = sender(known);
    const pulled = s.pulled(C, 0);
    expect(pulled).to.deep.include({ full: true, epoch: C.epoch, seq: 0 });
    expect(pulled.paths.map((p) => p.to)).to.deep.equal(['10.0.0.2:8080', '10.0.0.3:8080']);
    expect(s.next(1), 'nothing new since').to.equal(null);
    s.changedPath(path('10.0.0.3:8080', 'ok'));
    expect(s.next(2)?.report).to.deep.include({ full: false, seq: 1 });
  });
});
