// Settings: loaded once from an environment, every problem reported together before start-up.
import { expect } from 'chai';
import { formatDuration, parseDuration } from '../../src/config/duration.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config, type LoadResult } from '../../src/config/load.js';
import { HOST, KUBERNETES, STATIC, type Env } from '../support/config-env.js';

function config(env: Env): Config {
  const result = loadConfig(env, HOST);
  if (!result.ok) expect.fail(`expected a config, got errors:\n${result.errors.join('\n')}`);
  return result.config;
}

function errors(env: Env): string[] {
  const result: LoadResult = loadConfig(env, HOST);
  if (result.ok) expect.fail(`expected errors, got a config for ${JSON.stringify(env)}`);
  return result.errors;
}

/** The one error naming `name`. */
function errorFor(list: string[], name: string): string {
  const found = list.filter((e) => e.startsWith(`${name}=`) || e.startsWith(`${name} `));
  expect(found, `errors naming ${name} in ${JSON.stringify(list)}`).to.have.length(1);
  return found[0] ?? '';
}

describe('loadConfig', () => {
  it('fills every default for DISCOVERY=static with PEERS', () => {
    expect(config(STATIC)).to.deep.equal({
      nodeName: 'test-host',
      podIp: '127.0.0.1',
      port: 8080,
      listenHost: '0.0.0.0',
      operatorListen: null,
      operatorListener: null,
      address: '127.0.0.1:8080',
      id: 'test-host@127.0.0.1',
      discovery: 'static',
      peers: ['10.0.0.1:8080', '10.0.0.2:8080'],
      serviceName: null,
      namespace: null,
      kubeconfig: null,
      connectMaxRetries: 2,
      connectCooldownMs: 200,
      sendMaxRetries: 2,
      sendCooldownMs: 200,
      roundIntervalMs: 1_000,
      probeTimeoutMs: 1_000,
      unhealthyMs: 1_000,
      indirectProbes: 3,
      heartbeatIntervalMs: 500,
      coordinatorTimeoutMs: 1_500,
      electionTimeoutMs: 1_000,
      sanityCheckUrl: null,
      peerStatusUrl: null,
      clusterStatusUrl: null,
      clusterStatusIntervalMs: 60_000,
      startGraceMs: 60_000,
      recoveryHoldMs: 10_000,
      flapWindowMs: 60_000,
      flapChanges: 4,
      flapStableMs: 30_000,
      webhookTimeoutMs: 5_000,
      webhookRetryForMs: 600_000,
      webhookQueueSize: 10_000,
      webhookConcurrency: 32,
      logLevel: 'info',
      logReceiverUrls: 'origin',
      dryRun: false,
      maxMemoryMiB: null,
      metricsPerPeerLimit: 1_000,
      metricsPerPathLimit: 100,
      shutdownGraceMs: 5_000,
      slackWebhookUrl: null,
      alertmanagerUrl: null,
      pagerDutyRoutingKey: null,
      pagerDutyUrl: 'https://events.pagerduty.com/v2/enqueue',
      alertWebhookUrl: null,
      alertWebhookAuthFile: null,
      alertWebhookAuthHeader: 'Authorization',
      alertWebhookHeartbeatMs: 0,
      alertHoldDownMs: 30_000,
      alertGroupWaitMs: 2_000,
      clusterName: null,
      peerSecrets: null,
      peerSecretFile: null,
      peerAuthMaxSkewMs: 30_000,
      pairProbes: 20,
      pathWindowMs: 10_000,
      degradedLossRatio: 0.1,
      degradedLatencyMs: 400,
      degradedForMs: 10_000,
      mtuProbeSize: 1_400,
      podName: null,
      statusPageUrl: null,
      runbookUrl: null,
      files: {},
    } satisfies Config);
  });

  it('loads a Kubernetes node, forming its address and id from POD_IP', () => {
    const c = config({ ...KUBERNETES, CONTAINER_PORT: '9000' });
    expect(c).to.deep.include({
      discovery: 'kubernetes',
      nodeName: 'worker-1',
      address: '10.244.1.7:9000',
      id: 'worker-1@10.244.1.7',
      serviceName: 'knh',
      namespace: 'monitoring',
      peers: [],
    });
  });

  it('listens on :: and brackets its address when POD_IP is IPv6', () => {
    const c = config({ ...KUBERNETES, POD_IP: 'fd00::7' });
    expect(c.address).to.equal('[fd00::7]:8080');
    expect(c.listenHost).to.equal('::');
  });

  it("accepts KNH's MY_NODE_NAME as NODE_NAME, NODE_NAME winning when both are set", () => {
    const withoutNodeName = { ...KUBERNETES, NODE_NAME: undefined };
    expect(config({ ...withoutNodeName, MY_NODE_NAME: 'knh-node' }).nodeName).to.equal('knh-node');
    expect(config({ ...KUBERNETES, MY_NODE_NAME: 'knh-node' }).nodeName).to.equal('worker-1');
  });

  it('reads DRY_RUN, MAX_MEMORY_USAGE (-1 is off) and SHUTDOWN_GRACE_PERIOD', () => {
    expect(
      config({ ...STATIC, DRY_RUN: 'true', MAX_MEMORY_USAGE: '256', SHUTDOWN_GRACE_PERIOD: '2s' }),
    ).to.deep.include({ dryRun: true, maxMemoryMiB: 256, shutdownGraceMs: 2_000 });
    expect(config({ ...STATIC, MAX_MEMORY_USAGE: '-1' }).maxMemoryMiB).to.equal(null);
  });

  it('rejects a memory limit of 0 or below -1, and a DRY_RUN that is not true or false', () => {
    const list = errors({ ...STATIC, MAX_MEMORY_USAGE: '0', DRY_RUN: 'yes' });
    expect(errorFor(list, 'MAX_MEMORY_USAGE')).to.match(/-1 \(off\)/);
    expect(errorFor(list, 'DRY_RUN')).to.include('one of true, false');
    expect(errorFor(errors({ ...STATIC, MAX_MEMORY_USAGE: '-2' }), 'MAX_MEMORY_USAGE')).to.include(
      'a whole number from -1',
    );
  });

  it('checks the receivers: PagerDuty key length, the auth header name, settings that need ALERT_WEBHOOK_URL', () => {
    const list = errors({
      ...STATIC,
      PAGERDUTY_ROUTING_KEY: 'short',
      ALERT_WEBHOOK_AUTH_FILE: '/run/secret',
      ALERT_WEBHOOK_AUTH_HEADER: 'content-type',
      ALERT_WEBHOOK_HEARTBEAT: '60',
      CLUSTER_NAME: 'c'.repeat(254),
    });
    expect(errorFor(list, 'PAGERDUTY_ROUTING_KEY')).to.include('32-character');
    expect(errorFor(list, 'ALERT_WEBHOOK_AUTH_HEADER')).to.include('reserved');
    expect(list.some((e) => e.startsWith('ALERT_WEBHOOK_AUTH_FILE is set but ALERT_WEBHOOK_URL')))
      .to.be.true;
    expect(list.some((e) => e.startsWith('ALERT_WEBHOOK_HEARTBEAT is set but ALERT_WEBHOOK_URL')))
      .to.be.true;
    expect(errorFor(list, 'CLUSTER_NAME')).to.include('253');
    expect(
      errorFor(errors({ ...STATIC, SLACK_WEBHOOK_URL: 'ftp://x' }), 'SLACK_WEBHOOK_URL'),
    ).to.include('http');
    expect(
      config({ ...STATIC, PAGERDUTY_ROUTING_KEY: 'R0123456789abcdef0123456789abcde' })
        .pagerDutyRoutingKey,
    ).to.have.length(32);
  });

  it('treats an empty variable as unset', () => {
    expect(config({ ...STATIC, CONTAINER_PORT: '', LOG_LEVEL: '' })).to.deep.include({
      port: 8080,
      logLevel: 'info',
      logReceiverUrls: 'origin',
    });
  });

  it('reads durations as plain seconds or with ms, s, m', () => {
    const cases: [string, number][] = [
      ['2', 2_000],
      ['0.5', 500],
      ['500ms', 500],
      ['2s', 2_000],
      ['1m', 60_000],
      [' 3 ', 3_000],
    ];
    for (const [text, ms] of cases) {
      expect(config({ ...STATIC, PROBE_TIMEOUT: text }).probeTimeoutMs, text).to.equal(ms);
    }
  });

  it('reads UNHEALTHY_DURATION as a duration and INDIRECT_PROBES as a count', () => {
    expect(config({ ...STATIC, UNHEALTHY_DURATION: '2' }).unhealthyMs).to.equal(2_000);
    expect(config({ ...STATIC, UNHEALTHY_DURATION: '500ms' }).unhealthyMs).to.equal(500);
    expect(config({ ...STATIC, UNHEALTHY_DURATION: '0' }).unhealthyMs).to.equal(0);
    expect(config({ ...STATIC, UNHEALTHY_DURATION: '10m' }).unhealthyMs).to.equal(600_000);
    for (const n of [0, 1, 16]) {
      expect(config({ ...STATIC, INDIRECT_PROBES: String(n) }).indirectProbes).to.equal(n);
    }
  });

  it('rejects a bad UNHEALTHY_DURATION or INDIRECT_PROBES, naming the value', () => {
    for (const text of ['11m', '-1', 'soon']) {
      const e = errorFor(errors({ ...STATIC, UNHEALTHY_DURATION: text }), 'UNHEALTHY_DURATION');
      expect(e, text).to.include(JSON.stringify(text));
    }
    for (const text of ['17', '-1', '1.5', 'three']) {
      const e = errorFor(errors({ ...STATIC, INDIRECT_PROBES: text }), 'INDIRECT_PROBES');
      expect(e, text).to.include(JSON.stringify(text));
      expect(e, text).to.match(/whole number from 0 to 16/);
    }
  });

  for (const [name, key] of [
    ['METRICS_PER_PEER_LIMIT', 'metricsPerPeerLimit'],
    ['METRICS_PER_PATH_LIMIT', 'metricsPerPathLimit'],
  ] as const) {
    it(`reads ${name} as a count of peers, 0 (those series off) included`, () => {
      for (const n of [0, 1, 5_000, 100_000]) {
        expect(config({ ...STATIC, [name]: String(n) })[key]).to.equal(n);
      }
      for (const text of ['-1', '100001', '1.5', 'all', '1k']) {
        const e = errorFor(errors({ ...STATIC, [name]: text }), name);
        expect(e, text).to.include(JSON.stringify(text));
        expect(e, text).to.match(/whole number from 0 to 100000/);
      }
    });
  }

  it('reads LOG_LEVEL=panic as fatal', () => {
    expect(config({ ...STATIC, LOG_LEVEL: 'panic' }).logLevel).to.equal('fatal');
    expect(config({ ...STATIC, LOG_LEVEL: 'debug' }).logLevel).to.equal('debug');
  });

  it('reports every bad variable in one result, naming the variable, the value and what is accepted', () => {
    const list = errors({
      ...STATIC,
      CONTAINER_PORT: '99999',
      CONNECT_MAX_RETRIES: 'three',
      SEND_COOLDOWN_PERIOD: '5 minutes',
      LOG_LEVEL: 'loud',
      PEER_STATUS_URL: 'ftp://example.com/hook',
      POD_IP: '10.0.0',
    });
    expect(list).to.have.length(6);
    const expected: [string, string, RegExp][] = [
      ['CONTAINER_PORT', '99999', /1 to 65535/],
      ['CONNECT_MAX_RETRIES', 'three', /whole number from 0 to 20/],
      ['SEND_COOLDOWN_PERIOD', '5 minutes', /duration.*"500ms", "2s", "1m"/],
      ['LOG_LEVEL', 'loud', /one of panic, fatal, error, warn, info, debug, trace, silent/],
      // A URL's path may hold a receiver's token: up to its host only.
      ['PEER_STATUS_URL', 'ftp://example.com…', /http:\/\/ or https:\/\/ URL/],
      ['POD_IP', '10.0.0', /IPv4 or IPv6 address/],
    ];
    for (const [name, value, accepted] of expected) {
      const e = errorFor(list, name);
      expect(e, name).to.include(JSON.stringify(value));
      expect(e, name).to.match(accepted);
    }
  });

  it('shows a bad URL value up to its host only: its path or user info may hold a token', () => {
    for (const [value, shown] of [
      ['http://receiver/hooks/t0ken x', '"http://receiver…"'],
      ['ftp://x/s/t0ken', '"ftp://x…"'],
      ['receiver.example:8080/t0ken', '"receiver.example:8080…"'],
      ['https://user:t0ken@exa mple.com/', '"https://***@exa…"'],
      ['not a url', '"not…"'],
    ]) {
      const e = errorFor(errors({ ...STATIC, PEER_STATUS_URL: value }), 'PEER_STATUS_URL');
      expect(e, value).to.include(shown);
      expect(e, value).not.to.include('t0ken');
    }
  });

  it('rejects durations outside their bounds and malformed ones', () => {
    for (const text of ['-1', '1e3', 'fast', '2 hours', '1.', '0']) {
      const list = errors({ ...STATIC, HEARTBEAT_INTERVAL: text });
      expect(errorFor(list, 'HEARTBEAT_INTERVAL'), text).to.include(JSON.stringify(text));
    }
    expect(errorFor(errors({ ...STATIC, PROBE_TIMEOUT: '2m' }), 'PROBE_TIMEOUT')).to.match(
      /from 0\.01 to 60 seconds/,
    );
  });

  it('requires NODE_NAME, POD_IP, SERVICE_NAME and NAMESPACE with DISCOVERY=kubernetes', () => {
    const list = errors({});
    for (const name of ['NODE_NAME', 'POD_IP', 'SERVICE_NAME', 'NAMESPACE']) {
      expect(errorFor(list, name)).to.match(new RegExp(`^${name} is required`));
    }
    expect(errorFor(list, 'NODE_NAME')).to.include('MY_NODE_NAME');
    for (const missing of ['NODE_NAME', 'POD_IP', 'SERVICE_NAME', 'NAMESPACE']) {
      const env = { ...KUBERNETES, [missing]: undefined };
      expect(errors(env), missing).to.have.length(1);
    }
  });

  it('reports a bad required variable once, as bad rather than missing', () => {
    const list = errors({ ...KUBERNETES, POD_IP: 'pod-7' });
    expect(list).to.have.length(1);
    expect(errorFor(list, 'POD_IP')).to.include('"pod-7"');
  });

  it('requires PEERS with DISCOVERY=static', () => {
    for (const peers of [undefined, ' , ']) {
      const list = errors({ DISCOVERY: 'static', PEERS: peers });
      expect(errorFor(list, 'PEERS'), String(peers)).to.match(/required with DISCOVERY=static/);
    }
  });

  it('requires COORDINATOR_TIMEOUT to exceed HEARTBEAT_INTERVAL', () => {
    for (const [heartbeat, timeout] of [
      ['2', '2000ms'],
      ['2s', '1'],
    ]) {
      const list = errors({
        ...STATIC,
        HEARTBEAT_INTERVAL: heartbeat,
        COORDINATOR_TIMEOUT: timeout,
      });
      expect(list).to.have.length(1);
      expect(list[0]).to.match(/COORDINATOR_TIMEOUT .* must exceed HEARTBEAT_INTERVAL/);
    }
    const ok = config({ ...STATIC, HEARTBEAT_INTERVAL: '2', COORDINATOR_TIMEOUT: '2001ms' });
    expect(ok.coordinatorTimeoutMs).to.equal(2_001);
  });

  it('rejects PEERS entries that are not ip:port, naming each', () => {
    const e = errorFor(
      errors({ DISCOVERY: 'static', PEERS: '10.0.0.1:8080,knh-0.knh:8080,10.0.0.3' }),
      'PEERS',
    );
    expect(e).to.include('not ip:port: knh-0.knh:8080, 10.0.0.3');
    expect(e).to.include('10.0.0.1:8080,knh-0.knh:8080,10.0.0.3');
  });

  it('trims, normalises and deduplicates PEERS, keeping their order', () => {
    const c = config({
      DISCOVERY: 'static',
      PEERS: ' 10.0.0.2:8080 ,10.0.0.1:08080,, [fd00::1]:8080,10.0.0.2:8080',
    });
    expect(c.peers).to.deep.equal(['10.0.0.2:8080', '10.0.0.1:8080', '[fd00::1]:8080']);
  });

  it('spells an IPv6 peer one way, however it is written', () => {
    // The same node written three ways must be one peer, spelled as POD_IP=fd00::1 spells it,
    // or a node does not recognise itself in PEERS (self is filtered by string).
    const c = config({
      DISCOVERY: 'static',
      POD_IP: 'fd00::1',
      PEERS: '[fd00::1]:8080,[FD00::1]:8080,[fd00:0:0::1]:8080',
    });
    expect(c.peers).to.deep.equal([c.address]);
  });
});

