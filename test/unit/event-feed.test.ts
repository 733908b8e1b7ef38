// The status page's feed of the coordinator's findings about every node's paths: each event as the
// webhook says it, then the nodes it is about by node name and address.
import { expect } from 'chai';
import { findingPayload } from '../../src/alerts/finding-events.js';
import type { Finding } from '../../src/paths/path-state.js';
import { findingEntry, sentEntry, type FeedNode } from '../../src/status/event-feed.js';
import { isFindingPayload } from '../../src/wire/webhooks.js';
import { deadPayload } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const COORD = { id: 'worker-1@10.0.0.1', address: '10.0.0.1:8080' };
const node = (i: number): FeedNode => ({
  id: `worker-${i}@10.0.0.${i}`,
  address: `10.0.0.${i}:8080`,
  node_name: `worker-${i}`,
});
const NODES = [1, 2, 3, 4].map(node);
const refOf = (address: string) => {
  const n = NODES.find((x) => x.address === address);
  return n ? { id: n.id, node_name: n.node_name } : { id: address, node_name: '' };
};

function payload(f: Finding, closing = false) {
  return findingPayload({
    finding: { id: 'x', opened: f, latest: f, openedMs: 5_000 },
    closing,
    startMs: 4_000,
    coordinator: COORD,
    epoch: 7,
    now: 6_000,
    refOf,
    figures: null,
  });
}

describe('event feed: findings about the paths', () => {
  it('a broken path: the sentence, then both ends by node name and address', () => {
    const p = payload({
      kind: 'path-broken',
      from: '10.0.0.2:8080',
      to: '10.0.0.3:8080',
      witnesses: ['10.0.0.4:8080'],
    });
    expect(isFindingPayload(p), 'fed as a finding').to.equal(true);
    expect(findingEntry(p, NODES)).to.deep.equal({
      kind: 'path_broken',
      peer: 'worker-3@10.0.0.3',
      text:
        'worker-2 cannot reach worker-3, though both reach the other nodes: the path between them' +
        ' is broken \u2014 worker-2 (10.0.0.2:8080) \u2192 worker-3 (10.0.0.3:8080)',
    });
  });

  it("a node's finding names the node; its closing too", () => {
    const f: Finding = {
      kind: 'egress-broken',
      node: '10.0.0.4:8080',
      reaches: [],
      reachedBy: ['10.0.0.2:8080'],
    };
    expect(findingEntry(payload(f), NODES).text).to.match(
      /its egress is broken \u2014 worker-4 \(10\.0\.0\.4:8080\)$/,
    );
    expect(findingEntry(payload(f, true), NODES)).to.deep.include({
      kind: 'egress_restored',
      text: 'worker-4 reaches its peers again \u2014 worker-4 (10.0.0.4:8080)',
    });
    const degraded = findingEntry(payload({ kind: 'node-degraded', node: '10.0.0.3:8080' }), NODES);
    expect(degraded.kind).to.equal('peer_degraded');
    expect(degraded.text).to.match(/ \u2014 worker-3 \(10\.0\.0\.3:8080\)$/);
  });

  it('a partition: each side, its nodes by name and address', () => {
    const p = payload({
      kind: 'partition',
      sides: [
        ['10.0.0.1:8080', '10.0.0.2:8080'],
        ['10.0.0.3:8080', '10.0.0.4:8080'],
      ],
    });
    expect(findingEntry(p, NODES).text).to.match(
      / \u2014 \[worker-1 \(10\.0\.0\.1:8080\), worker-2 \(10\.0\.0\.2:8080\)\] \| \[worker-3 \(10\.0\.0\.3:8080\), worker-4 \(10\.0\.0\.4:8080\)\]$/,
    );
  });

  it('names at most 10 nodes of a side, with how many more', () => {
    const side = Array.from({ length: 25 }, (_, i) => `10.0.1.${i}:8080`);
    const p = payload({ kind: 'partition', sides: [side, ['10.0.0.3:8080']] });
    const text = findingEntry(p, NODES).text;
    expect(text).to.include('10.0.1.9:8080 and 15 more]');
    expect(text).to.not.include('10.0.1.10:8080');
  });

  it('a node it does not know is named by its address', () => {
    const p = payload({ kind: 'node-mtu', node: '10.0.0.4:8080', size: 1_400 });
    expect(findingEntry(p, []).text).to.match(/ \u2014 worker-4 \(10\.0\.0\.4:8080\)$/);
    const path = payload({
      kind: 'path-mtu',
      from: '10.0.0.2:8080',
      to: '10.0.0.3:8080',
      size: 1_400,
    });
    expect(findingEntry(path, []).text).to.match(
      / \u2014 worker-2@10\.0\.0\.2 \u2192 worker-3 \(10\.0\.0\.3:8080\)$/,
    );
  });
});

describe('event feed: the events the coordinator sends', () => {
  const nodes = () => NODES;

  it('shows each finding it sends, with the nodes it names, a broken path between two followers too', () => {
    const f: Finding = {
      kind: 'path-broken',
      from: '10.0.0.2:8080',
      to: '10.0.0.3:8080',
      witnesses: ['10.0.0.4:8080'],
    };
    expect(sentEntry(payload(f), nodes)).to.deep.equal(findingEntry(payload(f), NODES));
    expect(sentEntry(payload(f, true), nodes)?.kind).to.equal('path_restored');
  });

  it("leaves the verdicts' own events to the verdicts' entries (not twice), and names no node for them", () => {
    let looked = 0;
    const dead = deadPayload(upRecord('worker-3', '10.0.0.3', 0), 60_000, { coordinator: COORD });
    expect(
      sentEntry(dead, () => {
        looked++;
        return NODES;
      }),
    ).to.equal(null);
    expect(looked, 'nodes looked up only for findings').to.equal(0);
  });

  it('shows a cannot_judge as the webhook says it', () => {
    const dead = deadPayload(upRecord('worker-3', '10.0.0.3', 0), 60_000, { coordinator: COORD });
    const cannot = { ...dead, event: 'cannot_judge' as const, reason: 'reaches 1 of 4 peers' };
    expect(sentEntry(cannot, nodes)).to.deep.equal({
      kind: 'cannot_judge',
      peer: dead.peer.id,
      text: 'reaches 1 of 4 peers',
    });
  });
});
