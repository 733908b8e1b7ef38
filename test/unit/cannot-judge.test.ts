// "knh cannot judge the mesh": the coordinator's own alert when most of its peers are silent to it
// and their verdicts are withheld; resolved when that ends, or by the next coordinator.
import { expect } from 'chai';
import type { PeerStatusPayload } from '../../src/wire/webhooks.js';
import { confirm, type PeerRecord } from '../../src/prober/verdict.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { silentRecord, upRecord } from '../support/verdicts.js';
import { referenceErrors } from '../support/knh-reference-schemas.js';
import { SELF, setupReporter } from '../support/reporter-fixture.js';
import { MaintenanceHold } from '../../src/alerts/maintenance-hold.js';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import { PEER_URL } from '../support/test-notifier.js';
import { OK, UNAVAILABLE } from '../support/fake-poster.js';

const WINDOW: MaintenanceWindow = {
  id: 'mw-1',
  scope: 'nodes',
  nodes: ['worker-3', 'worker-4', 'worker-5'],
  starts: 0,
  until: Number.MAX_SAFE_INTEGER,
  reason: 'kernel upgrade',
  cancelled: false,
};

const schemas = loadSchemas();
const T = 1_700_000_000_000;

/** worker-2 answers; worker-3..5 are silent since T. */
function meshSeen(): PeerRecord[] {
  const up = upRecord('worker-2', '10.0.0.2', T - 60_000);
  const silent = [3, 4, 5].map((n) =>
    silentRecord(upRecord(`worker-${n}`, `10.0.0.${n}`, T - 60_000), T),
  );
  return [up, ...silent];
}

/** The verdict on a silent peer withheld because this node suspects itself. */
function withheld(record: PeerRecord, corroboratedBy: string[]) {
  return confirm(
    record,
    { reachedBy: [], corroboratedBy, unhealthyMs: 1_000, withhold: 'self-suspect' },
    T + 1_000,
  );
}

function expectValid(payload: PeerStatusPayload): void {
  expect(schemas.check('peer-status', payload), JSON.stringify(payload)).to.deep.equal({
    ok: true,
  });
  expect(referenceErrors('knh-peer-status', payload), 'a KNH receiver takes it').to.deep.equal([]);
}

