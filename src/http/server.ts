// Binds the app to a port and closes it: the only module that listens.
//
// Hostile or broken clients are bounded here, before any route runs: a connection must send its
// headers within `headersTimeoutMs` and its whole request within `requestTimeoutMs` (checked every
// second, not Node's default 30 s, so a slowloris holds a socket for seconds, not a minute), at
// most `maxConnections` sockets are open at once, and one remote IP holds at most
// `maxConnectionsPerIp` of them (extras are closed at once), so a flood from a few addresses
// cannot take the sockets the peers need. Peers send small requests in one go and keep one
// connection (a few while heartbeats, probes and relays overlap), so none of this touches them.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { isPodItself, RateLimiter, type RateLimit } from './rate-limit.js';

export interface HttpServer {
  readonly port: number;
  close(): Promise<void>;
}

export interface ServerLimits {
  /** Idle keep-alive connections close after this (peers' agents close theirs at 4 s). */
  keepAliveTimeoutMs: number;
  /** From a connection's (or a kept-alive request's) first byte to the end of its headers. */
  headersTimeoutMs: number;
  /** From the first byte to the end of the body; answers may take longer (a relayed probe). */
  requestTimeoutMs: number;
  /** How often the two timeouts above are checked: a timeout fires up to this late. */
  checkIntervalMs: number;
  /** Open connections at most; one more is closed as soon as it is accepted. */
  maxConnections: number;
  /** Open connections from one remote IP at most; one more is closed at once. 0: no cap. */
  maxConnectionsPerIp: number;
  /** Requests from one remote IP (127.0.0.1, the pod itself, excepted); null: no limit. */
  rateLimit: RateLimit | null;
}

export const DEFAULT_LIMITS: ServerLimits = {
  keepAliveTimeoutMs: 5_000,
  // A request's headers fit in one packet; even a 4 MiB announcement arrives in well under a
  // second on a pod network, and its sender gave up after PROBE_TIMEOUT anyway.
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  checkIntervalMs: 1_000,
  // Above the mesh: when a coordinator dies, every lower-ranked node sends its election request
  // to every higher-ranked one at once, on new connections, so the next node in line takes up to
  // one connection per peer (5,000 nodes) in the same second. A cap below that would drop some of
  // them; a slowloris needs 256 IPs to reach this one.
  maxConnections: 16_384,
  // Far above what one peer, the kubelet or Prometheus opens (one or a few each).
  maxConnectionsPerIp: 64,
  // A peer makes a few requests a second (heartbeats, probes, relays); an election burst is one
  // request per node. 100 a second with 200 at once is far above any of them.
  rateLimit: { perSecond: 100, burst: 200 },
};

/**
 * The app behind a per-IP rate limit: a request over it gets 429 and its connection is closed. The
 * pod's own loopback address (kubectl port-forward, kubectl exec, the demo) is never limited.
 */
function rateLimited(app: RequestListener, limit: RateLimit | null): RequestListener {
  if (!limit) return app;
  const limiter = new RateLimiter(limit);
  return (req, res) => {
    const ip = req.socket.remoteAddress ?? '';
    if (isPodItself(ip)) {
      app(req, res);
      return;
    }
    if (limiter.take(ip, performance.now())) {
      app(req, res);
      return;
    }
    const body = JSON.stringify({ error: 'too many requests from this address' });
    res.writeHead(429, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'retry-after': '1',
      connection: 'close',
    });
    res.end(body);
  };
}

/** Counts open sockets by remote IP; over the cap, a new one is destroyed before it is read. */
function capPerIp(server: Server, cap: number): void {
  if (cap <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const ip = socket.remoteAddress ?? '';
    // Like the rate limit: the pod's own loopback address is never capped.
    if (isPodItself(ip)) return;
    const count = open.get(ip) ?? 0;
    if (count >= cap) {
      socket.destroy();
      return;
    }
    open.set(ip, count + 1);
    socket.once('close', () => {
      const left = (open.get(ip) ?? 1) - 1;
      if (left > 0) open.set(ip, left);
      else open.delete(ip);
    });
  });
}

export async function listen(
  app: RequestListener,
  host: string,
  port: number,
  limits: Partial<ServerLimits> = {},
): Promise<HttpServer> {
  const l: ServerLimits = { ...DEFAULT_LIMITS, ...limits };
  const server: Server = createServer(
    {
      // Peers poll often; keep idle sockets short so shutdown and crashes free them fast.
      keepAliveTimeout: l.keepAliveTimeoutMs,
      headersTimeout: l.headersTimeoutMs,
      requestTimeout: l.requestTimeoutMs,
      connectionsCheckingInterval: l.checkIntervalMs,
    },
    rateLimited(app, l.rateLimit),
  );
  server.maxConnections = l.maxConnections;
  capPerIp(server, l.maxConnectionsPerIp);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
