// undici, one Client (one origin, its own connection) per peer, two ways: Client.request, its
// everyday API, and Client.dispatch with a bare handler, the least undici itself does for a request.
import { Client, type Dispatcher } from 'undici';
import {
  failureOf,
  judgePing,
  PING_HEADERS,
  type PingClient,
  type PingClientOptions,
} from './ping-client.js';

function clientsFor({ addresses, timeoutMs }: PingClientOptions): Client[] {
  return addresses.map(
    (address) =>
      new Client(`http://${address}`, {
        connectTimeout: timeoutMs,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }),
  );
}

async function closeAll(clients: readonly Client[]): Promise<void> {
  await Promise.all(clients.map((c) => c.destroy().catch(() => undefined)));
}

export function undiciRequestClient(options: PingClientOptions): PingClient {
  const clients = clientsFor(options);
  return {
    ping: async (index) => {
      const client = clients[index];
      if (!client) return `no peer ${index}`;
      try {
        const { statusCode, body } = await client.request({
          path: '/ping',
          method: 'GET',
          headers: PING_HEADERS,
        });
        return judgePing(options.schemas, statusCode, await body.text());
      } catch (err) {
        return failureOf(err);
      }
    },
    close: () => closeAll(clients),
  };
}

/**
 * A handler of the callbacks undici 7's core calls itself: one written for its newer API
 * (onRequestStart…) is wrapped in an adapter that also parses every header, which a bare one
 * avoids.
 */
class PingHandler implements Dispatcher.DispatchHandler {
  private status = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly options: PingClientOptions,
    private readonly done: (failure: string | null) => void,
  ) {}

  onConnect(): void {}

  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.done(judgePing(this.options.schemas, this.status, Buffer.concat(this.chunks).toString()));
  }

  onError(err: Error): void {
    this.done(failureOf(err));
  }
}

export function undiciDispatchClient(options: PingClientOptions): PingClient {
  const clients = clientsFor(options);
  const request: Dispatcher.DispatchOptions = {
    path: '/ping',
    method: 'GET',
    headers: PING_HEADERS,
  };
  return {
    ping: (index) =>
      new Promise((resolve) => {
        const client = clients[index];
        if (!client) return resolve(`no peer ${index}`);
        client.dispatch(request, new PingHandler(options, resolve));
      }),
    close: () => closeAll(clients),
  };
}
