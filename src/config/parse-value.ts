// One setting's raw text to its value, or the sentence that says what it accepts.
import { closeSync, fstatSync, openSync } from 'node:fs';
import { isIP } from 'node:net';
import { canonicalAddress, canonicalIp, parseAddress } from '../wire/node-ref.js';
import { parseDuration } from './duration.js';
import { canonicalListen, listenIp } from './listen-address.js';
import type { Setting } from './settings.js';

export type Value = string | number | boolean | string[] | null;

const MAX_URL_CHARS = 2048;
/** PATH_MAX on Linux. */
const MAX_PATH_CHARS = 4096;
/** Longer values are shown by their length only. */
const MAX_SHOWN_CHARS = 256;

// Kubernetes' name rules (apimachinery validation): DNS-1123 subdomain and label, DNS-1035 label.
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
/**
 * Controls (C0, DEL, C1), format characters (bidi overrides, zero-width), lone surrogates,
 * private use, line and paragraph separators.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}]/u;
/** A URL's host name as written: dot-separated labels of letters, digits, '_' and inner '-'. */
const URL_HOST_NAME =
  /^[\p{L}\p{N}_](?:[\p{L}\p{N}_-]*[\p{L}\p{N}_])?(?:\.[\p{L}\p{N}_](?:[\p{L}\p{N}_-]*[\p{L}\p{N}_])?)*\.?$/u;
