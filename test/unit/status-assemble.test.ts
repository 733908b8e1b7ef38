// GET /status as assembled from what a node holds: a leader's own verdicts, a follower's view of
// its coordinator's, peers not judged yet, peers that left, and who is in maintenance.
import { expect } from 'chai';
import type { MaintenanceWindow } from '../../src/wire/maintenance-window.js';
import { MAX_FAILURE_CHARS, newRecord, toView, type PeerRecord } from '../../src/prober/verdict.js';
import { assembleStatus, type StatusFacts } from '../../src/status/assemble.js';
import type { NodeStatus, StatusPeer } from '../../src/status/status-types.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { maintenanceWindow } from '../support/maintenance-window.js';

const T = Date.UTC(2025, 0, 1);
const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const schemas = loadSchemas();

const SELF = { id: 'self@10.0.0.9', address: '10.0.0.9:8080' };
const LEADER = { id: 'lead@10.0.0.8', address: '10.0.0.8:8080' };

function rec(name: string, ip: string, over: Partial<PeerRecord> = {}): PeerRecord {
  return { ...newRecord(`${ip}:8080`, T), id: `${name}@${ip}`, nodeName: name, ...over };
}

const ALIVE = rec('a', '10.0.0.1', {
  health: 'alive',
  sinceMs: T - 10 * MIN,
  lastProbeMs: T - 1_000,
  lastLatencyMs: 1.234,
});
const DEAD = rec('b', '10.0.0.2', {
  health: 'dead',
  sinceMs: T - 2 * MIN,
  alerted: true,
  lastProbeMs: T - 2_000,
  lastLatencyMs: 88,
  lastSeenMs: T - 3 * MIN,
  unreachableSinceMs: T - 3 * MIN + 1_000,
  lastFailure: 'refused (connect ECONNREFUSED) after 3 attempts',
});
const BROKEN = rec('c', '10.0.0.3', {
  health: 'alive',
  sinceMs: T - 10 * MIN,
  lastProbeMs: T - 1_500,
  lastLatencyMs: 1_000,
  brokenPath: { sinceMs: T - MIN, witnesses: ['a@10.0.0.1'], alerted: true },
});
const NEVER = newRecord('10.0.0.4:8080', T - 5_000);

function facts(over: Partial<StatusFacts> = {}): StatusFacts {
  return {
    self: SELF,
    nodeName: 'self',
    build: { version: '0.1.0', revision: 'abc1234' },
    role: 'coordinator',
    epoch: 3,
    coordinator: SELF,
    ready: true,
    dryRun: false,
    own: null,
    selfSuspect: null,
    followed: null,
    discovered: [],
    departed: [],
    windows: [],
    events: [],
    paths: { view: 'off' },
    now: T,
    ...over,
  };
}

/** Assembles, checks the result against schemas/status.schema.json, and returns it. */
function assemble(f: StatusFacts): NodeStatus {
  const status = assembleStatus(f);
  expect(schemas.check('status', status), JSON.stringify(status)).to.deep.equal({ ok: true });
  return status;
}

const byAddress = (s: NodeStatus) => new Map(s.peers.map((p) => [p.address, p]));
function peer(s: NodeStatus, address: string): StatusPeer {
  const p = byAddress(s).get(address);
  expect(p, address).to.not.equal(undefined);
  return p as StatusPeer;
}

/** mw1, opened a minute before T: in force while the status is assembled. */
const window = (over: Partial<MaintenanceWindow> = {}): MaintenanceWindow =>
  maintenanceWindow('mw1', T - MIN, { until: T + 30 * MIN, reason: 'upgrades', ...over });

