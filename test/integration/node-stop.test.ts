// A node stopping (SIGTERM) never takes part again, even when discovery calls back after the stop
// began (a watch event in flight while the pod terminates): in process, a real node on loopback.
import { expect } from 'chai';
import { createServer } from 'node:net';
import { loadConfig } from '../../src/config/load.js';
import { startNode } from '../../src/main.js';
import type { PeerSource } from '../../src/discovery/peer-source.js';
import { CapturingLogger } from '../support/capturing-logger.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A peer source the test drives: it lists what the test says, when the test says. */
function drivenSource() {
  let onPeers: ((addresses: readonly string[]) => void) | null = null;
  const source: PeerSource = {
    start: (cb) => {
      onPeers = cb;
      return Promise.resolve();
    },
    stop: () => Promise.resolve(),
  };
  return { source, list: (addresses: string[]) => onPeers?.(addresses) };
}

describe('a stopping node (in process)', () => {
  it('does not take part again when discovery calls back after its stop began', async () => {
    const port = await freePort();
    const self = `127.0.0.1:${port}`;
    // A peer that is not there: its goodbye waits, as a black-holed peer's would.
    const peer = `127.0.0.1:${await freePort()}`;
    const loaded = loadConfig(
      {
        DISCOVERY: 'static',
        PEERS: `${self},${peer}`,
        POD_IP: '127.0.0.1',
        LISTEN_HOST: '127.0.0.1',
        CONTAINER_PORT: String(port),
        NODE_NAME: 'stopping',
      },
      { hostname: 'test' },
    );
    if (!loaded.ok) throw new Error(loaded.errors.join('; '));
    const logger = new CapturingLogger();
    const { source, list } = drivenSource();
    const node = await startNode(loaded.config, { logger, peerSource: source });
    list([self, peer]);
    const leading = () => logger.records.filter((r) => r.fields.event === 'leading').length;
    for (let i = 0; i < 50 && leading() === 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(leading(), 'it leads, alone').to.equal(1);

    const stopped = node.stop(2_000);
    list([self, peer]); // a watch event in flight as the pod terminates
    await stopped;
    list([self, peer]);
    await new Promise((r) => setTimeout(r, 500));
    expect(leading(), 'no new term after the stop').to.equal(1);
    const changes = logger.records.filter((r) => r.fields.event === 'coordinator-changed');
    expect(changes.at(-1)?.fields.coordinator ?? null, 'its last word: nobody leads').to.equal(
      null,
    );
  });
});
