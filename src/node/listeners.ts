// A node's listeners: the peer port (CONTAINER_PORT on LISTEN_HOST) and, with OPERATOR_LISTEN, the
// operator's own. Opened together and closed together: a start that cannot have both has neither.
import type { ListenAddress } from '../config/listen-address.js';
import type { Config } from '../config/load.js';
import { listen, type HttpServer } from '../http/server.js';
import { formatAddress } from '../wire/node-ref.js';
import type { NodeApps } from './api.js';

export interface NodeListeners {
  /** The peer port, as bound. */
  readonly port: number;
  /** `host:port` of the operator's listener; null: its views are on the peer port. */
  readonly operator: string | null;
  /** Closes both; their open connections too. */
  close(): Promise<void>;
}

export async function openListeners(apps: NodeApps, config: Config): Promise<NodeListeners> {
  const peerAt = { host: config.listenHost, port: config.port };
  const peer = await bind(apps.peer, peerAt, 'LISTEN_HOST, CONTAINER_PORT');
  const operatorAt = config.operatorListener;
  let operator: HttpServer | null = null;
  if (apps.operator && operatorAt) {
    try {
      operator = await bind(apps.operator, operatorAt, 'OPERATOR_LISTEN');
    } catch (err) {
      await peer.close();
      throw err;
    }
  }
  return {
    port: peer.port,
    operator: operator && operatorAt ? formatAddress(operatorAt.host, operator.port) : null,
    close: async () => {
      await Promise.all([peer.close(), operator?.close()]);
    },
  };
}

/** Listens, or throws saying which setting named the address and why it cannot be had. */
async function bind(
  app: Parameters<typeof listen>[0],
  at: ListenAddress,
  settings: string,
): Promise<HttpServer> {
  try {
    return await listen(app, at.host, at.port);
  } catch (err) {
    const address = formatAddress(at.host, at.port);
    throw new Error(`cannot listen on ${address} (${settings}): ${whyNot(err)}`, { cause: err });
  }
}

function whyNot(err: unknown): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case 'EADDRINUSE':
      return 'the port is taken (EADDRINUSE): another process, or another setting, listens there';
    case 'EADDRNOTAVAIL':
      return 'no interface of this host has that address (EADDRNOTAVAIL)';
    case 'EACCES':
      return 'permission denied (EACCES): ports below 1024 need privileges knh does not have';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}
