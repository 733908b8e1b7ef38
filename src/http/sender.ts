// Who sent a peer message: a node speaks only for itself, so a message naming `from.address` must
// arrive from that address's IP. Pods reach each other without NAT, so the connection's source is
// the sender's pod IP; anyone else claiming a peer's address is refused.
import { parseAddress } from '../core/node-ref.js';

/** The connection's remote IP in the spelling node-ref uses (IPv4-mapped IPv6 unwrapped). */
export function remoteIp(remote: string | undefined): string | undefined {
  return remote?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}

/** 127.0.0.0/8 and ::1 (IPv4-mapped too): an address on this host, e.g. inside the pod. */
export function isLoopback(remote: string | undefined): boolean {
  const ip = remoteIp(remote);
  return ip === '::1' || (ip !== undefined && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip));
}

/** Whether a message claiming to be from `claimed` (ip:port) came from that IP. */
export function sentBy(remote: string | undefined, claimed: string): boolean {
  const ip = parseAddress(claimed)?.ip;
  return ip !== undefined && remoteIp(remote) === ip;
}
