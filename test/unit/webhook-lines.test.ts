// The demo's one line per webhook: a flapping peer (or path) is told apart from a recovery, a
// cluster status counts suspect and not-yet-judged peers apart from live ones, a redelivery is
// marked as one, and dedup keys show only when asked.
import { expect } from 'chai';
import { clusterStatusPayload } from '../../src/alerts/payloads.js';
import { newRecord, type PeerRecord } from '../../src/prober/verdict.js';
import { Deliveries } from '../../src/demo/deliveries.js';
import { describeWebhook } from '../../src/demo/webhook-lines.js';
import type { ClusterStatusPayload, PeerStatusPayload } from '../../src/wire/webhooks.js';
import { deathAndRecovery } from '../support/alerts.js';
import { deadRecord, silentRecord, upRecord } from '../support/verdicts.js';

const received = (body: PeerStatusPayload, receivedMs = 0) => ({
  path: '/peer-status',
  kind: 'peer-status' as const,
  body,
  receivedMs,
  headers: {},
  errors: [],
});

const START_GRACE_MS = 60_000;
const NOW = 1_000_000;
const coordinator = { id: 'node-4@10.0.0.4', address: '10.0.0.4:8080' };

/** The cluster status a coordinator at NOW sends with these records (payloads.ts builds it). */
const statusOf = (records: PeerRecord[]): ClusterStatusPayload =>
  clusterStatusPayload({
    records,
    coordinator,
    epoch: 4,
    reason: 'election',
    sanity: 'not-configured',
    selfSuspicion: { suspect: false, unreachable: 0 },
    startGraceMs: START_GRACE_MS,
    now: NOW,
  });

const line = (status: ClusterStatusPayload) =>
  describeWebhook({
    path: '/cluster-status',
    kind: 'cluster-status',
    body: status,
    receivedMs: NOW,
    headers: {},
    errors: [],
  });

describe('describeWebhook (the demo)', () => {
  const [dead, recovered] = deathAndRecovery(upRecord('a', '10.0.0.1', 1), 2_000, 5_000);

  it('shows a peer_flapping in yellow with its reason, not as a recovery', () => {
    const flapping: PeerStatusPayload = {
      ...recovered,
      event: 'peer_flapping',
      reason: 'a@10.0.0.1 went down and up 4 times in 9 s',
    };
    const line = describeWebhook(received(flapping));
    expect(line.colour).to.equal('yellow');
    expect(line.text).to.contain('reason: a@10.0.0.1 went down and up 4 times in 9 s');
  });

  it('shows a death in red with its reason, a recovery in green', () => {
    expect(describeWebhook(received(dead)).colour).to.equal('red');
    expect(describeWebhook(received(recovered)).colour).to.equal('green');
  });

  describe('a cluster status', () => {
    const up = (n: number) => upRecord(`node-${n}`, `10.0.0.${n}`, NOW - 30_000);

    it('counts a suspect peer (alive: true in the payload) apart from the live ones', () => {
      // A successor's first status: its dead predecessor is suspect, not yet confirmed dead.
      const status = statusOf([up(1), up(2), up(3), silentRecord(up(5), NOW)]);
      expect(status.peer_map.every((p) => p.alive)).to.equal(true);
      const { text, colour } = line(status);
      expect(text).to.match(/^cluster_status \(election\): 3 alive, 1 suspect of 4 peers, /);
      expect(text).to.contain('suspect: node-5');
      expect(colour).to.equal('yellow');
    });

    it('counts the peers never answered, listed or still starting, as not yet judged', () => {
      const listedLongAgo = newRecord('10.0.0.2:8080', NOW - START_GRACE_MS, 'node-2');
      const justListed = newRecord('10.0.0.3:8080', NOW - 1_000, 'node-3');
      const status = statusOf([up(1), listedLongAgo, justListed, deadRecord(up(5), NOW)]);
      expect(status.unseen_peers).to.equal(1);
      const { text } = line(status);
      expect(text).to.contain('1 alive, 1 dead, 2 not yet judged of 4 peers');
      expect(text).to.contain('dead: node-5; never answered: node-2; 1 starting (not yet seen)');
    });

    it('is blue only when every peer is alive', () => {
      const { text, colour } = line(statusOf([up(1), up(2)]));
      expect(text).to.contain(': 2 alive of 2 peers, coordinator node-4, epoch 4');
      expect(colour).to.equal('blue');
    });
  });

  describe('dedup keys', () => {
    it('are hidden by default', () => {
      expect(describeWebhook(received(dead)).text).to.not.contain(dead.dedup_key);
    });

    it('are shown when asked (--show-keys)', () => {
      expect(describeWebhook(received(dead), { showKeys: true }).text).to.contain(
        `, dedup ${dead.dedup_key}`,
      );
    });
  });

  describe('redeliveries', () => {
    it('marks an event received before (same dedup key) as a redelivery, dimmed', () => {
      const deliveries = new Deliveries();
      const first = describeWebhook(received(dead, 10_000), {
        delivery: deliveries.note(dead.dedup_key, 10_000),
      });
      const again = describeWebhook(received(dead, 11_580), {
        delivery: deliveries.note(dead.dedup_key, 11_580),
      });
      expect(first.text).to.match(/^peer_dead /);
      expect(first.colour).to.equal('red');
      expect(again.text).to.match(
        /^redelivery \(delivery 2, first received 1\.58 s earlier\): peer_dead /,
      );
      expect(again.colour).to.equal('dim');
    });

    it('takes the recovery of a death as a new event (another key)', () => {
      const deliveries = new Deliveries();
      deliveries.note(dead.dedup_key, 10_000);
      const delivery = deliveries.note(recovered.dedup_key, 11_000);
      expect(describeWebhook(received(recovered, 11_000), { delivery }).text).to.match(
        /^peer_recovered /,
      );
    });

    it('forgets the oldest keys beyond what it keeps', () => {
      const deliveries = new Deliveries(2);
      deliveries.note('a', 1);
      deliveries.note('b', 2);
      deliveries.note('c', 3);
      expect(deliveries.note('a', 4)).to.deep.equal({ count: 1, firstMs: 4 });
      expect(deliveries.note('c', 5)).to.deep.equal({ count: 2, firstMs: 3 });
    });
  });
});
