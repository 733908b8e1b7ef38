// The real PeerTransport: JSON over HTTP to peers, every request bounded by a timeout.
//
// node:http rather than axios here: a probe must tell a connection that was never made (refused,
// unreachable, SYN unanswered) from one made to a process that then did not answer, because KNH's
// CONNECT_* and SEND_* retry budgets count them apart; axios does not expose that moment.
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import type {
  Announcement,
  FailureReason,
  LeaveNotice,
  Outcome,
  PeerTransport,
  PingResponse,
  RelayProbeRequest,
  RelayProbeResult,
} from '../core/transport.js';
import type { AnnouncementReply, ElectionAnswer, ElectionRequest } from '../election/messages.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import { parseAddress } from '../core/node-ref.js';
import { isLoopback } from './sender.js';
import { RELAY_HOP_MS } from '../prober/indirect.js';
import type { PeerAuth } from '../auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../auth/signature.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;
/** A request's timer firing this much after it was due finds the process busy, not the peer slow. */
const LATE_TIMER_MS = 50;
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
  /** Called with the peer's address whenever it answers a request validly. */
  onAnswer?: (address: string) => void;
  /** Called with the peer's address whenever a request to it fails (not when aborted). */
  onFailure?: (address: string) => void;
  /**
   * This node's own IP. Peers take a message only from the IP it names, so when several nodes
   * share the loopback interface (127.0.0.2, 127.0.0.3…: tests, the demo) requests to them leave
   * from this IP; a pod's only interface already sends from its own.
   */
  ownIp?: string;
  /**
   * Peer authentication (PEER_SECRET): election messages, announcements, leaves and relayed probes
   * are signed, and their answers must be signed by a holder of the secret.
   */
  auth?: PeerAuth | null;
}

/**
 * Connections to peers are kept open between requests: a probe then costs one round trip, and a
 * lost packet costs a retransmission (~200 ms) rather than a new handshake (a lost SYN costs 1 s).
 * A request that fails or times out destroys its socket, so a dead peer's socket is never reused.
 */
function peerAgent(): Agent {
  // Idle sockets close after 4 s, before the peer's server would (5 s): never a request on a socket
  // the other side is closing.
  return new Agent({ keepAlive: true, keepAliveMsecs: 1_000, maxFreeSockets: 4, timeout: 4_000 });
}

interface Call {
  url: URL;
  method: 'GET' | 'POST';
  body?: unknown;
  /** Schema the answer must match; none: any 2xx is success. */
  schema?: SchemaName;
  timeoutMs: number;
  signal?: AbortSignal;
  /** A keep-alive agent; none: a new connection per request. */
  agent?: Agent;
  /** Source IP to connect from. */
  localAddress?: string;
  /** Signs the request, and requires a signed answer. */
  auth?: PeerAuth | null;
  /** The peer's address (ip:port) as discovery lists it: the signature is for it alone. */
  target?: string;
}

export function call<T>(
  { url, method, body, schema, timeoutMs, signal, agent, localAddress, auth, target }: Call,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  const started = performance.now();
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const signed = auth
    ? auth.signRequest(
        method,
        signedPath(target ?? url.host, url.pathname),
        payload ?? Buffer.alloc(0),
      )
    : null;
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
      agent: agent ?? false,
      ...(localAddress ? { localAddress } : {}),
      headers: {
        accept: 'application/json',
        ...(payload
          ? { 'content-type': 'application/json', 'content-length': payload.length }
          : {}),
        ...(signed ? { [AUTH_HEADER]: signed.header } : {}),
      },
    });
    const armedAt = performance.now();
    const onTimeout = (rechecked: boolean) => {
      // A timer that fires late means this process was busy (a blocked or starved event loop), and
      // the answer may be waiting unread: timers run before I/O in each turn of the loop. Let the
      // pending I/O run once (setImmediate comes after it) before calling the peer slow, so an
      // overloaded coordinator does not take its own lateness for dead peers.
      if (!rechecked && performance.now() - armedAt - timeoutMs > LATE_TIMER_MS) {
        setImmediate(() => onTimeout(true));
        return;
      }
      fail(
        connected ? 'timeout' : 'connect-timeout',
        `no ${connected ? 'answer' : 'connection'} within ${timeoutMs} ms`,
      );
      req.destroy();
    };
    const timer = setTimeout(() => onTimeout(false), timeoutMs);
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
        const header = res.headers[AUTH_HEADER];
        if (
          auth &&
          signed &&
          !auth.verifyResponse(
            signed.nonce,
            status,
            typeof header === 'string' ? header : undefined,
            Buffer.concat(chunks),
          )
        ) {
          fail('bad-response', 'answer not signed with the peer secret');
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
  return call<T>({ url: new URL(`http://${address}${path}`), target: address, ...rest }, schemas);
}

export function peerClient({
  schemas,
  timeoutMs,
  onAnswer,
  onFailure,
  ownIp,
  auth = null,
}: PeerClientOptions): PeerTransport {
  const agent = peerAgent();
  // 127.0.0.1 is already the kernel's source for every 127/8 destination: no bind (a bind picks
  // an ephemeral port by scanning those in use on the IP, a real cost over thousands of peers).
  const bindFor = (address: string) =>
    isLoopback(ownIp) && ownIp !== '127.0.0.1' && isLoopback(parseAddress(address)?.ip)
      ? { localAddress: ownIp }
      : {};
  const send = async <T>(address: string, path: string, rest: Omit<Call, 'url' | 'agent'>) => {
    const outcome = await toPeer<T>(
      address,
      path,
      { ...rest, agent, ...bindFor(address) },
      schemas,
    );
    if (outcome.ok) onAnswer?.(address);
    else if (outcome.reason !== 'aborted') onFailure?.(address);
    return outcome;
  };
  return {
    ping: (address, signal) =>
      send<PingResponse>(address, '/ping', {
        method: 'GET',
        schema: 'ping-response',
        timeoutMs,
        signal,
      }),
    sendElection: (address, request: ElectionRequest) =>
      send<ElectionAnswer>(address, '/election', {
        method: 'POST',
        auth,
        body: request,
        schema: 'election-answer',
        timeoutMs,
      }),
    announce: (address, announcement: Announcement) =>
      send<AnnouncementReply>(address, '/coordinator', {
        method: 'POST',
        auth,
        body: announcement,
        schema: 'announcement-reply',
        timeoutMs,
      }),
    probeVia: (relay, request: RelayProbeRequest, signal) =>
      send<RelayProbeResult>(relay, '/probe', {
        method: 'POST',
        auth,
        body: request,
        schema: 'probe-result',
        // The relay's own probing, plus the two hops to it and back.
        timeoutMs: request.timeout_ms + RELAY_HOP_MS,
        signal,
      }),
    leave: (address, notice: LeaveNotice) =>
      send<void>(address, '/leave', { method: 'POST', body: notice, timeoutMs, auth }),
  };
}
