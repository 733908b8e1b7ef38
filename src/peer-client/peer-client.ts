// The real PeerTransport: JSON over HTTP to peers, every request bounded by a timeout, over
// connections kept open between requests (connections.ts, exchange.ts).
import type {
  Announcement,
  AnnouncementReply,
  ElectionAnswer,
  ElectionRequest,
  LeaveNotice,
  PathEcho,
  PathPull,
  PathReport,
  PathReportReply,
  PingResponse,
  RelayProbeRequest,
  RelayProbeResult,
} from '../wire/peer-messages.js';
import type {
  FailureReason,
  Outcome,
  PathTransport,
  PeerTransport,
  UnprovenPing,
} from '../core/transport.js';
import type { SchemaName, SchemaRegistry } from '../wire/schemas.js';
import { isLoopback, parseAddress, type NodeRef, type ParsedAddress } from '../wire/node-ref.js';
import { RELAY_HOP_MS } from '../prober/indirect.js';
import { refusalOf, type PeerAuth } from '../auth/peer-auth.js';
import { dateHeaderMs, NOTABLE_OFFSET_MS, type PeerStanding } from '../auth/peer-standing.js';
import { AUTH_HEADER, REFUSED_HEADER, signedPath } from '../auth/signature.js';
import {
  HEARTBEAT_HEADER,
  heartbeatHeaders,
  TAKES_HEARTBEATS,
  type ProbeHeartbeat,
} from '../auth/probe-heartbeat.js';
import { PeerConnections } from './connections.js';
import { exchange, type Exchanged, type PeerRequest } from './exchange.js';
import type { ParsedResponse } from './response-parser.js';
import { challenges, CHALLENGE_HEADER, provePing, type PingProof } from '../auth/ping-signature.js';
import { rejection } from '../core/rejection.js';
import { PROTOCOL, PROTOCOL_HEADER, protocolIn } from '../wire/protocol.js';

const MAX_RESPONSE_BYTES = 1024 * 1024;
const OWN_PROTOCOL = String(PROTOCOL);
const NO_BODY = Buffer.alloc(0);
/** Peers whose addresses are remembered parsed, at most (discovery lists fewer). */
const MAX_TARGETS = 20_000;

/** A peer's address, parsed, and the source IP requests to it leave from (none: the kernel's). */
interface Target extends ParsedAddress {
  address: string;
  localAddress: string | undefined;
}

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
  /** This node, as its full-size echoes name it (pair probing). */
  self?: NodeRef;
  /** Wall-clock epoch ms (default Date.now), what the peers' Date headers are compared with. */
  now?: () => number;
  /** The User-Agent every request carries (default: none), so a peer's operator can tell builds. */
  userAgent?: string;
}

/** The real transport, and which peers took its heartbeats (as their last answer said). */
export interface PeerClient extends PeerTransport, PathTransport {
  takesHeartbeats(address: string): boolean;
  /** The peer protocol its last answer named (1 until it has answered: the safe guess). */
  protocolOf(address: string): number;
  /** Forgets peers no longer listed (the set stays bounded as pod IPs come and go). */
  keepOnly(listed: ReadonlySet<string>): void;
  /** Closes the connections kept open to peers (at shutdown). */
  closeIdle(): void;
}

