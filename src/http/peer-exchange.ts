// One HTTP/1.1 request to a peer and its whole response, over a pooled connection, bounded by a
// timeout, abortable, and ending as a value that says how far it got: a connection never made
// (refused, unreachable, SYN unanswered) apart from one made to a process that then did not answer,
// because KNH's CONNECT_* and SEND_* retry budgets count them apart.
//
// By hand over node:net rather than node:http, axios or undici: at 5,000 peers the coordinator
// sends 5,000 requests a second, and measured on the same machine (5,000 keep-alive GETs a second
// to 5,000 servers) node:http took 51–61% of a core and 188–234 MB RSS, undici 38–60% and
// 211–264 MB, this 17% and 97 MB (docs/benchmarks.md). Peers are knh nodes speaking plain HTTP/1.1 JSON; response-parser.ts reads
// what any HTTP/1.1 server may send back, within limits.
import type { Failure, FailureReason } from '../core/transport.js';
import { onAbort } from '../core/on-abort.js';
import type { ConnectTo, PeerConnections } from './peer-connections.js';
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

/** The request's bytes up to its body. Throws on a header that would break the framing. */
function head({ method, path, key, headers, body }: PeerRequest): Buffer {
  let text = `${method} ${path} HTTP/1.1\r\nhost: ${key}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(value)) {
      throw new TypeError(`invalid request header ${JSON.stringify(name)}`);
    }
    text += `${name}: ${value}\r\n`;
  }
  if (body) text += `content-length: ${body.length}\r\n`;
  return Buffer.from(`${text}\r\n`, 'latin1');
}

/**
 * One request and its response. A GET whose kept connection turns out closed by the peer (reset
 * or closed before a byte of answer: the peer's server closed it idle as the request went, which
 * a busy event loop hears of late) goes once more on a new connection, within the same timeout:
 * that failure says nothing about the peer. A POST is not sent twice.
 */
export function exchange(connections: PeerConnections, request: PeerRequest): Promise<Exchanged> {
  const started = performance.now();
  const bytes = head(request); // throws at once on a header that would break the framing
  return new Promise((resolve) => {
    attempt(connections, request, bytes, started, false, (first) => {
      if (first !== STALE) return resolve(first);
      if (performance.now() - started >= request.timeoutMs) {
        const detail = `no answer within ${request.timeoutMs} ms`;
        const latencyMs = request.timeoutMs;
        return resolve({ ok: false, reason: 'timeout', phase: 'send', detail, latencyMs });
      }
      attempt(connections, request, bytes, started, true, (second) =>
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

/** One try on one connection (`fresh`: a new one), its end told to `resolve` once. */
function attempt(
  connections: PeerConnections,
  request: PeerRequest,
  bytes: Buffer,
  started: number,
  fresh: boolean,
  resolve: (outcome: Exchanged | typeof STALE) => void,
): void {
  const { body, timeoutMs, signal } = request;
  // Stopped before it began: the peer's kept connection stays kept.
  if (signal?.aborted) {
    resolve({ ok: false, reason: 'aborted', phase: 'connect', detail: 'aborted', latencyMs: 0 });
    return;
  }
  const connection = connections.acquire(request, fresh);
  const parser = new ResponseParser(request.maxBodyBytes);
  let connected = !connection.connecting;
  /** A kept connection, for a GET: if it proves closed before any answer, try a new one. */
  const retryIfStale = connected && request.method === 'GET';
  let answered = false;
  let settled = false;

  const finish = (outcome: Exchanged | typeof STALE, reusable: boolean) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    stopListening?.();
    if (reusable) connections.release(connection);
    else connection.destroy();
    resolve(outcome);
  };
  const fail = (
    reason: FailureReason,
    detail: string,
    phase: 'connect' | 'send' = connected ? 'send' : 'connect',
  ) => finish({ ok: false, reason, phase, detail, latencyMs: performance.now() - started }, false);

  const onTimeout = (rechecked: boolean) => {
    // The answer may be waiting unread: timers run before I/O in each turn of the loop, and a
    // busy process (a blocked or starved event loop, thousands of sockets ready at once) reads
    // it late, whether or not this timer itself fired late. Let the pending I/O run once
    // (setImmediate comes after it) before calling the peer slow, so an overloaded coordinator
    // does not take its own lateness for a dead peer or a broken path.
    if (!rechecked) {
      setImmediate(() => onTimeout(true));
      return;
    }
    // Answered meanwhile: its connection may already carry another request to the peer.
    if (settled) return;
    fail(
      connected ? 'timeout' : 'connect-timeout',
      `no ${connected ? 'answer' : 'connection'} within ${timeoutMs} ms`,
    );
  };
  // The time left of the request's timeout (all of it, but for a retry on a new connection).
  const timer = setTimeout(() => onTimeout(false), started + timeoutMs - performance.now());
  const abort = () => fail('aborted', 'aborted');
  const stopListening = signal ? onAbort(signal, abort) : null;

  const { socket } = connection;
  const send = () => {
    if (body && body.length > 0) {
      socket.cork();
      socket.write(bytes);
      socket.write(body);
      socket.uncork();
    } else socket.write(bytes);
  };
  connection.attach({
    // A new connection is written to once made: a write waiting on a refused connection would
    // fail too, and each failure costs an Error with its stack (a lost zone: thousands a round).
    connected: () => {
      connected = true;
      send();
    },
    data: (chunk) => {
      answered = true;
      const step = parser.push(chunk);
      if (step.kind === 'error') fail('bad-response', step.detail);
      else if (step.kind === 'done') {
        const { response } = step;
        const latencyMs = performance.now() - started;
        finish({ ok: true, response, latencyMs }, response.keepAlive && !step.trailing);
      }
    },
    error: (err) => {
      const code = err.code ?? 'ERROR';
      const connectReason = connected ? undefined : CONNECT_ERRORS[code];
      if (retryIfStale && !answered) finish(STALE, false);
      else if (connectReason) fail(connectReason, code, 'connect');
      else fail(connected ? 'reset' : 'unreachable', code);
    },
    closed: () => {
      if (retryIfStale && !answered) return finish(STALE, false);
      const step = parser.end();
      if (step.kind === 'done') {
        finish(
          { ok: true, response: step.response, latencyMs: performance.now() - started },
          false,
        );
      } else
        fail(connected ? 'reset' : 'unreachable', step.kind === 'error' ? step.detail : 'closed');
    },
  });
  if (connected) send();
}
