// An HTTP/1.1 response, read incrementally from the bytes a connection delivers (RFC 9112): status
// line, headers, and a body framed by Content-Length, chunked transfer coding, or the connection's
// close. Pure: bytes in, a verdict out. Limits bound what a hostile peer can make this process
// hold: headers up to MAX_HEADER_BYTES, bodies up to the caller's maximum. Nothing it keeps or
// returns refers to the bytes it was handed: a connection reads into one buffer, reused.

/** Node's own default limit on a message's header section. */
export const MAX_HEADER_BYTES = 16 * 1024;
/** A chunk-size line (hex size and extensions) longer than this is not a real one. */
const MAX_CHUNK_LINE_BYTES = 1024;
const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);
const MORE: ParseStep = Object.freeze({ kind: 'more' });
const HEADER_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: [^\r\n]*)?$/;
/** A header field name: an RFC 9110 token (no spaces, colons or control characters). */
export const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export interface ParsedResponse {
  status: number;
  /** Header names in lower case; repeated headers joined with ", ". */
  headers: ReadonlyMap<string, string>;
  body: Buffer;
  /** The connection may carry another request. */
  keepAlive: boolean;
}

export type ParseStep =
  | { kind: 'more' }
  /** `trailing`: bytes came after the response, which no request asked for. */
  | { kind: 'done'; response: ParsedResponse; trailing: boolean }
  | { kind: 'error'; detail: string };

type Framing =
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; remaining: number; state: 'size' | 'data' | 'data-end' | 'trailers' }
  | { kind: 'close' };

export class ResponseParser {
  private pending: Buffer = Buffer.alloc(0);
  private head: { status: number; headers: Map<string, string>; keepAlive: boolean } | null = null;
  private framing: Framing | null = null;
  /** The body so far: its first `bodyBytes`, copied out of the bytes read. */
  private bodySoFar: Buffer = EMPTY;
  private bodyBytes = 0;
  private result: ParseStep | null = null;

  constructor(private readonly maxBodyBytes: number) {}

  /** Takes the next bytes from the connection (only read while this runs: they are not kept). */
  push(bytes: Buffer): ParseStep {
    if (this.result)
      return this.result.kind === 'done' ? { ...this.result, trailing: true } : this.result;
    this.pending = this.pending.length === 0 ? bytes : Buffer.concat([this.pending, bytes]);
    this.result = this.advance();
    // What is left unparsed waits for the next bytes in a copy of its own.
    this.pending = this.result || this.pending.length === 0 ? EMPTY : Buffer.from(this.pending);
    return this.result ?? MORE;
  }

  /** The connection closed: whole only if the body ran to the close. */
  end(): ParseStep {
    if (this.result) return this.result;
    if (this.framing?.kind === 'close') {
      this.result = this.finish(false);
      return this.result;
    }
    this.result = { kind: 'error', detail: 'connection closed before the whole answer' };
    return this.result;
  }

  private advance(): ParseStep | null {
    for (;;) {
      if (!this.head) {
        const end = this.pending.indexOf(HEADER_END);
        if (end < 0) {
          // Not HTTP (an SSH banner, a TLS alert): known from the first line, not at the timeout.
          const eol = this.pending.indexOf(CRLF);
          if (eol >= 0 && !STATUS_LINE.test(this.pending.toString('latin1', 0, eol))) {
            return { kind: 'error', detail: 'answer is not HTTP/1.x' };
          }
          return this.pending.length > MAX_HEADER_BYTES
            ? { kind: 'error', detail: `answer headers larger than ${MAX_HEADER_BYTES} bytes` }
            : null;
        }
        if (end > MAX_HEADER_BYTES) {
          return { kind: 'error', detail: `answer headers larger than ${MAX_HEADER_BYTES} bytes` };
        }
        const head = this.parseHead(this.pending.toString('latin1', 0, end));
        this.pending = this.pending.subarray(end + HEADER_END.length);
        if (typeof head === 'string') return { kind: 'error', detail: head };
        // An interim answer (100 Continue, 103 Early Hints): the real one follows.
        if (head.status >= 100 && head.status < 200) {
          if (head.status === 101) return { kind: 'error', detail: 'peer switched protocols' };
          continue;
        }
        this.head = head;
        const framing = this.framingOf(head);
        if (typeof framing === 'string') return { kind: 'error', detail: framing };
        this.framing = framing;
      }
      return this.body();
    }
  }

