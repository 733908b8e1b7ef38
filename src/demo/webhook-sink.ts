// A webhook receiver on loopback: records every POST, checks it against knh's schemas, can go down.
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { SchemaRegistry } from '../wire/schemas.js';

export interface ReceivedWebhook {
  path: string;
  kind: 'peer-status' | 'cluster-status' | 'unknown';
  body: unknown;
  receivedMs: number;
  /** The request's headers (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /** Schema check against knh's own schema for that kind. */
  errors: string[];
}

export interface ReceiverOptions {
  schemas: SchemaRegistry;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** How many received webhooks `received` keeps (the oldest go first). */
  maxKept?: number;
}

function kindOf(body: unknown): ReceivedWebhook['kind'] {
  if (typeof body !== 'object' || body === null) return 'unknown';
  if ('peer_map' in body) return 'cluster-status';
  if ('peer' in body) return 'peer-status';
  return 'unknown';
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) reject(new Error('body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Events: 'webhook' (ReceivedWebhook). `outage(status)` makes it answer every POST with that
 * status (e.g. 503); `goDown()` closes the port (connection refused) until `comeBack()`.
 */
export class Receiver extends EventEmitter {
  readonly received: ReceivedWebhook[] = [];
  private server: Server | null = null;
  private failWith: number | null = null;
  private boundPort = 0;
  private readonly host: string;
  private readonly maxKept: number;

  constructor(private readonly opts: ReceiverOptions) {
    super();
    this.host = opts.host ?? '127.0.0.1';
    this.maxKept = opts.maxKept ?? 10_000;
  }

  get port(): number {
    return this.boundPort;
  }

  url(path = '/'): string {
    return `http://${this.host}:${this.boundPort}${path}`;
  }

  async start(): Promise<this> {
    await this.listen(this.opts.port ?? 0);
    return this;
  }

  outage(status: number | null): void {
    this.failWith = status;
  }

  async goDown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async comeBack(): Promise<void> {
    if (!this.server) await this.listen(this.boundPort);
  }

  close(): Promise<void> {
    return this.goDown();
  }

  /** Resolves with the first webhook (already received or future) matching `pred`. */
  waitFor(pred: (w: ReceivedWebhook) => boolean, timeoutMs: number): Promise<ReceivedWebhook> {
    const found = this.received.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const onWebhook = (w: ReceivedWebhook) => {
        if (!pred(w)) return;
        clearTimeout(timer);
        this.off('webhook', onWebhook);
        resolve(w);
      };
      const timer = setTimeout(() => {
        this.off('webhook', onWebhook);
        reject(new Error(`no matching webhook within ${timeoutMs} ms`));
      }, timeoutMs);
      this.on('webhook', onWebhook);
    });
  }

  private async listen(port: number): Promise<void> {
    const server = createServer((req, res) => {
      void (async () => {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        if (this.failWith !== null) {
          req.resume();
          res.writeHead(this.failWith).end();
          return;
        }
        let body: unknown;
        try {
          body = JSON.parse(await readBody(req, 8 * 1024 * 1024));
        } catch {
          res.writeHead(400).end();
          return;
        }
        const kind = kindOf(body);
        const check =
          kind === 'unknown'
            ? { ok: false as const, errors: ['unknown payload'] }
            : this.opts.schemas.check(kind, body);
        const webhook: ReceivedWebhook = {
          path: req.url ?? '/',
          kind,
          body,
          receivedMs: Date.now(),
          headers: req.headers,
          errors: check.ok ? [] : check.errors,
        };
        this.received.push(webhook);
        // A demo may run for days: keep the most recent webhooks only.
        if (this.received.length > this.maxKept)
          this.received.splice(0, this.received.length - this.maxKept);
        res.writeHead(204).end();
        this.emit('webhook', webhook);
      })();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.host, () => resolve());
    });
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : port;
    this.server = server;
  }
}
