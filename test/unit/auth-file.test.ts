// Auth headers from a mounted Secret: no header injection, no secret in errors, rotation followed.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import {
  AUTH_REFRESH_MS,
  AuthHeaderSource,
  MAX_AUTH_FILE_BYTES,
  readAuthHeader,
} from '../../src/secrets/auth-file.js';

describe('readAuthHeader', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'knh-auth-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (content: string | Buffer, name = 'token') => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  /** The error, which names the file and never quotes `secret` (when there is one). */
  function expectError(result: ReturnType<typeof readAuthHeader>, path: string, secret?: string) {
    expect(result.ok, JSON.stringify(result)).to.equal(false);
    if (result.ok) return;
    expect(result.error).to.include(path);
    if (secret) expect(result.error).to.not.include(secret);
    return result.error;
  }

  it('sends the whole file as the Authorization header', () => {
    expect(readAuthHeader(file('Bearer abc123'))).to.deep.equal({
      ok: true,
      headers: { Authorization: 'Bearer abc123' },
    });
  });

  it('sends just a token under a configured header name', () => {
    expect(readAuthHeader(file('s3cr3t-token'), 'X-Api-Key')).to.deep.equal({
      ok: true,
      headers: { 'X-Api-Key': 's3cr3t-token' },
    });
  });

  it('drops one trailing newline, LF or CRLF', () => {
    expect(readAuthHeader(file('Bearer abc123\n'))).to.deep.equal({
      ok: true,
      headers: { Authorization: 'Bearer abc123' },
    });
    expect(readAuthHeader(file('Bearer abc123\r\n', 'crlf'))).to.deep.equal({
      ok: true,
      headers: { Authorization: 'Bearer abc123' },
    });
  });

  it('refuses a second trailing newline (it would end up in the header)', () => {
    const path = file('Bearer abc123\n\n');
    expect(expectError(readAuthHeader(path), path, 'abc123')).to.match(/line break/);
  });

  it('refuses an empty file, and one holding only a newline', () => {
    for (const [name, content] of [
      ['empty', ''],
      ['newline', '\n'],
    ] as const) {
      const path = file(content, name);
      expect(expectError(readAuthHeader(path), path), name).to.match(/is empty/);
    }
  });

  it('refuses a file over 8 KiB, and accepts one of exactly 8 KiB', () => {
    const big = file('a'.repeat(MAX_AUTH_FILE_BYTES + 1), 'big');
    expect(expectError(readAuthHeader(big), big, 'a'.repeat(20))).to.match(
      /larger than 8192 bytes/,
    );
    const limit = file('a'.repeat(MAX_AUTH_FILE_BYTES), 'limit');
    const ok = readAuthHeader(limit);
    expect(ok.ok && ok.headers.Authorization?.length).to.equal(MAX_AUTH_FILE_BYTES);
  });

  it('refuses CR or LF inside the value (header injection), without quoting it', () => {
    for (const [name, content] of [
      ['crlf', 'Bearer abc123\r\nX-Injected: yes'],
      ['lf', 'Bearer abc123\nX-Injected: yes\n'],
      ['cr', 'Bearer abc123\rX-Injected: yes'],
    ] as const) {
      const path = file(content, name);
      const error = expectError(readAuthHeader(path), path, 'abc123');
      expect(error, name).to.match(/line break \(CR or LF\) at character 14/);
      expect(error, name).to.not.include('Injected');
    }
  });

  it('refuses other control characters and non-ASCII bytes', () => {
    const cases: [string, string | Buffer, RegExp][] = [
      ['nul', 'Bearer abc\u0000123', /control character at character 11/],
      ['tab', 'Bearer\tabc123', /control character at character 7/],
      ['del', 'Bearer abc123\u007f', /control character/],
      ['bom', Buffer.from('\ufeffBearer abc123', 'utf8'), /non-ASCII character at character 1/],
    ];
    for (const [name, content, message] of cases) {
      const path = file(content, name);
      expect(expectError(readAuthHeader(path), path, 'abc123'), name).to.match(message);
    }
  });

  it('refuses surrounding spaces, which HTTP would strip', () => {
    const path = file(' Bearer abc123');
    expect(expectError(readAuthHeader(path), path, 'abc123')).to.match(/leading or trailing/);
  });

  it('names the path of a missing file or a directory', () => {
    const missing = join(dir, 'no-such-token');
    expect(expectError(readAuthHeader(missing), missing)).to.match(/not found \(ENOENT\)/);
    expect(expectError(readAuthHeader(dir), dir)).to.match(/not a regular file|EISDIR/);
  });

  it('refuses a header name that is not an HTTP token or that the client owns', () => {
    const path = file('Bearer abc123');
    for (const name of ['', 'X Api Key', 'X-Key:', 'X-Key\r\nEvil', 'Schlüssel']) {
      const result = readAuthHeader(path, name);
      expect(result.ok, JSON.stringify(name)).to.equal(false);
      expect(!result.ok && result.error, JSON.stringify(name)).to.match(/not an HTTP token/);
    }
    for (const name of ['Host', 'content-length', 'Transfer-Encoding']) {
      const result = readAuthHeader(path, name);
      expect(!result.ok && result.error, name).to.match(/reserved/);
    }
  });
});

