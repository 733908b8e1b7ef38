// Delivery to one receiver: in order, retried with backoff through outages, bounded, never blocking.
import { expect } from 'chai';
import {
  WebhookQueue,
  type WebhookEvent,
  type WebhookQueueOptions,
} from '../../src/delivery/webhook-queue.js';
import type { DeliveryOutcome } from '../../src/alerts/event-sink.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import {
  BAD_REQUEST,
  FakePoster,
  OK,
  UNAVAILABLE,
  type Answer,
  type PostCall,
} from '../support/fake-poster.js';

const URL = 'http://receiver.example/hook';
const peer = (key: string, orderKey?: string): WebhookEvent => ({
  kind: 'peer-status',
  key,
  body: { key },
  ...(orderKey !== undefined ? { orderKey } : {}),
});
const cluster = (key: string): WebhookEvent => ({ kind: 'cluster-status', key, body: { key } });
const keyOf = (call: PostCall) => (call.body as { key: string }).key;

function setup(
  answer?: (call: PostCall, index: number) => Answer,
  options: Partial<WebhookQueueOptions> = {},
) {
  const clock = new FakeClock();
  const poster = new FakePoster(clock, answer);
  const logger = new CapturingLogger();
  const queue = new WebhookQueue({
    url: URL,
    poster,
    clock,
    logger,
    timeoutMs: 5_000,
    retryForMs: 3_600_000,
    maxSize: 1_000,
    ...options,
  });
  const posted = () => poster.calls.map(keyOf);
  return { clock, poster, logger, queue, posted, startMs: clock.now() };
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - (times[i] ?? 0));