describe('peer secret settings', () => {
  const SECRET = 'a'.repeat(31) + 'Z';
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'knh-secret-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('takes PEER_SECRET as the one secret, and PEER_AUTH_MAX_SKEW', () => {
    const c = config({ ...STATIC, PEER_SECRET: SECRET, PEER_AUTH_MAX_SKEW: '10s' });
    expect(c.peerSecrets).to.deep.equal([SECRET]);
    expect(c.peerSecretFile).to.equal(null);
    expect(c.peerAuthMaxSkewMs).to.equal(10_000);
  });

  it('reads every secret of PEER_SECRET_FILE, one a line, blank lines and CRLF ignored', () => {
    const file = join(dir, 'peer-secret');
    const second = 'b'.repeat(40);
    writeFileSync(file, `${SECRET}\r\n\n${second}\n`);
    const c = config({ ...STATIC, PEER_SECRET_FILE: file });
    expect(c.peerSecrets).to.deep.equal([SECRET, second]);
    expect(c.peerSecretFile).to.equal(file);
  });

  it('refuses a short secret without repeating it, both settings at once, and a bad file', () => {
    const short = errors({ ...STATIC, PEER_SECRET: 'hunter2hunter2' });
    expect(errorFor(short, 'PEER_SECRET')).to.include('at least 32');
    expect(short.join('\n')).not.to.include('hunter2');

    const both = errors({ ...STATIC, PEER_SECRET: SECRET, PEER_SECRET_FILE: '/x' });
    expect(both.join('\n')).to.include('PEER_SECRET and PEER_SECRET_FILE are both set');

    const missing = errors({ ...STATIC, PEER_SECRET_FILE: join(dir, 'none') });
    expect(errorFor(missing, 'PEER_SECRET_FILE')).to.include('ENOENT');

    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(errorFor(errors({ ...STATIC, PEER_SECRET_FILE: empty }), 'PEER_SECRET_FILE')).to.include(
      'is empty',
    );
    const spaced = join(dir, 'spaced');
    writeFileSync(spaced, `${SECRET} ${SECRET}`);
    const spacedError = errorFor(
      errors({ ...STATIC, PEER_SECRET_FILE: spaced }),
      'PEER_SECRET_FILE',
    );
    expect(spacedError).to.include('printable ASCII');
    expect(spacedError).not.to.include(SECRET);

    const many = join(dir, 'many');
    writeFileSync(many, Array.from({ length: 5 }, (_, i) => `${i}`.repeat(32)).join('\n'));
    expect(errorFor(errors({ ...STATIC, PEER_SECRET_FILE: many }), 'PEER_SECRET_FILE')).to.include(
      'at most 4',
    );
  });

  it('reports a bad secret together with the other bad settings', () => {
    const list = errors({
      ...STATIC,
      PEER_SECRET: 'short',
      PEER_AUTH_MAX_SKEW: '0',
      PROBE_TIMEOUT: 'x',
    });
    expect(list).to.have.length(3);
    expect(errorFor(list, 'PEER_AUTH_MAX_SKEW')).to.include('a duration from 1 to 600 seconds');
  });
});

describe('parseDuration and formatDuration', () => {
  it('parses plain seconds and unit suffixes to whole milliseconds', () => {
    const cases: [string, number | null][] = [
      ['2', 2_000],
      ['0.5', 500],
      ['.25', 250],
      ['500ms', 500],
      ['2s', 2_000],
      ['1.5m', 90_000],
      ['1h', 3_600_000],
      ['0.0004', 0],
      ['2 s', 2_000],
      ['', null],
      ['s', null],
      ['-2', null],
      ['2x', null],
      ['1e3', null],
      ['2s500ms', null],
    ];
    for (const [text, ms] of cases) expect(parseDuration(text), JSON.stringify(text)).to.equal(ms);
  });

  it('formats in the largest whole unit, and parses back to the same value', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [500, '500ms'],
      [1_500, '1500ms'],
      [2_000, '2s'],
      [90_000, '90s'],
      [600_000, '10m'],
    ];
    for (const [ms, text] of cases) {
      expect(formatDuration(ms)).to.equal(text);
      expect(parseDuration(text)).to.equal(ms);
    }
  });
});
