// What peers say of this node's signed messages: offsets kept only when notable, refusals and
// acceptances for a minute, and "cannot prove itself" only while every peer that answered refused.
import { expect } from 'chai';
import {
  dateHeaderMs,
  NOTABLE_OFFSET_MS,
  PeerStanding,
  STANDING_MS,
} from '../../src/auth/peer-standing.js';

const A = '10.0.0.1:8080';
const B = '10.0.0.2:8080';
const T = Date.UTC(2026, 10, 28, 12);

describe('PeerStanding', () => {
  it("reads a peer's offset from its time, half the round trip taken off, and keeps only notable ones", () => {
    const s = new PeerStanding();
    // The peer read 12:02:00.000 when answering; the answer came 40 ms after the request left.
    expect(s.observeClock(A, T + 120_000, T + 20, 40)).to.equal(120_000);
    expect(s.offsetOf(A)).to.equal(120_000);
    expect(s.observeClock(B, T + NOTABLE_OFFSET_MS - 1, T, 0), 'below notable').to.equal(0);
    expect(s.offsetOf(B)).to.equal(0);
    expect(s.view(T).offsets).to.deep.equal([{ address: A, offsetMs: 120_000 }]);
    // Its clock fixed: forgotten.
    s.observeClock(A, T + 300, T, 0);
    expect(s.offsetOf(A)).to.equal(0);
    expect(s.view(T).offsets).to.deep.equal([]);
  });

  it('takes a Date header at the middle of its second, and nothing from a bad one', () => {
    expect(dateHeaderMs('Sat, 28 Nov 2026 12:00:00 GMT')).to.equal(T + 500);
    expect(dateHeaderMs('Sat, 28 Nov 2026 12:00:00 GMT'), 'again (cached)').to.equal(T + 500);
    expect(dateHeaderMs('yesterday')).to.equal(null);
    expect(dateHeaderMs(undefined)).to.equal(null);
  });

  it('cannot prove itself only while every peer that answered lately refused, and says why', () => {
    const s = new PeerStanding();
    expect(s.unauthenticated(T)).to.equal(null);
    s.refusedBy(A, 'bad-signature', T);
    s.refusedBy(B, 'bad-signature', T);
    expect(s.unauthenticated(T)).to.match(
      /bad-signature ×2\): this node holds another PEER_SECRET/,
    );
    s.acceptedBy(B, T + 1);
    expect(s.unauthenticated(T + 1), 'B takes its messages now').to.equal(null);
    expect(s.view(T + 1)).to.deep.include({ lastAcceptedMs: T + 1 });
    expect(s.view(T + 1).refusedBy.map((r) => r.address)).to.deep.equal([A]);
    // A minute on, what they said is forgotten.
    const later = T + 1 + STANDING_MS + 1;
    expect(s.view(later)).to.deep.include({ lastAcceptedMs: null, refusedBy: [] });
    expect(s.unauthenticated(later)).to.equal(null);
  });

  it('is not unauthenticated for one peer refusing it all along while others take its messages', () => {
    const s = new PeerStanding();
    s.refusedBy(A, 'expired', T);
    s.acceptedBy(B, T + 1);
    for (let t = T + 2; t < T + 30_000; t += 1_000) {
      s.refusedBy(A, 'expired', t);
      expect(s.unauthenticated(t), `at +${t - T} ms`).to.equal(null);
      s.acceptedBy(B, t + 500);
    }
    // B refusing too: the others may still take its messages, until a minute without any says
    // they do not.
    s.refusedBy(B, 'bad-signature', T + 40_000);
    expect(s.unauthenticated(T + 40_000)).to.equal(null);
    s.refusedBy(A, 'expired', T + 90_000);
    s.refusedBy(B, 'bad-signature', T + 90_000);
    expect(s.unauthenticated(T + 90_000)).to.match(
      /bad-signature ×1, expired ×1|expired ×1, bad-signature ×1/,
    );
  });

  it('names a missing secret and a clock too far off', () => {
    const missing = new PeerStanding();
    missing.refusedBy(A, 'missing', T);
    expect(missing.unauthenticated(T)).to.include('this node has not');
    const expired = new PeerStanding();
    expired.refusedBy(A, 'expired', T);
    expect(expired.unauthenticated(T)).to.include('clock');
  });

  it('forgets peers no longer listed', () => {
    const s = new PeerStanding();
    s.observeClock(A, T + 60_000, T, 0);
    s.refusedBy(A, 'expired', T);
    s.pingUnproven(A, 'ping-unsigned', T);
    s.acceptedBy(B, T);
    s.keepOnly(new Set([B]));
    expect(s.view(T)).to.deep.equal({
      refusedBy: [],
      unsignedBy: [],
      unprovenBy: [],
      lastAcceptedMs: T,
      offsets: [],
    });
  });

  it('keeps a peer whose probes prove nothing, with its latest reason, until one is signed or a minute passes', () => {
    const s = new PeerStanding();
    s.pingUnproven(A, 'ping-unsigned', T);
    s.pingUnproven(A, 'ping-bad-signature', T + 1_000);
    s.pingUnproven(B, 'ping-other-node', T + 1_000);
    expect(s.view(T + 1_000).unprovenBy).to.deep.equal([
      { address: A, reason: 'ping-bad-signature', sinceMs: T, atMs: T + 1_000 },
      { address: B, reason: 'ping-other-node', sinceMs: T + 1_000, atMs: T + 1_000 },
    ]);
    // Not a refusal of this node's messages: it can still lead.
    expect(s.unauthenticated(T + 1_000)).to.equal(null);
    s.pingProven(A);
    expect(s.view(T + 2_000).unprovenBy.map((u) => u.address)).to.deep.equal([B]);
    expect(s.view(T + 1_000 + STANDING_MS + 1).unprovenBy).to.deep.equal([]);
  });

  it('keeps a peer that answers unsigned apart from refusals, until it signs, refuses or goes quiet', () => {
    const s = new PeerStanding();
    s.answeredUnsigned(A, T);
    s.answeredUnsigned(A, T + 1_000);
    expect(s.view(T + 1_000).unsignedBy).to.deep.equal([
      { address: A, sinceMs: T, atMs: T + 1_000 },
    ]);
    expect(s.unauthenticated(T + 1_000), 'it took the message').to.equal(null);
    s.acceptedBy(A, T + 2_000);
    expect(s.view(T + 2_000).unsignedBy).to.deep.equal([]);
    s.answeredUnsigned(A, T + 3_000);
    s.refusedBy(A, 'bad-signature', T + 4_000);
    expect(s.view(T + 4_000).unsignedBy, 'the latest answer says').to.deep.equal([]);
    s.answeredUnsigned(B, T + 5_000);
    expect(s.view(T + 5_000 + STANDING_MS + 1).unsignedBy, 'too old to say').to.deep.equal([]);
  });
});
