// The peer client's HTTP/1.1 response reader: every framing a server may use, split anywhere the
// network may split it, and the limits and malformations it must refuse.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  MAX_HEADER_BYTES,
  ResponseParser,
  type ParseStep,
} from '../../src/peer-client/response-parser.js';

const MAX_BODY = 1024;

/** Feeds `parts` in order; the first step that is not 'more', or end()'s if `close`. */
function parse(parts: (string | Buffer)[], close = false, maxBody = MAX_BODY): ParseStep {
  const parser = new ResponseParser(maxBody);
  for (const part of parts) {
    const step = parser.push(typeof part === 'string' ? Buffer.from(part, 'latin1') : part);
    if (step.kind !== 'more') return step;
  }
  return close ? parser.end() : { kind: 'more' };
}

/** `bytes` cut at the given places (each taken modulo its length + 1), in order. */
function splitAt(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    parts.push(bytes.subarray(from, cut));
    from = cut;
  }
  return parts;
}

function done(step: ParseStep) {
  expect(step.kind, JSON.stringify(step)).to.equal('done');
  if (step.kind !== 'done') throw new Error('not done');
  return { ...step.response, body: step.response.body.toString('latin1'), trailing: step.trailing };
}

function failed(step: ParseStep): string {
  expect(step.kind, JSON.stringify(step)).to.equal('error');
  return step.kind === 'error' ? step.detail : '';
}

const json = '{"id":"worker-2@10.0.0.2","role":"follower"}';
const lengthFramed = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nX-Knh-Heartbeat: 1\r\n\r\n${json}`;
const chunked = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n${json.slice(0, 5)}\r\n${(json.length - 5).toString(16)}\r\n${json.slice(5)}\r\n0\r\nX-Trailer: t\r\n\r\n`;
const closeFramed = `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n${json}`;

