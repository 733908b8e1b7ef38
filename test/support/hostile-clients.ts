// Hostile clients of a node, for tests and the benchmark: slowloris connections that drip their
// headers or their body a byte at a time, floods of malformed requests from many concurrent
// clients, and a pinger that times /ping meanwhile. Every loop is bounded (a count and a deadline)
// and every socket opened is destroyed before the function returns.
import { Agent, request, type OutgoingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

export interface Target {
  host: string;
  port: number;
}

/** Where a node listens, from its ip:port address. */
export function targetOf(address: string): Target {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
}

export interface HttpAnswer {
  /** The HTTP status, or null when the connection failed or closed without an answer. */
  status: number | null;
  body: Buffer;
  /** Why there was no answer (ECONNRESET, timeout, …). */
  error?: string;
  ms: number;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: Buffer;
  /**
   * Announce this content-length but send only `body` (which must be shorter), then wait for the
   * answer: a body that would be too large, without the bytes.
   */
  claimLength?: number;
}

/** Answers larger than this are not kept (only counted). */
const MAX_KEPT = 64 * 1024;

/** One request with node:http (no normalisation of the path or headers); never throws. */
export function send(
  target: Target,
  req: RawRequest,
  {
    timeoutMs = 5_000,
    agent,
    localAddress,
  }: { timeoutMs?: number; agent?: Agent; localAddress?: string } = {},
): Promise<HttpAnswer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (status: number | null, body: Buffer, error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ status, body, ms: performance.now() - started, ...(error ? { error } : {}) });
    };
    const headers: OutgoingHttpHeaders = { ...req.headers };
    if (req.claimLength !== undefined) headers['content-length'] = req.claimLength;
    else if (req.body !== undefined) headers['content-length'] = req.body.length;
    let r: ReturnType<typeof request>;
    try {
      r = request({
        host: target.host,
        port: target.port,
        method: req.method,
        path: req.path,
        headers,
        agent: agent ?? false,
        ...(localAddress ? { localAddress } : {}),
      });
    } catch (err) {
      // Node refuses to send some methods, paths or header values at all: no request made.
      resolve({ status: null, body: Buffer.alloc(0), error: `not sent: ${String(err)}`, ms: 0 });
      return;
    }
    const timer = setTimeout(() => {
      finish(null, Buffer.alloc(0), 'timeout');
      r.destroy();
    }, timeoutMs);
    r.on('error', (err: NodeJS.ErrnoException) =>
      finish(null, Buffer.alloc(0), err.code ?? err.message),
    );
    r.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= MAX_KEPT) chunks.push(c);
      });
      res.on('error', () => finish(res.statusCode ?? null, Buffer.concat(chunks)));
      res.on('end', () => {
        finish(res.statusCode ?? null, Buffer.concat(chunks));
        // A request whose body was only claimed is abandoned once answered.
        if (req.claimLength !== undefined) r.destroy();
      });
    });
    if (req.claimLength !== undefined) r.write(req.body ?? Buffer.alloc(0));
    else r.end(req.body);
  });
}

/** Opens a TCP connection from `localAddress`; rejects if it cannot connect within 5 s. */
export function openSocket(target: Target, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ ...target, ...(localAddress ? { localAddress } : {}) });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('connect timeout'));
    }, 5_000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

export type SlowMode =
  /** A request line and headers that never end, a byte at a time. */
  | 'headers'
  /** Complete headers announcing a body, then the body a byte at a time. */
  | 'body';

export interface SlowlorisOptions {
  target: Target;
  mode: SlowMode;
  connections: number;
  /** Source IPs, used in turn (several: the per-IP cap does not cut the attack short). */
  sources: string[];
  /** One byte per connection this often. */
  everyMs?: number;
  /** Give up (and close what is still open) after this long. */
  maxMs: number;
  /** Path of the request ('body' mode: a POST). */
  path?: string;
}

export interface SlowlorisResult {
  opened: number;
  /** Connections that could not be made. */
  failed: number;
  /** For each connection the server closed: ms from opening to the close. */
  closedAfterMs: number[];
  /** Connections still open at maxMs (closed by us). */
  stillOpen: number;
  /** Status lines the server sent before closing (e.g. 408), with counts. */
  answers: Record<string, number>;
  /** closedAfterMs by the status line the server sent. */
  closedAfterMsBy: Record<string, number[]>;
  bytesSent: number;
}

