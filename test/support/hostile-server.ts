// A hostile peer or receiver on 127.0.0.1: garbage, wrong shapes, huge or endless bodies, answers
// that never finish or drip a byte at a time, silence, redirects, late answers. Every connection is
// tracked (bytes written, when it closed) so tests can tell the client stopped reading and went;
// every loop and timer is bounded, and close() destroys every socket.
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';

export type RedirectStatus = 301 | 302 | 307 | 308;

export type Behaviour =
  /** 200 with a valid-looking empty JSON object (a healthy receiver). */
  | { kind: 'ok' }
  /** 200 with a body that is not JSON. */
  | { kind: 'garbage' }
  /** 200 with JSON of another shape than any answer. */
  | { kind: 'wrong-shape' }
  /**
   * 200 and a body of `bytes` (default 50 MiB), written as fast as the client reads, until the
   * client goes. `endless`: chunked, no length announced, up to MAX_ENDLESS_BYTES.
   */
  | { kind: 'huge'; bytes?: number; endless?: boolean }
  /** Headers announcing a body, a few bytes of it, then nothing more. */
  | { kind: 'unfinished' }
  /**
   * One byte every `everyMs` (default 100) for as long as the client stays, up to MAX_DRIP_MS.
   * `headers`: the status line and headers drip too (they never end); else the body does.
   */
  | { kind: 'drip'; everyMs?: number; headers?: boolean }
  /** Accepts the TCP connection, never answers (not even HTTP: the bytes sent are discarded). */
  | { kind: 'silent' }
  /** A redirect to the target server (which records whether it was hit). */
  | { kind: 'redirect'; status: RedirectStatus }
  /** Answers only after `afterMs`, with `status` (200) and `body` ({}). */
  | { kind: 'late'; afterMs: number; status?: number; body?: unknown }
  /** Bytes that are not HTTP at all. */
  | { kind: 'not-http' };

/** One accepted TCP connection, as the server saw it. */
export interface Connection {
  readonly openedAt: number;
  /** "METHOD /path" of each request read on it (none when the server never reads). */
  readonly requests: string[];
  closed: boolean;
  closedAt: number | null;
  /** Bytes handed to the socket (the kernel may still hold some); final once closed. */
  bytesWritten: number;
  /** Resolves when the socket closes. */
  readonly done: Promise<void>;
}

export const DEFAULT_HUGE_BYTES = 50 * 1024 * 1024;
/** An endless body still ends here, so a client that reads everything cannot hang a test. */
export const MAX_ENDLESS_BYTES = 256 * 1024 * 1024;
/** A drip or a late answer never lasts longer than this. */
export const MAX_DRIP_MS = 60_000;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

