// knh's own peer client, built as src/main.ts builds it and pinging as the probe rounds do (through
// the transport's ping, with the round's signal). Without PEER_SECRET and not leading: the probes
// carry no heartbeat, so they ask what the other clients ask.
import { peerClient } from '../../src/peer-client/peer-client.js';
import type { PingClient, PingClientOptions } from './ping-client.js';

export function knhClient({ addresses, timeoutMs, schemas }: PingClientOptions): PingClient {
  const client = peerClient({
    schemas,
    timeoutMs,
    auth: null,
    // A node on 127.0.0.1 binds nothing, as a pod does not.
    ownIp: '127.0.0.1',
    heartbeat: () => null,
  });
  const round = new AbortController();
  return {
    ping: (index) => {
      const address = addresses[index];
      if (address === undefined) return Promise.resolve(`no peer ${index}`);
      return client
        .ping(address, round.signal)
        .then((outcome) => (outcome.ok ? null : outcome.reason));
    },
    close: () => {
      round.abort();
      client.closeIdle();
      return Promise.resolve();
    },
  };
}
