// A Kubernetes API server for EndpointSlices that speaks the real list/watch wire protocol:
// resourceVersion, chunked watch streams of JSON lines, ERROR events with 410 Gone after
// compaction, BOOKMARK events when asked for, clean ends and dropped connections, outages.
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface FakeEndpoint {
  ip: string;
  nodeName: string;
  ready?: boolean;
  terminating?: boolean;
}

export interface SliceObject {
  apiVersion: 'discovery.k8s.io/v1';
  kind: 'EndpointSlice';
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    resourceVersion: string;
    uid: string;
  };
  addressType: 'IPv4' | 'IPv6';
  ports: { name: string; port: number; protocol: 'TCP' }[];
  endpoints: {
    addresses: string[];
    conditions: { ready: boolean; serving: boolean; terminating: boolean };
    nodeName: string;
    targetRef: { kind: 'Pod'; name: string; namespace: string };
  }[];
}

type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

interface Watcher {
  namespace: string;
  selector: Map<string, string>;
  bookmarks: boolean;
  res: ServerResponse;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** The client's User-Agent header, if it sent one. */
  userAgent?: string;
}

const PATH = /^\/apis\/discovery\.k8s\.io\/v1\/namespaces\/([^/]+)\/endpointslices$/;
export const TOKEN = 'knh-test-token';