describe('WebhookQueue', () => {
  it('delivers events in the order they were queued, to its URL, with its timeout', async () => {
    const { clock, poster, queue, posted } = setup();
    for (const key of ['a', 'b', 'c']) queue.enqueue(peer(key));
    await clock.advanceAsync(0);
    expect(posted()).to.deep.equal(['a', 'b', 'c']);
    expect(poster.calls.every((c) => c.url === URL && c.timeoutMs === 5_000)).to.be.true;
    expect(queue.counts.delivered).to.equal(3);
    expect(queue.pending).to.equal(0);
  });

  it('retries a failing event after 500, 1000, 2000 ms ..., doubling up to 30 s', async () => {
    const { clock, poster, queue } = setup(() => UNAVAILABLE);
    queue.enqueue(peer('a'));
    await clock.advanceAsync(200_000);
    const times = poster.calls.map((c) => c.atMs);
    expect(gaps(times).slice(0, 9)).to.deep.equal([
      500, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000,
    ]);
    expect(queue.counts.delivered).to.equal(0);
    expect(queue.pending).to.equal(1);
  });

  it('uses the configured backoff bounds', async () => {
    const { clock, poster, queue } = setup(() => UNAVAILABLE, {
      minBackoffMs: 100,
      maxBackoffMs: 400,
    });
    queue.enqueue(peer('a'));
    await clock.advanceAsync(1_500);
    expect(gaps(poster.calls.map((c) => c.atMs)).slice(0, 5)).to.deep.equal([
      100, 200, 400, 400, 400,
    ]);
  });

  it('starts its backoff afresh at 500 ms in an outage after the receiver took an event', async () => {
    // A first outage of four failures, then a second one after a success: a receiver back up
    // deserves a prompt retry, not the long wait the first outage had grown to.
    const { clock, poster, queue, posted, startMs } = setup((_, i) =>
      i < 4 || i === 5 ? UNAVAILABLE : OK,
    );
    queue.enqueue(peer('a'));
    await clock.advanceAsync(60_000);
    queue.enqueue(peer('b'));
    await clock.advanceAsync(60_000);
    expect(posted()).to.deep.equal(['a', 'a', 'a', 'a', 'a', 'b', 'b']);
    const at = poster.calls.map((c) => c.atMs - startMs);
    expect(gaps(at.slice(0, 5)), 'the first outage').to.deep.equal([500, 1_000, 2_000, 4_000]);
    expect(gaps(at.slice(5)), 'the second').to.deep.equal([500]);
    expect(queue.counts.delivered).to.equal(2);
  });

  it('loses nothing and keeps the order through a receiver outage', async () => {
    const FAILURES = 6;
    const { clock, queue, posted, logger } = setup((_, i) => (i < FAILURES ? UNAVAILABLE : OK));
    queue.enqueue(peer('a'));
    queue.enqueue(peer('b'));
    await clock.advanceAsync(10_000);
    queue.enqueue(peer('c')); // queued during the outage
    await clock.advanceAsync(60_000);
    expect(posted()).to.deep.equal([...Array<string>(FAILURES + 1).fill('a'), 'b', 'c']);
    expect(queue.counts).to.deep.include({ delivered: 3, 'given-up': 0, dropped: 0 });
    expect(queue.pending).to.equal(0);
    expect(logger.at('warn')).to.have.length(FAILURES);
    expect(logger.at('error')).to.deep.equal([]);
  });

  it('drops an event the receiver rejects (4xx) without retrying, and goes on', async () => {
    const { clock, queue, posted, logger } = setup((call) =>
      keyOf(call) === 'bad' ? BAD_REQUEST : OK,
    );
    queue.enqueue(peer('bad'));
    queue.enqueue(peer('good'));
    await clock.advanceAsync(60_000);
    expect(posted()).to.deep.equal(['bad', 'good']);
    expect(queue.counts).to.deep.include({ rejected: 1, delivered: 1 });
    const [error] = logger.at('error');
    expect(error?.fields).to.deep.include({ key: 'bad', url: URL, detail: 'HTTP 400' });
  });

  it('gives an event up once it has been retried for retryForMs, and goes on', async () => {
    const RETRY_FOR = 10_000;
    const { clock, poster, queue, logger, startMs } = setup(
      (call) => (keyOf(call) === 'doomed' ? UNAVAILABLE : OK),
      { retryForMs: RETRY_FOR },
    );
    queue.enqueue(peer('doomed'));
    queue.enqueue(peer('next'));
    await clock.advanceAsync(RETRY_FOR);
    expect(queue.counts['given-up']).to.equal(1);
    expect(queue.counts.delivered).to.equal(1);
    const doomed = poster.calls.filter((c) => keyOf(c) === 'doomed').map((c) => c.atMs - startMs);
    expect(doomed.length).to.be.at.least(4);
    expect(Math.max(...doomed)).to.be.at.most(RETRY_FOR);
    const error = logger.at('error').find((r) => r.fields.key === 'doomed');
    expect(error?.msg).to.match(/given up/);
    await clock.advanceAsync(10 * RETRY_FOR);
    expect(poster.calls.filter((c) => keyOf(c) === 'doomed')).to.have.length(doomed.length);
  });

  it('drops the oldest waiting event, never the one in flight, past maxSize waiting', async () => {
    const { clock, poster, queue, posted, logger } = setup((_, i) => (i === 0 ? 'hang' : OK), {
      maxSize: 2,
    });
    for (const key of ['a', 'b', 'c', 'd']) queue.enqueue(peer(key));
    expect(queue.pending, 'one in flight and two waiting').to.equal(3);
    expect(queue.counts.dropped).to.equal(1);
    expect(logger.at('error')[0]?.fields).to.deep.include({ key: 'b' });
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(posted()).to.deep.equal(['a', 'c', 'd']);
  });

  it('gives every event exactly one outcome, even with maxSize 1', async () => {
    const { clock, poster, queue } = setup((_, i) => (i === 0 ? 'hang' : OK), { maxSize: 1 });
    for (const key of ['a', 'b', 'c']) queue.enqueue(peer(key));
    poster.release(OK);
    await clock.advanceAsync(0);
    const { delivered, dropped, rejected, superseded } = queue.counts;
    expect(delivered + dropped + rejected + superseded + queue.counts['given-up']).to.equal(3);
  });

  it('replaces a queued cluster status with a newer one, but never the one in flight', async () => {
    const { clock, poster, queue, posted } = setup((_, i) => (i === 0 ? 'hang' : OK));
    queue.enqueue(cluster('c1')); // in flight
    queue.enqueue(peer('p1'));
    queue.enqueue(cluster('c2'));
    queue.enqueue(peer('p2'));
    queue.enqueue(cluster('c3'));
    expect(queue.counts.superseded).to.equal(1);
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(posted()).to.deep.equal(['c1', 'p1', 'p2', 'c3']);
    expect(queue.counts.delivered).to.equal(4);
  });

  it('withdraws what it has not sent, and lets the POST in flight end without a retry', async () => {
    const { clock, poster, queue, posted } = setup((_call, i) => (i === 0 ? 'hang' : UNAVAILABLE));
    const outcomes: string[] = [];
    const tracked = (key: string): WebhookEvent => ({
      ...peer(key),
      onSettled: (outcome) => outcomes.push(`${key}:${outcome}`),
    });
    for (const key of ['a', 'b', 'c']) queue.enqueue(tracked(key));
    await clock.advanceAsync(0);
    expect(posted()).to.deep.equal(['a']);
    queue.withdraw();
    expect(outcomes, 'the waiting ones at once, in order').to.deep.equal([
      'b:withdrawn',
      'c:withdrawn',
    ]);
    poster.release(UNAVAILABLE); // the one in flight fails: not retried
    await clock.advanceAsync(60_000);
    expect(posted()).to.deep.equal(['a']);
    expect(outcomes).to.deep.equal(['b:withdrawn', 'c:withdrawn', 'a:withdrawn']);
    expect(queue.pending).to.equal(0);
    expect(queue.counts.withdrawn).to.equal(3);
  });

  it('counts a POST in flight when withdrawn that gets through as delivered', async () => {
    const { clock, poster, queue } = setup((_call, i) => (i === 0 ? 'hang' : OK));
    const outcomes: DeliveryOutcome[] = [];
    queue.enqueue({ ...peer('a'), onSettled: (o) => outcomes.push(o) });
    await clock.advanceAsync(0);
    queue.withdraw();
    poster.release(OK);
    await clock.advanceAsync(0);
    expect(outcomes).to.deep.equal(['delivered']);
  });

  it('returns from enqueue at once while a POST hangs', async () => {
    const { clock, poster, queue } = setup(() => 'hang');
    for (let i = 0; i < 50; i++) {
      expect(queue.enqueue(peer(`e${i}`))).to.equal(undefined);
    }
    expect(queue.pending).to.equal(50);
    expect(poster.calls).to.have.length(1);
    const drained = queue.drain(1_000).then(() => 'drained');
    await clock.advanceAsync(999);
    expect(await Promise.race([drained, Promise.resolve('waiting')])).to.equal('waiting');
    await clock.advanceAsync(1);
    expect(await drained).to.equal('drained');
    expect(queue.pending).to.equal(50);
  });

  it('drain resolves as soon as the queue is empty', async () => {
    const { clock, poster, queue } = setup((_, i) => (i === 0 ? 'hang' : OK));
    queue.enqueue(peer('a'));
    queue.enqueue(peer('b'));
    const drained = queue.drain(60_000);
    poster.release(OK);
    await clock.advanceAsync(0);
    await drained;
    expect(queue.pending).to.equal(0);
    expect(clock.pendingTimers).to.be.at.most(1); // at most the unused drain deadline
  });

  describe('several POSTs in flight (maxInFlight)', () => {
    it('posts events of different peers together, up to maxInFlight, in the order queued', async () => {
      const { clock, poster, queue, posted } = setup(() => 'hang', { maxInFlight: 3 });
      for (const n of [1, 2, 3, 4, 5]) queue.enqueue(peer(`e${n}`, `peer-${n}`));
      expect(posted()).to.deep.equal(['e1', 'e2', 'e3']);
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['e1', 'e2', 'e3', 'e4']);
      expect(queue.pending).to.equal(4);
      for (let i = 0; i < 3; i++) poster.release(OK);
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['e1', 'e2', 'e3', 'e4', 'e5']);
    });

    it("never has two of one peer's events in flight: each peer's go in order", async () => {
      const { clock, poster, queue, posted } = setup(() => 'hang', { maxInFlight: 4 });
      queue.enqueue(peer('a-dead', 'a'));
      queue.enqueue(peer('a-recovered', 'a'));
      queue.enqueue(peer('b-dead', 'b'));
      queue.enqueue(peer('a-dead-again', 'a'));
      expect(posted()).to.deep.equal(['a-dead', 'b-dead']);
      poster.release(OK); // a-dead
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['a-dead', 'b-dead', 'a-recovered']);
      poster.release(OK); // b-dead
      await clock.advanceAsync(0);
      expect(posted(), 'a-dead-again waits for a-recovered').to.have.length(3);
      poster.release(OK); // a-recovered
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['a-dead', 'b-dead', 'a-recovered', 'a-dead-again']);
    });

    it('posts an event without an order key (a cluster status) alone, after all before it', async () => {
      const { clock, poster, queue, posted } = setup(() => 'hang', { maxInFlight: 4 });
      queue.enqueue(peer('p1', 'a'));
      queue.enqueue(peer('p2', 'b'));
      queue.enqueue(cluster('c1'));
      queue.enqueue(peer('p3', 'c'));
      expect(posted()).to.deep.equal(['p1', 'p2']);
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(posted(), 'c1 waits for p2 too').to.deep.equal(['p1', 'p2']);
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['p1', 'p2', 'c1']);
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(posted()).to.deep.equal(['p1', 'p2', 'c1', 'p3']);
    });

    it('through an outage: one POST at a time, the backoff doubling once per failure, then all together, nothing lost', async () => {
      const FAILURES = 6;
      const { clock, poster, queue, posted, logger, startMs } = setup(
        (_, i) => (i < FAILURES ? UNAVAILABLE : OK),
        { maxInFlight: 4 },
      );
      const keys = ['a', 'b', 'c', 'd'];
      for (let i = 0; i < 8; i++) queue.enqueue(peer(`e${i}`, keys[i % 4]));
      await clock.advanceAsync(10_000);
      const at = poster.calls.map((c) => c.atMs - startMs);
      // The first four fail together: one pause of 500 ms, not four doublings; then e0 alone,
      // 1 s and 2 s apart, until it goes; then everything else, four at a time.
      expect(posted().slice(0, 7)).to.deep.equal(['e0', 'e1', 'e2', 'e3', 'e0', 'e0', 'e0']);
      expect(at.slice(0, 7)).to.deep.equal([0, 0, 0, 0, 500, 1_500, 3_500]);
      expect(at.slice(7).every((t) => t === 3_500)).to.be.true;
      expect(queue.counts).to.deep.include({ delivered: 8, 'given-up': 0, dropped: 0 });
      expect(logger.at('warn')).to.have.length(FAILURES);
      // Each peer's events were delivered in the order queued.
      const delivered = posted().slice(FAILURES);
      for (const key of keys) {
        const own = delivered.filter((e) => keys[Number(e.slice(1)) % 4] === key);
        expect(own, key).to.deep.equal([...own].sort());
      }
      expect(queue.pending).to.equal(0);
    });

    it('drain waits for every event in flight', async () => {
      const { clock, poster, queue } = setup(() => 'hang', { maxInFlight: 2 });
      queue.enqueue(peer('a', 'a'));
      queue.enqueue(peer('b', 'b'));
      let drained = false;
      void queue.drain(60_000).then(() => (drained = true));
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(drained).to.be.false;
      poster.release(OK);
      await clock.advanceAsync(0);
      expect(drained).to.be.true;
    });
  });

  describe('onSettled', () => {
    /** Events that record their outcome, with the clock time it came at. */
    function tracked() {
      const settled: { key: string; outcome: DeliveryOutcome }[] = [];
      const track = (event: WebhookEvent): WebhookEvent => ({
        ...event,
        onSettled: (outcome) => settled.push({ key: event.key, outcome }),
      });
      return { settled, track };
    }

    it('hears delivered once the receiver took the event, not while it fails', async () => {
      const { clock, queue } = setup((_, i) => (i < 3 ? UNAVAILABLE : OK));
      const { settled, track } = tracked();
      queue.enqueue(track(peer('a')));
      await clock.advanceAsync(1_000);
      expect(settled, 'still retrying').to.deep.equal([]);
      await clock.advanceAsync(10_000);
      expect(settled).to.deep.equal([{ key: 'a', outcome: 'delivered' }]);
    });

    it('hears rejected, given-up, dropped and superseded, once each', async () => {
      const { clock, poster, queue } = setup(
        (call, i) => {
          if (i === 0) return 'hang';
          if (keyOf(call) === 'bad') return BAD_REQUEST;
          if (keyOf(call) === 'doomed') return UNAVAILABLE;
          return OK;
        },
        { maxSize: 3, retryForMs: 5_000 },
      );
      const { settled, track } = tracked();
      queue.enqueue(track(peer('first'))); // in flight, hanging
      queue.enqueue(track(cluster('c1')));
      queue.enqueue(track(peer('bad')));
      queue.enqueue(track(cluster('c2'))); // supersedes c1
      queue.enqueue(track(peer('doomed')));
      queue.enqueue(track(peer('last'))); // past maxSize: drops the oldest waiting, 'bad'
      expect(settled).to.deep.equal([
        { key: 'c1', outcome: 'superseded' },
        { key: 'bad', outcome: 'dropped' },
      ]);
      poster.release(OK);
      await clock.advanceAsync(60_000);
      expect(settled).to.deep.equal([
        { key: 'c1', outcome: 'superseded' },
        { key: 'bad', outcome: 'dropped' },
        { key: 'first', outcome: 'delivered' },
        { key: 'c2', outcome: 'delivered' },
        { key: 'doomed', outcome: 'given-up' },
        { key: 'last', outcome: 'delivered' },
      ]);
    });

    it('hears rejected for an event the receiver refuses', async () => {
      const { clock, queue } = setup(() => BAD_REQUEST);
      const { settled, track } = tracked();
      queue.enqueue(track(peer('bad')));
      await clock.advanceAsync(0);
      expect(settled).to.deep.equal([{ key: 'bad', outcome: 'rejected' }]);
    });

    it("the queue's own onSettled hears every event's kind and outcome, after the event's", async () => {
      const heard: string[] = [];
      const { clock, poster, queue } = setup(
        (call, i) => (i === 0 ? 'hang' : keyOf(call) === 'bad' ? BAD_REQUEST : OK),
        { maxSize: 2, onSettled: (kind, outcome) => heard.push(`queue ${kind} ${outcome}`) },
      );
      const track = (event: WebhookEvent): WebhookEvent => ({
        ...event,
        onSettled: (outcome) => heard.push(`event ${event.key} ${outcome}`),
      });
      queue.enqueue(peer('first')); // in flight, hanging; no onSettled of its own
      queue.enqueue(track(cluster('c1')));
      queue.enqueue(track(peer('old')));
      queue.enqueue(cluster('c2')); // supersedes c1
      queue.enqueue(track(peer('bad'))); // past maxSize: drops 'old'
      poster.release(OK);
      await clock.advanceAsync(1_000);
      expect(heard).to.deep.equal([
        'event c1 superseded',
        'queue cluster-status superseded',
        'event old dropped',
        'queue peer-status dropped',
        'queue peer-status delivered',
        'queue cluster-status delivered',
        'event bad rejected',
        'queue peer-status rejected',
      ]);
    });
  });
});
