// Who may hand a term over to a new coordinator: a coordinator it knows led before it (it followed
// it, or refusals of its announcement named it), of a term older than its own; refusals logged
// (throttled) with their source, and counted.
import { expect } from 'chai';
import {
  handoverRefusal,
  leadersNamed,
  MAX_PREDECESSORS,
  Predecessors,
  type HandoverRefusal,
} from '../../src/election/predecessors.js';
import type { NodeRef } from '../../src/wire/node-ref.js';
import type { AnnouncementReply } from '../../src/wire/peer-messages.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import { CapturingLogger } from '../support/capturing-logger.js';

const ref = (n: number): NodeRef => ({ id: `n${n}@10.0.0.${n}`, address: `10.0.0.${n}:8080` });
const [A, B, C, SELF] = [ref(1), ref(2), ref(3), ref(9)].map((r) => r.address) as [
  string,
  string,
  string,
  string,
];
const handover = (epoch: number): TermHandover => ({
  epoch,
  settled: ['k1'],
  in_flight: [],
  undelivered: [],
});
const stale = (coordinator: NodeRef | null, epoch: number): AnnouncementReply => ({
  accepted: false,
  reason: 'stale-epoch',
  epoch,
  coordinator,
});

describe('handoverRefusal', () => {
  const cases: {
    what: string;
    known: string[];
    from: string;
    epoch: number;
    own: number;
    want: HandoverRefusal | null;
  }[] = [
    {
      what: 'the one it followed, the term before',
      known: [A],
      from: A,
      epoch: 5,
      own: 6,
      want: null,
    },
    {
      what: 'the one before that (two failovers)',
      known: [A, B],
      from: A,
      epoch: 5,
      own: 7,
      want: null,
    },
    { what: 'a term several epochs back', known: [A], from: A, epoch: 2, own: 9, want: null },
    {
      what: 'a peer that never led',
      known: [A],
      from: B,
      epoch: 5,
      own: 6,
      want: 'not-predecessor',
    },
    { what: 'no predecessor known', known: [], from: A, epoch: 5, own: 6, want: 'not-predecessor' },
    {
      what: "this node's epoch: the term whose announcement ended its own",
      known: [A],
      from: A,
      epoch: 6,
      own: 6,
      want: null,
    },
    { what: 'a newer epoch', known: [A], from: A, epoch: 7, own: 6, want: 'newer-term' },
    {
      what: 'a stranger with a newer epoch',
      known: [A],
      from: C,
      epoch: 7,
      own: 6,
      want: 'not-predecessor',
    },
  ];
  for (const c of cases) {
    it(`${c.what}: ${c.want ?? 'taken'}`, () => {
      expect(handoverRefusal(c.known, c.from, c.epoch, c.own)).to.equal(c.want);
    });
  }
});

describe('leadersNamed', () => {
  const peers = new Set([A, B, C]);

  it('names the coordinators of stale-epoch refusals, oldest epoch first, each once', () => {
    const replies = [stale(ref(2), 4), stale(ref(1), 7), null, stale(ref(2), 5), stale(ref(1), 6)];
    expect(leadersNamed(replies, SELF, peers).map((n) => n.address)).to.deep.equal([B, A]);
  });

  it('leaves out acceptances, other refusals, no coordinator, itself and non-peers', () => {
    const replies: (AnnouncementReply | null)[] = [
      { accepted: true, epoch: 3, coordinator: ref(9) },
      { accepted: false, reason: 'conflict', epoch: 3, coordinator: ref(1) },
      { accepted: false, reason: 'outranked', epoch: 3, coordinator: ref(2) },
      stale(null, 4),
      stale(ref(9), 4),
      stale(ref(7), 4), // no peer: it could only push a real predecessor out
    ];
    expect(leadersNamed(replies, SELF, peers)).to.deep.equal([]);
  });
});

describe('Predecessors', () => {
  function setup() {
    const logger = new CapturingLogger();
    const counted: HandoverRefusal[] = [];
    let now = 0;
    const known = new Predecessors({
      logger,
      now: () => now,
      onRefused: (reason) => counted.push(reason),
    });
    return { known, logger, counted, at: (ms: number) => (now = ms) };
  }

  it('remembers the latest few, a node learned again counting as the latest', () => {
    const { known } = setup();
    for (let n = 1; n <= MAX_PREDECESSORS + 2; n++) known.learn(ref(n));
    const last = Array.from({ length: MAX_PREDECESSORS }, (_, i) => ref(i + 3).address);
    expect(known.addresses).to.deep.equal(last);
    known.learn(ref(3));
    expect(known.addresses).to.deep.equal([...last.slice(1), ref(3).address]);
  });

  it('learns whose term its own supersedes from refusals of its announcement', () => {
    const { known } = setup();
    known.learnSuperseded([stale(ref(2), 5), stale(ref(8), 6)], SELF, [A, B, C]);
    expect(known.addresses).to.deep.equal([B]);
    expect(known.admits(handover(5), B, 7)).to.equal(true);
  });

  it("takes a predecessor's hand-over silently; refuses another's, logged with its source and counted", () => {
    const { known, logger, counted } = setup();
    known.learn(ref(1));
    expect(known.admits(handover(5), A, 6)).to.equal(true);
    expect(logger.at('warn')).to.deep.equal([]);
    expect(known.admits(handover(5), B, 6)).to.equal(false);
    expect(known.admits(handover(7), A, 6)).to.equal(false);
    expect(counted).to.deep.equal(['not-predecessor', 'newer-term']);
    expect(logger.at('warn').map((r) => r.fields)).to.deep.equal([
      {
        event: 'handover-refused',
        from: B,
        reason: 'not-predecessor',
        epoch: 5,
        ownEpoch: 6,
        predecessors: [A],
        undelivered: 0,
        settled: 1,
        inFlight: 0,
      },
      {
        event: 'handover-refused',
        from: A,
        reason: 'newer-term',
        epoch: 7,
        ownEpoch: 6,
        predecessors: [A],
        undelivered: 0,
        settled: 1,
        inFlight: 0,
      },
    ]);
  });

  it('leaves an empty hand-over out quietly, whoever sends it', () => {
    const { known, logger, counted } = setup();
    const empty: TermHandover = { epoch: 5, settled: [], in_flight: [], undelivered: [] };
    expect(known.admits(empty, B, 6)).to.equal(false);
    expect(counted).to.deep.equal([]);
    expect(logger.at('warn')).to.deep.equal([]);
  });

  it('warns once per 10 s of a hand-over refused in every reply, counting each', () => {
    const { known, logger, counted, at } = setup();
    for (let ms = 0; ms < 10_000; ms += 500) {
      at(ms);
      known.admits(handover(5), B, 6);
    }
    expect(counted).to.have.length(20);
    expect(logger.at('warn')).to.have.length(1);
    at(10_000);
    known.admits(handover(5), B, 6);
    expect(logger.at('warn').at(-1)?.fields).to.include({ from: B, suppressed: 19 });
  });
});
