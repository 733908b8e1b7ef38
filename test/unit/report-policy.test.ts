// What a node tells its coordinator of its paths, and how often, for the mesh's size: every path
// up to the matrix's size, else a sample and what is not ok; reports spaced so that the
// coordinator's intake stays bounded whatever N.
import { expect } from 'chai';
import {
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
    expect(tells(policy, nodes[50]!, 'ok')).to.equal(true);
  });

  it('in a larger mesh tells its next PAIR_PROBES nodes in the ring, and any path not ok', () => {
    const nodes = mesh(MATRIX_NODES + 1);
    const self = nodes[MATRIX_NODES - 1]!;
    const policy = reportPolicy(self, nodes, 3);
    expect(policy.everyPath).to.equal(false);
    expect([...policy.sample]).to.deep.equal([nodes[MATRIX_NODES]!, nodes[0]!, nodes[1]!]);
    expect(tells(policy, nodes[0]!, 'ok')).to.equal(true);
    expect(tells(policy, nodes[50]!, 'ok')).to.equal(false);
    expect(tells(policy, nodes[50]!, 'degraded')).to.equal(true);
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
});