interface Call {
  path: string;
  method: 'GET' | 'POST';
  body?: unknown;
  /** Schema the answer must match; none: any 2xx is success. */
  schema?: SchemaName;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Signs the request, and requires a signed answer. */
  auth?: PeerAuth | null;
  /** Further request headers. */
  headers?: Record<string, string>;
  /** Sees a whole answer, whatever its status. */
  onResponse?: (response: ParsedResponse) => void;
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

/** What every request shares: the connections, the checks of answers, what peers said. */
interface Shared {
  connections: PeerConnections;
  schemas: SchemaRegistry;
  protocols: Map<string, number>;
  standing: PeerStanding | null;
  now: () => number;
  userAgent: string | undefined;
}

/**
 * One request to the peer at `target` (ip:port, as discovery lists it: the signature is for it
 * alone), sent from its `localAddress` if set. Built field by field rather than from spreads, and
 * with one promise of its own: a coordinator makes 5,000 of these a second, and what each
 * allocates while its answer is awaited outlives the young generation (measured: most of the
 * coordinator's garbage).
 */
function call<T>(target: Target, c: Call, shared: Shared, again = true): Promise<Outcome<T>> {
  const { path, method, body, schema, timeoutMs, signal, auth, headers: extra, onResponse } = c;
  const { connections, schemas, protocols, standing } = shared;
  const payload = body === undefined ? undefined : serialized(body);
  const offsetMs = standing ? standing.offsetOf(target.address) : 0;
  const signed = auth
    ? auth.signRequest(method, signedPath(target.address, path), payload ?? NO_BODY, offsetMs)
    : null;
  const headers: Record<string, string> = {
    accept: 'application/json',
    [PROTOCOL_HEADER]: OWN_PROTOCOL,
  };
  if (shared.userAgent) headers['user-agent'] = shared.userAgent;
  if (payload) headers['content-type'] = 'application/json';
  if (signed) headers[AUTH_HEADER] = signed.header;
  if (extra) for (const name in extra) headers[name] = extra[name]!;
  const request: PeerRequest = {
    key: target.address,
    host: target.ip,
    port: target.port,
    localAddress: target.localAddress,
    method,
    path,
    headers,
    body: payload,
    timeoutMs,
    signal,
    maxBodyBytes: MAX_RESPONSE_BYTES,
  };
  return exchange(connections, request).then((exchanged) => {
    let offsetNow = offsetMs;
    if (exchanged.ok) {
      const { headers: answered } = exchanged.response;
      noteProtocol(protocols, target.address, answered);
      const peerTime = standing ? dateHeaderMs(answered.get('date')) : null;
      if (standing && peerTime !== null) {
        offsetNow = standing.observeClock(
          target.address,
          peerTime,
          shared.now(),
          exchanged.latencyMs,
        );
      }
    }
    const outcome = judge<T>(
      exchanged,
      schema,
      auth && signed ? { auth, nonce: signed.nonce } : null,
      onResponse,
      schemas,
    );
    if (!signed || !standing) return outcome;
    // Refused as expired, and its answer's Date shows the peer's clock elsewhere than thought:
    // sent once more, stamped in the peer's time.
    if (
      !outcome.ok &&
      outcome.authRefused === 'expired' &&
      again &&
      Math.abs(offsetNow - offsetMs) >= NOTABLE_OFFSET_MS &&
      !signal?.aborted
    ) {
      return call<T>(target, c, shared, false);
    }
    if (outcome.ok) standing.acceptedBy(target.address, shared.now());
    else if (outcome.authRefused)
      standing.refusedBy(target.address, outcome.authRefused, shared.now());
    else if (answeredUnsigned(exchanged)) standing.answeredUnsigned(target.address, shared.now());
    return outcome;
  });
}

/**
 * A signed message taken (2xx) by a peer that did not sign its answer: it checks nothing, for it
 * has no PEER_SECRET (a node with one signs every answer to a message it verified).
 */
function answeredUnsigned(exchanged: Exchanged): boolean {
  if (!exchanged.ok) return false;
  const { status, headers } = exchanged.response;
  return status >= 200 && status < 300 && headers.get(AUTH_HEADER) === undefined;
}

/** Remembers the protocol a peer's answer names; only those above 1 are kept (a rollout's new). */
function noteProtocol(
  protocols: Map<string, number>,
  address: string,
  headers: ReadonlyMap<string, string>,
): void {
  const protocol = protocolIn(headers.get(PROTOCOL_HEADER));
  if (protocol > 1) protocols.set(address, protocol);
  else if (protocols.size > 0) protocols.delete(address);
}

/** What an exchange came to: the answer's value, or why the request failed. */
function judge<T>(
  exchanged: Exchanged,
  schema: SchemaName | undefined,
  signedBy: { auth: PeerAuth; nonce: string } | null,
  onResponse: ((response: ParsedResponse) => void) | undefined,
  schemas: SchemaRegistry,
): Outcome<T> {
  if (!exchanged.ok) return exchanged;
  const { response, latencyMs } = exchanged;
  const fail = (reason: FailureReason, detail: string): Outcome<T> => ({
    ok: false,
    reason,
    phase: 'send',
    detail,
    latencyMs,
  });
  onResponse?.(response);
  if (response.status === 401 && signedBy) {
    const authRefused = refusalOf(response.headers.get(REFUSED_HEADER), response.body);
    return {
      ok: false,
      reason: 'http-status',
      phase: 'send',
      detail: `HTTP 401: not authenticated (${authRefused})`,
      latencyMs,
      authRefused,
    };
  }
  if (response.status < 200 || response.status >= 300) {
    return fail('http-status', `HTTP ${response.status}`);
  }
  if (
    signedBy &&
    !signedBy.auth.verifyResponse(
      signedBy.nonce,
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

const UNPROVEN: Record<Exclude<PingProof, 'verified' | 'not-expected'>, UnprovenPing> = {
  unsigned: 'ping-unsigned',
  'bad-signature': 'ping-bad-signature',
  'other-node': 'ping-other-node',
};

/**
 * What a challenged probe's answer proved, kept: a peer that signed once must go on signing. An
 * unproven answer is still an answer (the node may hold another secret, or none: issue 33's nodes
 * out of sight, never dead while they answer); it is told as the node being out of sight.
 */
function noteProof(
  proof: PingProof,
  address: string,
  signers: Set<string>,
  standing: PeerStanding,
  nowMs: number,
): void {
  if (proof === 'verified') {
    if (signers.size >= MAX_TARGETS) signers.clear();
    signers.add(address);
    standing.pingProven(address);
  } else if (proof !== 'not-expected') standing.pingUnproven(address, UNPROVEN[proof], nowMs);
}

/** A request to an address that is not ip:port: it fails like an unreachable peer. */
function notAPeer<T>(address: string): Promise<Outcome<T>> {
  return Promise.resolve({
    ok: false,
    reason: 'unreachable',
    phase: 'connect',
    detail: `not a peer address: ${address}`,
    latencyMs: 0,
  });
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
  self,
  now = Date.now,
  userAgent,
}: PeerClientOptions): PeerClient {
  const connections = new PeerConnections();
  // Peers' clocks and refusals (with a secret): requests are stamped in the receiver's time, and
  // one refused as expired is sent again once in it.
  const standing = auth?.standing ?? null;
  /** Peers whose last answer to a probe said they take heartbeats in probes. */
  const takers = new Set<string>();
  /** Peers that answered a challenged probe signed since they were listed: they must go on. */
  const signers = new Set<string>();
  const challenge = auth ? challenges() : null;
  /** Peers whose last answer named a protocol above 1 (most, once a rollout is over). */
  const protocols = new Map<string, number>();
  const shared: Shared = { connections, schemas, protocols, standing, now, userAgent };
  // 127.0.0.1 is already the kernel's source for every 127/8 destination: no bind (a bind picks
  // an ephemeral port by scanning those in use on the IP, a real cost over thousands of peers).
  const bindsOnLoopback = isLoopback(ownIp) && ownIp !== '127.0.0.1';
  /** Each peer's parsed address and where requests to it leave from, worked out once. */
  const targets = new Map<string, Target | null>();
  const targetOf = (address: string): Target | null => {
    let target = targets.get(address);
    if (target === undefined) {
      const parsed = parseAddress(address);
      target = parsed && {
        address,
        ip: parsed.ip,
        port: parsed.port,
        family: parsed.family,
        localAddress: bindsOnLoopback && isLoopback(parsed.ip) ? ownIp : undefined,
      };
      // Bounded as discovery's list is (keepOnly), and by this against addresses never listed.
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(address, target);
    }
    return target;
  };
  const send = <T>(address: string, rest: Call): Promise<Outcome<T>> => {
    const target = targetOf(address);
    if (!target) {
      onFailure?.(address);
      return notAPeer<T>(address);
    }
    let sent: Promise<Outcome<T>>;
    try {
      sent = call<T>(target, rest, shared);
    } catch (err) {
      // A header that would break the framing, a body that is not JSON: a rejection, as ever.
      return rejection(err);
    }
    return sent.then((outcome) => {
      if (outcome.ok) onAnswer?.(address);
      else if (outcome.reason !== 'aborted') onFailure?.(address);
      return outcome;
    });
  };
  return {
    ping: (address, signal) => {
      let beat: ProbeHeartbeat | null | undefined;
      let headers: Record<string, string> | undefined;
      const challenged = challenge?.() ?? null;
      // Set by the answer's callback; read once the outcome is known (valid JSON of the schema).
      const seen: { answer?: ParsedResponse } = {};
      try {
        beat = heartbeat?.();
        headers = beat
          ? heartbeatHeaders(beat, address, auth, standing?.offsetOf(address) ?? 0)
          : undefined;
        if (challenged !== null) (headers ??= {})[CHALLENGE_HEADER] = challenged;
      } catch (err) {
        return rejection(err);
      }
      return send<PingResponse>(address, {
        path: '/ping',
        method: 'GET',
        schema: 'ping-response',
        timeoutMs,
        signal,
        headers,
        onResponse: (response) => {
          seen.answer = response;
          if (response.headers.get(HEARTBEAT_HEADER) === TAKES_HEARTBEATS) takers.add(address);
          else if (takers.delete(address) && beat) onHeartbeatRefused?.(address);
        },
      }).then((outcome) => {
        // Gone, or never there: announcements, until it answers again (and the set stays bounded).
        if (!outcome.ok) takers.delete(address);
        else if (auth && standing && challenged !== null && seen.answer) {
          const { headers: answered, body } = seen.answer;
          const proof = provePing({
            auth,
            challenge: challenged,
            target: address,
            named: outcome.value.address,
            authHeader: answered.get(AUTH_HEADER),
            body,
            protocol: protocolIn(answered.get(PROTOCOL_HEADER)),
            signedBefore: signers.has(address),
          });
          noteProof(proof, address, signers, standing, now());
        }
        return outcome;
      });
    },
    takesHeartbeats: (address) => takers.has(address),
    protocolOf: (address) => protocols.get(address) ?? 1,
    closeIdle: () => connections.closeIdle(),
    keepOnly: (listed) => {
      for (const address of takers) if (!listed.has(address)) takers.delete(address);
      for (const address of signers) if (!listed.has(address)) signers.delete(address);
      for (const address of targets.keys()) if (!listed.has(address)) targets.delete(address);
      for (const address of protocols.keys()) if (!listed.has(address)) protocols.delete(address);
      standing?.keepOnly(listed);
    },
    sendElection: (address, request: ElectionRequest) =>
      send<ElectionAnswer>(address, {
        path: '/election',
        method: 'POST',
        auth,
        body: request,
        schema: 'election-answer',
        timeoutMs,
      }),
    announce: (address, announcement: Announcement) =>
      send<AnnouncementReply>(address, {
        path: '/coordinator',
        method: 'POST',
        auth,
        body: announcement,
        schema: 'announcement-reply',
        timeoutMs,
      }),
    probeVia: (relay, request: RelayProbeRequest, signal) =>
      send<RelayProbeResult>(relay, {
        path: '/probe',
        method: 'POST',
        auth,
        body: request,
        schema: 'probe-result',
        // The relay's own probing, plus the two hops to it and back.
        timeoutMs: request.timeout_ms + RELAY_HOP_MS,
        signal,
      }),
    leave: (address, notice: LeaveNotice) =>
      send<void>(address, { path: '/leave', method: 'POST', body: notice, timeoutMs, auth }),
    echo: (address, size, signal) => {
      if (!self) return rejection(new Error('BUG: full-size echoes need the peer client’s self'));
      const sent: PathEcho = { from: self, payload: 'x'.repeat(size) };
      return send<PathEcho>(address, {
        path: '/paths/echo',
        method: 'POST',
        auth,
        body: sent,
        schema: 'path-echo',
        timeoutMs,
        signal,
      }).then((outcome): Outcome<void> => {
        if (!outcome.ok) return outcome;
        // The whole size back, or the probe says nothing of the path's full-size packets.
        if (outcome.value.payload.length !== size) {
          return {
            ok: false,
            reason: 'bad-response',
            phase: 'send',
            detail: `echo of ${outcome.value.payload.length} bytes, not ${size}`,
            latencyMs: outcome.latencyMs,
          };
        }
        return { ok: true, value: undefined, latencyMs: outcome.latencyMs };
      });
    },
    pullPaths: (address, pull: PathPull) =>
      send<PathReport>(address, {
        path: '/paths/pull',
        method: 'POST',
        auth,
        body: pull,
        schema: 'path-report',
        timeoutMs,
      }),
    reportPaths: (address, report: PathReport) =>
      send<PathReportReply>(address, {
        path: '/paths/report',
        method: 'POST',
        auth,
        body: report,
        schema: 'path-report-reply',
        timeoutMs,
      }),
  };
}
