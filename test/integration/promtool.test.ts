// GET /metrics of real nodes, scraped after a peer died, passes the real `promtool check metrics`
// (Debian's `prometheus` package) without a single complaint, and shows what happened.
import { expect } from 'chai';
import type { MeshNode } from '../../src/demo/mesh.js';
import { lowestRanked } from '../support/expected-rank.js';
import { useMeshFixture } from '../support/mesh-fixture.js';
import { pollUntil } from '../support/poll.js';
import { promtool, requirePromtool } from '../support/promtool.js';

/** `promtool check metrics` over `text`: its exit code and everything it printed. */
const checkMetrics = (text: string) => promtool(['check', 'metrics'], text);

/** Every sample line of `name` whose labels include all of `labels`, as its value. */
function values(text: string, name: string, labels: Record<string, string> = {}): number[] {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text.split('\n').flatMap((line) => {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/.exec(line);
    if (m?.[1] !== name || !wanted.every((w) => (m[2] ?? '').includes(w))) return [];
    return [Number(m[3])];
  });
}

async function scrape(node: MeshNode): Promise<{ contentType: string; body: string }> {
  const res = await fetch(`http://${node.address}/metrics`, { signal: AbortSignal.timeout(5_000) });
  expect(res.status, `GET /metrics of ${node.name}`).to.equal(200);
  return { contentType: res.headers.get('content-type') ?? '', body: await res.text() };
}

describe('GET /metrics and promtool (4 real nodes)', function () {
  this.timeout(90_000);
  const startMesh = useMeshFixture();

  it('promtool complains about a misnamed metric (so a clean run means something)', async function () {
    requirePromtool(this);
    const bad = '# HELP knh_x_count x\n# TYPE knh_x_count counter\nknh_x_count 1\n';
    const { code, output } = await checkMetrics(bad);
    expect(code).to.not.equal(0);
    expect(output).to.include('knh_x_count');
  });

  it('every node passes `promtool check metrics`, and the metrics show the death of a peer', async function () {
    requirePromtool(this);
    const fx = await startMesh({ size: 4 });
    const { coordinator, epoch } = await fx.settled();
    const victim = lowestRanked(fx.nodes);
    await fx.mesh.kill(victim.index);
    await fx.waitForPeerStatus(
      `peer_dead for ${victim.address}`,
      (b) => b.event === 'peer_dead' && b.peer.address === victim.address,
    );
    // The receiver has it; the coordinator counts it once the 200 is back.
    const delivered = { kind: 'peer-status', outcome: 'delivered' };
    await pollUntil(
      'the coordinator counting the peer_dead webhook delivered',
      async () => {
        const { body } = await scrape(coordinator);
        const n = values(body, 'knh_webhook_deliveries_total', delivered)[0] ?? 0;
        return n >= 1 ? n : undefined;
      },
      { timeoutMs: 10_000 },
    );

    // Every other node's pair probes of it fail too: the coordinator localizes it.
    await pollUntil(
      'the coordinator counting the victim unreachable in its path findings',
      async () => {
        const { body } = await scrape(coordinator);
        return values(body, 'knh_path_findings', { kind: 'unreachable' })[0] === 1
          ? true
          : undefined;
      },
      { timeoutMs: 15_000 },
    );

    const alive = fx.running();
    const scraped = await Promise.all(alive.map(scrape));
    let elections = 0;
    for (const [i, node] of alive.entries()) {
      const { contentType, body } = scraped[i] ?? { contentType: '', body: '' };
      const { code, output } = await checkMetrics(body);
      expect(output, `promtool check metrics on ${node.name}'s /metrics`).to.equal('');
      expect(code, `promtool's exit code on ${node.name}'s /metrics`).to.equal(0);

      const about = `${node.name}'s /metrics`;
      expect(contentType, about).to.match(/^text\/plain; version=0\.0\.4/);
      expect(values(body, 'knh_build_info'), about).to.deep.equal([1]);
      expect(values(body, 'knh_epoch'), about).to.deep.equal([epoch]);
      expect(values(body, 'knh_coordinator_info'), about).to.deep.equal([1]);
      expect(
        values(body, 'knh_coordinator_info', { address: coordinator.address }),
        about,
      ).to.deep.equal([1]);
      expect(values(body, 'knh_discovery_peers'), about).to.deep.equal([fx.nodes.length - 1]);
      expect(
        values(body, 'knh_node_info', { node: node.name, address: node.address }),
        about,
      ).to.deep.equal([1]);
      // The standard names, which the usual Node.js dashboards and queries read.
      expect(values(body, 'process_resident_memory_bytes')[0], about).to.be.above(0);
      expect(values(body, 'process_cpu_seconds_total')[0], about).to.be.above(0);
      expect(values(body, 'nodejs_heap_size_used_bytes')[0], about).to.be.above(0);
      elections += values(body, 'knh_elections_total')[0] ?? 0;

      // Its own paths (3 peers, within METRICS_PER_PATH_LIMIT): each its series, by state.
      expect(values(body, 'knh_per_path_metrics_enabled'), about).to.deep.equal([1]);
      const byState = ['ok', 'degraded', 'mtu', 'failed'].map(
        (state) => values(body, 'knh_paths', { state })[0] ?? 0,
      );
      expect(
        byState.reduce((a, b) => a + b),
        `${about}: its paths`,
      ).to.equal(fx.nodes.length - 1);
      // Killed, its host refuses: no loss of the path's (the verdicts' case), but it is failed.
      expect(
        values(body, 'knh_paths', { state: 'failed' }),
        `${about}: its path to the victim`,
      ).to.deep.equal([1]);
      for (const peer of alive.filter((n) => n !== node)) {
        expect(values(body, 'knh_path_loss_ratio', { peer: peer.address }), about).to.have.length(
          1,
        );
        const p50 = values(body, 'knh_path_p50_latency_seconds', { peer: peer.address });
        expect(p50[0], `${about}: p50 to ${peer.name}`).to.be.above(0).and.below(1);
      }

      const leads = node === coordinator;
      expect(values(body, 'knh_path_findings', { kind: 'unreachable' }), about).to.deep.equal([
        leads ? 1 : 0,
      ]);
      expect(values(body, 'knh_is_coordinator'), about).to.deep.equal([leads ? 1 : 0]);
      if (!leads) {
        expect(values(body, 'knh_peer_up'), `${about}: verdicts only on the coordinator`).to.be
          .empty;
        continue;
      }
      for (const peer of fx.nodes.filter((n) => n !== coordinator)) {
        // Named by address and by node: an alert says which node without a join.
        const labels = { peer: peer.address, node: peer.name };
        expect(values(body, 'knh_peer_up', labels), peer.name).to.deep.equal([
          peer === victim ? 0 : 1,
        ]);
      }
      expect(values(body, 'knh_probe_failures_total', { peer: victim.address })[0]).to.be.above(0);
      expect(values(body, 'knh_peers', { health: 'dead' })).to.deep.equal([1]);
      expect(values(body, 'knh_peer_transitions_total', { transition: 'died' })).to.deep.equal([1]);
      expect(
        values(body, 'knh_probe_duration_seconds_count', { outcome: 'failed' })[0],
      ).to.be.above(0);
      expect(values(body, 'knh_webhook_deliveries_total', delivered)[0]).to.be.at.least(1);
    }
    expect(elections, 'elections held by the surviving nodes').to.be.at.least(1);
  });
});
