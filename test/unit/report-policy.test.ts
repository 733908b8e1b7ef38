// What a node tells its coordinator of its paths, and how often, for the mesh's size: every path
// up to the matrix's size, else a sample and what is not ok; reports spaced so that the
// coordinator's intake stays bounded whatever N.
import { expect } from 'chai';
import {
  exceptionsTold,
  MATRIX_NODES,
  REPORT_INTAKE_PER_S,
  REPORT_REFRESH_MS,
  reportPolicy,
  tells,
} from '../../src/paths/report-policy.js';

const mesh = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${i >> 8}.${i & 255}:8080`);

describe('reportPolicy', () => {
  it(`tells every path in a mesh of up to ${MATRIX_NODES} nodes`, () => {
    const nodes = mesh(MATRIX_NODES);
    const policy = reportPolicy(nodes[0]!, nodes, 20);
    expect(policy.everyPath).to.equal(true);
    expect(tells(policy, nodes[50]!, 'ok', new Set())).to.equal(true);
  });

  it('in a larger mesh tells its next PAIR_PROBES nodes in the ring, and the exceptions told', () => {
    const nodes = mesh(MATRIX_NODES + 1);
    const self = nodes[MATRIX_NODES - 1]!;
    const policy = reportPolicy(self, nodes, 3);
    expect(policy.everyPath).to.equal(false);
    expect([...policy.sample]).to.deep.equal([nodes[MATRIX_NODES]!, nodes[0]!, nodes[1]!]);
    const none = new Set<string>();
    expect(tells(policy, nodes[0]!, 'ok', none)).to.equal(true);
    expect(tells(policy, nodes[50]!, 'ok', none)).to.equal(false);
    expect(tells(policy, nodes[50]!, 'degraded', none), 'not among the exceptions').to.equal(false);
    expect(tells(policy, nodes[50]!, 'degraded', new Set([nodes[50]!]))).to.equal(true);
  });

  it(`spaces reports so that about ${REPORT_INTAKE_PER_S} a second reach the coordinator`, () => {
    for (const n of [5, 100, 1_000, 5_000]) {
      const nodes = mesh(n);
      const { gapMs, refreshMs, staleMs } = reportPolicy(nodes[0]!, nodes, 20);
      expect((n * 1_000) / gapMs, `${n} nodes`).to.be.at.most(REPORT_INTAKE_PER_S);
      expect(refreshMs).to.be.at.least(Math.max(REPORT_REFRESH_MS, gapMs));
      expect(staleMs, 'a node is forgotten only after missing refreshes').to.equal(3 * refreshMs);
    }
    const nodes = mesh(5_000);
    expect(reportPolicy(nodes[0]!, nodes, 20).gapMs).to.equal(25_000);
  });

  it('tells at most PAIR_PROBES paths not ok out of the sample, the failed ones first', () => {
    const nodes = mesh(MATRIX_NODES + 50);
    const policy = reportPolicy(nodes[0]!, nodes, 3);
    const paths = nodes.slice(10).map((to, i) => ({
      to,
      state: i % 3 === 0 ? 'failed' : i % 3 === 1 ? 'degraded' : 'ok',
    }));
    const told = exceptionsTold(paths, policy, 5);
    expect(told.size).to.equal(5);
    expect([...told].every((to) => paths.find((p) => p.to === to)?.state === 'failed')).to.equal(
      true,
    );
    expect(exceptionsTold(paths, reportPolicy(nodes[0]!, nodes.slice(0, 50), 3), 5).size).to.equal(
      0,
    );
  });
});
