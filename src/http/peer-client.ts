// The real PeerTransport: JSON over HTTP to peers, every request bounded by a timeout.
//
// node:http rather than axios here: a probe must tell a connection that was never made (refused,
// unreachable, SYN unanswered) from one made to a process that then did not answer, because KNH's
// CONNECT_* and SEND_* retry budgets count them apart; axios does not expose that moment.
import { Agent, request, type IncomingMessage } from 'node:http';
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
import { formatAddress, parseAddress } from '../core/node-ref.js';
import { isLoopback } from './sender.js';
import { RELAY_HOP_MS } from '../prober/indirect.js';
import { onAbort } from '../core/on-abort.js';
import type { PeerAuth } from '../auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../auth/signature.js';
import {
  HEARTBEAT_HEADER,
  heartbeatHeaders,
  TAKES_HEARTBEATS,
  type ProbeHeartbeat,
} from './probe-heartbeat.js';

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
  /**
   * While this node leads: the heartbeat its probes carry (probe-heartbeat.ts), to the peers that
   * take one. Default: none.
   */
  heartbeat?: () => ProbeHeartbeat | null;
  /**
   * A peer that took this node's heartbeats answered a probe without taking one (it follows
   * another node, missed a term, or has something to tell): it needs an announcement now.
   */
  onHeartbeatRefused?: (address: string) => void;
}

/** The real transport, and which peers took its heartbeats (as their last answer said). */
export interface PeerClient extends PeerTransport {
  takesHeartbeats(address: string): boolean;
  /** Forgets peers no longer listed (the set stays bounded as pod IPs come and go). */
  keepOnly(listed: ReadonlySet<string>): void;
}

/**
 * Connections to peers are kept open between requests: a probe then costs one round trip, and a
 * lost packet costs a retransmission (~200 ms) rather than a new handshake (a lost SYN costs 1 s).
 * A request that fails or times out destroys its socket, so a dead peer's socket is never reused.
 *
 * One agent per peer: Node's agent looks for an idle socket that timed out among the free sockets
 * of every host it serves, so one agent for 5,000 peers spent 18% of the coordinator's CPU there.
 * One connection is kept per peer; a second, opened while two requests to a peer overlap (a probe
 * of a relay busy with an indirect probe must not wait behind it), closes once it is free.
 */
export class PeerAgents {
  private readonly agents = new Map<string, Agent>();
  private sweptAtMs: number;

  constructor(
    private readonly now: () => number = () => performance.now(),
    /** How often agents left without a socket (peers gone, or dead) are dropped. */
    private readonly sweepEveryMs = 60_000,
  ) {
    this.sweptAtMs = now();
  }

  /** The agent for requests to `address` (ip:port). */
  for(address: string): Agent {
    if (this.now() - this.sweptAtMs >= this.sweepEveryMs) this.sweep();
    let agent = this.agents.get(address);
    if (!agent) {
      // Idle sockets close after 4 s, before the peer's server would (5 s): never a request on a
      // socket the other side is closing.
      agent = new Agent({
        keepAlive: true,
        keepAliveMsecs: 1_000,
        maxFreeSockets: 1,
        timeout: 4_000,
      });
      this.agents.set(address, agent);
    }
    return agent;
  }

  get size(): number {
    return this.agents.size;
  }

  private sweep(): void {
    this.sweptAtMs = this.now();
    for (const [address, agent] of this.agents) {
      if (isEmpty(agent.sockets) && isEmpty(agent.freeSockets) && isEmpty(agent.requests)) {
        this.agents.delete(address);
      }
    }
  }
}

function isEmpty(byHost: object): boolean {
  return Object.keys(byHost).length === 0;
}

/** Where a request goes: the peer's IP (bare, IPv6 too), port and path. */
interface Destination {
  hostname: string;
  port: number;
  path: string;
}

interface Call {
  url: Destination;
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
  /** Further request headers. */
  headers?: Record<string, string>;
  /** Sees the answer's status line and headers as they come. */
  onResponse?: (res: IncomingMessage) => void;
}

/**
 * Each body's bytes, made once: the same announcement goes to many peers (to the successors of a
 * large mesh with every verdict in it: a megabyte at 5,000 peers). A body is never changed once
 * sent: each message is built afresh.
 */
