// What a failure says about whose network is at fault: a refusal proves the path works, silence not.
import { expect } from 'chai';
import type { FailureReason } from '../../src/core/transport.js';
import { evidenceOf, relayFailureReason } from '../../src/core/evidence.js';
import { answered, attemptFailed, newRecord, silentNow } from '../../src/prober/verdict.js';

describe('evidence of a failure', () => {
  it("reads the peer's host answering as a refusal, anything else as silence", () => {
    const cases: [FailureReason, string][] = [
      ['refused', 'refusal'],
      ['reset', 'refusal'],
      ['http-status', 'refusal'],
      ['bad-response', 'refusal'],
      ['timeout', 'silence'],
      ['connect-timeout', 'silence'],
      ['unreachable', 'silence'],
    ];
    for (const [reason, evidence] of cases) expect(evidenceOf(reason), reason).to.equal(evidence);
  });

  it("reads a relay's failure from the first word of its detail, as every version writes it", () => {
    expect(relayFailureReason({ detail: 'refused (connect ECONNREFUSED 10.0.0.3:8080)' })).to.equal(
      'refused',
    );
    expect(relayFailureReason({ detail: 'connect-timeout (no connection in 1000 ms)' })).to.equal(
      'connect-timeout',
    );
    expect(relayFailureReason({ detail: 'gremlins (who knows)' })).to.equal(null);
    expect(relayFailureReason({})).to.equal(null);
  });

  it('marks a peer silent while its latest failure is silence, until it answers', () => {
    const alive = answered(
      newRecord('10.0.0.7:8080', 0),
      { latencyMs: 1, id: 'w@10.0.0.7', nodeName: 'w' },
      1,
    ).record;
    const timedOut = attemptFailed(
      alive,
      { latencyMs: 1000, detail: 'timeout', evidence: 'silence' },
      10,
      1010,
    ).record;
    expect(timedOut.unreachableBy).to.equal('silence');
    expect(silentNow(timedOut)).to.equal(true);
    const thenRefused = attemptFailed(
      timedOut,
      { latencyMs: 1, detail: 'refused', evidence: 'refusal' },
      1200,
      1201,
    ).record;
    expect(thenRefused.unreachableBy).to.equal('refusal');
    expect(silentNow(thenRefused), 'the latest failure counts').to.equal(false);
    const back = answered(thenRefused, null, 1300).record;
    expect(back.unreachableBy).to.equal(null);
    expect(silentNow(back)).to.equal(false);
  });
});