/** Runs a slowloris attack to its end: every connection closed by the server, or maxMs. */
export async function slowloris({
  target,
  mode,
  connections,
  sources,
  everyMs = 250,
  maxMs,
  path = mode === 'headers' ? '/status' : '/maintenance',
}: SlowlorisOptions): Promise<SlowlorisResult> {
  const result: SlowlorisResult = {
    opened: 0,
    failed: 0,
    closedAfterMs: [],
    stillOpen: 0,
    answers: {},
    closedAfterMsBy: {},
    bytesSent: 0,
  };
  const head =
    mode === 'headers'
      ? `GET ${path} HTTP/1.1\r\nHost: ${target.host}\r\nX-Slow: `
      : `POST ${path} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n`;
  const live = new Set<Socket>();
  const pending: Promise<void>[] = [];
  const deadline = Date.now() + maxMs;
  const opens = Array.from({ length: connections }, (_, i) =>
    openSocket(target, sources[i % sources.length]).then(
      (socket) => {
        result.opened++;
        live.add(socket);
        const openedMs = Date.now();
        let answer = '';
        socket.on('data', (c: Buffer) => {
          if (answer.length < 200) answer += c.toString('latin1');
        });
        socket.on('error', () => undefined);
        pending.push(
          new Promise<void>((resolve) =>
            socket.once('close', () => {
              if (live.delete(socket)) {
                const after = Date.now() - openedMs;
                result.closedAfterMs.push(after);
                const line = answer.split('\r\n')[0] || '(closed without an answer)';
                result.answers[line] = (result.answers[line] ?? 0) + 1;
                (result.closedAfterMsBy[line] ??= []).push(after);
              }
              resolve();
            }),
          ),
        );
        // 'body' mode: the headers go at once, only the body drips; 'headers': all of it drips.
        if (mode === 'body') {
          socket.write(head);
          result.bytesSent += head.length;
        }
        return { socket, next: 0 };
      },
      () => {
        result.failed++;
        return null;
      },
    ),
  );
  const opened = (await Promise.all(opens)).filter((o) => o !== null);
  try {
    for (let tick = 0; live.size > 0 && Date.now() < deadline; tick++) {
      for (const o of opened) {
        if (!live.has(o.socket) || o.socket.destroyed) continue;
        const byte = mode === 'headers' ? (head[o.next] ?? 'a') : '1';
        o.next++;
        o.socket.write(byte);
        result.bytesSent++;
      }
      await new Promise((r) =>
        setTimeout(r, Math.min(everyMs, Math.max(0, deadline - Date.now()))),
      );
    }
  } finally {
    result.stillOpen = live.size;
    for (const s of live) s.destroy();
    live.clear();
    await Promise.all(pending);
  }
  return result;
}

export interface FloodOptions {
  target: Target;
  /** Requests to send in all. */
  requests: number;
  /** Clients sending at once (each one request at a time, on its kept-alive connection). */
  concurrency: number;
  /** Source IPs the clients are spread over. */
  sources: string[];
  /** The i-th request. */
  make: (i: number) => RawRequest;
  /** Stop sending after this long (what is under way finishes). */
  maxMs: number;
  timeoutMs?: number;
  /** Called with every answer (to check it against what its request deserves). */
  onAnswer?: (i: number, req: RawRequest, answer: HttpAnswer) => void;
}

export interface FloodResult {
  sent: number;
  /** Answers by status ('closed' for a connection closed without one, 'timeout'). */
  byStatus: Record<string, number>;
  /** Answers by request kind (method and path) and status. */
  byRequest: Record<string, Record<string, number>>;
  maxMs: number;
  elapsedMs: number;
}

