// The two ends of the path-loss bench (bench/path-loss.ts), each run inside a network namespace of
// its own: `serve <ip> <port>`, a node:http server answering GET /ping; `probe <ip:port> <seconds>`,
// one GET /ping a second through knh's own peer client (exchange over kept connections, bounded by
// PROBE_TIMEOUT's default), one JSON line per outcome on stdout. Either exits when its stdin closes,
// so neither outlives the bench.
import { createServer } from 'node:http';
import { PeerConnections } from '../src/peer-client/connections.js';
import { exchange } from '../src/peer-client/exchange.js';

export const PROBE_TIMEOUT_MS = 1_000;
export const PROBE_INTERVAL_MS = 1_000;

/** One probe as the client saw it: sent at `atMs` (epoch ms), answered or failed after `latencyMs`. */
export interface ProbeLine {
  atMs: number;
  ok: boolean;
  latencyMs: number;
  /** Why it failed (timeout, reset, ...), null when answered. */
  reason: string | null;
}

/** About the size of a knh follower's ping answer. */
const PONG = JSON.stringify({
  id: 'bench-server@10.214.0.2',
  node_name: 'bench-server',
  protocol: 1,
  coordinator: 'bench-coordinator@10.214.0.9',
  epoch: 1,
  started: 1_700_000_000_000,
  padding: 'x'.repeat(80),
});

function serve(ip: string, port: number): void {
  const server = createServer((req, res) => {
    if (req.url !== '/ping') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(PONG);
  });
  server.listen(port, ip, () => process.stdout.write('listening\n'));
}

function probe(target: string, seconds: number): void {
  const [host = '', port = ''] = target.split(':');
  const connections = new PeerConnections();
  const began = Date.now();
  let inFlight = false;
  // Ticks on a fixed schedule (as a knh round does each interval); a probe still out (it may run
  // a little past its timeout) makes its tick skip rather than overlap.
  const timer = setInterval(() => {
    if (Date.now() - began >= seconds * 1_000) {
      clearInterval(timer);
      connections.closeIdle();
      return;
    }
    if (inFlight) return;
    inFlight = true;
    const atMs = Date.now();
    void exchange(connections, {
      key: target,
      host,
      port: Number(port),
      method: 'GET',
      path: '/ping',
      headers: { accept: 'application/json' },
      timeoutMs: PROBE_TIMEOUT_MS,
      maxBodyBytes: 64 * 1024,
    }).then((outcome) => {
      inFlight = false;
      const ok = outcome.ok && outcome.response.status === 200;
      const line: ProbeLine = {
        atMs,
        ok,
        latencyMs: outcome.latencyMs,
        reason: ok ? null : outcome.ok ? `HTTP ${outcome.response.status}` : outcome.reason,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    });
  }, PROBE_INTERVAL_MS);
}

const [mode, a = '', b = ''] = process.argv.slice(2);
if (mode === 'serve' || mode === 'probe') {
  process.stdin.on('end', () => process.exit(0)).resume();
  if (mode === 'serve') serve(a, Number(b));
  else probe(a, Number(b));
}
