// Flap damping through the reporter: what KNH's webhook, the other receivers, the cluster status
// and the followers (shared undelivered events, a hand-over) see of a peer going down and up.
import { expect } from 'chai';
import type { FlapSettings } from '../../src/alerts/flap-damper.js';
import type { PeerRecord } from '../../src/prober/verdict.js';
import type { TermHandover } from '../../src/wire/term-handover.js';
import type { ClusterStatusPayload } from '../../src/wire/webhooks.js';
import { incidentOf } from '../../src/wire/incident.js';
import { CLUSTER_URL } from '../support/test-notifier.js';
import { round, setupReporter } from '../support/reporter-fixture.js';
import { answersAgain, confirmed, upRecord, UNHEALTHY_MS } from '../support/verdicts.js';

const FLAP: FlapSettings = {
  recoveryHoldMs: 10_000,
  windowMs: 60_000,
  changes: 4,
  stableMs: 30_000,
};

function setup(flap = FLAP) {
  const fx = setupReporter({ holdShares: false, flap, intervalMs: 600_000 });
  fx.lead();
  let record: PeerRecord = upRecord('a', '10.0.0.1', fx.clock.now());
  fx.setRecords([record]);
  let rounds = 0;
  const tell = (j: { record: PeerRecord }, changed: boolean) => {
    record = j.record;
    fx.setRecords([record]);
    fx.reporter.onJudgement(j as Parameters<typeof fx.reporter.onJudgement>[0]);
    fx.reporter.onRound(round(++rounds, changed ? 1 : 0));
  };
  return {
    ...fx,
    /** The peer dies now (its probes failing since UNHEALTHY_MS ago). */
    die: () => tell(confirmed(record, fx.clock.now() - UNHEALTHY_MS).verdict, true),
    /** This node cannot reach the peer now, but another node can: its path is broken. */
    breakPath: () =>
      tell(
        confirmed(record, fx.clock.now() - UNHEALTHY_MS, { reachedBy: ['b@10.0.0.2'] }).verdict,
        true,
      ),
    /** The peer answers again now. */
    recover: () => tell(answersAgain(record, fx.clock.now()), true),
    /** A round with nothing changed. */
    quiet: () => fx.reporter.onRound(round(++rounds)),
    statusReasons: () =>
      fx.poster.calls
        .filter((c) => c.url === CLUSTER_URL)
        .map((c) => (c.body as ClusterStatusPayload).reason),
  };
}