/** Sends `requests` requests from `concurrency` clients as fast as the node answers them. */
export async function flood({
  target,
  requests,
  concurrency,
  sources,
  make,
  maxMs,
  timeoutMs = 5_000,
  onAnswer,
}: FloodOptions): Promise<FloodResult> {
  const started = Date.now();
  const perSource = Math.ceil(concurrency / sources.length);
  const agents = sources.map(
    () => new Agent({ keepAlive: true, maxSockets: perSource, maxFreeSockets: perSource }),
  );
  const result: FloodResult = { sent: 0, byStatus: {}, byRequest: {}, maxMs: 0, elapsedMs: 0 };
  let next = 0;
  const client = async (c: number) => {
    const agent = agents[c % agents.length];
    const localAddress = sources[c % sources.length];
    while (next < requests && Date.now() - started < maxMs) {
      const i = next++;
      const req = make(i);
      result.sent++;
      const answer = await send(target, req, {
        timeoutMs,
        ...(agent ? { agent } : {}),
        ...(localAddress ? { localAddress } : {}),
      });
      const key =
        answer.status === null
          ? answer.error === 'timeout'
            ? 'timeout'
            : 'closed'
          : String(answer.status);
      result.byStatus[key] = (result.byStatus[key] ?? 0) + 1;
      const kind = `${req.method} ${req.path.split('?')[0] ?? ''}${req.claimLength !== undefined ? ' (claims a huge body)' : (req.body?.length ?? 0) > 1024 * 1024 ? ' (huge body)' : ''}`;
      const row = (result.byRequest[kind] ??= {});
      row[key] = (row[key] ?? 0) + 1;
      result.maxMs = Math.max(result.maxMs, answer.ms);
      onAnswer?.(i, req, answer);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, (_, c) => client(c)));
  } finally {
    for (const a of agents) a.destroy();
  }
  result.elapsedMs = Date.now() - started;
  return result;
}

export interface PingStats {
  count: number;
  failed: number;
  maxMs: number;
  /** Latencies, in order. */
  samples: number[];
}

/**
 * The pinger's loop, in a worker thread of its own: the attack's clients keep this process's event
 * loop busy, and a ping timed there would count their delays as the node's.
 */
