// A healthy mesh left alone stays quiet: one coordinator throughout, no alerts, no errors.
import { expect } from 'chai';
import { ping, useMeshFixture } from '../support/mesh-fixture.js';
import { sleep } from '../support/poll.js';

const OBSERVE_MS = 20_000;
const SAMPLE_EVERY_MS = 1_000;
/** Short, so the ~20 s window holds several periodic statuses to check. */
const CLUSTER_STATUS_INTERVAL_S = 5;

describe('steady state (5 real nodes)', function () {
  this.timeout(60_000);
  const startMesh = useMeshFixture();

  it(`sends no alerts and keeps one coordinator for ${OBSERVE_MS / 1000} s`, async () => {
    const fx = await startMesh({
      env: { CLUSTER_STATUS_INTERVAL: String(CLUSTER_STATUS_INTERVAL_S) },
    });
    const { coordinator, epoch } = await fx.settled();
    const convergedMs = Date.now();

    const anomalies: string[] = [];
    while (Date.now() - convergedMs < OBSERVE_MS) {
      const pings = await Promise.all(fx.nodes.map(ping));
      const at = `+${((Date.now() - convergedMs) / 1000).toFixed(1)}s`;
      pings.forEach((p, i) => {
        const name = fx.nodes[i]?.name ?? `node ${i + 1}`;
        if (!p) anomalies.push(`${at} ${name} did not answer /ping`);
        else if (p.coordinator?.address !== coordinator.address || p.epoch !== epoch)
          anomalies.push(`${at} ${name}: coordinator ${p.coordinator?.address} epoch ${p.epoch}`);
      });
      const leaders = pings.filter((p) => p?.role === 'coordinator').map((p) => p?.address);
      if (leaders.length !== 1) anomalies.push(`${at} coordinators: ${leaders.join(', ')}`);
      await sleep(SAMPLE_EVERY_MS);
    }
    expect(anomalies, 'one coordinator, the same, all along').to.deep.equal([]);

    const alerts = fx.peerStatuses().map((w) => `${w.body.event} ${w.body.peer.address}`);
    expect(alerts, 'peer-status webhooks since start-up').to.deep.equal([]);

    const periodic = fx.clusterStatuses().filter((w) => w.body.reason === 'periodic');
    expect(periodic.length).to.be.at.least(OBSERVE_MS / 1000 / CLUSTER_STATUS_INTERVAL_S - 1);
    for (const w of periodic) {
      expect(w.errors).to.deep.equal([]);
      expect(w.body.coordinator_address).to.equal(coordinator.address);
      expect(w.body.epoch).to.equal(epoch);
      expect(w.body.peer_map.filter((p) => p.alive)).to.have.length(fx.nodes.length - 1);
    }

    const noise = fx.nodes.flatMap((n) =>
      n.logs
        .filter(
          (l) =>
            l.level >= 50 ||
            (l.event === 'coordinator-changed' && Date.parse(l.time) > convergedMs),
        )
        .map((l) => `${n.name}: ${l.msg}`),
    );
    expect(noise, 'errors or leadership changes in the logs').to.deep.equal([]);
  });
});
