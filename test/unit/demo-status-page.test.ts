// The demo prints where each node's status page is: where the node says its views listen.
import { expect } from 'chai';
import { parseDemoArgs } from '../../src/demo/demo-options.js';
import { logLineOf } from '../../src/demo/mesh.js';
import { statusPageUrl } from '../../src/demo/status-page.js';

const node = { host: '127.0.0.1', address: '127.0.0.1:40001' };
const listening = (fields: Record<string, unknown>) =>
  logLineOf(
    JSON.stringify({ level: 30, event: 'listening', listen: '127.0.0.1:40001', ...fields }),
  );

describe('the demo', () => {
  describe('statusPageUrl', () => {
    it('is on the peer port when the views are served there', () => {
      expect(statusPageUrl(listening({}), node)).to.equal('http://127.0.0.1:40001/');
    });

    it("is on the operator's listener when the node has one (OPERATOR_LISTEN)", () => {
      const line = listening({ operatorListen: '127.0.0.1:9090' });
      expect(statusPageUrl(line, node)).to.equal('http://127.0.0.1:9090/');
    });

    it("is on the node's own host when the operator's listener binds every interface", () => {
      expect(statusPageUrl(listening({ operatorListen: '0.0.0.0:9090' }), node)).to.equal(
        'http://127.0.0.1:9090/',
      );
      expect(statusPageUrl(listening({ operatorListen: '[::]:9090' }), node)).to.equal(
        'http://127.0.0.1:9090/',
      );
    });
  });

  describe('its options', () => {
    it('hide dedup keys unless --show-keys is given', () => {
      expect(parseDemoArgs([])).to.deep.include({
        options: { nodes: 5, scenario: false, showKeys: false },
      });
      expect(parseDemoArgs(['--show-keys', '--nodes', '3'])).to.deep.include({
        options: { nodes: 3, scenario: false, showKeys: true },
      });
    });
  });
});
