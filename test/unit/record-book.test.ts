// The coordinator's verdicts as a book: self-suspicion's counts kept as records change (never
// recounted), and a version that moves when a view would show something else, not on latencies.
import { expect } from 'chai';
import { RecordBook } from '../../src/prober/record-book.js';
import { answered, attemptFailed, type PeerRecord } from '../../src/prober/verdict.js';
import { upRecord } from '../support/verdicts.js';

const T = Date.UTC(2025, 0, 1);

/** The peer's probe just timed out: silent, and so unreachable now. */
const silent = (r: PeerRecord): PeerRecord =>
  attemptFailed(r, { latencyMs: 1_000, detail: 'timeout' }, T, T + 1_000).record;

describe('RecordBook', () => {
  it('suspects this node once most of the peers it counts are silent, and stops when they answer', () => {
    const book = new RecordBook();
    const peers = [1, 2, 3].map((i) => upRecord(`w${i}`, `10.0.0.${i}`, T));
    for (const r of peers) book.put(r.address, r);
    expect(book.selfSuspicion).to.deep.include({ suspect: false, considered: 3, silent: 0 });
    book.put(peers[0]!.address, silent(peers[0]!));
    book.put(peers[1]!.address, silent(peers[1]!));
    expect(book.selfSuspicion).to.deep.include({ suspect: true, considered: 3, silent: 2 });
    book.put(peers[1]!.address, peers[1]!);
    expect(book.selfSuspicion.suspect).to.equal(false);
    book.drop(peers[2]!.address);
    expect(book.selfSuspicion, 'half is not most').to.deep.include({
      suspect: false,
      considered: 2,
      silent: 1,
    });
    book.clear();
    expect(book.selfSuspicion).to.deep.include({ suspect: false, considered: 0, silent: 0 });
  });

  it('moves its version when a verdict changes, not when only a latency does', () => {
    const book = new RecordBook();
    const up = upRecord('w1', '10.0.0.1', T);
    book.put(up.address, up);
    const v = book.version;
    book.put(
      up.address,
      answered(up, { latencyMs: 9, id: up.id, nodeName: up.nodeName }, T + 1_000).record,
    );
    expect(book.version, 'a new latency').to.equal(v);
    book.put(up.address, silent(up));
    expect(book.version, 'suspect now').to.be.above(v);
    const w = book.version;
    book.touch();
    expect(book.version, 'the peer list changed').to.be.above(w);
  });
});
