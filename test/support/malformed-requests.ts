// Generated malformed requests for every endpoint of a node (fast-check arbitraries), and what each
// deserves. For the fuzz test and the benchmark. Bodies: fc.json(), fc.anything() serialised,
// random bytes, truncated JSON, deep nesting, huge strings and numbers, unknown fields, and valid
// messages (built from the schemas' shapes) with one field mutated. Peer routes get unsigned and
// badly signed requests (401), and, given the mesh's secret, correctly signed garbage (400), or a
// signed valid message from an address the fuzzer does not own (403). Nothing generated may
// change a node's state: a valid maintenance request is never generated.
import fc from 'fast-check';
import { PeerAuth } from '../../src/auth/peer-auth.js';
import { AUTH_HEADER, signedPath } from '../../src/auth/signature.js';
import type { SchemaName, SchemaRegistry } from '../../src/wire/schemas.js';
import {
  BODY_LIMIT_BYTES,
  bodyLimitFor,
  SMALL_BODY_LIMIT_BYTES,
  type RawRequest,
} from './hostile-clients.js';

export const PEER_ROUTES = ['/election', '/coordinator', '/leave', '/probe'] as const;
export type PeerRoute = (typeof PEER_ROUTES)[number];
const SCHEMA_OF: Record<PeerRoute, SchemaName> = {
  '/election': 'election-request',
  '/coordinator': 'announcement',
  '/leave': 'leave',
  '/probe': 'probe-request',
};
export const READ_ROUTES = [
  '/ping',
  '/readyz',
  '/healthz',
  '/status',
  '/',
  '/metrics',
  '/maintenance',
] as const;

export interface FuzzRequest extends RawRequest {
  /** What was generated, for reports: e.g. "signed garbage to /election". */
  kind: string;
  /** The statuses this request may get; null: the connection may be closed instead. */
  allowed: (status: number) => boolean;
  /** Words for `allowed`, for failure messages. */
  expects: string;
  /** Send it a second time (same bytes, same nonce): the copy must get 401. */
  replay?: boolean;
}

