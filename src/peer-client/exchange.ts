// One HTTP/1.1 request to a peer and its whole response, over a pooled connection, bounded by a
// timeout, abortable, and ending as a value that says how far it got: a connection never made
// (refused, unreachable, SYN unanswered) apart from one made to a process that then did not answer,
// because KNH's CONNECT_* and SEND_* retry budgets count them apart.
//
// By hand over node:net rather than node:http, axios or undici: a coordinator of a large mesh sends
// a request to every peer each second, and measured at that load this client takes the least CPU
// and clearly the least memory of them (npm run bench:peer-client; docs/benchmarks.md, "Why knh
// has its own HTTP client for peers"). Peers are knh nodes speaking plain HTTP/1.1 JSON; response-parser.ts reads what any
// HTTP/1.1 server may send back, within limits.
import type { Failure, FailureReason } from '../core/transport.js';
import { onAbort } from '../core/on-abort.js';
import type {
  ConnectionListener,
  ConnectTo,
  PeerConnection,
  PeerConnections,
} from './connections.js';
import { HEADER_NAME, ResponseParser, type ParsedResponse } from './response-parser.js';

const CONNECT_ERRORS: Record<string, FailureReason> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
};
/** Header values this client may send (no CR, LF or other control characters). */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

export interface PeerRequest extends ConnectTo {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  timeoutMs: number;
  signal?: AbortSignal;
  maxBodyBytes: number;
}

export type Exchanged = { ok: true; response: ParsedResponse; latencyMs: number } | Failure;

/** Header names already found to be tokens: a coordinator sends the same few 5,000 times a second. */
const validNames = new Set<string>();

function validName(name: string): boolean {
  if (validNames.has(name)) return true;
  if (!HEADER_NAME.test(name)) return false;
  if (validNames.size < 64) validNames.add(name);
  return true;
}

/**
 * The request up to its body, as latin1 text (written as such: no Buffer of its own). Throws on a
 * header that would break the framing.
 */
