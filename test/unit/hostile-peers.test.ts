// The real peer client against hostile peers: garbage, wrong shapes, huge or endless bodies,
// answers that never finish or drip, silence, redirects, late answers. Every call ends as a
// failure value within its timeout (plus slack), reads at most ~1 MiB, follows no redirect, and
// leaves no connection open; the client keeps working for the next, healthy peer.
import { expect } from 'chai';
import type { FailureReason, Outcome } from '../../src/core/transport.js';
import { peerClient } from '../../src/peer-client/peer-client.js';
import { RELAY_HOP_MS } from '../../src/prober/indirect.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { HostileServer, type Behaviour } from '../support/hostile-server.js';
import { pingResponse } from '../support/pings.js';

const TIMEOUT_MS = 500;
// Real sockets on a busy machine: generous, only "ends near its timeout, never hangs" is checked.
const BOUND_MS = TIMEOUT_MS + 1_000;
/** A call still pending this long has hung: the test fails rather than waits for mocha. */
const HUNG_MS = 5_000;
/** The client reads at most 1 MiB; the kernel's socket buffers hold a few MiB more. */
const MAX_SENT_BYTES = 16 * 1024 * 1024;
/** Connections left pooled after a whole (if unwelcome) answer close when idle this long (4 s). */
const POOL_IDLE_MS = 4_000;

const schemas = loadSchemas();
const client = peerClient({ schemas, timeoutMs: TIMEOUT_MS });
const from = { id: 'worker-1@127.0.0.1', address: '127.0.0.1:8080' };

const calls: Record<string, (address: string) => Promise<Outcome<unknown>>> = {
  ping: (address) => client.ping(address),
  sendElection: (address) => client.sendElection(address, { from, epoch: 2 }),
  announce: (address) => client.announce(address, { from, epoch: 3, peers: [] }),
  // Its timeout is the relay's own plus RELAY_HOP_MS: the same 500 ms in all.
  probeVia: (address) =>
    client.probeVia(address, {
      from,
      target: '127.0.0.9:8080',
      timeout_ms: TIMEOUT_MS - RELAY_HOP_MS,
    }),
  leave: (address) => client.leave(address, { from, epoch: 3 }),
};

interface Case {
  name: string;
  behaviour: Behaviour;
  reasons: FailureReason[];
  detail?: RegExp;
  /**
   * The answer was a whole HTTP message (however unwelcome): its connection may go back to the
   * keep-alive pool, which closes it when idle. Otherwise the client must close it at once.
   */
  whole?: boolean;
  /** `leave` takes any 2xx (it has no schema to check). */
  leaveOk?: boolean;
  /** The client stopped reading a body far larger than it takes. */
  huge?: boolean;
}

const cases: Case[] = [
  {
    name: 'answers 200 with garbage (not JSON)',
    behaviour: { kind: 'garbage' },
    reasons: ['bad-response'],
    detail: /not JSON/,
    whole: true,
    leaveOk: true,
  },
  {
    name: 'answers 200 with JSON of the wrong shape',
    behaviour: { kind: 'wrong-shape' },
    reasons: ['bad-response'],
    detail: /fails/,
    whole: true,
    leaveOk: true,
  },
  {
    name: 'answers with a 50 MiB body',
    behaviour: { kind: 'huge' },
    reasons: ['bad-response'],
    detail: /larger than/,
    huge: true,
  },
  {
    name: 'answers with an endless chunked body',
    behaviour: { kind: 'huge', endless: true },
    reasons: ['bad-response'],
    detail: /larger than/,
    huge: true,
  },
  {
    name: 'sends headers, then a body that never finishes',
    behaviour: { kind: 'unfinished' },
    reasons: ['timeout'],
  },
  {
    name: 'drips its body, one byte every 100 ms, forever',
    behaviour: { kind: 'drip' },
    reasons: ['timeout'],
  },
  {
    name: 'drips its headers, one byte every 100 ms, forever',
    behaviour: { kind: 'drip', headers: true },
    reasons: ['timeout'],
  },
  {
    name: 'accepts the connection and never answers',
    behaviour: { kind: 'silent' },
    reasons: ['timeout'],
  },
  {
    name: 'answers only after 3 s',
    behaviour: { kind: 'late', afterMs: 3_000 },
    reasons: ['timeout'],
  },
  {
    name: 'answers with bytes that are not HTTP',
    behaviour: { kind: 'not-http' },
    reasons: ['reset', 'bad-response'],
  },
  ...([301, 302, 307, 308] as const).map((status): Case => ({
    name: `redirects (${status}) to another server`,
    behaviour: { kind: 'redirect', status },
    reasons: ['http-status'],
    detail: new RegExp(String(status)),
    whole: true,
  })),
];