describe('HTTP response parser', () => {
  it('reads a Content-Length body, with lower-cased header names, and keeps the connection', () => {
    const r = done(parse([lengthFramed]));
    expect(r.status).to.equal(200);
    expect(r.body).to.equal(json);
    expect(r.headers.get('x-knh-heartbeat')).to.equal('1');
    expect(r.headers.get('content-type')).to.equal('application/json');
    expect(r.keepAlive).to.be.true;
    expect(r.trailing).to.be.false;
  });

  it('reads a chunked body, ignoring chunk extensions and trailers', () => {
    const r = done(parse([chunked]));
    expect(r.body).to.equal(json);
    expect(r.keepAlive).to.be.true;
  });

  it('reads a body that runs to the close, and then does not keep the connection', () => {
    expect(parse([closeFramed])).to.deep.equal({ kind: 'more' });
    const r = done(parse([closeFramed], true));
    expect(r.body).to.equal(json);
    expect(r.keepAlive).to.be.false;
  });

  it('gives the same answer however the bytes are split', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(lengthFramed, chunked, closeFramed),
        fc.array(fc.nat(), { maxLength: 12 }),
        (text, cuts) => {
          const r = done(parse(splitAt(Buffer.from(text, 'latin1'), cuts), text === closeFramed));
          expect(r.status).to.equal(200);
          expect(r.body).to.equal(json);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps nothing of the bytes it is handed: every read can land in one buffer, reused', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(lengthFramed, chunked, closeFramed),
        fc.array(fc.nat(), { maxLength: 12 }),
        (text, cuts) => {
          // As a connection reads: each read into the same buffer, overwritten by the next.
          const shared = Buffer.alloc(text.length);
          const parser = new ResponseParser(MAX_BODY);
          let step: ParseStep = { kind: 'more' };
          for (const part of splitAt(Buffer.from(text, 'latin1'), cuts)) {
            shared.fill('#');
            step = parser.push(shared.subarray(0, part.copy(shared)));
            if (step.kind !== 'more') break;
          }
          if (step.kind === 'more' && text === closeFramed) step = parser.end();
          shared.fill('#');
          const r = done(step);
          expect(r.body).to.equal(json);
          expect(r.status).to.equal(200);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads a body sent a byte at a time, in as many chunks and reads', () => {
    const body = 'abcdefghij'.repeat(100);
    const chunks = [...body].map((c) => `1\r\n${c}\r\n`).join('');
    const text = `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`;
    const reads = [...Buffer.from(text, 'latin1')].map((byte) => Buffer.from([byte]));
    expect(done(parse(reads, false, 4096)).body).to.equal(body);
    expect(failed(parse(reads, false, 999))).to.match(/larger than 999 bytes/);
  });

  it('does not keep a connection the server closes or cannot frame for reuse', () => {
    const closing = `HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`;
    expect(done(parse([closing])).keepAlive).to.be.false;
    const http10 = `HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}`;
    expect(done(parse([http10])).keepAlive).to.be.false;
    const http10KeepAlive = `HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}`;
    expect(done(parse([http10KeepAlive])).keepAlive).to.be.true;
    // Both framings: the transfer coding wins, and the connection is not trusted further.
    const both = `HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`;
    const r = done(parse([both]));
    expect(r.body).to.equal('{}');
    expect(r.keepAlive).to.be.false;
  });

  it('skips interim 1xx answers, and reads 204 and 304 as bodiless', () => {
    const r = done(
      parse([
        `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n`,
        lengthFramed,
      ]),
    );
    expect(r.body).to.equal(json);
    expect(done(parse(['HTTP/1.1 204 No Content\r\n\r\n'])).body).to.equal('');
    expect(done(parse(['HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n'])).body).to.equal(
      '',
    );
  });

  it('reports bytes after the whole answer, which no request asked for', () => {
    expect(done(parse([`${lengthFramed}HTTP/1.1 200 OK\r\n`])).trailing).to.be.true;
    const parser = new ResponseParser(MAX_BODY);
    expect(parser.push(Buffer.from(lengthFramed)).kind).to.equal('done');
    const again = parser.push(Buffer.from('x'));
    expect(again.kind === 'done' && again.trailing).to.be.true;
  });

  it('holds what a peer sent, not what it announced: a megabyte announced and a byte sent costs little', () => {
    const parsers: ResponseParser[] = [];
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 100; i++) {
      const parser = new ResponseParser(1024 * 1024);
      const step = parser.push(
        Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${1024 * 1024}\r\n\r\n{`, 'latin1'),
      );
      expect(step.kind).to.equal('more');
      parsers.push(parser);
    }
    // 100 such answers in flight: 100 MB if each announced megabyte were set aside at once.
    expect(process.memoryUsage().arrayBuffers - before).to.be.below(10 * 1024 * 1024);
    expect(parsers).to.have.length(100);
  });

  it('refuses bodies over its limit, whatever their framing, before reading them whole', () => {
    const big = 'x'.repeat(MAX_BODY + 1);
    // Announced too large: refused from the headers alone.
    expect(failed(parse([`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\n\r\n`]))).to.match(
      /larger than 1024 bytes/,
    );
    expect(
      failed(
        parse([
          `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${(MAX_BODY + 1).toString(16)}\r\n`,
        ]),
      ),
    ).to.match(/larger than/);
    // Chunks each small, too many in all.
    const chunks = Array.from({ length: 3 }, () => `200\r\n${'x'.repeat(0x200)}\r\n`).join('');
    expect(
      failed(parse([`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`])),
    ).to.match(/larger than/);
    expect(failed(parse([`HTTP/1.1 200 OK\r\n\r\n`, big]))).to.match(/larger than/);
  });

  it('refuses a header section over 16 KiB, even before it ends', () => {
    const header = `X-Filler: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n`;
    expect(failed(parse([`HTTP/1.1 200 OK\r\n${header}`]))).to.match(/headers larger than/);
    expect(failed(parse([`HTTP/1.1 200 OK\r\n${header}\r\n`]))).to.match(/headers larger than/);
  });

  it('refuses what is not an HTTP/1.x answer, or is malformed', () => {
    const malformed: [string, RegExp][] = [
      ['SSH-2.0-OpenSSH_9.2\r\n', /not HTTP/],
      ['HTTP/2 200\r\n\r\n', /not HTTP/],
      ['HTTP/1.1 20 OK\r\n\r\n', /not HTTP/],
      ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /malformed header/],
      ['HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n', /malformed header/],
      ['HTTP/1.1 200 OK\r\n folded: x\r\n\r\n', /malformed header/],
      ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /Content-Length/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n', /Content-Length/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n', /Content-Length/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /malformed chunk/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX', /malformed chunk/],
      ['HTTP/1.1 101 Switching Protocols\r\n\r\n', /switched protocols/],
    ];
    for (const [text, detail] of malformed) expect(failed(parse([text])), text).to.match(detail);
    // The same Content-Length twice is one.
    const twice = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}';
    expect(done(parse([twice])).body).to.equal('{}');
  });

  it('calls an answer cut short by the close incomplete', () => {
    for (const cut of [0, 10, lengthFramed.length - 1]) {
      expect(failed(parse([lengthFramed.slice(0, cut)], true)), `cut at ${cut}`).to.match(
        /closed before the whole answer/,
      );
    }
    expect(failed(parse([chunked.slice(0, -2)], true))).to.match(/closed before/);
  });
});
