// The real PeerTransport: JSON over HTTP to peers, every request bounded by a timeout.
//
// node:http rather than axios here: a probe must tell a connection that was never made (refused,
// unreachable, SYN unanswered) from one made to a process that then did not answer, because KNH's
// CONNECT_* and SEND_* retry budgets count them apart; axios does not expose that moment.
import { request } from 'node:http';
import type { Socket } from 'node:net';
import type {
  Announcement,
  FailureReason,
  Outcome,
  PeerTransport,
  PingResponse,
} from '../core/transport.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import { parseAddress } from '../core/node-ref.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;
const CONNECT_ERRORS: Record<string, FailureReason> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  EHOSTDOWN: 'unreachable',
  EADDRNOTAVAIL: 'unreachable',
};

export interface PeerClientOptions {
  schemas: SchemaRegistry;
  timeoutMs: number;
}

interface Call {
  url: URL;
  method: 'GET' | 'POST';
  body?: unknown;
  /** Schema the answer must match; none: any 2xx is success. */
  schema?: SchemaName;
  timeoutMs: number;
  signal?: AbortSignal;
}

export function call<T>(
  { url, method, body, schema, timeoutMs, signal }: Call,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  const started = performance.now();
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    let connected = false;
    let settled = false;
    const finish = (outcome: Outcome<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const fail = (
      reason: FailureReason,
      detail: string,
      phase: 'connect' | 'send' = connected ? 'send' : 'connect',
    ) => finish({ ok: false, reason, phase, detail, latencyMs: performance.now() - started });

    const req = request(url, {
      method,
      agent: false,
      headers: {
        accept: 'application/json',
        ...(payload
          ? { 'content-type': 'application/json', 'content-length': payload.length }
          : {}),
      },
    });
    const timer = setTimeout(() => {
      fail(
        connected ? 'timeout' : 'connect-timeout',
        `no ${connected ? 'answer' : 'connection'} within ${timeoutMs} ms`,
      );
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      fail('aborted', 'aborted');
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();

    req.on('socket', (socket: Socket) => {
      if (!socket.connecting) connected = true;
      else socket.once('connect', () => (connected = true));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'ERROR';
      const connectReason = connected ? undefined : CONNECT_ERRORS[code];
      if (connectReason) fail(connectReason, code, 'connect');
      else fail(connected ? 'reset' : 'unreachable', code);
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) {
          fail('bad-response', `answer larger than ${MAX_RESPONSE_BYTES} bytes`);
          req.destroy();
        } else chunks.push(chunk);
      });
      res.on('error', (err: NodeJS.ErrnoException) => fail('reset', err.code ?? err.message));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          fail('http-status', `HTTP ${status}`);
          return;
        }
        if (!schema) {
          finish({ ok: true, value: undefined as T, latencyMs: performance.now() - started });
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          fail('bad-response', 'answer is not JSON');
          return;
        }
        const check = schemas.check(schema, value);
        if (!check.ok) fail('bad-response', `answer fails ${schema}: ${check.errors.join('; ')}`);
        else finish({ ok: true, value: value as T, latencyMs: performance.now() - started });
      });
    });
    req.end(payload);
  });
}

/** A request to a peer; an address no URL can be made of fails like an unreachable peer. */
function toPeer<T>(
  address: string,
  path: string,
  rest: Omit<Call, 'url'>,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  if (!parseAddress(address)) {
    return Promise.resolve({
      ok: false,
      reason: 'unreachable',
      phase: 'connect',
      detail: `not a peer address: ${address}`,
      latencyMs: 0,
    });
  }
  return call<T>({ url: new URL(`http://${address}${path}`), ...rest }, schemas);
}

export function peerClient({ schemas, timeoutMs }: PeerClientOptions): PeerTransport {
  return {
    ping: (address, signal) =>
      toPeer<PingResponse>(
        address,
        '/ping',
        { method: 'GET', schema: 'ping-response', timeoutMs, signal },
        schemas,
      ),
    sendElection: (address, request: ElectionRequest) =>
      toPeer<ElectionAnswer>(
        address,
        '/election',
        { method: 'POST', body: request, schema: 'election-answer', timeoutMs },
        schemas,
      ),
    announce: (address, announcement: Announcement) =>
      toPeer<AnnouncementReply>(
        address,
        '/coordinator',
        { method: 'POST', body: announcement, schema: 'announcement-reply', timeoutMs },
        schemas,
      ),
  };
}