function head({ method, path, key, headers, body }: PeerRequest): string {
  let text = `${method} ${path} HTTP/1.1\r\nhost: ${key}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    if (!validName(name) || !HEADER_VALUE.test(value)) {
      throw new TypeError(`invalid request header ${JSON.stringify(name)}`);
    }
    text += `${name}: ${value}\r\n`;
  }
  if (body) text += `content-length: ${body.length}\r\n`;
  return `${text}\r\n`;
}

/**
 * One request and its response. A GET whose kept connection turns out closed by the peer (reset
 * or closed before a byte of answer: the peer's server closed it idle as the request went, which
 * a busy event loop hears of late) goes once more on a new connection, within the same timeout:
 * that failure says nothing about the peer. A POST is not sent twice.
 */
export function exchange(connections: PeerConnections, request: PeerRequest): Promise<Exchanged> {
  const started = performance.now();
  const text = head(request); // throws at once on a header that would break the framing
  return new Promise((resolve) => {
    attempt(connections, request, text, started, false, (first) => {
      if (first !== STALE) return resolve(first);
      if (performance.now() - started >= request.timeoutMs) {
        const detail = `no answer within ${request.timeoutMs} ms`;
        const latencyMs = request.timeoutMs;
        return resolve({ ok: false, reason: 'timeout', phase: 'send', detail, latencyMs });
      }
      attempt(connections, request, text, started, true, (second) =>
        // A new connection is never stale: the type only says it could be.
        resolve(
          second === STALE
            ? { ok: false, reason: 'reset', phase: 'send', detail: 'closed', latencyMs: 0 }
            : second,
        ),
      );
    });
  });
}

/** A kept connection the peer had closed: nothing was learnt of the peer. */
const STALE = Symbol('stale connection');

/**
 * One try on one connection (`fresh`: a new one), its end told to `resolve` once. An object rather
 * than closures: one allocation for what thousands of requests in flight each hold.
 */
function attempt(
  connections: PeerConnections,
  request: PeerRequest,
  text: string,
  started: number,
  fresh: boolean,
  resolve: (outcome: Exchanged | typeof STALE) => void,
): void {
  // Stopped before it began: the peer's kept connection stays kept.
  if (request.signal?.aborted) {
    resolve({ ok: false, reason: 'aborted', phase: 'connect', detail: 'aborted', latencyMs: 0 });
    return;
  }
  new Attempt(connections, request, text, started, fresh, resolve);
}

class Attempt implements ConnectionListener {
  private readonly connection: PeerConnection;
  private readonly parser: ResponseParser;
  private connectedYet: boolean;
  /** A kept connection, for a GET: if it proves closed before any answer, try a new one. */
  private readonly retryIfStale: boolean;
  private answered = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly stopListening: (() => void) | null;

  constructor(
    private readonly connections: PeerConnections,
    private readonly request: PeerRequest,
    private readonly text: string,
    private readonly started: number,
    fresh: boolean,
    private readonly resolve: (outcome: Exchanged | typeof STALE) => void,
  ) {
    this.connection = connections.acquire(request, fresh);
    this.parser = new ResponseParser(request.maxBodyBytes);
    this.connectedYet = !this.connection.connecting;
    this.retryIfStale = this.connectedYet && request.method === 'GET';
    // The time left of the request's timeout (all of it, but for a retry on a new connection).
    // Never negative (a retry that started late): Node would warn on stderr for it.
    const leftMs = Math.max(0, started + request.timeoutMs - performance.now());
    this.timer = setTimeout(timedOut, leftMs, this, false);
    const { signal } = request;
    this.stopListening = signal ? onAbort(signal, () => this.fail('aborted', 'aborted')) : null;
    this.connection.attach(this);
    if (this.connectedYet) this.send();
  }

  private send(): void {
    const { socket } = this.connection;
    const { body } = this.request;
    if (body && body.length > 0) {
      socket.cork();
      socket.write(this.text, 'latin1');
      socket.write(body);
      socket.uncork();
    } else socket.write(this.text, 'latin1');
  }

  private finish(outcome: Exchanged | typeof STALE, reusable: boolean): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.stopListening?.();
    if (reusable) this.connections.release(this.connection);
    else this.connection.destroy();
    this.resolve(outcome);
  }

  fail(
    reason: FailureReason,
    detail: string,
    phase: 'connect' | 'send' = this.connectedYet ? 'send' : 'connect',
  ): void {
    const latencyMs = performance.now() - this.started;
    this.finish({ ok: false, reason, phase, detail, latencyMs }, false);
  }

  /** The timer fired (`rechecked`: and the I/O pending then has run since). */
  timedOut(rechecked: boolean): void {
    // The answer may be waiting unread: timers run before I/O in each turn of the loop, and a
    // busy process (a blocked or starved event loop, thousands of sockets ready at once) reads
    // it late, whether or not this timer itself fired late. Let the pending I/O run once
    // (setImmediate comes after it) before calling the peer slow, so an overloaded coordinator
    // does not take its own lateness for a dead peer or a broken path.
    if (!rechecked) {
      setImmediate(timedOut, this, true);
      return;
    }
    // Answered meanwhile: its connection may already carry another request to the peer.
    if (this.settled) return;
    const connected = this.connectedYet;
    this.fail(
      connected ? 'timeout' : 'connect-timeout',
      `no ${connected ? 'answer' : 'connection'} within ${this.request.timeoutMs} ms`,
    );
  }

  // A new connection is written to once made: a write waiting on a refused connection would
  // fail too, and each failure costs an Error with its stack (a lost zone: thousands a round).
  connected(): void {
    this.connectedYet = true;
    this.send();
  }

  data(chunk: Buffer): void {
    this.answered = true;
    const step = this.parser.push(chunk);
    if (step.kind === 'error') this.fail('bad-response', step.detail);
    else if (step.kind === 'done') {
      const { response } = step;
      const latencyMs = performance.now() - this.started;
      this.finish({ ok: true, response, latencyMs }, response.keepAlive && !step.trailing);
    }
  }

  error(err: NodeJS.ErrnoException): void {
    const code = err.code ?? 'ERROR';
    const connectReason = this.connectedYet ? undefined : CONNECT_ERRORS[code];
    if (this.retryIfStale && !this.answered) this.finish(STALE, false);
    else if (connectReason) this.fail(connectReason, code, 'connect');
    else this.fail(this.connectedYet ? 'reset' : 'unreachable', code);
  }

  closed(): void {
    if (this.retryIfStale && !this.answered) return this.finish(STALE, false);
    const step = this.parser.end();
    if (step.kind === 'done') {
      const latencyMs = performance.now() - this.started;
      this.finish({ ok: true, response: step.response, latencyMs }, false);
    } else {
      const detail = step.kind === 'error' ? step.detail : 'closed';
      this.fail(this.connectedYet ? 'reset' : 'unreachable', detail);
    }
  }
}

function timedOut(attempt: Attempt, rechecked: boolean): void {
  attempt.timedOut(rechecked);
}