/** Scheme, optional user info, host (bracketed IPv6 or a name), optional port, then path or end. */
const URL_PARTS = /^https?:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::([^/?#]*))?(?:[/?#]|$)/i;

/** A value as errors show it: JSON-quoted, unprintable characters escaped; a long one by its length. */
export function quote(raw: string): string {
  if (raw.length > MAX_SHOWN_CHARS) return `<${raw.length} characters>`;
  return JSON.stringify(raw).replace(
    new RegExp(UNPRINTABLE.source, 'gu'),
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function describe(setting: Setting): string {
  const t = setting.type;
  switch (t.kind) {
    case 'string':
      return 'a non-empty string';
    case 'text':
      return `text of at most ${t.maxLength} characters, without control characters or line breaks`;
    case 'dns-subdomain':
      return 'a Kubernetes name (DNS-1123 subdomain): at most 253 lower-case letters, digits, "-" and ".", each dot-separated part starting and ending with a letter or digit, e.g. "worker-1"';
    case 'dns-label':
      return 'a DNS-1123 label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit, e.g. "monitoring"';
    case 'dns-1035-label':
      return 'a DNS-1035 label: at most 63 lower-case letters, digits and "-", starting with a letter and ending with a letter or digit, e.g. "knh"';
    case 'path':
      return `a file path of at most ${MAX_PATH_CHARS} characters, without control characters`;
    case 'ip':
      return t.wildcard
        ? 'an IPv4 or IPv6 address (not multicast or broadcast), or 0.0.0.0 or :: for every interface'
        : "an IPv4 or IPv6 address: this pod's own, not 0.0.0.0, ::, multicast or broadcast";
    case 'port':
      return 'a port number from 1 to 65535';
    case 'listen':
      return 'a port from 1 to 65535, e.g. "9090" (bound on LISTEN_HOST), or an IP address and a port, e.g. "127.0.0.1:9090", "[::1]:9090" or "localhost:9090" (bound on that address only; loopback is reached by kubectl port-forward and exec, not by other pods)';
    case 'int':
      return `a whole number from ${t.min} to ${t.max}`;
    case 'ratio':
      return `a decimal number greater than ${t.min} and at most ${t.max}, e.g. "0.1" for 10 %`;
    case 'duration':
      return `a duration from ${t.minMs / 1000} to ${t.maxMs / 1000} seconds: plain seconds like "2" or "0.5", or "500ms", "2s", "1m", "1h"`;
    case 'enum':
      return `one of ${t.values.join(', ')}`;
    case 'boolean':
      return 'one of true, false';
    case 'url':
      return `an http:// or https:// URL with a host name or IP address, without spaces, at most ${MAX_URL_CHARS} characters, e.g. "http://receiver:8080/hook"`;
    case 'peers':
      return 'a comma-separated list of ip:port, each a node\'s own address, e.g. "10.0.0.1:8080,10.0.0.2:8080"';
  }
}

/** The canonical spelling of an IP, or null; IPv6 zones (`%eth0`) are not addresses peers can use. */
function safeCanonicalIp(text: string): string | null {
  if (text.includes('%')) return null;
  try {
    return canonicalIp(text);
  } catch {
    return null;
  }
}

/** What keeps a canonical IP from being a node's address, or null. */
function ipKind(ip: string): 'wildcard' | 'multicast' | 'broadcast' | null {
  if (isIP(ip) === 4) {
    if (ip === '0.0.0.0') return 'wildcard';
    if (ip === '255.255.255.255') return 'broadcast';
    const first = Number(ip.split('.')[0]);
    return first >= 224 && first <= 239 ? 'multicast' : null;
  }
  if (ip === '::') return 'wildcard';
  return /^ff[0-9a-f]{2}:/.test(ip) ? 'multicast' : null;
}

/** Whether `text` is an http(s) URL as people write them: the WHATWG parser alone takes far more. */
function isHttpUrl(text: string): boolean {
  if (text.length > MAX_URL_CHARS || /[\s\\]/.test(text) || UNPRINTABLE.test(text)) return false;
  const parts = URL_PARTS.exec(text);
  if (!parts) return false;
  const [, host = '', port] = parts;
  if (
    port !== undefined &&
    !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)
  ) {
    return false;
  }
  if (!host.startsWith('[')) {
    if (host.length > 253 || !URL_HOST_NAME.test(host)) return false;
    // A numeric last label makes the parser read the host as IPv4 ("1.2.3" is 1.2.0.3).
    const bare = host.replace(/\.$/, '');
    const last = bare.slice(bare.lastIndexOf('.') + 1);
    if (/^(\d+|0x[0-9a-f]*)$/i.test(last) && isIP(bare) !== 4) return false;
  }
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** The longest link an alert carries (schemas: Alertmanager's generatorURL). */
export const MAX_LINK_CHARS = 2000;

/**
 * A URL setting as alerts link to it: `{kind}` replaced by `kind`, then written as the WHATWG
 * parser does (host in punycode, spaces and braces escaped) with the few characters it leaves
 * that RFC 3986 does not allow (`|`, `^` …) escaped too, since receivers check links as URIs.
 */
export function linkHref(url: string, kind?: string): string {
  const filled = kind === undefined ? url : url.replaceAll('{kind}', kind);
  return new URL(filled).href.replace(
    /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/** Why `path` cannot be read as a regular file, or null; never reads it. */
export function unreadableFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'not found (ENOENT)';
    if (code === 'EACCES') return 'permission denied (EACCES)';
    return code ? `cannot be read (${code})` : 'cannot be read';
  }
  try {
    return fstatSync(fd).isFile() ? null : 'not a regular file';
  } finally {
    closeSync(fd);
  }
}

/** Parses one raw value; returns an error sentence's tail, or the value. */
export function parseValue(setting: Setting, raw: string): { value: Value } | { error: string } {
  const t = setting.type;
  const text = raw.trim();
  const bad = { error: `expected ${describe(setting)}` };
  switch (t.kind) {
    case 'string':
      return text ? { value: text } : bad;
    case 'text':
      return text && text.length <= t.maxLength && !UNPRINTABLE.test(text) ? { value: text } : bad;
    case 'dns-subdomain':
      return text.length <= 253 && DNS_1123_SUBDOMAIN.test(text) ? { value: text } : bad;
    case 'dns-label':
      return text.length <= 63 && DNS_1123_LABEL.test(text) ? { value: text } : bad;
    case 'dns-1035-label':
      return text.length <= 63 && DNS_1035_LABEL.test(text) ? { value: text } : bad;
    case 'path':
      return text && text.length <= MAX_PATH_CHARS && !/\p{Cc}/u.test(text) ? { value: text } : bad;
    case 'ip': {
      const ip = safeCanonicalIp(text);
      if (ip === null) return bad;
      const kind = ipKind(ip);
      return kind === null || (kind === 'wildcard' && t.wildcard) ? { value: ip } : bad;
    }
    case 'port': {
      const n = Number(text);
      return /^\d+$/.test(text) && n >= 1 && n <= 65535 ? { value: n } : bad;
    }
    case 'listen': {
      const value = canonicalListen(text);
      const ip = value === null ? null : listenIp(value);
      const kind = ip === null ? null : ipKind(ip);
      return value !== null && (kind === null || kind === 'wildcard') ? { value } : bad;
    }
    case 'int': {
      const n = Number(text);
      if (!(/^-?\d+$/.test(text) && n >= t.min && n <= t.max)) return bad;
      return { value: n === t.off ? null : n };
    }
    case 'ratio': {
      const n = Number(text);
      return /^\d*\.?\d+$/.test(text) && n > t.min && n <= t.max ? { value: n } : bad;
    }
    case 'duration': {
      const ms = parseDuration(text);
      return ms !== null && ms >= t.minMs && ms <= t.maxMs ? { value: ms } : bad;
    }
    case 'enum':
      return t.values.includes(text) ? { value: t.synonyms?.[text] ?? text } : bad;
    case 'boolean':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : bad;
    case 'url':
      return isHttpUrl(text) ? { value: text } : bad;
    case 'peers': {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      // Canonical spelling, so that the same node is always the same string (self-removal, rank).
      const normal = items.map(canonicalAddress);
      const wrong = items.filter((_, i) => normal[i] === null);
      if (wrong.length > 0) return { error: `${bad.error}; not ip:port: ${wrong.join(', ')}` };
      const unusable = items.filter((item) => ipKind(parseAddress(item)?.ip ?? '') !== null);
      if (unusable.length > 0) {
        return {
          error: `${bad.error}; not a node's address (0.0.0.0, ::, multicast or broadcast): ${unusable.join(', ')}`,
        };
      }
      return { value: [...new Set(normal as string[])] };
    }
  }
}