export interface FuzzContext {
  schemas: SchemaRegistry;
  /** The mesh's PEER_SECRET (null: authentication off, signed cases are not generated). */
  peerSecret: string | null;
  /** Addresses of the mesh's nodes: senders the fuzzer may claim to be, from the wrong IP. */
  peers: readonly string[];
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

function stringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

// ---- valid messages, from the schemas' shapes ----

const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((p) => p.join('.'));
const port = fc.integer({ min: 1, max: 65_535 });

/** A node reference: a mesh node's address (not ours to claim), 127.0.0.1 (not a peer), any. */
function nodeRef(ctx: FuzzContext) {
  const address = fc.oneof(
    ...(ctx.peers.length > 0 ? [fc.constantFrom(...ctx.peers)] : []),
    port.map((p) => `127.0.0.1:${p}`),
    fc.tuple(ipv4, port).map(([ip, p]) => `${ip}:${p}`),
  );
  return fc
    .tuple(fc.string({ minLength: 1, maxLength: 20 }), address)
    .map(([name, a]) => ({ id: `${name}@${a.replace(/:\d+$/, '')}`, address: a }));
}

const epoch = fc.integer({ min: 1, max: 2 ** 40 });

function peerView(ctx: FuzzContext) {
  return fc.record(
    {
      id: fc.string({ minLength: 1, maxLength: 30 }),
      address: nodeRef(ctx).map((r) => r.address),
      node_name: fc.string({ maxLength: 30 }),
      health: fc.constantFrom('unknown', 'alive', 'suspect', 'dead'),
      since: fc.nat(),
      alerted: fc.boolean(),
      latency_ms: fc.integer({ min: 0, max: 3_600_000 }),
      path_broken: fc.boolean(),
    },
    { requiredKeys: ['id', 'address', 'node_name', 'health', 'since', 'alerted'] },
  );
}

/** A message that matches the route's schema. */
export function validMessage(ctx: FuzzContext, route: PeerRoute): fc.Arbitrary<unknown> {
  const from = nodeRef(ctx);
  switch (route) {
    case '/election':
    case '/leave':
      return fc.record({ from, epoch: fc.nat() });
    case '/coordinator':
      return fc.record({ from, epoch, peers: fc.array(peerView(ctx), { maxLength: 4 }) });
    case '/probe':
      return fc.record({
        from,
        target: nodeRef(ctx).map((r) => r.address),
        timeout_ms: fc.integer({ min: 1, max: 60_000 }),
      });
  }
}

const maintenanceRequest = fc.record(
  {
    nodes: fc.array(fc.string({ minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 3 }),
    duration: fc.constantFrom('90s', '30m', '2h', '900', '1', '7d', '0', '-5s', 'soon'),
    reason: fc.string({ minLength: 1, maxLength: 50 }),
  },
  { requiredKeys: ['duration', 'reason'] },
);

// ---- mutations ----

type Json = Record<string, unknown>;

/** Replaces or deletes one field (nested ones too) of a JSON object, or adds an unknown one. */
function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc
    .tuple(base, fc.nat(), fc.anything(), fc.constantFrom('replace', 'delete', 'add'))
    .map(([message, pick, value, how]) => {
      const copy = JSON.parse(JSON.stringify(message)) as Json;
      const paths: string[][] = [];
      const walk = (node: unknown, path: string[]) => {
        if (node === null || typeof node !== 'object') return;
        for (const key of Object.keys(node)) {
          paths.push([...path, key]);
          walk((node as Json)[key], [...path, key]);
        }
      };
      walk(copy, []);
      const path = paths[pick % Math.max(1, paths.length)] ?? ['from'];
      const parent = path.slice(0, -1).reduce<Json>((n, k) => (n[k] ?? {}) as Json, copy);
      const key = path.at(-1) ?? 'from';
      if (how === 'delete') delete parent[key];
      else if (how === 'add') parent[`unknown_${key}`] = value ?? null;
      else parent[key] = value ?? null;
      return copy;
    });
}

/** Valid JSON text with `raw` spliced in as the epoch (huge, negative, fractional numbers). */
const hugeNumber = fc.constantFrom(
  '1e400',
  '-1e400',
  '9007199254740993',
  '1'.repeat(400),
  '-0',
  '0.5',
  '-1',
  '1e-400',
  '123456789012345678901234567890',
);

// ---- bodies ----

/** A body for `route`: garbage of many kinds, every one malformed or a mutated message. */
export function malformedBody(
  ctx: FuzzContext,
  valid: fc.Arbitrary<unknown>,
): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.json({ maxDepth: 4 }).map(utf8),
    fc.anything({ maxDepth: 3 }).map((v) => utf8(stringify(v))),
    fc.uint8Array({ maxLength: 2_048 }).map((b) => Buffer.from(b)),
    valid.chain((m) => {
      const text = stringify(m);
      return fc.nat(Math.max(0, text.length - 1)).map((n) => utf8(text.slice(0, n)));
    }),
    fc
      .tuple(
        fc.integer({ min: 1, max: 200_000 }),
        fc.constantFrom('[', '{"a":', '{"from":'),
        fc.boolean(),
      )
      .map(([depth, open, closed]) => {
        const close = open === '[' ? ']' : '}';
        return utf8(`${open.repeat(depth)}1${closed ? close.repeat(depth) : ''}`);
      }),
    fc
      .tuple(fc.integer({ min: 1_000, max: 3_000_000 }), fc.constantFrom('id', 'address', 'x'))
      .map(([n, field]) =>
        utf8(
          field === 'x'
            ? `{"from":{"id":"a","address":"127.0.0.1:1"},"epoch":1,"${'x'.repeat(n)}":1}`
            : `{"from":{"id":"a","address":"127.0.0.1:1","${field}":"${'9'.repeat(n)}"},"epoch":1}`,
        ),
      ),
    hugeNumber.map((n) =>
      utf8(`{"from":{"id":"a@127.0.0.1","address":"127.0.0.1:1"},"epoch":${n}}`),
    ),
    mutated(valid).map((m) => utf8(stringify(m))),
    fc.constant(Buffer.alloc(0)),
    fc
      .constantFrom(
        'null',
        'true',
        '"x"',
        '[]',
        '{}',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{}}}',
      )
      .map(utf8),
  );
}

/**
 * A body over the small limit that its route takes from a peer: the fuzzer is never a peer (its IP
 * is none of the mesh's), so it is refused 403 before it is read (src/http/body-budget.ts).
 */
