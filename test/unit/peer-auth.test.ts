// Peer authentication: signatures, the timestamp window, replays, rotation, and the secret file.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PeerAuth, type AuthFailure } from '../../src/auth/peer-auth.js';
import { secretFileSource } from '../../src/auth/peer-secret.js';
import { ReplayGuard } from '../../src/auth/replay-guard.js';

const OLD = 'o'.repeat(32);
const NEW = 'n'.repeat(40);
const SKEW = 30_000;
const body = Buffer.from('{"from":{"id":"a@10.0.0.1","address":"10.0.0.1:8080"},"epoch":3}');

/** A PeerAuth on a clock the test moves. */
function authAt(secrets: string[], clock: { t: number }) {
  return new PeerAuth({
    secrets: () => secrets,
    now: () => clock.t,
    monotonic: () => clock.t,
    maxSkewMs: SKEW,
  });
}

function failure(result: ReturnType<PeerAuth['verifyRequest']>): AuthFailure | 'ok' {
  return result.ok ? 'ok' : result.failure;
}

describe('PeerAuth', () => {
  it('verifies what a holder of the secret signed, once', () => {
    const clock = { t: 1_700_000_000_000 };
    const a = authAt([OLD], clock);
    const b = authAt([OLD], clock);
    const { header, nonce } = a.signRequest('POST', '/election', body);
    expect(header).to.match(/^v1 ts=\d+,nonce=[0-9a-f]{32},sig=[0-9a-f]{64}$/);
    expect(b.verifyRequest('POST', '/election', header, body)).to.deep.equal({ ok: true, nonce });
    expect(failure(b.verifyRequest('POST', '/election', header, body))).to.equal('replayed');
  });

  it('refuses a missing or malformed header, another secret, and any change to method, path or body', () => {
    const clock = { t: 1_700_000_000_000 };
    const a = authAt([OLD], clock);
    const b = authAt([OLD], clock);
    const sign = () => a.signRequest('POST', '/election', body).header;
    expect(failure(b.verifyRequest('POST', '/election', undefined, body))).to.equal('missing');
    expect(failure(b.verifyRequest('POST', '/election', '', body))).to.equal('missing');
    for (const bad of [
      'Bearer x',
      'v1 ts=1,nonce=abc,sig=def',
      `${sign()} `,
      `v2${sign().slice(2)}`,
    ]) {
      expect(failure(b.verifyRequest('POST', '/election', bad, body)), bad).to.equal('malformed');
    }
    const other = authAt([NEW], clock).signRequest('POST', '/election', body).header;
    expect(failure(b.verifyRequest('POST', '/election', other, body))).to.equal('bad-signature');
    expect(failure(b.verifyRequest('POST', '/coordinator', sign(), body))).to.equal(
      'bad-signature',
    );
    expect(failure(b.verifyRequest('PUT', '/election', sign(), body))).to.equal('bad-signature');
    const altered = Buffer.from(body.toString().replace('"epoch":3', '"epoch":4'));
    expect(failure(b.verifyRequest('POST', '/election', sign(), altered))).to.equal(
      'bad-signature',
    );
    // A refused message spends no nonce: the genuine one still goes through.
    const genuine = a.signRequest('POST', '/election', body).header;
    const wrongBody = b.verifyRequest('POST', '/election', genuine, altered);
    expect(failure(wrongBody)).to.equal('bad-signature');
    expect(failure(b.verifyRequest('POST', '/election', genuine, body))).to.equal('ok');
  });

  it('takes timestamps within the skew either way, and refuses older or later ones', () => {
    const sender = { t: 1_700_000_000_000 };
    const receiver = { t: sender.t };
    const a = authAt([OLD], sender);
    const b = authAt([OLD], receiver);
    const at = (offset: number) => {
      receiver.t = sender.t + offset;
      return failure(
        b.verifyRequest('POST', '/election', a.signRequest('POST', '/election', body).header, body),
      );
    };
    expect(at(SKEW)).to.equal('ok');
    expect(at(-SKEW)).to.equal('ok');
    expect(at(SKEW + 1)).to.equal('expired');
    expect(at(-SKEW - 1)).to.equal('expired');
  });

  it('remembers a nonce for as long as its timestamp stays acceptable (twice the skew)', () => {
    const sender = { t: 1_700_000_000_000 };
    const receiver = { t: sender.t - SKEW }; // the sender's clock runs a whole skew ahead
    const a = authAt([OLD], sender);
    const b = authAt([OLD], receiver);
    const { header } = a.signRequest('POST', '/election', body);
    expect(failure(b.verifyRequest('POST', '/election', header, body))).to.equal('ok');
    receiver.t += 2 * SKEW - 1; // still within the window on the other side
    expect(failure(b.verifyRequest('POST', '/election', header, body))).to.equal('replayed');
    receiver.t += 1; // its last acceptable moment
    expect(failure(b.verifyRequest('POST', '/election', header, body))).to.equal('replayed');
    receiver.t += 1;
    expect(failure(b.verifyRequest('POST', '/election', header, body))).to.equal('expired');
  });

  it('rotates: the first secret signs and any secret in force verifies', () => {
    const clock = { t: 1_700_000_000_000 };
    const rotated = authAt([NEW, OLD], clock);
    const notYet = authAt([OLD], clock);
    const both = authAt([OLD, NEW], clock);
    const fromRotated = () => rotated.signRequest('POST', '/leave', body).header;
    expect(failure(notYet.verifyRequest('POST', '/leave', fromRotated(), body))).to.equal(
      'bad-signature',
    );
    expect(failure(both.verifyRequest('POST', '/leave', fromRotated(), body))).to.equal('ok');
    const fromOld = notYet.signRequest('POST', '/leave', body).header;
    expect(failure(rotated.verifyRequest('POST', '/leave', fromOld, body))).to.equal('ok');
  });

  it('signs answers for one request: another nonce, status or body does not verify', () => {
    const clock = { t: 1_700_000_000_000 };
    const a = authAt([OLD], clock);
    const answer = Buffer.from('{"type":"answer"}');
    const header = a.signResponse('n1', 200, answer);
    expect(a.verifyResponse('n1', 200, header, answer)).to.equal(true);
    expect(a.verifyResponse('n2', 200, header, answer)).to.equal(false);
    expect(a.verifyResponse('n1', 201, header, answer)).to.equal(false);
    expect(a.verifyResponse('n1', 200, header, Buffer.from('{"type":"other"}'))).to.equal(false);
    expect(a.verifyResponse('n1', 200, undefined, answer)).to.equal(false);
    expect(authAt([NEW], clock).verifyResponse('n1', 200, header, answer)).to.equal(false);
  });

  it('refuses when its nonce memory is full rather than forgetting (a replay stays refused)', () => {
    const clock = { t: 1_700_000_000_000 };
    const a = authAt([OLD], clock);
    const b = new PeerAuth({
      secrets: () => [OLD],
      now: () => clock.t,
      monotonic: () => clock.t,
      maxSkewMs: SKEW,
      maxNonces: 2,
    });
    const sign = () => a.signRequest('POST', '/probe', body).header;
    const first = sign();
    expect(failure(b.verifyRequest('POST', '/probe', first, body))).to.equal('ok');
    expect(failure(b.verifyRequest('POST', '/probe', sign(), body))).to.equal('ok');
    expect(failure(b.verifyRequest('POST', '/probe', sign(), body))).to.equal('busy');
    expect(failure(b.verifyRequest('POST', '/probe', first, body))).to.equal('replayed');
    clock.t += 2 * SKEW + 1;
    expect(failure(b.verifyRequest('POST', '/probe', sign(), body))).to.equal('ok');
  });
});

