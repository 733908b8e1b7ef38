// A read-only view (GET /status, GET /metrics) served from a snapshot rebuilt at most once every
// `maxAgeMs`, and less often when building is costly: a large mesh's coordinator spends tens of
// milliseconds of its event loop on one (assembling, a schema check, serialising), so a client
// asking a hundred times a second must not cost a hundred builds, nor any number of clients more
// than a small share of the node's time. Every answer carries the snapshot's ETag; a client that
// sends it back in `If-None-Match` gets 304 and no body while nothing changed. A large view is also
// kept gzipped (once, off the event loop) for the clients that take it: writing a 5,000-peer
// coordinator's status (megabytes) to every reader costs it more than building it.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, gzip } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One built answer: what it says, and its validator. */
export interface Built {
  status: number;
  contentType: string;
  body: Buffer;
  /** The body gzipped, when it is large enough to gain from it. */
  gzipped: Buffer | null;
  etag: string;
}

/** Below this, a body goes as it is: compressing it gains little. */
const GZIP_FROM_BYTES = 8 * 1024;
const gzipped = promisify(gzip);

export interface SnapshotOptions {
  /** Builds the answer (called at most once per maxAgeMs, never twice at once). */
  build: () => Promise<{ status: number; contentType: string; body: string }>;
  /** How long a snapshot is served once built, at least; 0: built for every request. */
  maxAgeMs: number;
  now: () => number;
  /**
   * The share of the time building may take: a build that took B ms is served for at least
   * B / costShare (default 1/100), up to MAX_SERVED_MS. A large mesh's view costs a build more
   * than its readers can be allowed to take from the rounds, however often they ask: each build
   * holds the event loop, and one a second lands in nearly every probe round.
   */
  costShare?: number;
}

/** However costly a build, a snapshot is rebuilt within this (a wall clock's jump is no cost). */
export const MAX_SERVED_MS = 10_000;
const DEFAULT_COST_SHARE = 1 / 100;

export class Snapshot {
  private last: { atMs: number; servedForMs: number; built: Built } | null = null;
  private building: Promise<Built> | null = null;
  /** How long the build before the last one took (ms); null before the second build. */
  private costBeforeMs: number | null = null;

  constructor(private readonly o: SnapshotOptions) {}

  /** The current snapshot: the last one while it is younger than maxAgeMs, else a new one. */
  get(): Promise<Built> {
    const last = this.last;
    if (last !== null && this.o.now() - last.atMs < last.servedForMs) {
      return Promise.resolve(last.built);
    }
    // Requests arriving while one is built share it.
    this.building ??= this.rebuild().finally(() => (this.building = null));
    return this.building;
  }

  private async rebuild(): Promise<Built> {
    const atMs = this.o.now();
    const { status, contentType, body } = await this.o.build();
    const bytes = Buffer.from(body, 'utf8');
    const etag = `"${createHash('sha1').update(bytes).digest('base64url')}"`;
    // The lesser of this build's time and the one's before: a single slow build (the first, which
    // compiles its schema; one a GC pause or other work fell into) is no reason to serve it long.
    const tookMs = Math.max(0, this.o.now() - atMs);
    const costMs = Math.min(tookMs, this.costBeforeMs ?? 0);
    this.costBeforeMs = tookMs;
    // maxAgeMs 0 asks for a build every request (tests of the view itself): nothing is stretched.
    const servedForMs =
      this.o.maxAgeMs === 0
        ? 0
        : Math.min(
            MAX_SERVED_MS,
            Math.max(this.o.maxAgeMs, costMs / (this.o.costShare ?? DEFAULT_COST_SHARE)),
          );
    // Level 1: a few times smaller for JSON, at a fraction of level 6's time.
    const zipped =
      bytes.length >= GZIP_FROM_BYTES
        ? await gzipped(bytes, { level: constants.Z_BEST_SPEED })
        : null;
    const built = { status, contentType, body: bytes, gzipped: zipped, etag };
    this.last = { atMs, servedForMs, built };
    return built;
  }
}

/** Whether an If-None-Match header names `etag` (or `*`); weak validators compare alike. */
export function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === '*' || t === etag);
}

/**
 * Answers a request with a snapshot: 304 when the client holds it, else its answer (no body to a
 * HEAD) with `headers`. On node's own request and response, so that a view is served before any
 * framework runs (views.ts).
 */
export async function answerSnapshot(
  snapshot: Snapshot,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  const built = await snapshot.get();
  const out: Record<string, string | number> = { ...headers };
  if (built.status === 200) {
    out.etag = built.etag;
    if (matches(header(req, 'if-none-match'), built.etag)) {
      res.writeHead(304, out).end();
      return;
    }
  }
  out.vary = 'Accept-Encoding';
  out['content-type'] = built.contentType;
  const zipped = built.gzipped !== null && acceptsGzip(header(req, 'accept-encoding'));
  const body = zipped ? built.gzipped! : built.body;
  if (zipped) out['content-encoding'] = 'gzip';
  out['content-length'] = body.length;
  res.writeHead(built.status, out);
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

/** A request header's value; one sent twice counts as its first. */
function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Whether an Accept-Encoding header takes gzip (not refused with q=0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
