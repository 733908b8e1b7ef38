// node:http as knh used it before its own client: a keep-alive Agent per peer, so that each peer
// keeps its own connection as knh's pool does.
import { Agent, request } from 'node:http';
import { parseAddress } from '../../src/wire/node-ref.js';
import {
  failureOf,
  judgePing,
  PING_HEADERS,
  type PingClient,
  type PingClientOptions,
} from './ping-client.js';

export function nodeHttpClient({ addresses, timeoutMs, schemas }: PingClientOptions): PingClient {
  const peers = addresses.map((address) => {
    const parsed = parseAddress(address);
    if (!parsed) throw new Error(`not a peer address: ${address}`);
    return {
      host: parsed.ip,
      port: parsed.port,
      agent: new Agent({ keepAlive: true, keepAliveMsecs: 1_000 }),
    };
  });
  return {
    ping: (index) =>
      new Promise((resolve) => {
        const peer = peers[index];
        if (!peer) return resolve(`no peer ${index}`);
        const req = request(
          {
            host: peer.host,
            port: peer.port,
            path: '/ping',
            agent: peer.agent,
            headers: PING_HEADERS,
            // The socket's idle time: an answer of a few hundred bytes comes in one read.
            timeout: timeoutMs,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.once('end', () =>
              resolve(judgePing(schemas, res.statusCode ?? 0, Buffer.concat(chunks).toString())),
            );
            res.once('error', (err) => resolve(failureOf(err)));
          },
        );
        req.once('timeout', () => req.destroy(new Error('timeout')));
        req.once('error', (err) => resolve(failureOf(err)));
        req.end();
      }),
    close: () => {
      for (const peer of peers) peer.agent.destroy();
      return Promise.resolve();
    },
  };
}
