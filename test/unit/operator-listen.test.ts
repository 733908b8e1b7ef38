// OPERATOR_LISTEN: where the operator's views go. Unset, on the peer port; a port alone, a listener
// on LISTEN_HOST; an address and a port, a listener bound to that address only. What it refuses is
// reported with every other bad setting at once (config-bad-values.test.ts has the bad values).
import { expect } from 'chai';
import { effectiveSettings } from '../../src/config/effective.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { HOST, KUBERNETES, STATIC, type Env } from '../support/config-env.js';

function config(env: Env): Config {
  const result = loadConfig(env, HOST);
  if (!result.ok) expect.fail(result.errors.join('\n'));
  return result.config;
}

function errors(env: Env): string[] {
  const result = loadConfig(env, HOST);
  if (result.ok) expect.fail(`expected errors for ${JSON.stringify(env)}`);
  return result.errors;
}

describe('OPERATOR_LISTEN', () => {
  it('unset or empty: the views stay on the peer port', () => {
    for (const env of [STATIC, { ...STATIC, OPERATOR_LISTEN: '' }]) {
      expect(config(env)).to.deep.include({ operatorListen: null, operatorListener: null });
    }
  });

  const good: [Env, string, { host: string; port: number }][] = [
    // A port alone binds where the peer port does: LISTEN_HOST, by default every address.
    [{ ...STATIC, OPERATOR_LISTEN: '9090' }, '9090', { host: '0.0.0.0', port: 9090 }],
    [{ ...STATIC, OPERATOR_LISTEN: ' 09090 ' }, '9090', { host: '0.0.0.0', port: 9090 }],
    [
      { ...KUBERNETES, POD_IP: 'fd00::7', OPERATOR_LISTEN: '9090' },
      '9090',
      { host: '::', port: 9090 },
    ],
    [
      { ...STATIC, LISTEN_HOST: '10.0.0.5', OPERATOR_LISTEN: '9090' },
      '9090',
      { host: '10.0.0.5', port: 9090 },
    ],
    // An address binds there only, whatever LISTEN_HOST.
    [
      { ...STATIC, LISTEN_HOST: '10.0.0.5', OPERATOR_LISTEN: '127.0.0.1:9090' },
      '127.0.0.1:9090',
      { host: '127.0.0.1', port: 9090 },
    ],
    [{ ...STATIC, OPERATOR_LISTEN: '[::1]:9090' }, '[::1]:9090', { host: '::1', port: 9090 }],
    [
      { ...STATIC, OPERATOR_LISTEN: '[0:0:0:0:0:0:0:1]:9090' },
      '[::1]:9090',
      { host: '::1', port: 9090 },
    ],
    // localhost is 127.0.0.1, where kubectl port-forward arrives.
    [
      { ...STATIC, OPERATOR_LISTEN: 'localhost:9090' },
      '127.0.0.1:9090',
      { host: '127.0.0.1', port: 9090 },
    ],
    [
      { ...STATIC, OPERATOR_LISTEN: 'LocalHost:9090' },
      '127.0.0.1:9090',
      { host: '127.0.0.1', port: 9090 },
    ],
    [
      { ...STATIC, OPERATOR_LISTEN: '127.0.0.2:9090' },
      '127.0.0.2:9090',
      { host: '127.0.0.2', port: 9090 },
    ],
    [
      { ...STATIC, OPERATOR_LISTEN: '0.0.0.0:9090' },
      '0.0.0.0:9090',
      { host: '0.0.0.0', port: 9090 },
    ],
    [{ ...STATIC, OPERATOR_LISTEN: '[::]:9090' }, '[::]:9090', { host: '::', port: 9090 }],
    [
      { ...STATIC, OPERATOR_LISTEN: '10.0.0.5:8081' },
      '10.0.0.5:8081',
      { host: '10.0.0.5', port: 8081 },
    ],
  ];
  for (const [env, canonical, listener] of good) {
    it(`${JSON.stringify(env.OPERATOR_LISTEN)}${env.LISTEN_HOST ? ` with LISTEN_HOST=${env.LISTEN_HOST}` : ''}${env.POD_IP ? ` with POD_IP=${env.POD_IP}` : ''}: a listener on ${listener.host} port ${listener.port}`, () => {
      const c = config(env);
      expect(c.operatorListen).to.equal(canonical);
      expect(c.operatorListener).to.deep.equal(listener);
      // The peer port is where it was.
      expect(c.port).to.equal(8080);
      expect(effectiveSettings(c).OPERATOR_LISTEN).to.equal(canonical);
    });
  }

  it('refuses the peer port, however it is written, naming CONTAINER_PORT', () => {
    for (const env of [
      { ...STATIC, OPERATOR_LISTEN: '8080' },
      { ...STATIC, OPERATOR_LISTEN: 'localhost:8080' },
      { ...STATIC, CONTAINER_PORT: '9090', OPERATOR_LISTEN: '[::1]:9090' },
    ]) {
      const list = errors(env);
      expect(list, JSON.stringify(env)).to.have.length(1);
      expect(list[0]).to.match(/^OPERATOR_LISTEN=".*": port \d+ is CONTAINER_PORT/);
      expect(list[0]).to.include('expected another port');
    }
  });

  it('says what it accepts, with every other bad setting at once', () => {
    const list = errors({
      ...STATIC,
      OPERATOR_LISTEN: 'loopback',
      PROBE_TIMEOUT: 'soon',
      LISTEN_HOST: 'localhost',
    });
    expect(list).to.have.length(3);
    const mine = list.find((e) => e.startsWith('OPERATOR_LISTEN='));
    expect(mine).to.include('"loopback"');
    expect(mine).to.include('"9090"');
    expect(mine).to.include('"127.0.0.1:9090"');
    expect(mine).to.include('"[::1]:9090"');
    expect(list.some((e) => e.startsWith('PROBE_TIMEOUT='))).to.equal(true);
    expect(list.some((e) => e.startsWith('LISTEN_HOST='))).to.equal(true);
  });

  it('reports the same port with other bad settings; a bad CONTAINER_PORT is not compared', () => {
    const same = errors({
      ...STATIC,
      CONTAINER_PORT: '9090',
      OPERATOR_LISTEN: '9090',
      DRY_RUN: 'yes',
    });
    expect(same.map((e) => e.split(/[= ]/)[0])).to.have.members(['OPERATOR_LISTEN', 'DRY_RUN']);
    const bad = errors({ ...STATIC, CONTAINER_PORT: '99999', OPERATOR_LISTEN: '8080' });
    expect(bad, 'one error, CONTAINER_PORT’s').to.have.length(1);
    expect(bad[0]).to.match(/^CONTAINER_PORT=/);
  });
});
