// A rolling upgrade's mixed mesh: the previous version (built from git) and this one side by side in
// 5 network namespaces: they elect one coordinator, report crashes and hand over alert state (root only).
import { expect } from 'chai';
import { runMixedVersionScenario } from '../support/mixed-version-scenario.js';
import { secs, useHostNetwork } from '../support/multi-host-fixture.js';
import { HostNetwork } from '../support/netns-hosts.js';
import { buildPreviousVersion, PREVIOUS_VERSIONS } from '../support/previous-version.js';

/**
 * Bound on every measured time (the targets: settle ≤ 3 s, crash reported ≤ 3 s, failover ≤ 3 s;
 * the printed figures show how far below it a run is): generous so that a loaded CI machine does
 * not flake.
 */
const BOUND_MS = 10_000;
/** A cold build: `npm ci` of the previous version's lockfile, then tsc and the bundling script. */
const BUILD_TIMEOUT_MS = 10 * 60_000;

const log = (text: string) => console.log(`      ${text}`);

for (const { commit, protocol } of PREVIOUS_VERSIONS) {
  describe(`rolling upgrade: ${commit.slice(0, 7)} (protocol ${protocol}) and this version in one mesh (5 network namespaces, root only)`, function () {
    this.timeout(180_000);
    const startHosts = useHostNetwork();
    let previousCli = '';

    before(async function () {
      this.timeout(BUILD_TIMEOUT_MS);
      const available = await HostNetwork.available();
      if (!available.ok) {
        console.log(`      skipping the rolling-upgrade tests: ${available.reason}`);
        this.skip();
      }
      const began = Date.now();
      // A commit missing from history skips; a present commit that does not build fails here.
      const build = await buildPreviousVersion({ commit, log });
      if (!build.ok) {
        console.log(`      skipping the rolling-upgrade tests: ${build.reason}`);
        this.skip();
      }
      previousCli = build.cliPath;
      log(
        `previous version ${commit.slice(0, 7)} ready in ${secs(began, Date.now())}${build.fromCache ? ' (cached build)' : ''}`,
      );
    });

    it('with the previous version on the top and bottom hosts: settles, reports crashes, fails over and carries alerts across versions', async () => {
      const fx = await startHosts({ hosts: 5, startNodes: false });
      const run = await runMixedVersionScenario(fx, { previousCli, progress: log });
      const { top, second, follower, bottom } = run.roles;

      expect(run.settleMs, 'settle: last start → the top host reports all alive').to.be.at.most(
        BOUND_MS,
      );
      expect(run.followerDead.by, 'the previous-version coordinator reports').to.equal(top.address);
      expect(run.followerDead.ms, 'crash → peer_dead').to.be.at.most(BOUND_MS);
      expect(run.failoverEpoch).to.be.greaterThan(run.settledEpoch);
      expect(run.failoverMs, 'coordinator crash → the successor takes over').to.be.at.most(
        BOUND_MS,
      );
      expect(run.topDead.by, 'the successor reports its predecessor').to.equal(second.address);
      expect(run.topDead.ms, 'coordinator crash → its peer_dead').to.be.at.most(BOUND_MS);
      expect(run.bottomDead.by, 'the current-version coordinator reports').to.equal(second.address);
      expect(run.bottomDead.ms, 'crash → peer_dead').to.be.at.most(BOUND_MS);
      // One peer_dead per crash: the successor carries on its predecessor's alert for the follower.
      expect(run.deadReports, 'every peer_dead received').to.deep.equal([
        `${follower.address} by ${top.address}`,
        `${top.address} by ${second.address}`,
        `${bottom.address} by ${second.address}`,
      ]);
      // Pair probing between the nodes of this version, beside nodes that do not take part:
      // crashes are the verdicts' to tell, and nothing else is wrong in this mesh.
      expect(run.warnings, 'finding events (warnings)').to.deep.equal([]);
      expect(run.invalidWebhooks, 'webhooks the schemas reject').to.deep.equal([]);
    });
  });
}
