// Thousands of simulated knh peers in one process, all on 127.0.0.1, each on its own port (a
// contiguous range below the kernel's ephemeral range): passive followers that answer the real wire protocol, signed as real nodes sign, for scale
// tests of a real coordinator. Each can be told to die (refused), to black-hole (accepted, never
// answered) or to come back; stats count what they received and when they last heard a heartbeat.
//
// One net.Server listens per address (so a dead peer's address refuses connections) and hands its
// sockets to one shared, never-listening http.Server: 5,000 peers cost 5,000 listening sockets and
// one request handler, not 5,000 HTTP servers with a timer each.
//
// Why one IP and many ports, not one IP each: a node whose own IP is another loopback IP binds
// every connection it opens to that IP (src/http/peer-client.ts), and a bind() among thousands of
// sockets on one IP is an ephemeral-port search that costs the coordinator a third of its CPU; a
// real pod never binds. A node on 127.0.0.1 does not bind, and neither do these peers. The real
// coordinator goes on a port above the ephemeral range (coordinatorPort), and so outranks them all
// (rank is the numeric IP, then the port: src/core/node-ref.ts compareRank).
import {
  createServer as createHttpServer,
  type IncomingMessage,
  request,
  type ServerResponse,
} from 'node:http';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { describeAuthFailure, PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';
import { CHALLENGE_HEADER, readChallenge } from '../../src/auth/ping-signature.js';
import {
  checkHeartbeat,
  HEARTBEAT_HEADER,
  TAKES_HEARTBEATS,
} from '../../src/auth/probe-heartbeat.js';
import { nodeId, outranks, parseAddress, type NodeRef } from '../../src/wire/node-ref.js';
import type {
  AnnouncementReply,
  PingResponse,
  RelayProbeRequest,
} from '../../src/wire/peer-messages.js';
import { PEER_PATHS } from '../../src/http/peer-guard.js';
import { sentBy } from '../../src/http/sender.js';
import { loadSchemas, type SchemaName, type SchemaRegistry } from '../../src/wire/schemas.js';
import { SimulatedPathReports, type PathReportStats } from './simulated-path-reports.js';

/** How GET /ping arrivals spread over a span, counted in 10 ms buckets. */
export interface ArrivalSpread {
  pings: number;
  buckets: number;
  /** Pings per 10 ms bucket: the busiest, and the mean over the span. */
  max: number;
  mean: number;
  /** Share of the pings in the busiest tenth of the buckets: 0.1 when spread evenly, 1 in a burst. */
  busiestTenthShare: number;
}

/** GET /ping arrivals counted in 10 ms buckets over the last 5 minutes (a ring of counters). */
class ArrivalHistogram {
  private static readonly BUCKET_MS = 10;
  private static readonly SIZE = 30_000;
  private readonly keys = new Float64Array(ArrivalHistogram.SIZE).fill(-1);
  private readonly counts = new Uint32Array(ArrivalHistogram.SIZE);

  add(nowMs: number): void {
    const key = Math.floor(nowMs / ArrivalHistogram.BUCKET_MS);
    const slot = key % ArrivalHistogram.SIZE;
    if (this.keys[slot] !== key) {
      this.keys[slot] = key;
      this.counts[slot] = 0;
    }
    this.counts[slot] = (this.counts[slot] ?? 0) + 1;
  }

  spread(fromMs: number, toMs: number): ArrivalSpread {
    const first = Math.floor(fromMs / ArrivalHistogram.BUCKET_MS);
    const last = Math.max(first, Math.floor(toMs / ArrivalHistogram.BUCKET_MS) - 1);
    const span = Math.min(last - first + 1, ArrivalHistogram.SIZE);
    const values: number[] = [];
    for (let key = last - span + 1; key <= last; key++) {
      const slot = key % ArrivalHistogram.SIZE;
      values.push(this.keys[slot] === key ? (this.counts[slot] ?? 0) : 0);
    }
    const pings = values.reduce((a, b) => a + b, 0);
    const sorted = values.sort((a, b) => b - a);
    const tenth = sorted.slice(0, Math.max(1, Math.round(sorted.length / 10)));
    return {
      pings,
      buckets: span,
      max: sorted[0] ?? 0,
      mean: span > 0 ? pings / span : 0,
      busiestTenthShare: pings > 0 ? tenth.reduce((a, b) => a + b, 0) / pings : 0,
    };
  }
}

export interface PeerSimulatorOptions {
  count: number;
  /** Peer i listens on 127.0.0.1:firstPort+i; default: a free range below the ephemeral range. */
  firstPort?: number;
  /** The mesh's PEER_SECRET; null: authentication off (messages told apart by source IP only). */
  secret: string | null;
  /** The real nodes of the mesh (the coordinator): with the simulated ones, every peer's list. */
  others: readonly string[];
  /** Validate every body received and every answer against the schemas (slower; for debugging). */
  strict?: boolean;
  /** A follower that heard no heartbeat for this long names no coordinator (COORDINATOR_TIMEOUT). */
  coordinatorTimeoutMs?: number;
  /** A relay tries at most this long (twice PROBE_TIMEOUT, as a real relay caps it). */
  maxRelayMs?: number;
  /**
   * The peers report their paths to the coordinator as real nodes of protocol 3 do, PAIR_PROBES
   * `perRound` (simulated-path-reports.ts); absent: they report nothing, as nodes before it.
   */
  pathReports?: { perRound: number };
}

export type PeerState = 'up' | 'dead' | 'blackhole';

interface SimPeer {
  ip: string;
  port: number;
  address: string;
  ref: NodeRef;
  name: string;
  state: PeerState;
  server: Server | null;
  sockets: Set<Socket>;
  /** Each node remembers the nonces it accepted: created on the first signed message. */
  auth: PeerAuth | null;
  coordinator: NodeRef | null;
  epoch: number;
  /** Date.now() of the last accepted announcement; 0: never. */
  heardMs: number;
  pings: number;
  /** Indirect probes this peer is running for the coordinator. */
  relays: number;
  /** The last GET /ping answer, for the epoch and coordinator in `key`. */
  ping: { key: string; bytes: Buffer } | null;
}

export interface SimulatorStats {
  peers: number;
  up: number;
  dead: number;
  blackholed: number;
  /** Connections accepted, black-holed ones included: few more than the peers when kept open. */
  connections: number;
  /** Connections open now. */
  openConnections: number;
  /** Requests received by path (unknown paths as 'other'), black-holed ones included. */
  requests: Record<string, number>;
  /**
   * Requests refused, by status and reason (e.g. '401 missing', '403 wrong-address'), and
   * connections that could not be accepted ('accept EMFILE': the process ran out of descriptors).
   */
  refused: Record<string, number>;
  /** Live peers whose last accepted heartbeat is within `heardWithinMs`. */
  heardWithin: number;
  heardWithinMs: number;
  /** Live peers never pinged. */
  neverPinged: number;
  /** Who the live peers follow (address → peers), and the epochs they hold. */
  coordinators: Record<string, number>;
  epochs: { min: number; max: number };
  /** Strict mode: bodies or answers that failed their schema (first few messages). */
  schemaErrors: string[];
  /** The path reports sent, when the peers send them. */
  pathReports: PathReportStats | null;
  /** This process: CPU since start (µs), resident memory, event-loop busy and idle time (ms). */
  cpuUserUs: number;
  cpuSystemUs: number;
  rssBytes: number;
  loopActiveMs: number;
  loopIdleMs: number;
}

/** The only IP of every simulated peer: the kernel's source for 127/8, so nothing binds. */
export const SIMULATED_IP = '127.0.0.1';
/** The lowest port a simulated peer takes (away from the well-known and registered-low ones). */
const LOWEST_PORT = 10_000;
const ANNOUNCEMENT_LIMIT = 4 * 1024 * 1024;
const SMALL_LIMIT = 64 * 1024;
/** Indirect probes one node runs at once at most (the real Relay's default). */
const MAX_RELAYS_IN_FLIGHT = 64;

/** Peer `index`'s address: 127.0.0.1:<firstPort + index>. */
export function simulatedAddress(index: number, firstPort: number): string {
  return `${SIMULATED_IP}:${firstPort + index}`;
}

/** The kernel's ephemeral port range (Linux), or the usual 32768-60999. */
function ephemeralRange(): { low: number; high: number } {
  try {
    const text = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');
    const m = /^\s*(\d+)\s+(\d+)/.exec(text);
    if (m && Number(m[1]) <= Number(m[2])) return { low: Number(m[1]), high: Number(m[2]) };
  } catch {
    // Not Linux: assume its default.
  }
  return { low: 32_768, high: 60_999 };
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createNetServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * A free port on 127.0.0.1 above the ephemeral range (at least 60000): a real node there outranks
 * every simulated peer (their ports are all below the range), and no connection's source port, nor
 * another mesh's port-0 pick, ever lands on it.
 */
export async function coordinatorPort(): Promise<number> {
  const low = Math.max(60_000, ephemeralRange().high + 1);
  if (low > 65_535) throw new Error('no port above the ephemeral range for the coordinator');
  for (let tries = 0; tries < 200; tries++) {
    const port = low + Math.floor(Math.random() * (65_536 - low));
    if (await canListen(port, SIMULATED_IP)) return port;
  }
  throw new Error(`no free port in ${low}-65535 on ${SIMULATED_IP}`);
}

/**
 * The coordinator serialises `from` and `epoch` first (election/driver.ts): an announcement's head
 * names its sender without parsing a body that carries every peer's verdict (~1 MB at 5,000).
 */
const ANNOUNCEMENT_HEAD =
  /^\{"from":(\{"id":"(?:[^"\\]|\\.){1,400}","address":"[0-9a-f.:[\]]{3,64}"\}),"epoch":(\d{1,16}),"peers":\[/;

interface Answer {
  status: number;
  body: unknown;
  /** The schema a 200 answer must match (checked in strict mode). */
  schema?: SchemaName;
}

export class PeerSimulator {
  /** Peer i listens on 127.0.0.1:firstPort+i (0 until started). */
  firstPort = 0;
  private readonly byAddress = new Map<string, SimPeer>();
  /** Every peer's peer list: the simulated peers and the real nodes. */
  private readonly known = new Set<string>();
  private readonly socketPeer = new WeakMap<Socket, SimPeer>();
  private readonly http = createHttpServer((req, res) => this.handle(req, res));
  private readonly schemas: SchemaRegistry = loadSchemas();
  private readonly requests = new Map<string, number>();
  private readonly refusals = new Map<string, number>();
  private readonly schemaErrors: string[] = [];
  private readonly arrivals = new ArrivalHistogram();
  /** sentBy(remote, claimed) and outranks(a, b) of the real code, by their arguments. */
  private readonly senderChecks = new Map<string, Map<string, boolean>>();
  private readonly rankChecks = new Map<string, Map<string, boolean>>();
  private readonly senders = new Map<string, NodeRef | null>();
  private connections = 0;
  private reports: SimulatedPathReports | null = null;

  private constructor(
    private readonly opts: PeerSimulatorOptions,
    private readonly peers: SimPeer[],
  ) {
    // As a real node's server: idle kept-alive connections close after 5 s (clients' after 4 s);
    // a black-holed request is never timed out here, only by its client.
    this.http.keepAliveTimeout = 5_000;
    this.http.requestTimeout = 0;
  }

  /**
   * Binds every peer's port; rejects (and closes what it bound) if any is taken. Without
   * `firstPort`, a random range below the ephemeral range, another one (5 tries) if a port is taken.
   */
  static async start(opts: PeerSimulatorOptions): Promise<PeerSimulator> {
    if (opts.count < 1) throw new Error('a simulator needs at least one peer');
    if (opts.firstPort !== undefined) return PeerSimulator.startAt(opts, opts.firstPort);
    const top = ephemeralRange().low;
    if (LOWEST_PORT + opts.count > top) {
      throw new Error(
        `simulator: ${opts.count} peers do not fit in ports ${LOWEST_PORT}-${top - 1}`,
      );
    }
    for (let attempt = 1; ; attempt++) {
      const first = LOWEST_PORT + Math.floor(Math.random() * (top - LOWEST_PORT - opts.count + 1));
      try {
        return await PeerSimulator.startAt(opts, first);
      } catch (err) {
        if (attempt >= 5) throw err;
      }
    }
  }

  private static async startAt(opts: PeerSimulatorOptions, firstPort: number) {
    const peers: SimPeer[] = Array.from({ length: opts.count }, (_, index) => {
      const name = `sim-${index + 1}`;
      const address = simulatedAddress(index, firstPort);
      return {
        ip: SIMULATED_IP,
        port: firstPort + index,
        address,
        ref: { id: nodeId(name, SIMULATED_IP), address },
        name,
        state: 'up',
        server: null,
        sockets: new Set<Socket>(),
        auth: null,
        coordinator: null,
        epoch: 0,
        heardMs: 0,
        pings: 0,
        relays: 0,
        ping: null,
      };
    });
    const sim = new PeerSimulator(opts, peers);
    sim.firstPort = firstPort;
    for (const other of opts.others) sim.known.add(other);
    for (const p of peers) {
      sim.byAddress.set(p.address, p);
      sim.known.add(p.address);
    }
    try {
      // Binding is quick, but 5,000 at once would queue 5,000 callbacks: a few hundred at a time.
      for (let i = 0; i < peers.length; i += 500) {
        await Promise.all(peers.slice(i, i + 500).map((p) => sim.listen(p)));
      }
      if (opts.pathReports) sim.startReports(opts.pathReports.perRound);
    } catch (err) {
      await sim.stop();
      const last = firstPort + opts.count - 1;
      throw new Error(
        `simulator: binding ${opts.count} peers on ${SIMULATED_IP}:${firstPort}-${last} failed`,
        { cause: err },
      );
    }
    return sim;
  }

  private startReports(perRound: number): void {
    const now = () => Date.now();
    this.reports = new SimulatedPathReports(
      this.peers.map((peer) => ({
        ref: peer.ref,
        up: () => peer.state === 'up',
        followed: () => ({ coordinator: this.coordinatorOf(peer, now()), epoch: peer.epoch }),
        auth: () => this.authOf(peer),
      })),
      [...this.known],
      perRound,
    );
    this.reports.start();
  }

  get addresses(): string[] {
    return this.peers.map((p) => p.address);
  }

  stateOf(address: string): PeerState {
    return this.peer(address).state;
  }

  /** Like a crashed process: its port closes (refused) and its open connections are destroyed. */
  async die(address: string): Promise<void> {
    const peer = this.peer(address);
    peer.state = 'dead';
    await closeServer(peer);
  }

  /** Connections are still accepted, and existing ones kept, but nothing is ever answered. */
  blackhole(address: string): void {
    const peer = this.peer(address);
    if (peer.state === 'dead') throw new Error(`${address} is dead: revive it first`);
    peer.state = 'blackhole';
  }

  /** A dead peer listens again; a black-holed one answers again (new requests). */
  async revive(address: string): Promise<void> {
    const peer = this.peer(address);
    const wasDead = peer.state === 'dead';
    peer.state = 'up';
    if (wasDead) await this.listen(peer);
  }

  /** Requests to `address` for /ping so far. */
  pingsOf(address: string): number {
    return this.peer(address).pings;
  }

  /** Date.now() of `address`'s last accepted heartbeat; 0: never. */
  lastHeartbeat(address: string): number {
    return this.peer(address).heardMs;
  }

  /** How GET /ping arrivals spread over [fromMs, toMs] (Date.now() times), in 10 ms buckets. */
  pingArrivals(fromMs: number, toMs: number): ArrivalSpread {
    return this.arrivals.spread(fromMs, toMs);
  }

  stats(heardWithinMs = 1_500): SimulatorStats {
    const now = Date.now();
    const live = this.peers.filter((p) => p.state === 'up');
    const coordinators: Record<string, number> = {};
    for (const p of live) {
      const c = this.coordinatorOf(p, now)?.address ?? 'none';
      coordinators[c] = (coordinators[c] ?? 0) + 1;
    }
    const epochs = live.map((p) => p.epoch);
    const cpu = process.cpuUsage();
    const loop = performance.eventLoopUtilization();
    return {
      peers: this.peers.length,
      up: live.length,
      dead: this.peers.filter((p) => p.state === 'dead').length,
      blackholed: this.peers.filter((p) => p.state === 'blackhole').length,
      connections: this.connections,
      openConnections: this.peers.reduce((n, p) => n + p.sockets.size, 0),
      requests: Object.fromEntries(this.requests),
      refused: Object.fromEntries(this.refusals),
      heardWithin: live.filter((p) => p.heardMs > 0 && now - p.heardMs <= heardWithinMs).length,
      heardWithinMs,
      neverPinged: live.filter((p) => p.pings === 0).length,
      coordinators,
      epochs: {
        min: epochs.length > 0 ? Math.min(...epochs) : 0,
        max: epochs.length > 0 ? Math.max(...epochs) : 0,
      },
      schemaErrors: [...this.schemaErrors],
      pathReports: this.reports?.counts() ?? null,
      cpuUserUs: cpu.user,
      cpuSystemUs: cpu.system,
      rssBytes: process.memoryUsage.rss(),
      loopActiveMs: loop.active,
      loopIdleMs: loop.idle,
    };
  }

  /** Closes every address and connection; safe to call twice. */
  async stop(): Promise<void> {
    this.reports?.stop();
    for (const p of this.peers) p.state = 'dead';
    await Promise.all(this.peers.map((p) => closeServer(p)));
    this.http.closeAllConnections();
  }

  private peer(address: string): SimPeer {
    const peer = this.byAddress.get(address);
    if (!peer) throw new Error(`${address} is not a simulated peer`);
    return peer;
  }

  private async listen(peer: SimPeer): Promise<void> {
    const server = createNetServer({ noDelay: true });
    server.on('connection', (socket: Socket) => this.accept(peer, socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: peer.ip, port: peer.port, exclusive: true }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Past the listen: an accept that fails (EMFILE: out of file descriptors) is counted, not fatal.
    server.on('error', (err: NodeJS.ErrnoException) =>
      this.count(this.refusals, `accept ${err.code ?? err.message}`),
    );
    peer.server = server;
  }

  private accept(peer: SimPeer, socket: Socket): void {
    this.connections++;
    peer.sockets.add(socket);
    socket.once('close', () => peer.sockets.delete(socket));
    socket.on('error', () => undefined);
    if (peer.state === 'blackhole') {
      // Accepted and read, never answered: the client's request waits until it gives up.
      socket.on('data', () => undefined);
      socket.once('end', () => socket.destroy());
      return;
    }
    this.socketPeer.set(socket, peer);
    this.http.emit('connection', socket);
  }

  /**
   * The real code's pure checks of addresses (sender.ts, node-ref.ts), remembered: the same few
   * pairs come back thousands of times a second, and parsing them each time is most of a message.
   */
  private memo(
    table: Map<string, Map<string, boolean>>,
    a: string,
    b: string,
    check: () => boolean,
  ): boolean {
    // Nested maps on the strings themselves: no key string built per message.
    let row = table.get(a);
    if (!row) {
      if (table.size > 1_000) table.clear();
      row = new Map<string, boolean>();
      table.set(a, row);
    }
    let known = row.get(b);
    if (known === undefined) {
      known = check();
      row.set(b, known);
    }
    return known;
  }

  private count(map: Map<string, number>, key: string): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }

  private coordinatorOf(peer: SimPeer, now: number): NodeRef | null {
    const timeout = this.opts.coordinatorTimeoutMs ?? 1_500;
    return peer.coordinator && now - peer.heardMs <= timeout ? peer.coordinator : null;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const peer = this.socketPeer.get(req.socket);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    this.count(this.requests, path === '/ping' || PEER_PATHS.includes(path) ? path : 'other');
    if (!peer) {
      res.destroy();
      return;
    }
    if (peer.state !== 'up') return; // black-holed (or dying): never answered
    if (req.method === 'GET' && path === '/ping') {
      peer.pings++;
      this.arrivals.add(Date.now());
      this.sendPing(peer, req, res, this.probeHeartbeat(peer, req));
      return;
    }
    if (req.method === 'POST' && PEER_PATHS.includes(path)) {
      this.peerMessage(peer, path, req, res);
      return;
    }
    req.resume();
    this.send(res, { status: 404, body: { error: `no route for ${req.method} ${path}` } });
  }

  /**
   * As app.ts: a probe's heartbeat, checked, keeps the coordinator followed (bully.ts); true if
   * it did (the answer then says so).
   */
  private probeHeartbeat(peer: SimPeer, req: IncomingMessage): boolean {
    const value = req.headers[HEARTBEAT_HEADER];
    if (typeof value !== 'string') return false;
    const header = req.headers[AUTH_HEADER];
    const remote = req.socket.remoteAddress;
    const check = checkHeartbeat(value, typeof header === 'string' ? header : undefined, {
      remote,
      auth: this.authOf(peer),
      selfAddress: peer.address,
      senderCheck: (r, claimed) =>
        this.memo(this.senderChecks, r ?? '', claimed, () => sentBy(r, claimed)),
    });
    if (!check.ok) {
      this.count(this.refusals, `heartbeat ${check.why}`);
      return false;
    }
    const { from, epoch } = check.heartbeat;
    if (peer.coordinator?.address !== from || epoch !== peer.epoch) return false;
    peer.heardMs = Date.now();
    return true;
  }

  /** The answer to GET /ping, rebuilt only when the peer's epoch or coordinator changed. */
  private sendPing(
    peer: SimPeer,
    req: IncomingMessage,
    res: ServerResponse,
    tookHeartbeat: boolean,
  ): void {
    const coordinator = this.coordinatorOf(peer, Date.now());
    const key = `${peer.epoch} ${coordinator?.address ?? ''}`;
    if (peer.ping?.key !== key || this.opts.strict) {
      const answer = this.answerChecked({
        status: 200,
        body: this.pingOf(peer),
        schema: 'ping-response',
      });
      peer.ping = { key, bytes: Buffer.from(JSON.stringify(answer.body)) };
    }
    // As app.ts: a challenged probe is answered signed (the coordinator checks every answer).
    const auth = this.authOf(peer);
    const challenge = auth ? readChallenge(header(req, CHALLENGE_HEADER)) : null;
    res.writeHead(200, [
      'content-type',
      'application/json',
      'content-length',
      String(peer.ping.bytes.length),
      ...(tookHeartbeat ? [HEARTBEAT_HEADER, TAKES_HEARTBEATS] : []),
      ...(auth && challenge
        ? [AUTH_HEADER, auth.signResponse(challenge, 200, peer.ping.bytes)]
        : []),
    ]);
    res.end(peer.ping.bytes);
  }

  private pingOf(peer: SimPeer): PingResponse {
    return {
      id: peer.ref.id,
      address: peer.address,
      node_name: peer.name,
      role: 'follower',
      epoch: peer.epoch,
      coordinator: this.coordinatorOf(peer, Date.now()),
    };
  }

  /** In the real node's order (app.ts, peer-guard.ts): size, header, body, signature, JSON, schema. */
  private peerMessage(peer: SimPeer, path: string, req: IncomingMessage, res: ServerResponse) {
    const limit = path === '/coordinator' ? ANNOUNCEMENT_LIMIT : SMALL_LIMIT;
    const refuse = (status: number, reason: string, error: string, close = false) => {
      this.count(this.refusals, `${status} ${reason}`);
      if (close) res.setHeader('connection', 'close');
      this.send(res, { status, body: { error } });
    };
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      refuse(413, 'too-large', `request body larger than ${limit} bytes`, true);
      return;
    }
    const header = req.headers[AUTH_HEADER];
    const authHeader = typeof header === 'string' ? header : undefined;
    const auth = this.authOf(peer);
    const early = auth?.checkHeader(authHeader) ?? null;
    if (early !== null) {
      req.resume();
      refuse(401, early, describeAuthFailure(early), true);
      return;
    }
    readBody(req, limit, (body) => {
      if (body === null) {
        refuse(413, 'too-large', `request body larger than ${limit} bytes`, true);
        return;
      }
      if (peer.state !== 'up') return;
      let nonce: string | undefined;
      if (auth) {
        const verdict = auth.verifyRequest(
          'POST',
          signedPath(peer.address, path),
          authHeader,
          body,
        );
        if (!verdict.ok) {
          refuse(401, verdict.failure, describeAuthFailure(verdict.failure));
          return;
        }
        nonce = verdict.nonce;
      }
      const message = this.parse(path, body);
      if ('error' in message) {
        refuse(400, 'malformed', message.error);
        return;
      }
      const from = message.from;
      const remote = req.socket.remoteAddress;
      if (
        !this.memo(this.senderChecks, remote ?? '', from.address, () =>
          sentBy(remote, from.address),
        )
      ) {
        refuse(403, 'wrong-address', `a message from ${from.address} must come from its own IP`);
        return;
      }
      if (path !== '/election' && !this.known.has(from.address)) {
        refuse(403, 'stranger', `${from.address} is not a discovered peer of this node`);
        return;
      }
      const reply = (answer: Answer) => this.send(res, this.answerChecked(answer), auth, nonce);
      if (path === '/probe') {
        void this.relay(peer, message.body as unknown as RelayProbeRequest).then(reply);
        return;
      }
      reply(this.onMessage(peer, path, from, message.epoch));
    });
  }

  /** The sender and epoch of a message; an announcement's from its head unless strict. */
  private parse(
    path: string,
    body: Buffer,
  ): { from: NodeRef; epoch: number; body: Record<string, unknown> } | { error: string } {
    if (path === '/coordinator' && !this.opts.strict) {
      const head = ANNOUNCEMENT_HEAD.exec(body.subarray(0, 600).toString('utf8'));
      const from = head?.[1] ? this.senderOf(head[1]) : null;
      if (from && head?.[2]) return { from, epoch: Number(head[2]), body: {} };
    }
    let value: unknown;
    try {
      value = body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
    } catch {
      return { error: 'request body is not JSON' };
    }
    const schema = (
      {
        '/election': 'election-request',
        '/coordinator': 'announcement',
        '/probe': 'probe-request',
        '/leave': 'leave',
      } as const
    )[path as '/leave'];
    const check = this.schemas.check(schema, value);
    if (!check.ok) {
      if (this.opts.strict) this.noteSchemaError(`received ${path}: ${check.errors.join('; ')}`);
      return { error: `invalid ${schema}: ${check.errors.join('; ')}` };
    }
    const v = value as { from: NodeRef; epoch?: number };
    return { from: v.from, epoch: v.epoch ?? 0, body: value as Record<string, unknown> };
  }

  /** The node-ref an announcement's head names, parsed and checked once per spelling. */
  private senderOf(text: string): NodeRef | null {
    let from = this.senders.get(text);
    if (from === undefined) {
      const value = JSON.parse(text) as unknown;
      from = this.schemas.check('node-ref', value).ok ? (value as NodeRef) : null;
      if (this.senders.size > 1_000) this.senders.clear();
      this.senders.set(text, from);
    }
    return from;
  }

  /** /election, /coordinator and /leave as a follower that never stands for election itself. */
  private onMessage(peer: SimPeer, path: string, from: NodeRef, epoch: number): Answer {
    const now = Date.now();
    if (path === '/leave') {
      if (peer.coordinator?.address === from.address) peer.coordinator = null;
      return { status: 200, body: { ok: true } };
    }
    if (path === '/election') {
      // As bully.ts: only a peer's epoch is adopted; the answer names the live coordinator.
      if (this.known.has(from.address)) peer.epoch = Math.max(peer.epoch, epoch);
      return {
        status: 200,
        schema: 'election-answer',
        body: {
          type: 'answer',
          from: peer.ref,
          epoch: peer.epoch,
          coordinator: this.coordinatorOf(peer, now),
        },
      };
    }
    const reject = (reason: AnnouncementReply['reason']): Answer => ({
      status: 200,
      schema: 'announcement-reply',
      // stale-epoch: a real follower hands over the verdicts it holds; a simulated one holds none.
      body: {
        accepted: false,
        reason,
        epoch: peer.epoch,
        coordinator: peer.coordinator,
        ...(reason === 'stale-epoch' ? { peers: [], undelivered: [] } : {}),
      },
    });
    // bully.ts onAnnouncement; a simulated peer refuses a lower-ranked announcer but never takes over.
    if (
      !this.memo(this.rankChecks, from.address, peer.address, () =>
        outranks(from.address, peer.address),
      )
    ) {
      return reject('outranked');
    }
    if (epoch < peer.epoch) return reject('stale-epoch');
    const current = peer.coordinator;
    if (
      epoch === peer.epoch &&
      current &&
      current.address !== from.address &&
      !this.memo(this.rankChecks, from.address, current.address, () =>
        outranks(from.address, current.address),
      )
    ) {
      return reject('conflict');
    }
    peer.epoch = epoch;
    peer.coordinator = from;
    peer.heardMs = now;
    return {
      status: 200,
      schema: 'announcement-reply',
      body: { accepted: true, epoch, coordinator: from },
    };
  }

  /**
   * POST /probe: GET /ping of the target from this peer (of a simulated target, in memory: see
   * below), retried until the deadline.
   */
  private async relay(peer: SimPeer, req: RelayProbeRequest): Promise<Answer> {
    if (!this.known.has(req.target)) {
      this.count(this.refusals, '403 target-not-a-peer');
      return { status: 403, body: { error: `${req.target} is not a peer of this node` } };
    }
    if (peer.relays >= MAX_RELAYS_IN_FLIGHT) {
      this.count(this.refusals, '429 relays');
      return { status: 429, body: { error: 'too many indirect probes at once' } };
    }
    peer.relays++;
    // A target in this process is pinged in memory, by its state: a real ping from one simulated
    // peer to another tests only this process's own loopback, and costs it a connection of two
    // descriptors each attempt, thousands at once when the coordinator confirms many suspects.
    const simulated = this.byAddress.get(req.target);
    try {
      const started = performance.now();
      const deadline = started + Math.min(req.timeout_ms, this.opts.maxRelayMs ?? 2_000);
      let attempts = 0;
      let last: { id: string } | { error: string } = { error: 'not tried' };
      while (attempts < 3 && performance.now() < deadline) {
        attempts++;
        const timeoutMs = Math.min(1_000, deadline - performance.now());
        last = simulated
          ? await this.pingSimulated(simulated, timeoutMs)
          : await this.pingFrom(peer.ip, req.target, timeoutMs);
        if ('id' in last) break;
        await new Promise((r) =>
          setTimeout(r, Math.min(200, Math.max(0, deadline - performance.now()))),
        );
      }
      const body = {
        target: req.target,
        reachable: 'id' in last,
        attempts: Math.max(1, attempts),
        latency_ms: Math.round(performance.now() - started),
        ...('id' in last ? { id: last.id } : { detail: last.error.slice(0, 1000) }),
      };
      return { status: 200, schema: 'probe-result', body };
    } finally {
      peer.relays--;
    }
  }

  /** A ping of a simulated peer as its state would answer it: at once, refused, or never. */
  private pingSimulated(
    target: SimPeer,
    timeoutMs: number,
  ): Promise<{ id: string } | { error: string }> {
    if (target.state === 'up') return Promise.resolve({ id: target.ref.id });
    if (target.state === 'dead') return Promise.resolve({ error: connectionError('ECONNREFUSED') });
    return new Promise((resolve) =>
      setTimeout(() => resolve({ error: timedOut(timeoutMs) }), Math.max(1, timeoutMs)),
    );
  }

  private pingFrom(
    ip: string,
    target: string,
    timeoutMs: number,
  ): Promise<{ id: string } | { error: string }> {
    const parsed = parseAddress(target);
    if (!parsed) return Promise.resolve({ error: `not an address: ${target}` });
    return new Promise((resolve) => {
      const req = request({
        host: parsed.ip,
        port: parsed.port,
        path: '/ping',
        agent: false,
        // As a real node: bound to its own IP only when that is another loopback IP than 127.0.0.1.
        ...(ip === SIMULATED_IP ? {} : { localAddress: ip }),
      });
      const timer = setTimeout(
        () => {
          req.destroy();
          resolve({ error: timedOut(timeoutMs) });
        },
        Math.max(1, timeoutMs),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve({ error: err.code ? connectionError(err.code) : err.message });
      });
      req.on('response', (res) => {
        readBody(res, 1024 * 1024, (bytes) => {
          clearTimeout(timer);
          try {
            const value = JSON.parse(bytes?.toString('utf8') ?? '') as { id?: unknown };
            const ok = res.statusCode === 200 && this.schemas.check('ping-response', value).ok;
            resolve(
              ok && typeof value.id === 'string'
                ? { id: value.id }
                : { error: `HTTP ${res.statusCode}` },
            );
          } catch {
            resolve({ error: 'answer is not JSON' });
          }
        });
      });
      req.end();
    });
  }

  private authOf(peer: SimPeer): PeerAuth | null {
    const secret = this.opts.secret;
    if (secret === null) return null;
    peer.auth ??= new PeerAuth({
      secrets: () => [secret],
      now: () => Date.now(),
      maxSkewMs: 30_000,
    });
    return peer.auth;
  }

  private answerChecked(answer: Answer): Answer {
    if (this.opts.strict && answer.schema) {
      const check = this.schemas.check(answer.schema, answer.body);
      if (!check.ok) this.noteSchemaError(`answered ${answer.schema}: ${check.errors.join('; ')}`);
    }
    return answer;
  }

  private noteSchemaError(text: string): void {
    if (this.schemaErrors.length < 20) this.schemaErrors.push(text);
  }

  /** As the real node answers: JSON; a 200 to a signed request signed for its nonce (answerPeer). */
  private send(
    res: ServerResponse,
    { status, body }: Answer,
    auth?: PeerAuth | null,
    nonce?: string,
  ) {
    const bytes = Buffer.from(JSON.stringify(body));
    const headers = ['content-type', 'application/json', 'content-length', String(bytes.length)];
    if (auth && nonce !== undefined && status === 200) {
      headers.push(AUTH_HEADER, auth.signResponse(nonce, status, bytes));
    }
    res.writeHead(status, headers);
    res.end(bytes);
  }
}

/** Reads a whole body; null once it passes `limit` bytes (the rest is discarded). */
function readBody(
  stream: IncomingMessage,
  limit: number,
  done: (body: Buffer | null) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  });
  stream.once('end', () => {
    if (size > limit) done(null);
    else done(chunks.length === 1 && chunks[0] ? chunks[0] : Buffer.concat(chunks, size));
  });
  stream.once('error', () => undefined);
}

/** Stops listening and destroys the peer's connections (a crashed process's sockets go too). */
async function closeServer(peer: SimPeer): Promise<void> {
  const server = peer.server;
  peer.server = null;
  const closed = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
  for (const socket of peer.sockets) socket.destroy();
  peer.sockets.clear();
  await closed;
}

/**
 * A relay's detail for a connection's error, as a real relay writes it (`<reason> (<detail>)`,
 * src/prober/relay.ts): the coordinator reads a refusal from its first word (evidence.ts), and
 * would take a bare code for silence.
 */
function connectionError(code: string): string {
  if (code === 'ECONNREFUSED') return `refused (connect ${code})`;
  if (code === 'ECONNRESET') return `reset (${code})`;
  return code;
}

/** A relay's detail for a ping that got no answer in time, in the same form. */
function timedOut(timeoutMs: number): string {
  return `timeout (no answer within ${Math.round(timeoutMs)} ms)`;
}

/** A request header's value, if it came once. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