describe('Reporter: flap damping', () => {
  it('a link flapping for a minute: peer_dead, peer_flapping, then peer_recovered once stable, to every receiver', async () => {
    const fx = setup();
    fx.quiet(); // the election status
    await fx.clock.advanceAsync(2_000);
    for (let i = 0; i < 10; i++) {
      fx.die();
      await fx.clock.advanceAsync(3_000);
      fx.recover();
      await fx.clock.advanceAsync(3_000);
    }
    await fx.clock.advanceAsync(60_000);
    const sent = fx.peerPosts();
    expect(sent.map((p) => p.event)).to.deep.equal([
      'peer_dead',
      'peer_flapping',
      'peer_recovered',
    ]);
    expect(new Set(sent.map(incidentOf)).size, 'one incident').to.equal(1);
    expect(
      fx.fed.map((p) => p.event),
      'the other receivers hear the same',
    ).to.deep.equal(['peer_dead', 'peer_flapping', 'peer_recovered']);
    // The first death's status; the flaps the damper hid send none (the periodic one shows them).
    expect(fx.statusReasons()).to.deep.equal(['election', 'change', 'change']);
    expect(fx.logger.at('warn').map((l) => l.fields.event)).to.include('peer-flapping');
    expect(fx.reporter.undelivered(), 'nothing left held').to.deep.equal([]);
  });

  it('shares a held recovery with the followers, and forgets it when the peer dies again', async () => {
    const fx = setup();
    fx.quiet();
    fx.die();
    await fx.clock.advanceAsync(2_000);
    fx.recover();
    await fx.clock.advanceAsync(0);
    const [held] = fx.reporter.undelivered();
    expect(held?.event, 'a successor sends it if this node goes').to.equal('peer_recovered');
    await fx.clock.advanceAsync(3_000);
    fx.die();
    await fx.clock.advanceAsync(0);
    expect(fx.reporter.undelivered()).to.deep.equal([]);
    expect(fx.peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead']);
  });

  it('sends a held recovery at once when the node drains (it stops), rather than lose it', async () => {
    const fx = setup();
    fx.quiet();
    fx.die();
    await fx.clock.advanceAsync(2_000);
    fx.recover();
    await fx.clock.advanceAsync(0);
    fx.reporter.stopLeading('drain');
    await fx.clock.advanceAsync(0);
    expect(fx.peerPosts().map((p) => p.event)).to.deep.equal(['peer_dead', 'peer_recovered']);
    await fx.clock.advanceAsync(20_000);
    expect(fx.peerPosts(), 'once').to.have.length(2);
  });

  it('hands a held recovery over when another node takes over', async () => {
    const fx = setup();
    fx.quiet();
    fx.die();
    await fx.clock.advanceAsync(2_000);
    fx.recover();
    await fx.clock.advanceAsync(0);
    fx.reporter.stopLeading('hand-over');
    const handover = fx.reporter.handOver() as TermHandover;
    expect(handover.undelivered.map((p) => p.event)).to.deep.equal(['peer_recovered']);
    await fx.clock.advanceAsync(20_000);
    expect(
      fx.peerPosts().map((p) => p.event),
      'not sent by this node',
    ).to.deep.equal(['peer_dead']);
  });

  it('a path from the coordinator flapping for a minute: path_broken, peer_flapping, then path_restored once stable', async () => {
    const fx = setup();
    fx.quiet();
    await fx.clock.advanceAsync(2_000);
    for (let i = 0; i < 10; i++) {
      fx.breakPath();
      await fx.clock.advanceAsync(3_000);
      fx.recover();
      await fx.clock.advanceAsync(3_000);
      // Rounds with nothing changed between the flaps: the path stays remembered.
      fx.quiet();
    }
    await fx.clock.advanceAsync(60_000);
    fx.quiet();
    const sent = fx.peerPosts();
    expect(sent.map((p) => p.event)).to.deep.equal([
      'path_broken',
      'peer_flapping',
      'path_restored',
    ]);
    expect(new Set(sent.map(incidentOf)).size, 'one incident').to.equal(1);
    const [, flapping, restored] = sent;
    expect(incidentOf(flapping!)).to.match(/^knh:10\.0\.0\.9:8080->10\.0\.0\.1:8080:/);
    expect(flapping!.path, 'names the path').to.include({ to: 'a@10.0.0.1' });
    expect(flapping!.reason).to.match(
      /the path from .* to a@10\.0\.0\.1 broke and was restored 4 times/,
    );
    expect(restored!.reason).to.match(/has worked for 30 s after flapping/);
    expect(fx.reporter.undelivered(), 'nothing left held').to.deep.equal([]);
  });

  it('a path broken again within RECOVERY_HOLD: one incident, resolved once it has stayed restored', async () => {
    // Four changes would make it flapping (the test above): here only the hold is at work.
    const fx = setup({ ...FLAP, changes: 0 });
    fx.quiet();
    fx.breakPath();
    await fx.clock.advanceAsync(2_000);
    fx.recover();
    await fx.clock.advanceAsync(4_000);
    expect(
      fx.peerPosts().map((p) => p.event),
      'held',
    ).to.deep.equal(['path_broken']);
    fx.breakPath();
    await fx.clock.advanceAsync(2_000);
    fx.recover();
    await fx.clock.advanceAsync(9_000);
    expect(fx.peerPosts().map((p) => p.event)).to.deep.equal(['path_broken']);
    await fx.clock.advanceAsync(1_000);
    const sent = fx.peerPosts();
    expect(sent.map((p) => p.event)).to.deep.equal(['path_broken', 'path_restored']);
    expect(incidentOf(sent[1]!), 'resolves the incident sent').to.equal(incidentOf(sent[0]!));
  });

  it('a peer that dies behind a broken path closes the path at once, and a later break pages again', async () => {
    const fx = setup();
    fx.quiet();
    fx.breakPath();
    await fx.clock.advanceAsync(2_000);
    fx.die();
    await fx.clock.advanceAsync(0);
    expect(fx.peerPosts().map((p) => p.event)).to.deep.equal([
      'path_broken',
      'path_restored',
      'peer_dead',
    ]);
    const [broken, closed] = fx.peerPosts();
    expect(incidentOf(closed!)).to.equal(incidentOf(broken!));
    // Back, held out RECOVERY_HOLD, then its path breaks: a new incident, sent at once.
    fx.recover();
    await fx.clock.advanceAsync(11_000);
    fx.breakPath();
    await fx.clock.advanceAsync(0);
    expect(fx.peerPosts().map((p) => p.event)).to.deep.equal([
      'path_broken',
      'path_restored',
      'peer_dead',
      'peer_recovered',
      'path_broken',
    ]);
  });
});
