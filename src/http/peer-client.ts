// The real PeerTransport: JSON over HTTP to peers, every request bounded by a timeout, over
// connections kept open between requests (peer-connections.ts, peer-exchange.ts).
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
import {
  HEARTBEAT_HEADER,
  heartbeatHeaders,
  TAKES_HEARTBEATS,
  type ProbeHeartbeat,
} from './probe-heartbeat.js';
import { PeerConnections } from './peer-connections.js';
import { exchange } from './peer-exchange.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;
const NO_BODY = Buffer.alloc(0);

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
  /** Closes the connections kept open to peers (at shutdown). */
  closeIdle(): void;
}

interface Call {
  /** The peer's address (ip:port) as discovery lists it: the signature is for it alone. */
  target: string;
  host: string;
  port: number;
  path: string;
  method: 'GET' | 'POST';
  body?: unknown;
  /** Schema the answer must match; none: any 2xx is success. */
  schema?: SchemaName;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Source IP to connect from. */
  localAddress?: string;
  /** Signs the request, and requires a signed answer. */
  auth?: PeerAuth | null;
  /** Further request headers. */
  headers?: Record<string, string>;
  /** Sees the headers of a whole answer, whatever its status. */
  onResponse?: (headers: ReadonlyMap<string, string>) => void;
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

async function call<T>(
  connections: PeerConnections,
  {
    target,
    host,
    port,
    path,
    method,
    body,
    schema,
    timeoutMs,
    signal,
    localAddress,
    auth,
    headers,
    onResponse,
  }: Call,
  schemas: SchemaRegistry,
): Promise<Outcome<T>> {
  const payload = body === undefined ? undefined : serialized(body);
  const signed = auth
    ? auth.signRequest(method, signedPath(target, path), payload ?? NO_BODY)
    : null;
  const exchanged = await exchange(connections, {
    key: target,
    host,
    port,
    ...(localAddress ? { localAddress } : {}),
    method,
    path,
    headers: {
      accept: 'application/json',
      ...(payload ? { 'content-type': 'application/json' } : {}),
      ...(signed ? { [AUTH_HEADER]: signed.header } : {}),
      ...headers,
    },
    ...(payload ? { body: payload } : {}),
    timeoutMs,
    ...(signal ? { signal } : {}),
    maxBodyBytes: MAX_RESPONSE_BYTES,
  });
  if (!exchanged.ok) return exchanged;
  const { response, latencyMs } = exchanged;
  const fail = (reason: FailureReason, detail: string): Outcome<T> => ({
    ok: false,
    reason,
    phase: 'send',
    detail,
    latencyMs,
  });
  onResponse?.(response.headers);
  if (response.status < 200 || response.status >= 300) {
    return fail('http-status', `HTTP ${response.status}`);
  }
  if (
    auth &&
    signed &&
    !auth.verifyResponse(
      signed.nonce,
      response.status,
      response.headers.get(AUTH_HEADER),
      response.body,
    )
  ) {
    return fail('bad-response', 'answer not signed with the peer secret');
  }
  if (!schema) return { ok: true, value: undefined as T, latencyMs };
  let value: unknown;
  try {
    value = JSON.parse(response.body.toString('utf8'));
  } catch {
    return fail('bad-response', 'answer is not JSON');
  }
  const check = schemas.check(schema, value);
  if (!check.ok) return fail('bad-response', `answer fails ${schema}: ${check.errors.join('; ')}`);
  return { ok: true, value: value as T, latencyMs };
}

/** A request to a peer; an address that is not ip:port fails like an unreachable peer. */
function toPeer<T>(
  connections: PeerConnections,
  address: string,
  path: string,
  rest: Omit<Call, 'target' | 'host' | 'port' | 'path'>,
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
    connections,
    { target: address, host: parsed.ip, port: parsed.port, path, ...rest },
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
  const connections = new PeerConnections();
  /** Peers whose last answer to a probe said they take heartbeats in probes. */
  const takers = new Set<string>();
  // 127.0.0.1 is already the kernel's source for every 127/8 destination: no bind (a bind picks
  // an ephemeral port by scanning those in use on the IP, a real cost over thousands of peers).
  const bindFor = (address: string) =>
    isLoopback(ownIp) && ownIp !== '127.0.0.1' && isLoopback(parseAddress(address)?.ip)
      ? { localAddress: ownIp }
      : {};
  const send = async <T>(
    address: string,
    path: string,
    rest: Omit<Call, 'target' | 'host' | 'port' | 'path'>,
  ) => {
    const outcome = await toPeer<T>(
      connections,
      address,
      path,
      { ...rest, ...bindFor(address) },
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
        onResponse: (headers) => {
          if (headers.get(HEARTBEAT_HEADER) === TAKES_HEARTBEATS) takers.add(address);
          else if (takers.delete(address) && beat) onHeartbeatRefused?.(address);
        },
      }).then((outcome) => {
        // Gone, or never there: announcements, until it answers again (and the set stays bounded).
        if (!outcome.ok) takers.delete(address);
        return outcome;
      });
    },
    takesHeartbeats: (address) => takers.has(address),
    closeIdle: () => connections.closeIdle(),
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