const peersOnly = (route: string, length: number) =>
  length > SMALL_BODY_LIMIT_BYTES && length <= bodyLimitFor(route);

/**
 * What a signed request's replay gets: refused for its size (413), or as a stranger's large body
 * (403), before its signature is read; else 401 (the first copy may have seen the connection close
 * under it instead).
 */
export function replayRefusal(path: string, length: number): number {
  return length > bodyLimitFor(path) ? 413 : peersOnly(path, length) ? 403 : 401;
}

/** A body just over the size limit (few of them: they are 4 MiB each). */
const overLimit = fc
  .integer({ min: 1, max: 1_000 })
  .map((extra) => Buffer.alloc(BODY_LIMIT_BYTES + extra, 0x20));

// ---- headers ----

const contentType = fc.option(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=utf-16',
    'application/json; charset=koi8-r',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '*/*',
    'garbage',
  ),
  { nil: undefined },
);
/** Content-Encoding: any but identity is refused (415): peers never compress. */
const contentEncoding = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 8 },
  {
    arbitrary: fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-nope', 'gzip, gzip'),
    weight: 1,
  },
);
const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 300,
});
const hex = (n: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });

function headersOf(type: string | undefined, encoding: string | undefined): Record<string, string> {
  return {
    ...(type ? { 'content-type': type } : {}),
    ...(encoding ? { 'content-encoding': encoding } : {}),
  };
}

const refusedEncoding = (encoding: string | undefined) =>
  encoding !== undefined && encoding !== 'identity';

/** An x-knh-auth header that does not authenticate `body` (garbage, wrong secret, expired...). */
function badAuth(path: string, body: Buffer): fc.Arbitrary<string | undefined> {
  const signedWith = (secret: string, skewMs: number) =>
    new PeerAuth({
      secrets: () => [secret],
      now: () => Date.now() + skewMs,
      maxSkewMs: 30_000,
    }).signRequest('POST', path, body).header;
  return fc.oneof(
    fc.constant(undefined),
    printable,
    fc
      .tuple(fc.nat(), hex(32), hex(64))
      .map(([ts, nonce, sig]) => `v1 ts=${ts},nonce=${nonce},sig=${sig}`),
    hex(64).map((secret) => signedWith(secret, 0)),
  );
}

/** Whether an auth header passes the checks made before the body is read (its form, its age). */
function plausibleHeader(header: string | undefined): boolean {
  const m =
    header === undefined
      ? null
      : /^v1 ts=(\d{1,15}),nonce=[0-9a-f]{32},sig=[0-9a-f]{64}$/.exec(header);
  return m !== null && Math.abs(Date.now() - Number(m[1])) <= 30_000;
}

// ---- requests ----

const NOT_2XX = (s: number) => s >= 400 && s < 500;

/** Unsigned or badly signed requests to the peer routes: 401 (415 compressed, 413 too large). */
export function unsignedPeerRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(fc.constantFrom(...PEER_ROUTES), contentType, contentEncoding, fc.nat(99))
    .chain(([route, type, encoding, roll]) =>
      (roll < 2 ? overLimit : malformedBody(ctx, validMessage(ctx, route))).chain((body) =>
        badAuth(route, body).map((auth): FuzzRequest => {
          // A body announced too large is refused first; then a header that cannot be good
          // (missing, malformed, stale), before the body is read; then a compressed body; then a
          // signature that does not match.
          const big = body.length > bodyLimitFor(route);
          const status = big
            ? 413
            : peersOnly(route, body.length)
              ? 403
              : plausibleHeader(auth) && refusedEncoding(encoding)
                ? 415
                : 401;
          return {
            kind: `unsigned to ${route}`,
            method: 'POST',
            path: route,
            headers: { ...headersOf(type, encoding), ...(auth ? { [AUTH_HEADER]: auth } : {}) },
            body,
            allowed: (s) => s === status,
            expects: String(status),
          };
        }),
      ),
    );
}

/** Whether `body` (as the node would parse it) matches `schema`. */
function matches(ctx: FuzzContext, schema: SchemaName, body: Buffer): boolean {
  if (body.length === 0) return false;
  try {
    return ctx.schemas.check(schema, JSON.parse(body.toString('utf8'))).ok;
  } catch {
    return false;
  }
}