  private parseHead(
    text: string,
  ): { status: number; headers: Map<string, string>; keepAlive: boolean } | string {
    // Line by line by index: no array of lines, no trimmed copies (5,000 answers a second).
    let eol = text.indexOf('\r\n');
    if (eol < 0) eol = text.length;
    const status = STATUS_LINE.exec(text.slice(0, eol));
    if (!status) return 'answer is not HTTP/1.x';
    const headers = new Map<string, string>();
    for (let start = eol + 2; start < text.length + 2; start = eol + 2) {
      eol = text.indexOf('\r\n', start);
      if (eol < 0) eol = text.length;
      const colon = text.indexOf(':', start);
      if (colon <= start || colon >= eol) return 'answer has a malformed header line';
      const name = text.slice(start, colon);
      if (!HEADER_NAME.test(name)) return 'answer has a malformed header line';
      const key = name.toLowerCase();
      const value = text.slice(skipSpaces(text, colon + 1, eol), trimEnd(text, colon + 1, eol));
      const before = headers.get(key);
      headers.set(key, before === undefined ? value : `${before}, ${value}`);
    }
    const minor = status[1];
    const connection = headers.get('connection');
    const keepAlive =
      minor === '1'
        ? connection === undefined || !tokens(connection).includes('close')
        : connection !== undefined && tokens(connection).includes('keep-alive');
    return { status: Number(status[2]), headers, keepAlive };
  }

  private framingOf(head: { status: number; headers: Map<string, string> }): Framing | string {
    if (head.status === 204 || head.status === 304) return { kind: 'length', remaining: 0 };
    const coding = head.headers.get('transfer-encoding');
    if (coding !== undefined) {
      // With a transfer coding, Content-Length is ignored, and the connection is not reused.
      if (head.headers.has('content-length')) this.head!.keepAlive = false;
      const codings = tokens(coding);
      if (codings[codings.length - 1] === 'chunked') {
        return { kind: 'chunked', remaining: 0, state: 'size' };
      }
      this.head!.keepAlive = false;
      return { kind: 'close' };
    }
    const length = head.headers.get('content-length');
    if (length === undefined) {
      this.head!.keepAlive = false;
      return { kind: 'close' };
    }
    // Repeated (joined) headers must all say the same.
    const values = length.includes(',') ? new Set(length.split(',').map((v) => v.trim())) : null;
    const only = values ? (values.size === 1 ? [...values][0] : undefined) : length;
    if (only === undefined || !/^\d{1,15}$/.test(only)) {
      return 'answer has an invalid Content-Length';
    }
    const remaining = Number(only);
    if (remaining > this.maxBodyBytes) return this.tooLarge().detail;
    return { kind: 'length', remaining };
  }

  private body(): ParseStep | null {
    const framing = this.framing!;
    if (framing.kind === 'close') {
      if (!this.take(this.pending.length)) return this.tooLarge();
      this.pending = Buffer.alloc(0);
      return null;
    }
    if (framing.kind === 'length') {
      const n = Math.min(framing.remaining, this.pending.length);
      this.take(n);
      framing.remaining -= n;
      this.pending = this.pending.subarray(n);
      return framing.remaining === 0 ? this.finish(this.pending.length > 0) : null;
    }
    return this.chunked(framing);
  }

