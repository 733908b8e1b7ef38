// The webhook poster against hostile receivers: redirects, silence, late or dripping answers,
// bodies that never finish, huge or endless bodies, garbage. axiosPoster is the one poster
// outbound() builds, shared by KNH's webhooks (Notifier) and the other receivers (AlertDispatcher:
// Slack, Alertmanager, PagerDuty, the generic webhook), so both are covered here. Every POST ends
// within its timeout (plus slack), follows no redirect, reads a bounded answer, and leaves no
// connection open; a hanging receiver holds up no other, and its queue stays bounded.
import { expect } from 'chai';
import { axiosPoster } from '../../src/delivery/axios-poster.js';
import type { PostResult } from '../../src/delivery/poster.js';
import { WebhookQueue } from '../../src/delivery/webhook-queue.js';
import type { DeliveryOutcome } from '../../src/alerts/event-sink.js';
import { systemClock } from '../../src/core/system-clock.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { HostileServer, type Behaviour } from '../support/hostile-server.js';
import { pollUntil } from '../support/poll.js';

const TIMEOUT_MS = 500;
// Real sockets on a busy machine: generous, only "ends near its timeout, never hangs" is checked.
const BOUND_MS = TIMEOUT_MS + 1_000;
/** A POST still pending this long has hung: the test fails rather than waits for mocha. */
const HUNG_MS = 5_000;
/** The poster reads at most 1 MiB; the kernel's socket buffers hold a few MiB more. */
const MAX_SENT_BYTES = 16 * 1024 * 1024;
/** Node's global agent (keep-alive) closes idle sockets after 5 s. */
const POOL_IDLE_MS = 5_000;

const poster = axiosPoster('knh-test');
const body = { event: 'peer-status', key: 'worker-1->worker-2' };

type Timed = { result: PostResult; elapsedMs: number } | 'hung';

async function post(url: string): Promise<Timed> {
  const started = performance.now();
  let guard: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>(
    (resolve) => (guard = setTimeout(() => resolve('hung'), HUNG_MS)),
  );
  try {
    const result = await Promise.race([poster.post(url, body, TIMEOUT_MS), hung]);
    return result === 'hung' ? 'hung' : { result, elapsedMs: performance.now() - started };
  } finally {
    clearTimeout(guard);
  }
}

interface Case {
  name: string;
  behaviour: Behaviour;
  expected: Partial<PostResult> & { ok: boolean };
  detail?: RegExp;
  /** Ends by the timeout: not before it. */
  timesOut?: boolean;
  /** The answer's body is far larger than the poster takes. */
  huge?: boolean;
}