function listenOn(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

export class HostileServer {
  /** What the next connection (and the next request) gets; tests may change it at any time. */
  behaviour: Behaviour;
  readonly connections: Connection[] = [];
  /** Requests that reached the redirect target ("METHOD /path"). */
  readonly targetHits: string[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closing = false;
  private port = 0;
  private targetPort = 0;
  private readonly net: Server;
  private readonly target: Server;
  private readonly http = createHttpServer((req, res) => this.answer(req, res));

  private constructor(behaviour: Behaviour) {
    this.behaviour = behaviour;
    // Node's own server limits would end some hostile answers early; none apply here.
    this.http.keepAliveTimeout = 5_000;
    this.http.requestTimeout = 0;
    this.http.headersTimeout = 0;
    this.net = createNetServer((socket) => this.accept(socket));
    const targetHttp = createHttpServer((req, res) => {
      this.targetHits.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    this.target = createNetServer((socket) => {
      this.track(socket);
      targetHttp.emit('connection', socket);
    });
  }

  static async start(behaviour: Behaviour): Promise<HostileServer> {
    const server = new HostileServer(behaviour);
    server.port = await listenOn(server.net);
    server.targetPort = await listenOn(server.target);
    return server;
  }

  /** "127.0.0.1:port", as a peer address. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  url(path = '/hook'): string {
    return `http://${this.address}${path}`;
  }

  /** Where redirects point: another local server, which only records that it was hit. */
  get targetUrl(): string {
    return `http://127.0.0.1:${this.targetPort}/elsewhere`;
  }

  /** Connections to this server (not the target) still open. */
  get open(): Connection[] {
    return this.connections.filter((c) => !c.closed);
  }

  /** Resolves true once every connection is closed, false if some is still open after `ms`. */
  async allClosed(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (this.open.length > 0) {
      if (Date.now() >= deadline) return false;
      await new Promise<void>((resolve) => this.after(20, resolve));
    }
    return true;
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await Promise.all(
      [this.net, this.target].map(
        (server) => new Promise<void>((resolve) => server.close(() => resolve())),
      ),
    );
  }

  /** A tracked timer: cleared on close, never keeps the process alive. */
  private after(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    this.timers.add(timer);
  }

  private track(socket: Socket): Connection {
    let resolveDone: () => void = () => undefined;
    const connection: Connection = {
      openedAt: Date.now(),
      requests: [],
      closed: false,
      closedAt: null,
      bytesWritten: 0,
      done: new Promise<void>((resolve) => (resolveDone = resolve)),
    };
    this.sockets.add(socket);
    socketConnection.set(socket, connection);
    // A client that goes mid-answer resets the connection: expected here, never a crash.
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.sockets.delete(socket);
      connection.closed = true;
      connection.closedAt = Date.now();
      connection.bytesWritten = socket.bytesWritten;
      resolveDone();
    });
    if (this.closing) socket.destroy();
    return connection;
  }

  private accept(socket: Socket): void {
    this.connections.push(this.track(socket));
    const behaviour = this.behaviour;
    switch (behaviour.kind) {
      case 'silent':
        // Accepted, and the request read (so the server sees the client go) but never answered.
        socket.resume();
        return;
      case 'not-http':
        socket.resume();
        socket.end('SSH-2.0-OpenSSH_9.6\r\n\u0000\u0001 this is not HTTP {]\r\n\r\n');
        return;
      case 'drip':
        if (behaviour.headers) {
          socket.resume();
          // A status line, then a header that never ends.
          this.drip(socket, 'HTTP/1.1 200 OK\r\nx-drip: ', behaviour.everyMs);
          return;
        }
        break;
      default:
        break;
    }
    this.http.emit('connection', socket);
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const connection = socketConnection.get(req.socket);
    connection?.requests.push(`${req.method} ${req.url}`);
    req.resume(); // the request body is read and ignored
    const behaviour = this.behaviour;
    const json = (status: number, body: unknown) =>
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(typeof body === 'string' ? body : JSON.stringify(body));
    switch (behaviour.kind) {
      case 'ok':
        json(200, {});
        return;
      case 'garbage':
        json(200, '<html><body>502 Bad Gateway\u0000\u00ff{{{</body>');
        return;
      case 'wrong-shape':
        json(200, { hello: 'world', items: [1, 2, 3], nested: { epoch: 'three' } });
        return;
      case 'huge':
        void this.huge(res, behaviour.bytes ?? DEFAULT_HUGE_BYTES, behaviour.endless ?? false);
        return;
      case 'unfinished':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        res.write('{"id": "worker-2@');
        return; // …and nothing more, ever
      case 'drip':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        this.drip(res, '{"id":"', behaviour.everyMs);
        return;
      case 'redirect':
        res.writeHead(behaviour.status, { location: this.targetUrl, 'content-length': '0' });
        res.end();
        return;
      case 'late':
        this.after(Math.min(behaviour.afterMs, MAX_DRIP_MS), () => {
          if (!res.destroyed) json(behaviour.status ?? 200, behaviour.body ?? {});
        });
        return;
      case 'silent':
      case 'not-http':
        // Decided per connection when it was accepted; a later request on the same connection
        // (the behaviour changed meanwhile) is simply never answered.
        return;
    }
  }

  /** Writes `bytes` of body as fast as the client reads it; stops when the client goes. */
  private async huge(res: ServerResponse, bytes: number, endless: boolean): Promise<void> {
    const total = endless ? MAX_ENDLESS_BYTES : bytes;
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(endless ? {} : { 'content-length': String(total) }),
    });
    res.on('error', () => undefined);
    let written = 0;
    while (written < total && !res.destroyed && !this.closing) {
      const chunk = total - written < CHUNK.length ? CHUNK.subarray(0, total - written) : CHUNK;
      written += chunk.length;
      if (!res.write(chunk)) {
        // Backpressure: wait until the client reads on, or goes.
        await drainedOrClosed(res);
      }
    }
    if (!res.destroyed && !this.closing) res.end();
  }

  /** Writes `prefix` then one byte every `everyMs`, until the other side goes or MAX_DRIP_MS. */
  private drip(out: Socket | ServerResponse, prefix: string, everyMs = 100): void {
    const until = Date.now() + MAX_DRIP_MS;
    out.write(prefix);
    const step = () => {
      if (out.destroyed || this.closing) return;
      if (Date.now() >= until) {
        out.destroy();
        return;
      }
      out.write('a');
      this.after(everyMs, step);
    };
    this.after(everyMs, step);
  }
}

const socketConnection = new WeakMap<Socket, Connection>();

/** Resolves on 'drain' or 'close', whichever comes first; no listener is left behind. */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
