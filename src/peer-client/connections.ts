// Connections to peers, kept open between requests: a probe then costs one round trip, and a lost
// packet costs a retransmission (~200 ms) rather than a new handshake (a lost SYN costs 1 s).
//
// At most one idle connection per peer. A second one, opened while two requests to a peer overlap
// (a probe of a relay busy with an indirect probe must not wait behind it), closes once it is
// free. A connection that failed, timed out or was answered with anything but a whole reusable
// response is destroyed, so a dead peer's connection is never reused. Idle connections close
// after IDLE_MS (swept every IDLE_MS / 8, by one timer rather than one per connection), before a
// peer's server would close them (5 s): never a request on a connection the other side is
// closing.
//
// Every connection reads into one shared buffer (net's `onread`): at 5,000 peers the coordinator
// reads 5,000 answers a second, and a stream's read costs a 64 KiB allocation, a Buffer and a
// Readable's bookkeeping each (a quarter of its allocation, measured). What a request keeps of the
// bytes it is handed it copies before it returns (response-parser.ts does).
import { connect, type Socket } from 'node:net';

export const IDLE_MS = 4_000;
/** TCP keep-alive probes on an open connection start after this long without traffic. */
const KEEPALIVE_MS = 1_000;
/**
 * The bytes of one read, whichever connection it was on: valid until the listener it is handed to
 * returns. An answer to a request (a few hundred bytes) fits in one read; a larger one takes more.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** What the request a connection carries hears of it. */
export interface ConnectionListener {
  connected(): void;
  /** Bytes read, valid only until this returns: the buffer is shared by every connection. */
  data(bytes: Buffer): void;
  error(err: NodeJS.ErrnoException): void;
  closed(): void;
}

export class PeerConnection {
  private listener: ConnectionListener | null = null;
  private closed = false;
  /** When it was last put back idle (performance.now()); null while in use or never. */
  idleSince: number | null = null;

  constructor(
    readonly key: string,
    readonly socket: Socket,
    private readonly pool: PeerConnections,
  ) {
    // Listeners are added once per connection, not per request: a coordinator sends thousands
    // of requests a second over the same connections.
    socket.on('connect', () => this.listener?.connected());
    socket.on('error', (err: NodeJS.ErrnoException) => this.listener?.error(err));
    socket.on('close', () => {
      this.closed = true;
      this.pool.forget(this);
      const listener = this.listener;
      this.listener = null;
      listener?.closed();
    });
  }

  /** Connected, and neither side has closed it. */
  get usable(): boolean {
    return !this.closed && !this.socket.destroyed && this.socket.readyState === 'open';
  }

  get connecting(): boolean {
    return this.socket.connecting;
  }

  /** The connection read `length` bytes into READ_BUFFER. */
  received(length: number): void {
    // Bytes no request asked for: not a peer to keep talking to.
    if (this.listener) this.listener.data(READ_BUFFER.subarray(0, length));
    else this.socket.destroy();
  }

  attach(listener: ConnectionListener): void {
    this.listener = listener;
  }

  detach(): void {
    this.listener = null;
  }

  destroy(): void {
    this.listener = null;
    this.socket.destroy();
  }
}

export interface ConnectTo {
  /** The peer as discovery lists it (ip:port): connections are pooled by it. */
  key: string;
  host: string;
  port: number;
  /** Source IP to connect from. */
  localAddress?: string;
}

export class PeerConnections {
  private readonly idle = new Map<string, PeerConnection>();
  /** Closes connections idle idleMs, while any is kept. */
  private sweeper: NodeJS.Timeout | null = null;

  constructor(private readonly idleMs = IDLE_MS) {}

  private sweep(): void {
    const now = performance.now();
    for (const connection of this.idle.values()) {
      if (now - (connection.idleSince ?? now) < this.idleMs) continue;
      this.idle.delete(connection.key);
      connection.destroy();
    }
    if (this.idle.size === 0) this.stopSweeping();
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /**
   * The peer's idle connection if it has a usable one, idle less than idleMs (a busy event loop
   * runs the idle timer late), else a new one (still connecting). `fresh`: a new one in any case.
   */
  acquire({ key, host, port, localAddress }: ConnectTo, fresh = false): PeerConnection {
    const kept = fresh ? undefined : this.idle.get(key);
    if (kept) {
      this.idle.delete(key);
      const idleMs = performance.now() - (kept.idleSince ?? 0);
      kept.idleSince = null;
      if (kept.usable && idleMs < this.idleMs) {
        kept.socket.ref();
        return kept;
      }
      kept.destroy();
    }
    let connection: PeerConnection | null = null;
    const socket = connect({
      host,
      port,
      ...(localAddress ? { localAddress } : {}),
      onread: {
        buffer: READ_BUFFER,
        callback: (length: number) => {
          connection?.received(length);
          return true;
        },
      },
    });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    connection = new PeerConnection(key, socket, this);
    return connection;
  }

  /** A request is done with the connection, which can carry another. */
  release(connection: PeerConnection): void {
    connection.detach();
    if (!connection.usable || this.idle.has(connection.key)) {
      connection.destroy();
      return;
    }
    // An idle connection does not keep the process alive (as Node's own agent does).
    connection.socket.unref();
    connection.idleSince = performance.now();
    this.idle.set(connection.key, connection);
    // Idle this long: closed (a request in flight has its own timer).
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(10, this.idleMs / 8)).unref();
  }

  /** The connection closed: it is not kept. */
  forget(connection: PeerConnection): void {
    if (this.idle.get(connection.key) === connection) this.idle.delete(connection.key);
  }

  /** How many peers have an idle connection kept. */
  get idleCount(): number {
    return this.idle.size;
  }

  /** Closes every idle connection. */
  closeIdle(): void {
    for (const connection of this.idle.values()) connection.destroy();
    this.idle.clear();
    this.stopSweeping();
  }
}