type Timed = { outcome: Outcome<unknown>; elapsedMs: number } | 'hung';

async function timed(work: Promise<Outcome<unknown>>): Promise<Timed> {
  const started = performance.now();
  let guard: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>(
    (resolve) => (guard = setTimeout(() => resolve('hung'), HUNG_MS)),
  );
  try {
    const result = await Promise.race([work, hung]);
    return result === 'hung' ? 'hung' : { outcome: result, elapsedMs: performance.now() - started };
  } finally {
    clearTimeout(guard);
  }
}

describe('peer client against hostile peers', function () {
  this.timeout(30_000);
  const servers: HostileServer[] = [];

  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  for (const c of cases) {
    it(`fails in bounded time, never hanging or crashing, when a peer ${c.name}`, async () => {
      const server = await HostileServer.start(c.behaviour);
      servers.push(server);
      // All five at once, as a coordinator probes many peers: each on its own connection.
      const names = Object.keys(calls);
      const results = await Promise.all(names.map((n) => timed(calls[n]!(server.address))));

      names.forEach((name, i) => {
        const what = `${name}: ${c.name}`;
        const result = results[i];
        if (result === undefined || result === 'hung') {
          expect.fail(`${what}: still pending after ${HUNG_MS} ms`);
        }
        const { outcome, elapsedMs } = result;
        expect(elapsedMs, `${what}: elapsed`).to.be.below(BOUND_MS);
        if (name === 'leave' && c.leaveOk) {
          expect(outcome.ok, `${what}: any 2xx`).to.be.true;
          return;
        }
        expect(outcome.ok, what).to.be.false;
        if (outcome.ok) return;
        expect(c.reasons, `${what}: ${outcome.reason} (${outcome.detail})`).to.include(
          outcome.reason,
        );
        expect(outcome.phase, what).to.equal('send');
        if (c.detail) expect(outcome.detail, what).to.match(c.detail);
        // Ended by the timer on the whole request: bytes still dripping in do not delay it.
        if (outcome.reason === 'timeout') expect(elapsedMs, what).to.be.at.least(TIMEOUT_MS * 0.8);
      });

      expect(server.targetHits, 'redirect target hit').to.deep.equal([]);
      if (c.huge) {
        // The client stopped reading and went: the server saw the connection close long before
        // it could send the body (50 MiB; endless: 256 MiB), after at most a few MiB.
        expect(await server.allClosed(2_000), 'huge-body connections closed').to.be.true;
        for (const conn of server.connections) {
          expect(conn.bytesWritten, 'bytes the server got to send').to.be.below(MAX_SENT_BYTES);
        }
      }
      if (!c.whole) {
        // A request that failed mid-answer destroys its socket at once: never reused, never left.
        const open = server.open.length;
        expect(await server.allClosed(1_000), `${open} connection(s) left open`).to.be.true;
      }
    });
  }

  it('still answers on time from a healthy peer after all that', async () => {
    const pong = pingResponse('127.0.0.1:8080', 'worker-2', { epoch: 3 });
    const server = await HostileServer.start({ kind: 'late', afterMs: 0, body: pong });
    servers.push(server);
    const result = await timed(client.ping(server.address));
    expect(result).to.not.equal('hung');
    if (result === 'hung') return;
    expect(result.outcome).to.deep.include({ ok: true, value: pong });
    expect(result.elapsedMs).to.be.below(BOUND_MS);
  });

  it('leaves no connection open: pooled ones close once idle', async () => {
    // Whole answers (garbage, wrong shape, redirects) leave their socket in the keep-alive pool,
    // as any answer does; the pool closes idle sockets after POOL_IDLE_MS.
    const closed = await Promise.all(servers.map((s) => s.allClosed(POOL_IDLE_MS + 4_000)));
    const left = servers.filter((_, i) => !closed[i]).map((s) => s.open.length);
    expect(left, 'servers with connections still open').to.deep.equal([]);
  });
});