describe('cannot judge the mesh', () => {
  it('says so to the receiver once when it withholds verdicts, naming whom it reaches and who corroborates', async () => {
    const fx = setupReporter({ holdShares: false });
    const records = meshSeen();
    fx.setRecords(records);
    fx.lead();
    for (const r of records.slice(1)) fx.reporter.onJudgement(withheld(r, ['worker-2@10.0.0.2']));
    await fx.clock.advanceAsync(0);
    const sent = fx.peerPosts();
    expect(sent.map((p) => p.event)).to.deep.equal(['cannot_judge']);
    const [opening] = sent as [PeerStatusPayload];
    expectValid(opening);
    // Its subject is the coordinator itself, alive: KNH receivers page on alive=false, not on this.
    expect(opening.peer).to.deep.include({ address: SELF.address, id: SELF.id, alive: true });
    expect(opening.judgement).to.deep.include({
      reaches: 1,
      peers: 4,
      unreachable_count: 3,
      corroborated_by: ['worker-2@10.0.0.2'],
    });
    expect(opening.judgement?.unreachable.map((p) => p.node_name)).to.deep.equal([
      'worker-3',
      'worker-4',
      'worker-5',
    ]);
    expect(opening.reason).to.equal(
      "knh cannot judge the mesh: coordinator lead reaches 1 of 4 peers; worker-3, worker-4, worker-5 do not answer it, and worker-2 cannot reach them either: either they failed or lead's side of the network is cut off from them, and knh cannot tell which",
    );
    expect(fx.reporter.cannotJudgeOpen()?.dedup_key).to.equal(opening.dedup_key);
  });

  it('resolves it, same dedup key stem, once it reaches most of its peers again', async () => {
    const fx = setupReporter({ holdShares: false });
    const records = meshSeen();
    fx.setRecords(records);
    fx.lead();
    fx.reporter.onJudgement(withheld(records[1]!, []));
    fx.reporter.onSelfSuspicion({ suspect: true, unreachable: 3, silent: 3, considered: 4 });
    await fx.clock.advanceAsync(0);
    fx.setRecords(records.map((r) => upRecord(r.nodeName, r.address.split(':')[0]!, T)));
    fx.reporter.onSelfSuspicion({ suspect: false, unreachable: 0, silent: 0, considered: 4 });
    await fx.clock.advanceAsync(0);
    const [opening, resolution] = fx.peerPosts() as [PeerStatusPayload, PeerStatusPayload];
    expect(resolution.event).to.equal('can_judge');
    expectValid(resolution);
    expect(resolution.dedup_key.replace(/:can-judge$/, '')).to.equal(
      opening.dedup_key.replace(/:cannot-judge$/, ''),
    );
    expect(resolution.reason).to.equal(
      'knh can judge the mesh again: coordinator lead reaches 4 of 4 peers',
    );
    expect(fx.reporter.cannotJudgeOpen()).to.equal(null);
    // A later spell is an incident of its own.
    fx.setRecords(meshSeen());
    await fx.clock.advanceAsync(5_000);
    fx.reporter.onJudgement(withheld(meshSeen()[1]!, []));
    await fx.clock.advanceAsync(0);
    const third = fx.peerPosts()[2];
    expect(third?.event).to.equal('cannot_judge');
    expect(third?.dedup_key).to.not.equal(opening.dedup_key);
  });

  it('has its resolution sent by the next coordinator when the term ended before it went out', async () => {
    let up = true;
    const old = setupReporter({
      holdShares: false,
      answer: (call) => (call.url === PEER_URL && !up ? UNAVAILABLE : OK),
    });
    old.setRecords(meshSeen());
    old.lead();
    old.reporter.onJudgement(withheld(meshSeen()[1]!, []));
    await old.clock.advanceAsync(100);
    up = false; // the receiver goes down: can_judge cannot be delivered
    old.reporter.onSelfSuspicion({ suspect: false, unreachable: 0, silent: 0, considered: 4 });
    await old.clock.advanceAsync(100);
    old.reporter.stopLeading('hand-over');
    const handover = old.reporter.handOver();
    expect(handover?.undelivered.map((p) => p.event)).to.deep.equal(['can_judge']);
    const next = setupReporter({
      holdShares: false,
      self: { id: 'w2@10.0.0.2', address: '10.0.0.2:8080' },
    });
    next.reporter.takeHandover(structuredClone(handover!));
    next.lead([], { cannotJudge: null });
    await next.clock.advanceAsync(1_000);
    expect(next.peerPosts().map((p) => p.event)).to.deep.equal(['can_judge']);
  });

  it('is not opened for silent peers that a maintenance window pauses', async () => {
    const hold = new MaintenanceHold((peer) =>
      ['worker-3', 'worker-4', 'worker-5'].includes(peer.nodeName) ? WINDOW : null,
    );
    const fx = setupReporter({ holdShares: false, hold });
    fx.setRecords(meshSeen());
    fx.lead();
    fx.reporter.onJudgement(withheld(meshSeen()[1]!, []));
    await fx.clock.advanceAsync(1_000);
    expect(fx.peerPosts()).to.deep.equal([]);
  });

  it('is resolved by the next coordinator when the term ends while it is open, even if it may not have gone out', async () => {
    const old = setupReporter({ holdShares: false });
    old.setRecords(meshSeen());
    old.lead();
    old.reporter.onJudgement(withheld(meshSeen()[1]!, []));
    const opening = old.reporter.cannotJudgeOpen() as PeerStatusPayload;

    const next = setupReporter({
      holdShares: false,
      self: { id: 'w2@10.0.0.2', address: '10.0.0.2:8080' },
    });
    next.setRecords(meshSeen().slice(1));
    next.lead([], { cannotJudge: opening });
    await next.clock.advanceAsync(0);
    const [resolution] = next.peerPosts() as [PeerStatusPayload];
    expect(resolution.event).to.equal('can_judge');
    expect(resolution.peer.address, 'about the old coordinator').to.equal(SELF.address);
    expect(resolution.coordinator_address, 'sent by the new one').to.equal('10.0.0.2:8080');
    expect(resolution.dedup_key).to.equal(opening.dedup_key.replace(/cannot-judge$/, 'can-judge'));
    expectValid(resolution);

    // Still undelivered (maybe in flight) when the term ended: the opening is not sent again, its
    // resolution is (one too many beats an incident open for good).
    const unsure = setupReporter({ holdShares: false });
    unsure.lead([opening], { cannotJudge: opening });
    await unsure.clock.advanceAsync(60_000);
    expect(unsure.peerPosts().map((p) => p.event)).to.deep.equal(['can_judge']);
  });
});