  private chunked(framing: Framing & { kind: 'chunked' }): ParseStep | null {
    for (;;) {
      if (framing.state === 'data') {
        const n = Math.min(framing.remaining, this.pending.length);
        if (!this.take(n)) return this.tooLarge();
        framing.remaining -= n;
        this.pending = this.pending.subarray(n);
        if (framing.remaining > 0) return null;
        framing.state = 'data-end';
        continue;
      }
      if (
        framing.state === 'data-end' &&
        this.pending.length >= 2 &&
        !startsWithCrlf(this.pending)
      ) {
        return { kind: 'error', detail: 'answer has a malformed chunk' };
      }
      const eol = this.pending.indexOf(CRLF);
      if (eol < 0) {
        return this.pending.length > MAX_CHUNK_LINE_BYTES
          ? { kind: 'error', detail: 'answer has a malformed chunk' }
          : null;
      }
      const line = this.pending.toString('latin1', 0, eol);
      this.pending = this.pending.subarray(eol + CRLF.length);
      if (framing.state === 'data-end') {
        if (line !== '') return { kind: 'error', detail: 'answer has a malformed chunk' };
        framing.state = 'size';
      } else if (framing.state === 'size') {
        const size = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;.*)?$/.exec(line);
        if (!size) return { kind: 'error', detail: 'answer has a malformed chunk' };
        framing.remaining = parseInt(size[1]!, 16);
        if (this.bodyBytes + framing.remaining > this.maxBodyBytes) return this.tooLarge();
        framing.state = framing.remaining === 0 ? 'trailers' : 'data';
      } else if (line === '') {
        // The end of the (ignored) trailer section.
        return this.finish(this.pending.length > 0);
      }
    }
  }

  /**
   * Copies `n` bytes of body from the front of `pending`; false if that makes it too large. One
   * buffer, doubled as it fills (at least 4 KiB, never past the announced length), so a body sent
   * a byte at a time costs its size, not a Buffer each, and a peer that announces a megabyte and
   * sends a byte makes this hold 4 KiB, not the megabyte.
   */
  private take(n: number): boolean {
    if (n === 0) return true;
    const size = this.bodyBytes + n;
    if (size > this.maxBodyBytes) return false;
    if (size > this.bodySoFar.length) {
      const framing = this.framing;
      const most = framing?.kind === 'length' ? this.bodyBytes + framing.remaining : Infinity;
      const wanted = Math.min(this.maxBodyBytes, most, Math.max(2 * size, 4096));
      const grown = Buffer.allocUnsafe(Math.max(size, wanted));
      this.bodySoFar.copy(grown, 0, 0, this.bodyBytes);
      this.bodySoFar = grown;
    }
    this.pending.copy(this.bodySoFar, this.bodyBytes, 0, n);
    this.bodyBytes = size;
    return true;
  }

  private tooLarge(): ParseStep & { kind: 'error' } {
    return { kind: 'error', detail: `answer larger than ${this.maxBodyBytes} bytes` };
  }

  private finish(trailing: boolean): ParseStep {
    const head = this.head!;
    const body = this.bodySoFar.subarray(0, this.bodyBytes);
    return {
      kind: 'done',
      response: { status: head.status, headers: head.headers, body, keepAlive: head.keepAlive },
      trailing,
    };
  }
}

function startsWithCrlf(bytes: Buffer): boolean {
  return bytes[0] === 0x0d && bytes[1] === 0x0a;
}

/** Where the value after `from` starts: past spaces and tabs (optional whitespace). */
function skipSpaces(text: string, from: number, end: number): number {
  while (from < end && (text.charCodeAt(from) === 0x20 || text.charCodeAt(from) === 0x09)) from++;
  return from;
}

/** Where the value before `end` ends: before spaces and tabs. */
function trimEnd(text: string, from: number, end: number): number {
  while (end > from && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) {
    end--;
  }
  return end;
}

function tokens(value: string | undefined): string[] {
  return value === undefined
    ? []
    : value
        .toLowerCase()
        .split(',')
        .map((t) => t.trim());
}