describe('ReplayGuard', () => {
  it('forgets nonces once they expire, and keeps its size bounded', () => {
    const guard = new ReplayGuard(1_000, 3);
    expect(guard.remember('a', 0)).to.equal('new');
    expect(guard.remember('b', 500)).to.equal('new');
    expect(guard.remember('a', 999)).to.equal('replayed');
    expect(guard.remember('c', 999)).to.equal('new');
    expect(guard.remember('d', 999)).to.equal('full');
    expect(guard.remember('d', 1_000)).to.equal('full'); // 'a' is remembered through 1,000
    expect(guard.remember('d', 1_001)).to.equal('new'); // 'a' expired
    expect(guard.size).to.equal(3);
    expect(guard.remember('a', 1_001)).to.equal('full');
    expect(guard.remember('a', 1_501)).to.equal('new'); // 'b' expired
  });
});

describe('secretFileSource', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'knh-peer-secret-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('follows the file as it rotates, keeping the last good secrets when it turns bad', () => {
    const path = join(dir, 'secret');
    writeFileSync(path, `${OLD}\n`);
    let t = 0;
    const errors: string[] = [];
    const changes: number[] = [];
    const secrets = secretFileSource({
      path,
      initial: [OLD],
      now: () => t,
      refreshMs: 30_000,
      onError: (e) => errors.push(e),
      onChange: (n) => changes.push(n),
    });
    writeFileSync(path, `${NEW}\n${OLD}\n`);
    t = 29_999;
    expect(secrets()).to.deep.equal([OLD], 'not re-read before refreshMs');
    t = 30_000;
    expect(secrets()).to.deep.equal([NEW, OLD]);
    expect(changes).to.deep.equal([2]);
    writeFileSync(path, 'short\n');
    t = 60_000;
    expect(secrets()).to.deep.equal([NEW, OLD]);
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include('at least 32').and.not.include('short');
    rmSync(path);
    t = 90_000;
    expect(secrets()).to.deep.equal([NEW, OLD]);
    expect(errors[1]).to.include('ENOENT');
  });
});