const cases: Case[] = [
  ...([301, 302, 307, 308] as const).map((status): Case => ({
    // A webhook must not be bounced to another host (with its auth header, its alert).
    name: `redirects (${status}) to another server: not followed, rejected`,
    behaviour: { kind: 'redirect', status },
    expected: { ok: false, retryable: false, detail: `HTTP ${status}` },
  })),
  {
    name: 'accepts the connection and never answers: ends at the timeout, retried',
    behaviour: { kind: 'silent' },
    expected: { ok: false, retryable: true },
    detail: /timeout/,
    timesOut: true,
  },
  {
    name: 'answers only after 3 s: ends at the timeout, retried',
    behaviour: { kind: 'late', afterMs: 3_000 },
    expected: { ok: false, retryable: true },
    detail: /timeout/,
    timesOut: true,
  },
  {
    // The status line and headers came: delivered; the body is never waited for.
    name: 'sends a 200 status, then a body that never finishes: delivered at once',
    behaviour: { kind: 'unfinished' },
    expected: { ok: true, status: 200 },
    huge: true,
  },
  {
    name: 'drips its body, a byte every 100 ms, forever: delivered at once',
    behaviour: { kind: 'drip' },
    expected: { ok: true, status: 200 },
    huge: true,
  },
  {
    name: 'drips its headers, a byte every 100 ms, forever: ends at the timeout',
    behaviour: { kind: 'drip', headers: true },
    expected: { ok: false, retryable: true },
    detail: /timeout/,
    timesOut: true,
  },
  {
    // The status (2xx) says it arrived; the answer is closed unread, so it is not posted again.
    name: 'answers 200 with a 50 MiB body: delivered, the body left unread',
    behaviour: { kind: 'huge' },
    expected: { ok: true, status: 200 },
    huge: true,
  },
  {
    name: 'answers 200 with an endless chunked body: delivered, the body left unread',
    behaviour: { kind: 'huge', endless: true },
    expected: { ok: true, status: 200 },
    huge: true,
  },
  {
    // Receivers' answers are not parsed: the status says it was delivered.
    name: 'answers 200 with garbage (not JSON): delivered',
    behaviour: { kind: 'garbage' },
    expected: { ok: true, status: 200 },
  },
  {
    name: 'answers 200 with JSON of another shape: delivered',
    behaviour: { kind: 'wrong-shape' },
    expected: { ok: true, status: 200 },
  },
  {
    name: 'answers with bytes that are not HTTP: a failure, retried',
    behaviour: { kind: 'not-http' },
    expected: { ok: false, retryable: true },
  },
];

