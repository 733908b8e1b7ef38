// A view served from a snapshot: built at most once per maxAgeMs on the injected clock, one build
// shared by the requests that wait for it, a failed build not kept, and If-None-Match read right.
import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { acceptsGzip, matches, Snapshot } from '../../src/http/snapshot.js';

describe('Snapshot', () => {
  let t = 0;
  let builds = 0;
  let fail = false;
  let release: (() => void) | null = null;
  const snapshot = () =>
    new Snapshot({
      now: () => t,
      maxAgeMs: 1_000,
      build: async () => {
        builds++;
        if (release === null) await Promise.resolve();
        else await new Promise<void>((r) => (release = r));
        if (fail) throw new Error('a bug in the view');
        return { status: 200, contentType: 'text/plain', body: `build ${builds}` };
      },
    });

  beforeEach(() => {
    t = 0;
    builds = 0;
    fail = false;
    release = null;
  });

  it('shares one build between the requests that wait for it', async () => {
    const s = snapshot();
    release = () => undefined;
    const waiting = [s.get(), s.get(), s.get()];
    release();
    const got = await Promise.all(waiting);
    expect(builds).to.equal(1);
    expect(new Set(got.map((b) => b.body.toString()))).to.deep.equal(new Set(['build 1']));
  });

  it('serves the last build until maxAgeMs has passed, then builds anew', async () => {
    const s = snapshot();
    const first = await s.get();
    t = 999;
    expect(await s.get()).to.equal(first);
    t = 1_000;
    expect((await s.get()).body.toString()).to.equal('build 2');
  });

  it('serves a costly build longer: building takes at most a hundredth of the time', async () => {
    let cost = 50;
    const s = new Snapshot({
      now: () => t,
      maxAgeMs: 1_000,
      build: () => {
        builds++;
        t += cost; // the build's own time, on the injected clock
        return Promise.resolve({ status: 200, contentType: 'text/plain', body: `build ${builds}` });
      },
    });
    await s.get(); // built from 0 to 50: the first build, served for maxAgeMs only
    t = 1_000;
    expect((await s.get()).body.toString()).to.equal('build 2');
    // A second costly one in a row (from 1,000 to 1,050): served until 1,000 + 100 × 50.
    t = 5_999;
    expect((await s.get()).body.toString()).to.equal('build 2');
    t = 6_000;
    cost = 5; // cheap again: back to maxAgeMs
    expect((await s.get()).body.toString()).to.equal('build 3');
    t = 7_000;
    expect((await s.get()).body.toString()).to.equal('build 4');
    cost = 60_000; // a wall clock's jump mid-build, twice: not a cost to serve for long
    t = 8_000;
    expect((await s.get()).body.toString()).to.equal('build 5');
    t = 69_000;
    expect((await s.get()).body.toString()).to.equal('build 6');
    t += 10_000;
    expect(builds).to.equal(6);
    expect((await s.get()).body.toString()).to.equal('build 7');
  });

  it('keeps no failed build: the next request tries again', async () => {
    const s = snapshot();
    fail = true;
    let error: unknown = null;
    await s.get().catch((e: unknown) => (error = e));
    expect(error).to.be.instanceOf(Error);
    fail = false;
    expect((await s.get()).body.toString()).to.equal('build 2');
  });

  it('gives equal bodies equal ETags, and reads If-None-Match lists and weak tags', async () => {
    const s = snapshot();
    const { etag } = await s.get();
    expect(matches(etag, etag)).to.equal(true);
    expect(matches(`"other", W/${etag}`, etag)).to.equal(true);
    expect(matches('*', etag)).to.equal(true);
    expect(matches('"other"', etag)).to.equal(false);
    expect(matches(undefined, etag)).to.equal(false);
  });

  it('keeps a large body gzipped too, the same bytes once unzipped; a small one as it is', async () => {
    const big = JSON.stringify({
      peers: Array.from({ length: 2_000 }, (_, i) => ({ i, s: 'alive' })),
    });
    const of = (body: string) =>
      new Snapshot({
        now: () => 0,
        maxAgeMs: 1_000,
        build: () => Promise.resolve({ status: 200, contentType: 'application/json', body }),
      }).get();
    const large = await of(big);
    expect(large.gzipped).to.not.equal(null);
    expect(large.gzipped!.length).to.be.below(large.body.length / 3);
    expect(gunzipSync(large.gzipped!).toString()).to.equal(big);
    expect((await of('{"small":true}')).gzipped).to.equal(null);
  });

  it('reads Accept-Encoding: gzip taken unless refused with q=0', () => {
    const cases: [string | undefined, boolean][] = [
      ['gzip, deflate, br', true],
      ['br;q=1.0, gzip;q=0.8', true],
      ['*', true],
      ['gzip;q=0', false],
      ['identity', false],
      ['deflate', false],
      [undefined, false],
    ];
    for (const [header, takes] of cases)
      expect(acceptsGzip(header), String(header)).to.equal(takes);
  });
});
