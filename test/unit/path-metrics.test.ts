// The per-path series follow the prober at every scrape: a path it forgets loses its series, and
// all of them go once the mesh outgrows METRICS_PER_PATH_LIMIT.
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { PathMetrics } from '../../src/metrics/path-metrics.js';
import type { ProbedPath } from '../../src/paths/pair-prober.js';
import { pathsNodes, probedPath } from '../support/path-status.js';

const [A, B, C] = pathsNodes(3).map((n) => n.address) as [string, string, string];

function setup(perPathLimit: number) {
  const world = { paths: [] as ProbedPath[], peers: 3 };
  const registry = new Registry();
  new PathMetrics(
    registry,
    {
      ownPaths: () => world.paths,
      meshPeers: () => world.peers,
      pathFindings: () => [],
      nodeOf: (address) => (address === A ? 'worker-a' : undefined),
    },
    { perPathLimit },
  );
  const lossLabels = async () =>
    [
      ...(await registry.metrics()).matchAll(
        /^knh_path_loss_ratio\{peer="([^"]+)",node="([^"]+)"\}/gm,
      ),
    ].map((m) => ({ peer: m[1], node: m[2] }));
  /** The peers that have a loss series. */
  const lossSeries = async () => (await lossLabels()).map((l) => l.peer);
  return { world, lossSeries, lossLabels };
}

describe('PathMetrics', () => {
  it("drops a path's series once the prober forgets the path", async () => {
    const { world, lossSeries } = setup(10);
    world.paths = [probedPath(A, 'ok'), probedPath(B, 'failed'), probedPath(C, 'degraded')];
    expect(await lossSeries()).to.deep.equal([A, B, C]);
    world.paths = [probedPath(A, 'ok')];
    expect(await lossSeries()).to.deep.equal([A]);
  });

  it("names the node at each path's end, its IP when nobody named it", async () => {
    const { world, lossLabels } = setup(10);
    world.paths = [probedPath(A, 'ok'), probedPath(B, 'ok')];
    expect(await lossLabels()).to.deep.equal([
      { peer: A, node: 'worker-a' },
      { peer: B, node: B.replace(/:\d+$/, '') },
    ]);
  });

  it('drops every per-path series once the mesh has more peers than the limit', async () => {
    const { world, lossSeries } = setup(3);
    world.paths = [probedPath(A, 'ok'), probedPath(B, 'ok')];
    expect(await lossSeries()).to.deep.equal([A, B]);
    world.peers = 4;
    expect(await lossSeries()).to.deep.equal([]);
  });
});