/**
 * Correctly signed requests to the peer routes (the mesh's secret, a fresh nonce): garbage gets
 * 400; a valid message gets 403, for it names a sender whose IP is not the fuzzer's (a node's), or
 * one that is not a peer (127.0.0.1). Some are replayed: the copy gets 401.
 */
export function signedPeerRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const secret = ctx.peerSecret;
  if (secret === null) throw new Error('signed requests need the mesh’s peer secret');
  return fc
    .tuple(fc.constantFrom(...PEER_ROUTES), fc.nat(99), fc.boolean())
    .chain(([route, roll, replay]) => {
      const valid = validMessage(ctx, route);
      // One in five is a valid message (schema-wise), the rest garbage.
      const body = roll < 20 ? valid.map((m) => utf8(stringify(m))) : malformedBody(ctx, valid);
      return body.map((bytes): FuzzRequest => {
        const ok = matches(ctx, SCHEMA_OF[route], bytes);
        const big = bytes.length > bodyLimitFor(route);
        return {
          kind: ok
            ? `signed valid message from another's address to ${route}`
            : `signed garbage to ${route}`,
          method: 'POST',
          path: route,
          // Signed when sent (sign()), so that its timestamp is fresh.
          headers: { 'content-type': 'application/json' },
          body: bytes,
          // A valid election message from a node not discovered (127.0.0.1) is answered, and
          // changes nothing (the run's last test checks the epoch); any other valid one is 403.
          allowed: (s) =>
            big
              ? s === 413
              : peersOnly(route, bytes.length)
                ? s === 403
                : ok
                  ? s === 403 || (route === '/election' && s === 200)
                  : s === 400,
          expects: big
            ? '413'
            : peersOnly(route, bytes.length)
              ? '403 (large, from a stranger)'
              : ok
                ? route === '/election'
                  ? '403 or 200'
                  : '403'
                : '400',
          replay,
        };
      });
    });
}

/**
 * Signs a signed-kind request now (fresh timestamp and nonce) for the node at `receiver` (ip:port);
 * others are returned as they are.
 */
export function sign(req: FuzzRequest, secret: string | null, receiver: string): FuzzRequest {
  if (!req.kind.startsWith('signed') || secret === null) return req;
  const auth = new PeerAuth({ secrets: () => [secret], now: () => Date.now(), maxSkewMs: 30_000 });
  const path = signedPath(receiver, req.path);
  const header = auth.signRequest('POST', path, req.body ?? Buffer.alloc(0)).header;
  return { ...req, headers: { ...req.headers, [AUTH_HEADER]: header } };
}

/** Whether a maintenance body could open a window (the fuzzer must never send one). */
function couldOpenWindow(ctx: FuzzContext, body: Buffer): boolean {
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  try {
    return ctx.schemas.check('maintenance-request', JSON.parse(text)).ok;
  } catch {
    return false;
  }
}

/**
 * The loopback-only routes, from loopback (allowed to change things): invalid maintenance windows
 * (400, 413, 415), ends of windows that do not exist (404), test alerts with no receiver set (409,
 * or 400 for a body that is not JSON). Never 2xx: nothing may change.
 */
export function localRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const post = fc
    .tuple(malformedBody(ctx, maintenanceRequest), contentType, contentEncoding)
    .filter(([body]) => !couldOpenWindow(ctx, body))
    .map(([body, type, encoding]): FuzzRequest => ({
      kind: 'invalid maintenance window',
      method: 'POST',
      path: '/maintenance',
      headers: headersOf(type, encoding),
      body,
      allowed: NOT_2XX,
      expects: '4xx',
    }));
  const end = fc
    .tuple(
      fc.oneof(hex(12), printable.map(encodeURIComponent), fc.constant('x'.repeat(10_000))),
      fc.option(malformedBody(ctx, maintenanceRequest), { nil: undefined }),
    )
    .map(([id, body]): FuzzRequest => ({
      kind: 'end of a window that does not exist',
      method: 'DELETE',
      path: `/maintenance/${id}`,
      ...(body ? { body, headers: { 'content-type': 'application/json' } } : {}),
      allowed: NOT_2XX,
      expects: '4xx',
    }));
  const testAlert = fc
    .tuple(malformedBody(ctx, fc.constant({})), contentType, contentEncoding)
    .map(([body, type, encoding]): FuzzRequest => ({
      kind: 'test alert (no receiver configured)',
      method: 'POST',
      path: '/test-alert',
      headers: headersOf(type, encoding),
      body,
      allowed: NOT_2XX,
      expects: '4xx',
    }));
  return fc.oneof(post, end, testAlert);
}