const bodies = new WeakMap<object, Buffer>();

function serialized(body: unknown): Buffer {
  if (typeof body !== 'object' || body === null) return Buffer.from(JSON.stringify(body));
  let bytes = bodies.get(body);
  if (!bytes) {
    bytes = Buffer.from(JSON.stringify(body));
    bodies.set(body, bytes);
  }
  return bytes;
}

export function call<T>(
  {
    url,
    method,
    body,
    schema,
    timeoutMs,
    signal,
    agent,
    localAddress,
    auth,
    target,
    headers,
    onResponse,
  }: Call,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  const started = performance.now();
  const payload = body === undefined ? undefined : serialized(body);
  const signed = auth
    ? auth.signRequest(
        method,
        signedPath(target ?? formatAddress(url.hostname, url.port), url.path),
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
      stopListening?.();
      resolve(outcome);
    };
    const fail = (
      reason: FailureReason,
      detail: string,
      phase: 'connect' | 'send' = connected ? 'send' : 'connect',
    ) => finish({ ok: false, reason, phase, detail, latencyMs: performance.now() - started });

    const req = request({
      hostname: url.hostname,
      port: url.port,
      path: url.path,
      method,
      agent: agent ?? false,
      ...(localAddress ? { localAddress } : {}),
      headers: {
        accept: 'application/json',
        ...(payload
          ? { 'content-type': 'application/json', 'content-length': payload.length }
          : {}),
        ...(signed ? { [AUTH_HEADER]: signed.header } : {}),
        ...headers,
      },
    });
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
      // Answered meanwhile: its socket may already carry another request to the peer.
      if (settled) return;
      fail(
        connected ? 'timeout' : 'connect-timeout',
        `no ${connected ? 'answer' : 'connection'} within ${timeoutMs} ms`,
      );
      req.destroy();
    };
    const timer = setTimeout(() => onTimeout(false), timeoutMs);
    const abort = () => {
      fail('aborted', 'aborted');
      req.destroy();
    };
    const stopListening = signal && !signal.aborted ? onAbort(signal, abort) : null;
    if (signal?.aborted) abort();

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
      onResponse?.(res);
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

/** A request to a peer; an address that is not ip:port fails like an unreachable peer. */
function toPeer<T>(
  address: string,
  path: string,
  rest: Omit<Call, 'url'>,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  const parsed = parseAddress(address);
  if (!parsed) {
    return Promise.resolve({
      ok: false,
      reason: 'unreachable',
      phase: 'connect',
      detail: `not a peer address: ${address}`,
      latencyMs: 0,
    });
  }
  return call<T>(
    { url: { hostname: parsed.ip, port: parsed.port, path }, target: address, ...rest },
    schemas,
  );
}

export function peerClient({
  schemas,
  timeoutMs,
  onAnswer,
  onFailure,
  ownIp,
  auth = null,
  heartbeat,
  onHeartbeatRefused,
}: PeerClientOptions): PeerClient {
  const agents = new PeerAgents();
  /** Peers whose last answer to a probe said they take heartbeats in probes. */
  const takers = new Set<string>();
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
      { ...rest, agent: agents.for(address), ...bindFor(address) },
      schemas,
    );
    if (outcome.ok) onAnswer?.(address);
    else if (outcome.reason !== 'aborted') onFailure?.(address);
    return outcome;
  };
  return {
    ping: (address, signal) => {
      const beat = heartbeat?.();
      return send<PingResponse>(address, '/ping', {
        method: 'GET',
        schema: 'ping-response',
        timeoutMs,
        signal,
        ...(beat ? { headers: heartbeatHeaders(beat, address, auth) } : {}),
        onResponse: (res) => {
          if (res.headers[HEARTBEAT_HEADER] === TAKES_HEARTBEATS) takers.add(address);
          else if (takers.delete(address) && beat) onHeartbeatRefused?.(address);
        },
      }).then((outcome) => {
        // Gone, or never there: announcements, until it answers again (and the set stays bounded).
        if (!outcome.ok) takers.delete(address);
        return outcome;
      });
    },
    takesHeartbeats: (address) => takers.has(address),
    keepOnly: (listed) => {
      for (const address of takers) if (!listed.has(address)) takers.delete(address);
    },
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
