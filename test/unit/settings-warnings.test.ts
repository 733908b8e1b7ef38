// Settings that load but are likely a mistake are told at start-up: a variable that looks like a
// setting and is none (misspelled, in another case, with a prefix), and a node that would send no
// alert; and the settings in effect are logged once, secrets hidden.
import { expect } from 'chai';
import { effectiveSettings } from '../../src/config/effective.js';
import { shownUrl } from '../../src/core/shown-url.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { editDistance, knownNames, lookalikes } from '../../src/config/lookalikes.js';
import { SETTINGS } from '../../src/config/settings.js';
import { HOST, KUBERNETES, STATIC, type Env } from '../support/config-env.js';

/** A receiver, so that only the warnings under test are given. */
const RECEIVER: Env = { PEER_STATUS_URL: 'http://receiver:8080/peer' };

function warnings(env: Env): string[] {
  return loadConfig(env, HOST).warnings;
}

function config(env: Env): Config {
  const result = loadConfig(env, HOST);
  if (!result.ok) expect.fail(result.errors.join('\n'));
  return result.config;
}

describe('settings that look like a mistake', () => {
  describe('a variable that looks like a setting and is none', () => {
    for (const [name, meant] of [
      ['PEER_STATUS_ULR', 'PEER_STATUS_URL'],
      ['PEER_STAUTS_URL', 'PEER_STATUS_URL'],
      ['SLACK_WEBHOK_URL', 'SLACK_WEBHOOK_URL'],
      ['ALERTMANGER_URL', 'ALERTMANAGER_URL'],
      ['LOGLEVEL', 'LOG_LEVEL'],
      ['POD_IPS', 'POD_IP'],
      ['PEER', 'PEERS'],
      ['HEARTBEAT_INTERVALL', 'HEARTBEAT_INTERVAL'],
      ['PAGERDUTY_ROUTING_KEY_FIEL', 'PAGERDUTY_ROUTING_KEY_FILE'],
    ] as const) {
      it(`warns about ${name}, naming it and ${meant}`, () => {
        const told = warnings({ ...STATIC, ...RECEIVER, [name]: 'x' });
        expect(told).to.deep.equal([
          `${name} is not a knh setting and is ignored: did you mean ${meant}?`,
        ]);
      });
    }

    it('warns about a known name in another case, saying names are case-sensitive', () => {
      const told = warnings({ ...STATIC, ...RECEIVER, pod_ip: '10.0.0.9', Log_Level: 'debug' });
      expect(told).to.deep.equal([
        'Log_Level is not a knh setting and is ignored: did you mean LOG_LEVEL? (names are case-sensitive)',
        'pod_ip is not a knh setting and is ignored: did you mean POD_IP? (names are case-sensitive)',
      ]);
    });

    it('warns about a known name behind a KNH_ prefix', () => {
      expect(warnings({ ...STATIC, ...RECEIVER, KNH_LOG_LEVEL: 'debug' })).to.deep.equal([
        'KNH_LOG_LEVEL is not a knh setting and is ignored: did you mean LOG_LEVEL? (knh reads its settings without a prefix)',
      ]);
    });

    it("says nothing of the system's, Node's, npm's and Kubernetes' own variables", () => {
      const env: Env = {
        ...STATIC,
        ...RECEIVER,
        PATH: '/usr/bin',
        HOME: '/home/node',
        HOSTNAME: 'knh-x2x9z',
        NODE_ENV: 'production',
        NODE_OPTIONS: '--max-old-space-size=256',
        NODE_VERSION: '24.1.0',
        YARN_VERSION: '1.22.22',
        npm_config_cache: '/tmp/npm',
        KUBERNETES_SERVICE_HOST: '10.96.0.1',
        KUBERNETES_PORT: 'tcp://10.96.0.1:443',
        // A Service named `knh`, or `peers`, in the namespace: Kubernetes' service links.
        KNH_SERVICE_HOST: '10.96.0.7',
        KNH_PORT: 'tcp://10.96.0.7:8080',
        KNH_PORT_8080_TCP_ADDR: '10.96.0.7',
        PEERS_SERVICE_PORT: '8080',
        PEERS_PORT: 'tcp://10.96.0.8:8080',
        MY_APP_SETTING: 'x',
        NODE_IP: '192.168.1.4',
      };
      expect(warnings(env)).to.deep.equal([]);
    });

    it('never warns about a name knh reads: every setting, alias and _FILE', () => {
      const env: Env = { ...STATIC, ...RECEIVER };
      for (const name of knownNames()) env[name] ??= '';
      expect(lookalikes(env)).to.deep.equal([]);
      const names = knownNames();
      expect(names).to.include.members([
        'MY_NODE_NAME',
        'SLACK_WEBHOOK_URL_FILE',
        'PEER_SECRET_FILE',
      ]);
      expect(names).to.include.members(SETTINGS.map((s) => s.env));
    });

    it('warns even when the settings do not load, so the misspelling is told with the errors', () => {
      const result = loadConfig({ DISCOVERY: 'static', PERS: '10.0.0.1:8080' }, HOST);
      expect(result.ok).to.equal(false);
      expect(result.warnings).to.include(
        'PERS is not a knh setting and is ignored: did you mean PEERS?',
      );
    });

    it('counts edits, a swap of two neighbours as one, and stops past the bound', () => {
      expect(editDistance('PEER_STATUS_ULR', 'PEER_STATUS_URL', 2)).to.equal(1);
      expect(editDistance('PEERS', 'PEERS', 1)).to.equal(0);
      expect(editDistance('POD_IPS', 'POD_IP', 1)).to.equal(1);
      expect(editDistance('LOGLEVEL', 'LOG_LEVEL', 2)).to.equal(1);
      expect(editDistance('NODE_IP', 'POD_IP', 1)).to.equal(2);
      expect(editDistance('PATH', 'SERVICE_NAME', 2)).to.equal(3);
    });
  });

  describe('a node that would send no alert', () => {
    const NONE =
      'no receiver is set (PEER_STATUS_URL, CLUSTER_STATUS_URL, SLACK_WEBHOOK_URL, ALERTMANAGER_URL, PAGERDUTY_ROUTING_KEY, ALERT_WEBHOOK_URL): knh shows what it finds on its status page and metrics, but sends no alert';

    it('warns when no receiver is set', () => {
      expect(warnings(STATIC)).to.deep.equal([NONE]);
      expect(warnings(KUBERNETES)).to.deep.equal([NONE]);
    });

    for (const [name, value] of [
      ['PEER_STATUS_URL', 'http://receiver/peer'],
      ['CLUSTER_STATUS_URL', 'http://receiver/cluster'],
      ['SLACK_WEBHOOK_URL', 'https://hooks.slack.com/services/T0/B0/x'],
      ['ALERTMANAGER_URL', 'http://alertmanager:9093'],
      ['PAGERDUTY_ROUTING_KEY', 'R0123456789abcdef0123456789abcde'],
      ['ALERT_WEBHOOK_URL', 'http://receiver/alerts'],
    ] as const) {
      it(`does not warn with ${name} alone`, () => {
        expect(warnings({ ...STATIC, [name]: value })).to.deep.equal([]);
      });
    }
  });
});