const PINGER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { host, port, everyMs, localAddress } = workerData;
const stats = { count: 0, failed: 0, maxMs: 0, samples: [] };
let running = true;
parentPort.on('message', () => { running = false; });
const once = () => new Promise((resolve) => {
  const started = performance.now();
  const options = { host, port, path: '/ping', agent: false, timeout: 5000 };
  if (localAddress) options.localAddress = localAddress;
  const req = http.request(options, (res) => {
    res.resume();
    res.on('end', () => resolve({ ok: res.statusCode === 200, ms: performance.now() - started }));
    res.on('error', () => resolve({ ok: false, ms: performance.now() - started }));
  });
  req.on('timeout', () => req.destroy(new Error('timeout')));
  req.on('error', () => resolve({ ok: false, ms: performance.now() - started }));
  req.end();
});
(async () => {
  // Bounded by stop(), and by 3,000 pings.
  for (let i = 0; running && i < 3000; i++) {
    const { ok, ms } = await once();
    stats.count++;
    if (!ok) stats.failed++;
    stats.samples.push(ms);
    stats.maxMs = Math.max(stats.maxMs, ms);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  parentPort.postMessage(stats);
})();
`;

/** GETs /ping every `everyMs` from `localAddress` until stopped; stop() returns the figures. */
export function pinger(
  target: Target,
  { everyMs = 200, localAddress }: { everyMs?: number; localAddress?: string } = {},
): { stop(): Promise<PingStats> } {
  const worker = new Worker(PINGER_CODE, {
    eval: true,
    workerData: { ...target, everyMs, localAddress },
  });
  const result = new Promise<PingStats>((resolve, reject) => {
    worker.once('message', (stats: PingStats) => resolve(stats));
    worker.once('error', reject);
    worker.once('exit', () => reject(new Error('the pinger stopped without its figures')));
  });
  let stopped: Promise<PingStats> | null = null;
  return {
    stop: () =>
      (stopped ??= (async () => {
        worker.postMessage('stop');
        const timer = setTimeout(() => void worker.terminate(), 10_000);
        try {
          return await result;
        } finally {
          clearTimeout(timer);
          await worker.terminate();
        }
      })()),
  };
}

/** The limit of a request body (app.ts: announcements carry every peer's verdict). */
export const BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** Every other body's limit (app.ts). */
export const SMALL_BODY_LIMIT_BYTES = 64 * 1024;

/** The largest body `path` takes; a larger one gets 413 (at once, when announced). */
export function bodyLimitFor(path: string): number {
  return path === '/coordinator' ? BODY_LIMIT_BYTES : SMALL_BODY_LIMIT_BYTES;
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * The flood's mix, by request number: malformed bodies to every POST route (unsigned, so a peer
 * route refuses them 401), bodies over the limit (now and then sent in full, now and then only
 * announced: 413 either way, at once), reads of /status,
 * /metrics and /ping, unknown paths and windows. Nothing in it may change a node's state.
 */
export function floodRequest(i: number): RawRequest {
  if (i % 250 === 249) {
    const path = i % 500 === 499 ? '/coordinator' : '/maintenance';
    return {
      method: 'POST',
      path,
      headers: JSON_TYPE,
      body: Buffer.alloc(BODY_LIMIT_BYTES + 1, 0x20),
    };
  }
  if (i % 100 === 50) {
    const path = i % 200 === 50 ? '/probe' : '/maintenance';
    return {
      method: 'POST',
      path,
      headers: JSON_TYPE,
      body: Buffer.from('{'),
      claimLength: BODY_LIMIT_BYTES * 4,
    };
  }
  const mix: (() => RawRequest)[] = [
    () => ({
      method: 'POST',
      path: '/election',
      headers: JSON_TYPE,
      body: json({ from: 1, epoch: 'x' }),
    }),
    () => ({
      method: 'POST',
      path: '/coordinator',
      headers: JSON_TYPE,
      body: Buffer.from('not json{'),
    }),
    () => ({
      method: 'POST',
      path: '/maintenance',
      headers: JSON_TYPE,
      body: json({ duration: 5, reason: [] }),
    }),
    () => ({ method: 'GET', path: '/status' }),
    () => ({ method: 'GET', path: '/metrics' }),
    () => ({ method: 'POST', path: '/leave', headers: JSON_TYPE, body: Buffer.from('[1,2') }),
    () => ({ method: 'GET', path: '/ping' }),
    () => ({
      method: 'POST',
      path: '/test-alert',
      headers: JSON_TYPE,
      body: Buffer.from('\u0000garbage'),
    }),
    () => ({ method: 'GET', path: `/no-such-route/${'x'.repeat(i % 2000)}` }),
    () => ({ method: 'DELETE', path: `/maintenance/${'f'.repeat(1 + (i % 300))}` }),
    () => ({
      method: 'POST',
      path: '/election',
      headers: { ...JSON_TYPE, 'x-knh-auth': 'v1 ts=1,nonce=00,sig=zz' },
      body: json({ from: { id: 'a'.repeat(100_000), address: '127.0.0.1:1' }, epoch: 2 ** 60 }),
    }),
    () => ({
      method: 'POST',
      path: '/maintenance',
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
      body: Buffer.from('not gzip'),
    }),
    () => ({
      method: 'POST',
      path: '/maintenance',
      headers: JSON_TYPE,
      body: Buffer.from(`${'['.repeat(5_000)}${']'.repeat(5_000)}`),
    }),
    () => ({
      method: 'POST',
      path: '/maintenance',
      headers: JSON_TYPE,
      body: json({ duration: '1h', reason: 'r', nodes: [], unknown: true }),
    }),
  ];
  return (mix[i % mix.length] as () => RawRequest)();
}

/** Whether `status` is an answer the flood's request `req` may get (a closed connection is fine). */
export function floodAnswerOk(req: RawRequest, status: number | null): boolean {
  if (status === null) return true;
  if (status >= 500) return false;
  // Over its address's rate limit: refused before anything reads it.
  if (status === 429) return true;
  const read = req.method === 'GET' && ['/status', '/metrics', '/ping'].includes(req.path);
  if (read) return status === 200;
  // A body announced over the limit is refused (413) before it is read.
  if (req.claimLength !== undefined) return status === 413;
  return status >= 400;
}