describe('assembleStatus', () => {
  it('a leading node shows its own verdicts', () => {
    const s = assemble(
      facts({
        own: [ALIVE, DEAD, BROKEN, NEVER],
        selfSuspect: false,
        discovered: [ALIVE.address, DEAD.address, BROKEN.address, NEVER.address],
      }),
    );
    expect(s.view).to.deep.equal({ source: 'own', as_of: iso(T) });
    expect(s.self_suspect).to.equal(false);
    expect(s.peers).to.have.length(4);
    expect(peer(s, ALIVE.address)).to.deep.equal({
      id: 'a@10.0.0.1',
      address: '10.0.0.1:8080',
      node_name: 'a',
      state: 'alive',
      since: iso(T - 10 * MIN),
      last_probe: iso(T - 1_000),
      latency_ms: 1.2,
      last_seen: null,
      last_failure: null,
      path_broken: false,
      alerted: false,
      in_maintenance: false,
    });
    expect(peer(s, DEAD.address)).to.deep.include({
      state: 'dead',
      since: iso(T - 2 * MIN),
      alerted: true,
      path_broken: false,
    });
    expect(peer(s, BROKEN.address)).to.deep.include({ state: 'alive', path_broken: true });
    expect(peer(s, NEVER.address), 'never judged').to.deep.include({
      state: 'unknown',
      since: null,
      last_probe: null,
      latency_ms: null,
    });
  });

  it('says why a peer that does not answer is down and when it last answered, not only its latency', () => {
    const s = assemble(facts({ own: [ALIVE, DEAD] }));
    expect(peer(s, DEAD.address)).to.deep.include({
      last_failure: 'refused (connect ECONNREFUSED) after 3 attempts',
      last_seen: iso(T - 3 * MIN),
    });
    // An answering peer's last probe is its last answer: no last_seen, no failure.
    expect(peer(s, ALIVE.address)).to.deep.include({ last_seen: null, last_failure: null });
    const long = rec('d', '10.0.0.5', {
      ...DEAD,
      address: '10.0.0.5:8080',
      lastFailure: 'x'.repeat(5_000),
    });
    expect(peer(assemble(facts({ own: [long] })), long.address).last_failure).to.have.length(
      MAX_FAILURE_CHARS,
    );
  });

  it("a follower shows why a peer is down and when it was last seen, from the coordinator's view", () => {
    const s = assemble(
      facts({
        role: 'follower',
        coordinator: LEADER,
        followed: { views: [toView(ALIVE), toView(DEAD)], atMs: T - 1_000 },
      }),
    );
    expect(peer(s, DEAD.address)).to.deep.include({
      last_failure: 'refused (connect ECONNREFUSED) after 3 attempts',
      last_seen: iso(T - 3 * MIN),
    });
    expect(peer(s, ALIVE.address)).to.deep.include({ last_seen: null, last_failure: null });
  });

  it('a leading node that suspects itself says so', () => {
    const s = assemble(facts({ own: [ALIVE], selfSuspect: true }));
    expect(s.self_suspect).to.equal(true);
  });

  it('a follower shows the views its coordinator announced, and the coordinator as alive', () => {
    const views = [ALIVE, DEAD, BROKEN].map(toView);
    const selfView = { ...toView(ALIVE), id: SELF.id, address: SELF.address, node_name: 'self' };
    const s = assemble(
      facts({
        role: 'follower',
        coordinator: LEADER,
        selfSuspect: true, // a leader's notion: not shown by a follower
        followed: { views: [...views, selfView], atMs: T - 3_000 },
        discovered: [ALIVE.address, DEAD.address, BROKEN.address, LEADER.address],
      }),
    );
    expect(s.view).to.deep.equal({ source: 'coordinator', as_of: iso(T - 3_000) });
    expect(s.self_suspect).to.equal(null);
    expect(s.coordinator).to.deep.equal(LEADER);
    expect(s.peers.map((p) => p.address).sort()).to.deep.equal(
      [ALIVE.address, DEAD.address, BROKEN.address, LEADER.address].sort(),
    );
    expect(byAddress(s).has(SELF.address), 'not itself').to.be.false;
    expect(peer(s, ALIVE.address)).to.deep.include({
      state: 'alive',
      since: iso(T - 10 * MIN),
      last_probe: iso(T - 1_000),
      latency_ms: 1.2,
    });
    expect(peer(s, DEAD.address)).to.deep.include({ state: 'dead', alerted: true });
    expect(peer(s, BROKEN.address)).to.deep.include({ path_broken: true });
    expect(peer(s, LEADER.address)).to.deep.include({
      id: LEADER.id,
      node_name: 'lead',
      state: 'alive',
      since: iso(T - 3_000),
    });
  });

  it('a node with neither its own verdicts nor an announcement shows discovered peers as unknown', () => {
    const s = assemble(
      facts({
        role: 'candidate',
        coordinator: null,
        discovered: [ALIVE.address, DEAD.address],
      }),
    );
    expect(s.view).to.deep.equal({ source: 'none', as_of: null });
    expect(s.self_suspect).to.equal(null);
    expect(s.peers.map((p) => [p.address, p.state, p.since])).to.deep.equal([
      [ALIVE.address, 'unknown', null],
      [DEAD.address, 'unknown', null],
    ]);
  });

  it('shows a discovered peer the verdicts do not name yet as unknown', () => {
    const s = assemble(facts({ own: [ALIVE], discovered: [ALIVE.address, '10.0.0.7:8080'] }));
    expect(peer(s, '10.0.0.7:8080')).to.deep.include({
      state: 'unknown',
      since: null,
      last_probe: null,
      latency_ms: null,
      path_broken: false,
      alerted: false,
    });
    expect(peer(s, ALIVE.address).state).to.equal('alive');
  });

  it('shows a departed peer as left, from when it left, whatever the verdicts last said', () => {
    const s = assemble(
      facts({
        own: [ALIVE, DEAD],
        discovered: [ALIVE.address, DEAD.address, '10.0.0.6:8080'],
        departed: [
          { address: DEAD.address, id: DEAD.id, atMs: T - 5_000 },
          { address: '10.0.0.6:8080', id: 'f@10.0.0.6', atMs: T - 1_000 },
        ],
      }),
    );
    expect(peer(s, DEAD.address)).to.deep.include({
      id: DEAD.id,
      state: 'left',
      since: iso(T - 5_000),
    });
    expect(peer(s, '10.0.0.6:8080')).to.deep.include({
      id: 'f@10.0.0.6',
      node_name: 'f',
      state: 'left',
    });
    expect(s.peers).to.have.length(3);
  });

  it('marks peers covered by an active mesh window as in maintenance, and lists the window', () => {
    const w = window();
    const s = assemble(facts({ own: [ALIVE, DEAD], discovered: ['10.0.0.7:8080'], windows: [w] }));
    expect(s.peers.map((p) => p.in_maintenance)).to.deep.equal([true, true, true]);
    expect(s.maintenance).to.deep.equal([
      {
        id: 'mw1',
        scope: 'mesh',
        nodes: [],
        starts: iso(w.starts),
        until: iso(w.until),
        reason: 'upgrades',
      },
    ]);
  });

  it('marks only the peers a nodes window names (by name, id or address)', () => {
    const s = assemble(
      facts({
        role: 'follower',
        coordinator: LEADER,
        followed: { views: [ALIVE, DEAD, BROKEN].map(toView), atMs: T },
        departed: [{ address: '10.0.0.6:8080', id: 'f@10.0.0.6', atMs: T }],
        windows: [
          window({ scope: 'nodes', nodes: ['a', DEAD.id, LEADER.address, '10.0.0.6:8080'] }),
        ],
      }),
    );
    const marked = s.peers.filter((p) => p.in_maintenance).map((p) => p.address);
    expect(marked.sort()).to.deep.equal(
      [ALIVE.address, DEAD.address, LEADER.address, '10.0.0.6:8080'].sort(),
    );
    expect(peer(s, BROKEN.address).in_maintenance).to.be.false;
  });

  it('does not mark peers for a window not yet started or cancelled', () => {
    const s = assemble(
      facts({
        own: [ALIVE],
        windows: [window({ id: 'later', starts: T + MIN }), window({ id: 'c', cancelled: true })],
      }),
    );
    expect(peer(s, ALIVE.address).in_maintenance).to.be.false;
  });

  it('carries the node facts and its events as given', () => {
    const events = [
      { time: iso(T), kind: 'peer_dead', peer: DEAD.id, text: 'b is dead', suppressed: true },
    ];
    const s = assemble(facts({ ready: false, dryRun: true, epoch: 7, events }));
    expect(s).to.deep.include({
      id: SELF.id,
      address: SELF.address,
      node_name: 'self',
      version: '0.1.0',
      revision: 'abc1234',
      role: 'coordinator',
      epoch: 7,
      now: iso(T),
      ready: false,
      dry_run: true,
      events,
    });
  });
});
