// Where a second listener binds, as OPERATOR_LISTEN says it: a port alone (on LISTEN_HOST, as the
// peer port is), or an IP and a port (that address only). `localhost` is read as 127.0.0.1: that
// is where kubectl port-forward arrives (the runtimes dial IPv4 first), and a name resolved when
// binding could be ::1 on one host and 127.0.0.1 on the next.
import { formatAddress, parseAddress } from '../wire/node-ref.js';

export interface ListenAddress {
  host: string;
  port: number;
}

const isPort = (n: number) => Number.isInteger(n) && n >= 1 && n <= 65535;

/** The one spelling of a listen value (`9090`, `127.0.0.1:9090`, `[::1]:9090`), or null. */
export function canonicalListen(text: string): string | null {
  if (/^\d{1,5}$/.test(text)) return isPort(Number(text)) ? String(Number(text)) : null;
  const local = /^localhost:(\d{1,5})$/i.exec(text);
  if (local) return isPort(Number(local[1])) ? `127.0.0.1:${Number(local[1])}` : null;
  const a = parseAddress(text);
  return a ? formatAddress(a.ip, a.port) : null;
}

/** The IP a canonical listen value names, or null for a port alone. */
export function listenIp(canonical: string): string | null {
  return parseAddress(canonical)?.ip ?? null;
}

/** Where a canonical listen value binds; a port alone binds where `defaultHost` is. */
export function listenAddress(canonical: string, defaultHost: string): ListenAddress {
  const a = parseAddress(canonical);
  if (a) return { host: a.ip, port: a.port };
  return { host: defaultHost, port: Number(canonical) };
}
