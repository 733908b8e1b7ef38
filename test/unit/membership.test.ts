// Which peers a node works with: discovery's list without itself, minus peers that left in order
// (until they speak again after a quarantine, or their departure expires); and whether it takes
// part at all: with Kubernetes discovery only while its own endpoint is listed.
import { expect } from 'chai';
import { DEPARTED_FOR_MS, Membership } from '../../src/node/membership.js';
import { EventLog } from '../../src/status/event-log.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';

const SELF = { id: 'self@10.0.0.5', address: '10.0.0.5:8080' };
const A = { id: 'a@10.0.0.1', address: '10.0.0.1:8080' };
const B = { id: 'b@10.0.0.2', address: '10.0.0.2:8080' };
const PROBE_TIMEOUT_MS = 1_000;
/** A leaving node's last messages may still arrive this long (twice a request timeout, plus 1 s). */
const QUARANTINE_MS = 2 * PROBE_TIMEOUT_MS + 1_000;

function membership(discovery: 'kubernetes' | 'static' = 'kubernetes') {
  const clock = new FakeClock();
  const logger = new CapturingLogger();
  const events = new EventLog(() => clock.now());
  const presents: string[][] = [];
  const selfListed: boolean[] = [];
  const listed: { added: string[]; removed: string[]; discovered: string[] }[] = [];
  const m = new Membership({
    config: { discovery, probeTimeoutMs: PROBE_TIMEOUT_MS, serviceName: 'knh', namespace: 'ops' },
    self: SELF,
    clock,
    logger,
    events,
    onListed: (change, discovered) => listed.push({ ...change, discovered: [...discovered] }),
    onPresent: (present) => presents.push([...present]),
    onSelfListed: (is) => selfListed.push(is),
  });
  return { m, clock, logger, events, presents, selfListed, listed };
}

describe('Membership', () => {
  it("works with discovery's peers, itself left out", () => {
    const { m, presents, listed } = membership();
    m.update([A.address, SELF.address, B.address]);
    expect(m.peers).to.deep.equal([A.address, B.address]);
    expect(m.present).to.deep.equal([A.address, B.address]);
    expect(presents).to.deep.equal([[A.address, B.address]]);
    expect(listed[0]).to.deep.include({ added: [A.address, B.address], removed: [] });
    expect(m.isPeer(A.address)).to.be.true;
    expect(m.isPeer(SELF.address)).to.be.false;
  });

  it('tells the peers taking part only when they change', () => {
    const { m, presents, listed } = membership();
    m.update([A.address, SELF.address]);
    m.update([A.address, SELF.address]);
    expect(presents).to.have.length(1);
    expect(listed, 'every listing is told (metrics, the transport)').to.have.length(2);
  });

  it('with Kubernetes discovery, takes part only while its own endpoint is listed', () => {
    const { m, selfListed } = membership('kubernetes');
    m.update([A.address]);
    m.update([A.address, SELF.address]);
    m.update([A.address]);
    expect(selfListed).to.deep.equal([false, true, false]);
    expect(m.listsSelf).to.be.false;
  });

  it('with static discovery, takes part though PEERS leaves it out', () => {
    const { m, selfListed } = membership('static');
    m.update([A.address]);
    expect(selfListed).to.deep.equal([true]);
  });

  it('says every 30 s why it waits while its endpoint is not listed, naming the Service', () => {
    const { m, clock, logger } = membership('kubernetes');
    m.start();
    clock.advance(30_000);
    clock.advance(30_000);
    const warnings = logger.at('warn').filter((r) => r.fields.event === 'waiting-for-self');
    expect(warnings).to.have.length(2);
    expect(warnings[0]?.msg).to.include('endpoints of service knh in ops');
    m.update([SELF.address]);
    clock.advance(60_000);
    expect(logger.at('warn').filter((r) => r.fields.event === 'waiting-for-self')).to.have.length(
      2,
    );
    expect(clock.pendingTimers, 'no warning timer left once listed').to.equal(0);
  });

  it('once closed (the node is stopping), takes nothing discovery says and stops warning', () => {
    const { m, clock, selfListed, presents, logger } = membership('kubernetes');
    m.start();
    m.close();
    m.update([A.address, SELF.address]);
    expect(selfListed, 'never takes part again').to.deep.equal([]);
    expect(presents).to.deep.equal([]);
    clock.advance(60_000);
    expect(logger.at('warn')).to.deep.equal([]);
  });

  it('leaves a peer that left in order out, and refuses a leave from an undiscovered address', () => {
    const { m, events } = membership();
    m.update([A.address, B.address, SELF.address]);
    expect(m.leave(A)).to.be.true;
    expect(m.present).to.deep.equal([B.address]);
    expect(m.peers, 'still listed').to.deep.equal([A.address, B.address]);
    expect(m.departed().map((d) => d.id)).to.deep.equal([A.id]);
    expect(events.recent()[0]?.kind).to.equal('left');
    expect(m.leave({ id: 'x@10.0.0.9', address: '10.0.0.9:8080' })).to.be.false;
  });

  it('takes a departed peer back when it speaks after the quarantine, not before', () => {
    const { m, clock } = membership();
    m.update([A.address, SELF.address]);
    m.leave(A);
    m.spoke(A.address);
    expect(m.present, 'its last messages may still arrive').to.deep.equal([]);
    clock.advance(QUARANTINE_MS);
    m.spoke(A.address);
    expect(m.present).to.deep.equal([A.address]);
  });

  it('takes a departed peer back when discovery lists it anew', () => {
    const { m } = membership();
    m.update([A.address, SELF.address]);
    m.leave(A);
    m.update([SELF.address]);
    m.update([A.address, SELF.address]);
    expect(m.present).to.deep.equal([A.address]);
  });

  it('probes a departed peer again once its departure expires', () => {
    const { m, clock, events } = membership();
    m.update([A.address, SELF.address]);
    m.leave(A);
    const probedAgain: string[] = [];
    clock.advance(DEPARTED_FOR_MS - 1);
    m.expireDepartures((d) => probedAgain.push(d.id));
    expect(probedAgain).to.deep.equal([]);
    clock.advance(1);
    m.expireDepartures((d) => probedAgain.push(d.id));
    expect(probedAgain).to.deep.equal([A.id]);
    expect(m.present).to.deep.equal([A.address]);
    expect(events.recent()[0]).to.deep.include({ kind: 'returned' });
  });
});