export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  private rv = 100;
  /** Watches may resume only from a resourceVersion above this (older history is compacted). */
  private compactedRv = 100;
  private readonly objects = new Map<string, SliceObject>();
  private readonly history: { rv: number; type: EventType; object: SliceObject }[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;
  private port = 0;
  /** When set, every request is answered with this status and a Status body. */
  private failWith: number | null = null;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    const a = server.address();
    this.port = typeof a === 'object' && a ? a.port : port;
    this.server = server;
    return this;
  }

  /** A kubeconfig file for this server with a bearer token, as a user or a test would write it. */
  writeKubeconfig(path: string): string {
    const config = {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster: { server: this.url, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'knh', user: { token: TOKEN } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'knh', namespace: 'knh' } }],
      'current-context': 'fake',
    };
    writeFileSync(path, JSON.stringify(config, null, 2));
    return path;
  }

  /** Creates or replaces a slice of `service` in `namespace` (one port, IPv4). */
  upsert(
    namespace: string,
    service: string,
    name: string,
    port: number,
    endpoints: FakeEndpoint[],
  ): void {
    const key = `${namespace}/${name}`;
    const existing = this.objects.get(key);
    const rv = ++this.rv;
    const object: SliceObject = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name,
        namespace,
        labels: {
          'kubernetes.io/service-name': service,
          'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
        },
        resourceVersion: String(rv),
        uid: existing?.metadata.uid ?? `uid-${name}`,
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port, protocol: 'TCP' }],
      endpoints: endpoints.map((e) => ({
        addresses: [e.ip],
        conditions: {
          ready: e.ready ?? true,
          serving: e.ready ?? true,
          terminating: e.terminating ?? false,
        },
        nodeName: e.nodeName,
        targetRef: { kind: 'Pod', name: `knh-${e.nodeName}`, namespace },
      })),
    };
    this.objects.set(key, object);
    this.record(existing ? 'MODIFIED' : 'ADDED', object, rv);
  }

  remove(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const existing = this.objects.get(key);
    if (!existing) return;
    this.objects.delete(key);
    const rv = ++this.rv;
    this.record(
      'DELETED',
      { ...existing, metadata: { ...existing.metadata, resourceVersion: String(rv) } },
      rv,
    );
  }

  /** Forgets all history: a watch resumed from any earlier resourceVersion gets 410 Gone. */
  compact(): void {
    this.compactedRv = this.rv;
  }

  /** What the server does to watchers that fell out of its window: ERROR 410, then end. */
  expireWatches(): void {
    for (const w of this.watchers) {
      this.write(w, { type: 'ERROR', object: gone(this.rv) });
      w.res.end();
    }
    this.watchers.clear();
  }

  /** Ends every watch stream cleanly, as the server does when a watch's timeout is reached. */
  endWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Cuts every connection mid-stream (a reset), as a crashing API server or a proxy would. */
  dropConnections(): void {
    for (const s of this.sockets) s.destroy();
    this.watchers.clear();
  }

  /** Sends a BOOKMARK at the current resourceVersion to watchers that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watchers) {
      if (!w.bookmarks) continue;
      this.write(w, {
        type: 'BOOKMARK',
        object: {
          kind: 'EndpointSlice',
          apiVersion: 'discovery.k8s.io/v1',
          metadata: { resourceVersion: String(this.rv) },
        },
      });
    }
  }

  /** Answers every request with `status` (e.g. 503) until called with null. */
  outage(status: number | null): void {
    this.failWith = status;
    if (status !== null) this.dropConnections();
  }

  /** Stops listening: connections are refused until `comeBack()`. */
  async goDown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    this.dropConnections();
    await closed;
  }

  async comeBack(): Promise<void> {
    if (!this.server) await this.start(this.port);
  }

  async close(): Promise<void> {
    await this.goDown();
  }

  private record(type: EventType, object: SliceObject, rv: number): void {
    this.history.push({ rv, type, object });
    for (const w of this.watchers) {
      if (matches(w, object)) this.write(w, { type, object });
    }
  }

  private write(w: Watcher, event: object): void {
    w.res.write(`${JSON.stringify(event)}\n`);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const query = Object.fromEntries(url.searchParams.entries());
    this.requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      ...(req.headers['user-agent'] === undefined ? {} : { userAgent: req.headers['user-agent'] }),
    });
    if (this.failWith !== null)
      return status(res, this.failWith, 'ServiceUnavailable', 'the fake API is in an outage');
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return status(res, 401, 'Unauthorized', 'Unauthorized');
    const m = PATH.exec(url.pathname);
    if (!m?.[1] || req.method !== 'GET')
      return status(res, 404, 'NotFound', `no route for ${req.method} ${url.pathname}`);
    const namespace = decodeURIComponent(m[1]);
    const selector = parseSelector(query.labelSelector ?? '');
    if (selector === null)
      return status(res, 400, 'BadRequest', `unable to parse requirement: ${query.labelSelector}`);
    const filter = { namespace, selector, bookmarks: query.allowWatchBookmarks === 'true' };
    if (query.watch === 'true' || query.watch === '1')
      return this.watch(res, filter, query.resourceVersion ?? '');
    const items = [...this.objects.values()].filter((o) => matches(filter, o));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'EndpointSliceList',
        apiVersion: 'discovery.k8s.io/v1',
        metadata: { resourceVersion: String(this.rv) },
        items: items.map((o) => ({ ...o, apiVersion: undefined, kind: undefined })),
      }),
    );
  }

  private watch(res: ServerResponse, filter: Omit<Watcher, 'res'>, fromText: string): void {
    // No Content-Length: Node sends the stream chunked, as the API server does.
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // The API server answers at once and streams later; the client's request resolves on headers.
    res.flushHeaders();
    const watcher: Watcher = { ...filter, res };
    const from = fromText === '' || fromText === '0' ? null : Number(fromText);
    if (from !== null && (!Number.isFinite(from) || from < this.compactedRv)) {
      this.write(watcher, { type: 'ERROR', object: gone(this.rv, fromText) });
      res.end();
      return;
    }
    if (from === null) {
      // "Start at most recent": synthetic ADDED events for the current state.
      for (const o of this.objects.values())
        if (matches(watcher, o)) this.write(watcher, { type: 'ADDED', object: o });
    } else {
      for (const e of this.history)
        if (e.rv > from && matches(watcher, e.object))
          this.write(watcher, { type: e.type, object: e.object });
    }
    this.watchers.add(watcher);
    res.on('close', () => this.watchers.delete(watcher));
  }
}

function gone(current: number, requested?: string): object {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${requested ?? 'unknown'} (${current})`,
    reason: 'Expired',
    code: 410,
  };
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      code,
    }),
  );
}

/** Equality-based selectors only (`a=b,c==d`), which is all knh sends. Null when malformed. */
function parseSelector(text: string): Map<string, string> | null {
  const selector = new Map<string, string>();
  for (const part of text.split(',').filter(Boolean)) {
    const m = /^([\w./-]+)==?([\w.-]*)$/.exec(part.trim());
    if (!m?.[1]) return null;
    selector.set(m[1], m[2] ?? '');
  }
  return selector;
}

function matches(
  filter: { namespace: string; selector: Map<string, string> },
  o: SliceObject,
): boolean {
  if (o.metadata.namespace !== filter.namespace) return false;
  for (const [k, v] of filter.selector) if (o.metadata.labels[k] !== v) return false;
  return true;
}
