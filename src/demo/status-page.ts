// Where a demo node serves its status page, read from the line it logs once it listens.
import { formatAddress, parseAddress } from '../wire/node-ref.js';
import type { LogLine, MeshNode } from './mesh.js';

/** Addresses that bind every interface: a browser reaches them on the node's own host. */
const EVERY_INTERFACE = new Set(['0.0.0.0', '::']);

/**
 * The status page's URL: on the operator's own listener when the node logged one (OPERATOR_LISTEN
 * moves the views there, the peer port then answers 404), else on the node's peer address.
 */
export function statusPageUrl(
  listening: LogLine,
  node: Pick<MeshNode, 'host' | 'address'>,
): string {
  const operator =
    typeof listening.operatorListen === 'string' ? parseAddress(listening.operatorListen) : null;
  if (!operator) return `http://${node.address}/`;
  const host = EVERY_INTERFACE.has(operator.ip) ? node.host : operator.ip;
  return `http://${formatAddress(host, operator.port)}/`;
}
