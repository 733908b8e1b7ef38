// Property-based fuzzing (fast-check) of every endpoint of a live mesh's coordinator and of one
// follower: generated malformed requests of every kind get the 4xx they deserve (or a closed
// connection), never a 5xx, never a 2xx for a request that would change something; after each one
// the node is still running and answers /ping; after all of them the coordinator and its epoch are
// the same, nobody was reported dead, no probe round started late, and no window or departure was
// recorded. The seed is fixed (FUZZ_SEED overrides it) and printed, so a failure replays.
import { expect } from 'chai';
import fc from 'fast-check';
import type { MeshNode } from '../../src/demo/mesh.js';
import { compareRank } from '../../src/wire/node-ref.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { openSocket, send, targetOf } from '../support/hostile-clients.js';
import {
  meshForSuite,
  pingNode,
  type Leadership,
  type LoopbackIpsMesh,
} from '../support/loopback-ips-mesh.js';
import {
  localRequest,
  randomRequest,
  rawGarbage,
  readRequest,
  replayRefusal,
  sign,
  signedPeerRequest,
  unsignedPeerRequest,
  type FuzzContext,
  type FuzzRequest,
} from '../support/malformed-requests.js';
import { sleep } from '../support/poll.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
/** Runs of each property: ~1,700 requests in all (replays included), ~20 s. */
const RUNS = { unsigned: 350, signed: 350, local: 300, read: 200, random: 300, raw: 100 };

const log = (text: string) => console.log(`      ${text}`);

