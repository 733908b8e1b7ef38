// A receiver that answers 429 or 503 with Retry-After is tried again when it asks (in seconds or
// at an HTTP date), not sooner, and never later than a sane bound; the queue's backoff still
// applies when it asks for less, or says nothing usable.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { axiosPoster } from '../../src/delivery/axios-poster.js';
import type { PostResult } from '../../src/delivery/poster.js';
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../src/delivery/retry-after.js';
import { WebhookQueue } from '../../src/delivery/webhook-queue.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { FakePoster, OK, type PostCall } from '../support/fake-poster.js';

const NOW = Date.UTC(2026, 4, 1, 12, 0, 0);
const httpDate = (ms: number) => new Date(ms).toUTCString();

describe('retryAfterMs', () => {
  const cases: [string, string | undefined, number | null][] = [
    ['seconds', '7', 7_000],
    ['zero seconds', '0', 0],
    ['seconds with spaces around', ' 120 ', 120_000],
    ['an HTTP date (IMF-fixdate) 90 s ahead', httpDate(NOW + 90_000), 90_000],
    ['an HTTP date in the past', httpDate(NOW - 60_000), 0],
    ['an RFC 850 date 30 s ahead', 'Friday, 01-May-26 12:00:30 GMT', 30_000],
    ['an asctime date 45 s ahead, read in GMT', 'Fri May  1 12:00:45 2026', 45_000],
    ['more seconds than the bound', '86400', MAX_RETRY_AFTER_MS],
    ['a date further ahead than the bound', httpDate(NOW + 86_400_000), MAX_RETRY_AFTER_MS],
    ['an enormous number of seconds', '9'.repeat(400), MAX_RETRY_AFTER_MS],
    ['no header', undefined, null],
    ['an empty header', '', null],
    ['negative seconds', '-5', null],
    ['decimal seconds', '1.5', null],
    ['a word', 'soon', null],
    ['a date in another format', '2026-05-01T12:01:00Z', null],
    ['a date without its weekday (Date.parse would take it)', '01 May 2026 12:01:00 GMT', null],
  ];
  for (const [label, value, expected] of cases) {
    it(`reads ${label} as ${expected === null ? 'nothing' : `${expected} ms`}`, () => {
      expect(retryAfterMs(value, NOW)).to.equal(expected);
    });
  }
});

describe('the webhook queue honours Retry-After', () => {
  const URL = 'http://receiver.example/hook';
  const limited = (retryAfter?: string, detail = 'HTTP 429'): PostResult => ({
    ok: false,
    retryable: true,
    detail,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  });

  /** A queue whose receiver answers `first` to the first POST and 200 after. */
  function setup(first: PostResult, retryForMs = 3_600_000) {
    const clock = new FakeClock(NOW);
    const poster = new FakePoster(clock, (_call: PostCall, i: number) => (i === 0 ? first : OK));
    const logger = new CapturingLogger();
    const queue = new WebhookQueue({
      url: URL,
      poster,
      clock,
      logger,
      timeoutMs: 5_000,
      retryForMs,
      maxSize: 100,
    });
    queue.enqueue({ kind: 'slack', key: 'k', body: { key: 'k' } });
    return { clock, poster, logger, queue };
  }

  async function retriedAfter(first: PostResult, retryForMs?: number): Promise<number | null> {
    const { clock, poster } = setup(first, retryForMs);
    await clock.advanceAsync(10 * 60_000);
    const [a, b] = poster.calls.map((c) => c.atMs);
    return a === undefined || b === undefined ? null : b - a;
  }

  it('waits the seconds a 429 asks for, rather than its 0.5 s backoff', async () => {
    expect(await retriedAfter(limited('7'))).to.equal(7_000);
  });

  it('waits until the HTTP date a 503 names', async () => {
    expect(await retriedAfter(limited(httpDate(NOW + 42_000), 'HTTP 503'))).to.equal(42_000);
  });

  it('keeps its own backoff when the receiver asks for less, or for nothing it can read', async () => {
    expect(await retriedAfter(limited('0'))).to.equal(500);
    expect(await retriedAfter(limited('soon'))).to.equal(500);
    expect(await retriedAfter(limited())).to.equal(500);
  });

  it('waits at most MAX_RETRY_AFTER_MS, whatever the receiver asks', async () => {
    expect(await retriedAfter(limited('86400'))).to.equal(MAX_RETRY_AFTER_MS);
  });

  it('gives an event up when the wait asked for ends past WEBHOOK_RETRY_FOR', async () => {
    const { clock, poster, queue, logger } = setup(limited('120'), 60_000);
    await clock.advanceAsync(10 * 60_000);
    expect(poster.calls).to.have.length(1);
    expect(queue.counts['given-up']).to.equal(1);
    expect(logger.at('error').map((r) => r.msg)).to.include('webhook given up after retries');
  });

  it('logs the wait asked for with the retry', async () => {
    const { clock, logger } = setup(limited('7'));
    await clock.advanceAsync(0);
    const retry = logger.at('warn').find((r) => r.msg === 'webhook failed; will retry');
    expect(retry?.fields).to.include({ retryInMs: 7_000, retryAfterMs: 7_000 });
  });
});

describe('axiosPoster and Retry-After', function () {
  this.timeout(10_000);
  let server: Server;
  let url: string;
  /** What the test server answers next. */
  let answer = { status: 200, headers: {} as Record<string, string> };

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(answer.status, answer.headers).end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const poster = axiosPoster('knh-test');
  const post = async (status: number, headers: Record<string, string>) => {
    answer = { status, headers };
    return poster.post(url, { key: 'k' }, 5_000);
  };

  it("passes on a 429's and a 503's Retry-After", async () => {
    expect(await post(429, { 'retry-after': '7' })).to.deep.equal({
      ok: false,
      retryable: true,
      detail: 'HTTP 429',
      retryAfter: '7',
    });
    const date = httpDate(NOW);
    expect(await post(503, { 'retry-after': date })).to.deep.include({ retryAfter: date });
  });

  it('takes no Retry-After from other answers', async () => {
    expect(await post(500, { 'retry-after': '7' })).to.not.have.property('retryAfter');
    expect(await post(400, { 'retry-after': '7' })).to.not.have.property('retryAfter');
    expect(await post(429, {})).to.not.have.property('retryAfter');
  });
});
