// A read-only view (GET /status, GET /metrics) served from a snapshot rebuilt at most once every
// `maxAgeMs`: building one costs a large mesh's coordinator tens of milliseconds of its event loop
// (assembling, a schema check, serialising), so a client asking a hundred times a second must not
// cost a hundred builds. Every answer carries the snapshot's ETag; a client that sends it back in
// `If-None-Match` gets 304 and no body while nothing changed.
import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';

/** One built answer: what it says, and its validator. */
export interface Built {
  status: number;
  contentType: string;
  body: Buffer;
  etag: string;
}

export interface SnapshotOptions {
  /** Builds the answer (called at most once per maxAgeMs, never twice at once). */
  build: () => Promise<{ status: number; contentType: string; body: string }>;
  /** How long a snapshot is served once built. */
  maxAgeMs: number;
  now: () => number;
}

export class Snapshot {
  private last: { atMs: number; built: Built } | null = null;
  private building: Promise<Built> | null = null;

  constructor(private readonly o: SnapshotOptions) {}

  /** The current snapshot: the last one while it is younger than maxAgeMs, else a new one. */
  get(): Promise<Built> {
    const last = this.last;
    if (last !== null && this.o.now() - last.atMs < this.o.maxAgeMs) {
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
    const built = { status, contentType, body: bytes, etag };
    this.last = { atMs, built };
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

/** Serves a snapshot: 304 when the client holds it, else its answer with `headers`. */
export function serveSnapshot(
  snapshot: Snapshot,
  headers: Record<string, string> = {},
): RequestHandler {
  return async (req: Request, res: Response) => {
    const built = await snapshot.get();
    res.set(headers);
    if (built.status === 200) {
      res.set('ETag', built.etag);
      if (matches(req.get('if-none-match'), built.etag)) {
        res.status(304).end();
        return;
      }
    }
    res.status(built.status).type(built.contentType).send(built.body);
  };
}