const queryString = fc.option(
  fc
    .array(fc.tuple(printable, printable), { maxLength: 5 })
    .map(
      (kv) =>
        `?${kv.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
    ),
  { nil: '' },
);

/**
 * GET and HEAD of the read-only endpoints with garbage around them (queries, headers, bodies):
 * any answer but a 5xx (503 from /readyz and /healthz means not ready, and is allowed).
 */
export function readRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(
      fc.constantFrom(...READ_ROUTES),
      fc.constantFrom('GET', 'HEAD'),
      queryString,
      fc.option(malformedBody(ctx, fc.constant({})), { nil: undefined, freq: 3 }),
      contentType,
      fc.option(printable, { nil: undefined }),
    )
    .map(([route, method, query, body, type, accept]): FuzzRequest => {
      const health = route === '/readyz' || route === '/healthz';
      return {
        kind: `${method} ${route}`,
        method,
        path: `${route}${query}`,
        headers: { ...headersOf(type, undefined), ...(accept ? { accept } : {}) },
        ...(body ? { body } : {}),
        allowed: (s) => s < 500 || (health && s === 503),
        expects: health ? 'not 5xx but 503' : 'not 5xx',
      };
    });
}

const ALL_PATHS = [...READ_ROUTES, ...PEER_ROUTES, '/test-alert', '/maintenance/x'];

/** Any method on any path, known or not: never 5xx, and never 2xx for a method that changes. */
export function randomRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const segment = fc.string({
    unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:@"),
    maxLength: 40,
  });
  const path = fc.oneof(
    fc.constantFrom(...ALL_PATHS),
    fc.array(segment, { minLength: 1, maxLength: 8 }).map((s) => `/${s.join('/')}`),
    fc.constantFrom(
      '/%',
      '/%E0%A4%A',
      '/maintenance/%FF',
      '//election',
      '/election/../status',
      '/.',
      '/..%2f..%2fetc%2fpasswd',
      `/${'a'.repeat(8_000)}`,
    ),
  );
  return fc
    .tuple(
      fc.constantFrom(
        'GET',
        'POST',
        'PUT',
        'DELETE',
        'PATCH',
        'OPTIONS',
        'HEAD',
        'PROPFIND',
        'MKCOL',
      ),
      path,
      queryString,
      fc.option(malformedBody(ctx, fc.constant({})), { nil: undefined }),
      contentType,
    )
    .filter(([method, p]) => !(method === 'POST' && p === '/maintenance'))
    .map(([method, p, query, body, type]): FuzzRequest => {
      const safe = method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
      const health = p === '/readyz' || p === '/healthz';
      return {
        kind: `${method} (random)`,
        method,
        path: `${p}${query}`,
        headers: headersOf(type, undefined),
        ...(body ? { body } : {}),
        allowed: (s) => (safe ? s < 500 || (health && s === 503) : s >= 400 && s < 500),
        expects: safe ? 'not 5xx' : '4xx',
      };
    });
}

/** Random bytes written on a raw connection (then half-closed): an HTTP 4xx, or closed. */
export const rawGarbage = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 4_096 }).map((b) => Buffer.from(b)),
  fc
    .tuple(
      fc.constantFrom('GET', 'POST', 'BREW', ''),
      printable,
      fc.constantFrom('HTTP/1.1', 'HTTP/9.9', 'HTTP/1.0', ''),
      printable,
    )
    .map(([m, p, v, h]) => utf8(`${m} /${p} ${v}\r\n${h}\r\n\r\n`)),
  fc.constant(utf8(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)),
  fc.constant(utf8('POST /election HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n')),
  fc.constant(
    utf8(
      'POST /election HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ),
  ),
  fc.constant(
    utf8('POST /maintenance HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'),
  ),
);