describe('webhook poster against hostile receivers', function () {
  this.timeout(30_000);
  const servers: HostileServer[] = [];
  const start = async (behaviour: Behaviour) => {
    const server = await HostileServer.start(behaviour);
    servers.push(server);
    return server;
  };

  before(async () => {
    // axios loads on the first POST (~0.1-0.5 s), outside the timeout: not timed here.
    const server = await start({ kind: 'ok' });
    expect(await poster.post(server.url(), body, 5_000)).to.deep.equal({ ok: true, status: 200 });
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  for (const c of cases) {
    it(`when a receiver ${c.name}`, async () => {
      const server = await start(c.behaviour);
      const timed = await post(server.url());
      if (timed === 'hung') expect.fail(`POST still pending after ${HUNG_MS} ms`);
      const { result, elapsedMs } = timed;
      expect(result, JSON.stringify(result)).to.deep.include(c.expected);
      if (c.detail && !result.ok) expect(result.detail).to.match(c.detail);
      expect(elapsedMs, 'elapsed').to.be.below(BOUND_MS);
      if (c.timesOut) expect(elapsedMs, 'elapsed').to.be.at.least(TIMEOUT_MS * 0.8);
      expect(server.targetHits, 'redirect target hit').to.deep.equal([]);
      if (c.huge) {
        // The poster stopped reading and went: the server saw the connection close long before
        // it could send the body (50 MiB; endless: 256 MiB), after at most a few MiB.
        expect(await server.allClosed(2_000), 'huge-body connection closed').to.be.true;
        for (const conn of server.connections) {
          expect(conn.bytesWritten, 'bytes the server got to send').to.be.below(MAX_SENT_BYTES);
        }
      }
      if (!c.expected.ok && !c.expected.detail?.startsWith('HTTP')) {
        // Failed mid-answer: the socket is destroyed, not pooled.
        const open = server.open.length;
        expect(await server.allClosed(1_000), `${open} connection(s) left open`).to.be.true;
      }
    });
  }

  /**
   * Two receivers, each with its own queue over the one poster (as outbound() builds them): one
   * takes connections and never answers, 20 events queued for it; the other answers, one for it.
   * `end()` lets both queues finish, withdrawing what still waits for the hanging one.
   */
  async function oneReceiverHangs() {
    const hanging = await start({ kind: 'silent' });
    const healthy = await start({ kind: 'ok' });
    const logger = new CapturingLogger();
    const outcomes = new Map<string, DeliveryOutcome>();
    // As outbound() builds them: one queue per URL over one shared poster.
    const queue = (url: string, maxSize: number) =>
      new WebhookQueue({
        url,
        poster,
        clock: systemClock,
        logger,
        timeoutMs: 300,
        retryForMs: 1_000,
        minBackoffMs: 100,
        maxBackoffMs: 200,
        maxSize,
      });
    const stuck = queue(hanging.url(), 5);
    const other = queue(healthy.url(), 5);
    const event = (key: string) => ({
      kind: 'webhook' as const,
      key,
      body: { key },
      onSettled: (outcome: DeliveryOutcome) => outcomes.set(key, outcome),
    });

    const started = performance.now();
    for (let i = 0; i < 20; i++) stuck.enqueue(event(`a${i}`));
    other.enqueue(event('b0'));
    const enqueueMs = performance.now() - started;
    const end = async () => {
      stuck.withdraw();
      await Promise.all([stuck.drain(1_000), other.drain(1_000)]);
    };
    return { hanging, stuck, other, outcomes, enqueueMs, end };
  }

  it('queues for a hanging receiver without blocking, and keeps its queue bounded', async () => {
    const { stuck, enqueueMs, end } = await oneReceiverHangs();
    expect(enqueueMs, 'enqueue never blocks').to.be.below(100);
    // Bounded: the one in flight and maxSize waiting; the oldest waiting were dropped.
    expect(stuck.pending).to.equal(6);
    expect(stuck.counts.dropped).to.equal(14);
    await end();
  });

  it('lets a hanging receiver hold up no other', async () => {
    const { outcomes, end } = await oneReceiverHangs();
    // The other receiver gets its event while the first still hangs.
    await pollUntil('b0 delivered', () => (outcomes.get('b0') === 'delivered' ? true : undefined), {
      timeoutMs: 3_000,
      everyMs: 20,
    });
    expect(outcomes.has('a0'), 'a0 still trying').to.be.false;
    await end();
  });

  it('gives the hanging head up after its retry bound, and delivers what waited in order once the receiver heals', async () => {
    const { hanging, stuck, other, outcomes } = await oneReceiverHangs();
    // Each try ends at its timeout: the head is given up after WEBHOOK_RETRY_FOR (1 s here).
    await pollUntil('a0 given up', () => (outcomes.get('a0') === 'given-up' ? true : undefined), {
      timeoutMs: 8_000,
      everyMs: 20,
      describe: () => `${stuck.pending} pending, ${JSON.stringify(stuck.counts)}`,
    });
    expect(stuck.pending).to.be.at.most(6);

    // The receiver heals: what waited is delivered, in order.
    hanging.behaviour = { kind: 'ok' };
    await pollUntil('queue emptied', () => (stuck.pending === 0 ? true : undefined), {
      timeoutMs: 8_000,
      everyMs: 20,
      describe: () => `${stuck.pending} pending, ${JSON.stringify(stuck.counts)}`,
    });
    const keys = Array.from({ length: 20 }, (_, i) => `a${i}`);
    expect(keys.map((k) => outcomes.get(k))).to.deep.equal([
      'given-up',
      ...Array<DeliveryOutcome>(14).fill('dropped'),
      ...Array<DeliveryOutcome>(5).fill('delivered'),
    ]);
    // At most the head plus a few given up while it healed: never more than the queue held.
    expect(hanging.connections.length).to.be.at.most(20);
    await Promise.all([stuck.drain(1_000), other.drain(1_000)]);
  });

  it('leaves no connection open: pooled ones close once idle', async () => {
    // Whole answers (redirects, garbage, 200s) leave their socket in Node's keep-alive pool, as
    // any answer does; it closes idle sockets after POOL_IDLE_MS.
    const closed = await Promise.all(servers.map((s) => s.allClosed(POOL_IDLE_MS + 4_000)));
    const left = servers.filter((_, i) => !closed[i]).map((s) => s.open.length);
    expect(left, 'servers with connections still open').to.deep.equal([]);
  });
});
