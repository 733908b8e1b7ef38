// Picks the loopback ports an integration test's mesh and receiver listen on, away from other meshes.
//
// Why not port 0 (LocalMesh's default): other knh meshes on this machine (the benchmark, the demo,
// another run of these tests) take their ports from the kernel's ephemeral range, and their
// coordinator keeps announcing to the port of a peer it has seen die. A node of ours that is handed
// that port hears a foreign, higher-ranked coordinator and follows it. Ports below the ephemeral
// range, picked at random and checked free, are ports those meshes never use.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

/** The first port of the kernel's ephemeral range (Linux), or the usual 32768. */
function ephemeralStart(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    if (Number.isInteger(low) && low > LOWEST + 1_000) return low;
  } catch {
    // Not Linux: assume the IANA/Linux default.
  }
  return 32_768;
}

function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** `n` distinct ports below the ephemeral range that nothing listens on right now. */
export async function meshPorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const top = ephemeralStart();
  const ports: number[] = [];
  for (let tries = 0; ports.length < n; tries++) {
    if (tries > 100 * n) throw new Error(`no ${n} free ports in ${LOWEST}-${top - 1} on ${host}`);
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if (!ports.includes(port) && (await canListen(port, host))) ports.push(port);
  }
  return ports;
}
