// Node identity (`NODE_NAME@POD_IP`), addresses (`ip:port`) and the total rank order of the bully election.
import { isIP } from 'node:net';

/** A node as messages name it. `address` is what peers dial; `id` is what people read. */
export interface NodeRef {
  id: string;
  address: string;
}

export interface ParsedAddress {
  ip: string;
  family: 4 | 6;
  port: number;
}

/**
 * The one spelling of an IP: IPv4 dotted decimal without leading zeros, IPv6 in the compressed
 * lower-case form (RFC 5952, as the WHATWG URL parser writes it). Null if `ip` is not an IP.
 */
export function canonicalIp(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').map(Number).join('.');
  if (family === 6) return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  return null;
}

/**
 * Parses `1.2.3.4:8080` or `[fd00::1]:8080` (brackets exactly around IPv6) into the canonical
 * spelling; null for anything else, host names included.
 */
export function parseAddress(address: string): Readonly<ParsedAddress> | null {
  let parsed = parsedAddresses.get(address);
  if (parsed === undefined) {
    // Addresses recur (every probe's answer names its peer): each spelling is parsed once.
    if (parsedAddresses.size >= 20_000) parsedAddresses.clear();
    const fresh = parseUncached(address);
    parsed = fresh && Object.freeze(fresh);
    parsedAddresses.set(address, parsed);
  }
  return parsed;
}

const parsedAddresses = new Map<string, Readonly<ParsedAddress> | null>();

function parseUncached(address: string): ParsedAddress | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(address);
  if (!m) return null;
  const bracketed = m[1] !== undefined;
  const raw = m[1] ?? m[2] ?? '';
  const family = isIP(raw);
  const port = Number(m[3]);
  if (family !== (bracketed ? 6 : 4) || port < 1 || port > 65535) return null;
  const ip = canonicalIp(raw);
  return ip === null ? null : { ip, family: bracketed ? 6 : 4, port };
}

/** The canonical spelling of an address, or null if it is not `ip:port`. */
export function canonicalAddress(address: string): string | null {
  const p = parseAddress(address);
  return p ? formatAddress(p.ip, p.port) : null;
}

export function formatAddress(ip: string, port: number): string {
  return isIP(ip) === 6 ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export function nodeId(nodeName: string, podIp: string): string {
  return `${nodeName}@${podIp}`;
}

/** The node name in a node id: `node-5@10.0.0.5` → `node-5` (an id without one is its own name). */
export function nodeNameOf(id: string): string {
  const at = id.lastIndexOf('@');
  return at > 0 ? id.slice(0, at) : id;
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function ipToBigInt(ip: string, family: 4 | 6): bigint {
  if (family === 4) return BigInt(ipv4ToNumber(ip));
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups, then `::` expands to zeros.
  const text = ip.replace(/(\d+\.\d+\.\d+\.\d+)$/, (v4) => {
    const n = ipv4ToNumber(v4);
    return `${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`;
  });
  const [left = '', right] = text.split('::');
  const groups = (s: string) => (s ? s.split(':') : []).map((g) => parseInt(g, 16));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const all = [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/**
 * The election's rank order, total over valid addresses: IPv4 before IPv6, then the numeric IP,
 * then the port. Higher ranks win. Two live nodes can never share an address, so never a tie.
 * Returns <0 if a ranks below b, >0 if above, 0 only for the same address.
 */
export function compareRank(a: string, b: string): number {
  if (a === b) return 0;
  const ka = rankKey(a);
  const kb = rankKey(b);
  if (!ka || !kb) {
    // Unparseable addresses never come from config (it is validated); order them last, stably.
    if (!ka && !kb) return a < b ? -1 : 1;
    return ka ? 1 : -1;
  }
  if (ka.family !== kb.family) return ka.family - kb.family;
  if (ka.ip !== kb.ip) return ka.ip < kb.ip ? -1 : 1;
  return ka.port - kb.port;
}

interface RankKey {
  family: 4 | 6;
  ip: bigint;
  port: number;
}

/** Parsed rank keys: a coordinator of 5,000 peers compares addresses often (successors, order). */
const rankKeys = new Map<string, RankKey | null>();
const RANK_KEYS_KEPT = 50_000;

function rankKey(address: string): RankKey | null {
  const known = rankKeys.get(address);
  if (known !== undefined) return known;
  const p = parseAddress(address);
  const key = p ? { family: p.family, ip: ipToBigInt(p.ip, p.family), port: p.port } : null;
  if (rankKeys.size >= RANK_KEYS_KEPT) rankKeys.clear();
  rankKeys.set(address, key);
  return key;
}

export function outranks(a: string, b: string): boolean {
  return compareRank(a, b) > 0;
}

/** The connection's remote IP in the spelling node-ref uses (IPv4-mapped IPv6 unwrapped). */
export function remoteIp(remote: string | undefined): string | undefined {
  return remote?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
}

/** 127.0.0.0/8 and ::1 (IPv4-mapped too): an address on this host, e.g. inside the pod. */
export function isLoopback(remote: string | undefined): boolean {
  const ip = remoteIp(remote);
  return ip === '::1' || (ip !== undefined && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip));
}
