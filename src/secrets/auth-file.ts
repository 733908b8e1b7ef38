// A receiver's auth header read from a file (a mounted Secret), and re-read as the Secret rotates.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** Larger than any token or bearer credential; a bigger file is a mistake (a wrong mount). */
export const MAX_AUTH_FILE_BYTES = 8 * 1024;

/** Kubernetes updates a mounted Secret within about a minute; this bounds the extra delay. */
export const AUTH_REFRESH_MS = 30_000;

export type AuthHeaderResult =
  { ok: true; headers: Record<string, string> } | { ok: false; error: string };

// RFC 9110 §5.6.2: a field name is a token.
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

// Headers the HTTP client owns: a Secret must not be able to change how the request is framed.
const RESERVED = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'expect',
]);

export function checkHeaderName(name: string): string | null {
  if (name.length === 0 || name.length > 256 || !TOKEN.test(name)) {
    return `auth header name ${JSON.stringify(name.slice(0, 256))} is not an HTTP token`;
  }
  if (RESERVED.has(name.toLowerCase())) {
    return `auth header name ${name} is reserved for the HTTP client`;
  }
  return null;
}

/**
 * The whole file as a string if it exists and is at most MAX_AUTH_FILE_BYTES; reads at most one
 * byte past the limit (never a whole oversized file), through the symlink a Secret mount uses.
 */
export function readBounded(
  path: string,
  label = 'auth header file',
): { ok: true; text: string } | { ok: false; error: string } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    return { ok: false, error: `${label} ${path}: ${errnoText(err)}` };
  }
  try {
    if (!fstatSync(fd).isFile()) {
      return { ok: false, error: `${label} ${path} is not a regular file` };
    }
    const buf = Buffer.alloc(MAX_AUTH_FILE_BYTES + 1);
    let length = 0;
    while (length < buf.length) {
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_AUTH_FILE_BYTES) {
      return {
        ok: false,
        error: `${label} ${path} is larger than ${MAX_AUTH_FILE_BYTES} bytes`,
      };
    }
    return { ok: true, text: buf.subarray(0, length).toString('utf8') };
  } catch (err) {
    return { ok: false, error: `${label} ${path}: ${errnoText(err)}` };
  } finally {
    closeSync(fd);
  }
}

/** The error's code in words: all a reader needs, and never anything read from the file. */
function errnoText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'not found (ENOENT)';
  if (e.code === 'EACCES') return 'permission denied (EACCES)';
  if (e.code === 'EISDIR') return 'is a directory (EISDIR)';
  return e.code ? `cannot be read (${e.code})` : 'cannot be read';
}

/**
 * Why `value` cannot be sent as a header value, or null. Only printable ASCII and spaces pass:
 * CR or LF would inject headers, other control characters are refused by HTTP clients, and a
 * non-ASCII byte (a BOM, a typographic quote) is never part of a real token. Positions only:
 * errors never quote the secret.
 */
function checkValue(path: string, value: string): string | null {
  if (value.length === 0) return `auth header file ${path} is empty`;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x0d || c === 0x0a) {
      return `auth header file ${path} has a line break (CR or LF) at character ${i + 1}: only one trailing newline may end it`;
    }
    if (c < 0x20 || c === 0x7f) {
      return `auth header file ${path} has a control character at character ${i + 1}`;
    }
    if (c > 0x7e) {
      return `auth header file ${path} has a non-ASCII character at character ${i + 1}`;
    }
  }
  if (value.trim().length === 0) return `auth header file ${path} holds only spaces`;
  if (value.trim() !== value) {
    return `auth header file ${path} has leading or trailing spaces (HTTP would strip them)`;
  }
  return null;
}

/**
 * The header `headerName: <file content>` from a file holding the whole value, e.g.
 * `Bearer abc123`, or just a token for a header such as X-Api-Key. One trailing newline (LF or
 * CRLF, as `echo` and editors write) is dropped. Errors name the path, never the content.
 */
export function readAuthHeader(path: string, headerName = 'Authorization'): AuthHeaderResult {
  const nameError = checkHeaderName(headerName);
  if (nameError) return { ok: false, error: nameError };
  const read = readBounded(path);
  if (!read.ok) return read;
  const value = read.text.replace(/\r?\n$/, '');
  const valueError = checkValue(path, value);
  if (valueError) return { ok: false, error: valueError };
  return { ok: true, headers: { [headerName]: value } };
}

export interface AuthHeaderSourceOptions {
  path: string;
  headerName?: string;
  /** Epoch ms. */
  now: () => number;
  /** Minimum time between reads of the file, ms. */
  refreshMs?: number;
  /** A re-read failed; the last good value stays in use. Called at most once per refreshMs. */
  onError?: (error: string) => void;
}

/**
 * The auth header of one receiver, following a mounted Secret as it rotates. Kubernetes rotates a
 * Secret volume by swapping a symlink, which file watchers miss; so `headers()` re-reads the file
 * when the last read is refreshMs old. Reads are synchronous and tiny (at most 8 KiB).
 */
export class AuthHeaderSource {
  private constructor(private readonly current: () => Record<string, string>) {}

  /** Reads the file once: a missing or invalid Secret at start-up is a configuration error. */
  static open(
    options: AuthHeaderSourceOptions,
  ): { ok: true; source: AuthHeaderSource } | { ok: false; error: string } {
    const {
      path,
      headerName = 'Authorization',
      now,
      refreshMs = AUTH_REFRESH_MS,
      onError,
    } = options;
    if (!Number.isFinite(refreshMs) || refreshMs < 0) {
      throw new Error(`refreshMs must be a non-negative number of milliseconds, got ${refreshMs}`);
    }
    const first = readAuthHeader(path, headerName);
    if (!first.ok) return first;
    const current = followFile({
      initial: first.headers,
      read: () => {
        const next = readAuthHeader(path, headerName);
        return next.ok ? { ok: true, value: next.headers } : next;
      },
      now,
      refreshMs,
      ...(onError ? { onError } : {}),
    });
    return { ok: true, source: new AuthHeaderSource(current) };
  }

  /** The headers to send now (a fresh object each call). */
  headers(): Record<string, string> {
    return { ...this.current() };
  }
}

/**
 * A value read from a file (a mounted Secret), read again when the last read is `refreshMs` old:
 * Kubernetes rotates a Secret volume by swapping a symlink, which file watchers miss. A read that
 * fails keeps the last good value (and is told to `onError`).
 */
export function followFile<T>(opts: {
  initial: T;
  read: () => { ok: true; value: T } | { ok: false; error: string };
  /** Epoch ms. */
  now: () => number;
  refreshMs: number;
  onError?: (error: string) => void;
}): () => T {
  let current = opts.initial;
  let lastReadAt = opts.now();
  return () => {
    const t = opts.now();
    // `t < lastReadAt`: the clock stepped back; read rather than wait out the gap.
    if (t - lastReadAt >= opts.refreshMs || t < lastReadAt) {
      lastReadAt = t;
      const next = opts.read();
      if (next.ok) current = next.value;
      else opts.onError?.(next.error);
    }
    return current;
  };
}