describe('fuzz: malformed requests to every endpoint (4 real nodes)', function () {
  this.timeout(120_000);
  let before: Leadership;
  let lateBefore = 0;
  let targets: MeshNode[] = [];
  let ctx: FuzzContext;
  const tally = { requests: 0, closed: 0, byStatus: new Map<string, number>() };

  this.beforeAll(() => log(`fast-check seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`));
  const shared = meshForSuite(this, 4);
  const mesh = (): LoopbackIpsMesh => shared().fx;

  /** Sends one generated request (and its replay), checks the answer and that the node is up. */
  async function check(generated: FuzzRequest, node: MeshNode): Promise<void> {
    const req = sign(generated, mesh().peerSecret, node.address);
    const what = `${req.kind}: ${req.method} ${req.path.slice(0, 100)} (${req.body?.length ?? 0} bytes, headers ${JSON.stringify(req.headers ?? {}).slice(0, 300)}) to ${node.name}`;
    const answers = [await send(targetOf(node.address), req, { timeoutMs: 8_000 })];
    if (req.replay) answers.push(await send(targetOf(node.address), req, { timeoutMs: 8_000 }));
    for (const [i, answer] of answers.entries()) {
      tally.requests++;
      const key = answer.status === null ? (answer.error ?? 'closed') : String(answer.status);
      tally.byStatus.set(key, (tally.byStatus.get(key) ?? 0) + 1);
      expect(answer.error, `${what}: left unanswered`).to.not.equal('timeout');
      expect(answer.error ?? '', `${what}: not sent`).to.not.match(/^not sent/);
      if (answer.status === null) {
        tally.closed++;
        continue;
      }
      const body = answer.body.toString('utf8').slice(0, 300);
      if (i === 1) {
        const refusal = replayRefusal(req.path, req.body?.length ?? 0);
        expect(answer.status, `${what}, replayed: ${body}`).to.equal(refusal);
      } else {
        expect(
          generated.allowed(answer.status),
          `${what} → ${answer.status} (${body}); expected ${generated.expects}`,
        ).to.equal(true);
      }
    }
    expect(mesh().mesh.isRunning(node.index), `${node.name} still running after ${what}`).to.equal(
      true,
    );
    const pong = await pingNode(node);
    expect(pong?.address, `${node.name} answers /ping after ${what}`).to.equal(node.address);
  }

  async function property<T>(
    arb: fc.Arbitrary<T>,
    numRuns: number,
    run: (value: T, node: MeshNode) => Promise<void>,
  ): Promise<void> {
    // Nodes by index: a counterexample then prints as a number, not as a process with its logs.
    const byIndex = (index: number) => mesh().mesh.node(index);
    await fc.assert(
      fc.asyncProperty(arb, fc.constantFrom(...targets.map((n) => n.index)), (value, index) =>
        run(value, byIndex(index)),
      ),
      // No shrinking: a live node is not a pure function, and a crash would spoil every rerun.
      { seed: SEED, numRuns, endOnFailure: true },
    );
  }

  this.beforeAll(() => {
    const { fx } = shared();
    ({ before, lateBefore } = shared());
    const lowest = [...fx.nodes].sort((a, b) => compareRank(a.address, b.address))[0];
    targets = [before.coordinator, ...(lowest ? [lowest] : [])];
    ctx = {
      schemas: loadSchemas(),
      peerSecret: fx.peerSecret,
      peers: fx.nodes.map((n) => n.address),
    };
  });

  it('peer routes, unsigned or badly signed: 401 before anything else (415 compressed, 413 too large)', async () => {
    await property(unsignedPeerRequest(ctx), RUNS.unsigned, check);
  });

  it('peer routes, correctly signed: 400 for garbage, 403 for a valid message from another address, 401 replayed', async function () {
    if (mesh().peerSecret === null) this.skip();
    await property(signedPeerRequest(ctx), RUNS.signed, check);
  });

  it('loopback routes (/maintenance, /test-alert) from loopback: 4xx for every invalid request', async () => {
    await property(localRequest(ctx), RUNS.local, check);
  });

  it('read-only routes with garbage around them: never 5xx', async () => {
    await property(readRequest(ctx), RUNS.read, check);
  });

  it('any method on any path: never 5xx, never 2xx for a method that changes things', async () => {
    await property(randomRequest(ctx), RUNS.random, check);
  });

  it('raw garbage on the socket: an HTTP 4xx or a closed connection', async () => {
    await property(rawGarbage, RUNS.raw, async (bytes, node) => {
      const socket = await openSocket(targetOf(node.address));
      try {
        let answer = '';
        socket.on('data', (c: Buffer) => {
          if (answer.length < 200) answer += c.toString('latin1');
        });
        socket.on('error', () => undefined);
        const closed = new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 8_000);
          socket.once('close', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        socket.end(bytes);
        expect(
          await closed,
          `${node.name} closed the connection after ${bytes.length} bytes`,
        ).to.equal(true);
        tally.requests++;
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 'closed';
        tally.byStatus.set(`raw ${status}`, (tally.byStatus.get(`raw ${status}`) ?? 0) + 1);
        if (status !== 'closed') {
          expect(Number(status), `raw garbage → ${answer.slice(0, 100)}`).to.be.within(400, 499);
        }
      } finally {
        socket.destroy();
      }
      expect(mesh().mesh.isRunning(node.index), `${node.name} still running`).to.equal(true);
      expect((await pingNode(node))?.address, `${node.name} answers /ping`).to.equal(node.address);
    });
  });

  it('leaves the mesh as it was: coordinator, epoch, no death, no late round, no window, no departure', async () => {
    log(
      `${tally.requests} requests: ${[...tally.byStatus.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k}×${v}`)
        .join(' ')}`,
    );
    await sleep(2_000); // a round or two for anything set off to show
    const m = mesh();
    expect(
      m.exited().map((n) => n.name),
      'node processes that exited',
    ).to.deep.equal([]);
    const after = await m.waitForLeader(5_000);
    expect(after.coordinator.address, 'coordinator').to.equal(before.coordinator.address);
    expect(after.epoch, 'epoch: no election').to.equal(before.epoch);
    expect(m.deadReports(), 'peer_dead webhooks').to.deep.equal([]);
    expect(await m.lateRounds(before.coordinator), 'probe rounds started late').to.equal(
      lateBefore,
    );
    for (const node of targets) {
      const windows = (await (await fetch(`http://${node.address}/maintenance`)).json()) as {
        windows: unknown[];
      };
      expect(windows.windows, `${node.name}: maintenance windows`).to.deep.equal([]);
      const status = (await (await fetch(`http://${node.address}/status`)).json()) as {
        departed?: unknown[];
      };
      expect(status.departed ?? [], `${node.name}: departed peers`).to.deep.equal([]);
    }
  });
});