describe('AuthHeaderSource', () => {
  // A Secret volume as the kubelet lays it out: token -> ..data/token, ..data -> ..<timestamp>/;
  // rotation writes a new directory and renames a new ..data symlink over the old one.
  let dir: string;
  let generation = 0;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'knh-secret-'));
    generation = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function writeSecret(content: string) {
    const data = `..gen_${++generation}`;
    mkdirSync(join(dir, data));
    writeFileSync(join(dir, data, 'token'), content);
    symlinkSync(data, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
    if (generation === 1) symlinkSync(join('..data', 'token'), join(dir, 'token'));
  }

  function open(now: () => number, errors: string[] = []) {
    const opened = AuthHeaderSource.open({
      path: join(dir, 'token'),
      now,
      onError: (e) => errors.push(e),
    });
    if (!opened.ok) throw new Error(opened.error);
    return opened.source;
  }

  it('refuses to open on a missing or invalid Secret', () => {
    const path = join(dir, 'token');
    const missing = AuthHeaderSource.open({ path, now: () => 0 });
    expect(!missing.ok && missing.error).to.include(path);
    writeSecret('Bearer abc123\r\nX-Injected: yes');
    const bad = AuthHeaderSource.open({ path, now: () => 0 });
    expect(!bad.ok && bad.error).to.match(/line break/);
  });

  it('picks up a rotated Secret once 30 s have passed since the last read', () => {
    let t = 1_000_000;
    writeSecret('Bearer one\n');
    const source = open(() => t);
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer one' });
    writeSecret('Bearer two\n');
    t += AUTH_REFRESH_MS - 1;
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer one' });
    t += 1;
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer two' });
  });

  it('keeps the last good value when a re-read fails, reports it once per window, recovers', () => {
    let t = 0;
    const errors: string[] = [];
    writeSecret('Bearer good');
    const source = open(() => t, errors);
    writeSecret('Bearer zz-bad-secret\r\nX-Injected: yes');
    t += AUTH_REFRESH_MS;
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer good' });
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer good' });
    expect(errors).to.have.length(1);
    expect(errors[0])
      .to.include(join(dir, 'token'))
      .and.match(/line break/);
    expect(errors[0]).to.not.include('zz-bad-secret');

    rmSync(join(dir, '..data'));
    t += AUTH_REFRESH_MS;
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer good' });
    expect(errors).to.have.length(2);
    expect(errors[1]).to.match(/not found/);

    writeSecret('Bearer fixed');
    t += AUTH_REFRESH_MS;
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer fixed' });
    expect(errors).to.have.length(2);
  });

  it('hands out a copy: a caller changing it does not change the next request', () => {
    writeSecret('Bearer one');
    const source = open(() => 0);
    const headers = source.headers();
    headers.Authorization = 'tampered';
    expect(source.headers()).to.deep.equal({ Authorization: 'Bearer one' });
  });
});