describe('the settings in effect, as logged at start-up', () => {
  it('names every setting, by its variable', () => {
    const shown = effectiveSettings(config({ ...STATIC, ...RECEIVER }));
    expect(Object.keys(shown)).to.have.members(SETTINGS.map((s) => s.env));
    expect(shown).to.deep.include({
      DISCOVERY: 'static',
      PEERS: ['10.0.0.1:8080', '10.0.0.2:8080'],
      NODE_NAME: 'test-host',
      POD_IP: '127.0.0.1',
      CONTAINER_PORT: 8080,
      HEARTBEAT_INTERVAL: '500ms',
      ALERT_HOLD_DOWN: '30s',
      MAX_MEMORY_USAGE: null,
      DRY_RUN: false,
      SLACK_WEBHOOK_URL: null,
      PEER_STATUS_URL: 'http://receiver:8080/…',
    });
  });

  it('hides every secret, and what a URL may carry of one', () => {
    const secrets = {
      PEER_SECRET: 'p'.repeat(40),
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/sl4ck-t0ken',
      PAGERDUTY_ROUTING_KEY: 'R0123456789abcdef0123456789abcde',
      ALERTMANAGER_URL: 'https://admin:hunter2@alertmanager.example:9093/am',
      PEER_STATUS_URL: 'https://receiver.example/peer?token=qu3ry-t0ken#frag-t0ken',
    };
    const shown = effectiveSettings(config({ ...STATIC, ...secrets }));
    const text = JSON.stringify(shown);
    for (const leaked of [
      secrets.PEER_SECRET,
      'sl4ck-t0ken',
      secrets.PAGERDUTY_ROUTING_KEY,
      'hunter2',
      'admin',
      'qu3ry-t0ken',
      'frag-t0ken',
    ]) {
      expect(text).not.to.include(leaked);
    }
    expect(shown).to.deep.include({
      PEER_SECRET: '<set, not shown: a secret>',
      SLACK_WEBHOOK_URL: '<set, not shown: a secret>',
      PAGERDUTY_ROUTING_KEY: '<set, not shown: a secret>',
      ALERTMANAGER_URL: 'https://***@alertmanager.example:9093/…',
      PEER_STATUS_URL: 'https://receiver.example/…',
    });
    // Asked for, the path too; never the query, the fragment or the user info.
    const withPaths = effectiveSettings(
      config({ ...STATIC, ...secrets, LOG_RECEIVER_URLS: 'path' }),
    );
    expect(withPaths).to.deep.include({
      ALERTMANAGER_URL: 'https://***@alertmanager.example:9093/am',
      PEER_STATUS_URL: 'https://receiver.example/peer?***#***',
      LOG_RECEIVER_URLS: 'path',
    });
  });

  it('shows a long peer list by its size', () => {
    const peers = Array.from({ length: 21 }, (_, i) => `10.0.1.${i + 1}:8080`).join(',');
    expect(effectiveSettings(config({ ...STATIC, PEERS: peers })).PEERS).to.equal('21 peers');
  });

  it('shows a URL with nothing past its host as it is', () => {
    expect(shownUrl('http://alertmanager.monitoring:9093')).to.equal(
      'http://alertmanager.monitoring:9093',
    );
    expect(shownUrl('http://alertmanager.monitoring:9093', 'path')).to.equal(
      'http://alertmanager.monitoring:9093/',
    );
  });
});
