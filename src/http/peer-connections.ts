// Connections to peers, kept open between requests: a probe then costs one round trip, and a lost
// packet costs a retransmission (~200 ms) rather than a new handshake (a lost SYN costs 1 s).
//
// At most one idle connection per peer. A second one, opened while two requests to a peer overlap
// (a probe of a relay busy with an indirect probe must not wait behind it), closes once it is
// free. A connection that failed, timed out or was answered with anything but a whole reusable
// response is destroyed, so a dead peer's connection is never reused. Idle connections close
// after IDLE_MS, before a peer's server would close them (5 s): never a request on a connection
// the other side is closing.
import { connect, type Socket } from 'node:net';

export const IDLE_MS = 4_000;
/** TCP keep-alive probes on an open connection start after this long without traffic. */
const KEEPALIVE_MS = 1_000;

/** What the request a connection carries hears of it. */
export interface ConnectionListener {
  connected(): void;
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
    socket.on('data', (bytes: Buffer) => {
      // Bytes no request asked for: not a peer to keep talking to.
      if (this.listener) this.listener.data(bytes);
      else socket.destroy();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.listener?.error(err));
    socket.on('close', () => {
      this.closed = true;
      this.pool.forget(this);
      const listener = this.listener;
      this.listener = null;
      listener?.closed();
    });
    // Idle this long: close. A request in flight has its own timer.
    socket.on('timeout', () => {
      if (!this.listener) socket.destroy();
    });
  }

  /** Connected, and neither side has closed it. */
  get usable(): boolean {
    return !this.closed && !this.socket.destroyed && this.socket.readyState === 'open';
  }

  get connecting(): boolean {
    return this.socket.connecting;
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

  constructor(private readonly idleMs = IDLE_MS) {}

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
    const socket = connect({ host, port, ...(localAddress ? { localAddress } : {}) });
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEPALIVE_MS);
    socket.setTimeout(this.idleMs);
    return new PeerConnection(key, socket, this);
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
  }
}
