// Who sent a peer message: a node speaks only for itself, so a message naming `from.address` must
// arrive from that address's IP. Pods reach each other without NAT, so the connection's source is
// the sender's pod IP; anyone else claiming a peer's address is refused.
import { parseAddress, remoteIp } from '../wire/node-ref.js';

/** Whether a message claiming to be from `claimed` (ip:port) came from that IP. */
export function sentBy(remote: string | undefined, claimed: string): boolean {
  const ip = parseAddress(claimed)?.ip;
  return ip !== undefined && remoteIp(remote) === ip;
}
