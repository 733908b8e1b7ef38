// Every setting, given bad values (negative, huge, wrong unit, malformed), stops start-up with an
// error that names the variable and says what it accepts; secrets are never repeated.
import { expect } from 'chai';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { SETTINGS, type Setting, type SettingName } from '../../src/config/settings.js';
import { HOST, KUBERNETES, STATIC, type Env } from '../support/config-env.js';

const SECRET = 'a'.repeat(31) + 'Z';

// Files the path settings point at; created before the tests run (not when mocha loads this).
const dir = join(tmpdir(), `knh-bad-values-${process.pid}`);
const file = (name: string) => join(dir, name);
const FILES: Record<string, string> = {
  empty: '',
  blank: '\n',
  spaces: '   \n',
  'two-lines': 'Bearer abc\nX-Injected: 1\n',
  'control-char': 'Bearer tok3n-sekrit\u0007def',
  oversized: 'x'.repeat(8 * 1024 + 1),
  'short-secret': 'hunter2hunter2\n',
  'spaced-secret': `${SECRET} ${SECRET}\n`,
  'five-secrets': Array.from({ length: 5 }, (_, i) => `${i}`.repeat(32)).join('\n'),
  'good-token': 'Bearer abc123\n',
  'good-secret': `${'s'.repeat(40)}\n`,
};

/** One bad value; by default set on the setting's own variable over its group's base env. */
interface Case {
  value: string;
  /** Shown in the test title instead of the value (temporary paths). */
  label?: string;
  /** The variable to set instead of the setting's own name (an alias). */
  as?: string;
  /** Replaces the group's base environment. */
  base?: Env;
  /** What the error must say about what is accepted, when it differs from the group's. */
  says?: RegExp;
  /** Text (a file's content) that the error must not repeat. */
  hidden?: string;
}

interface Group {
  base?: Env;
  /** What the error must say about what is accepted; default: `… expected …`. */
  says?: RegExp;
  cases: (string | Case)[];
}

const setting = (name: SettingName): Setting =>
  (SETTINGS as readonly Setting[]).find((s) => s.env === name) as Setting;

/** Just outside the declared bounds of an int or duration setting. */
function beyondBounds(name: SettingName): string[] {
  const t = setting(name).type;
  if (t.kind === 'int') return [String(t.min - 1), String(t.max + 1)];
  if (t.kind === 'ratio') return [String(t.min), String(t.max + 0.01)];
  if (t.kind === 'duration') {
    return [
      `${t.maxMs + 1}ms`,
      `${t.maxMs / 1000 + 1}`,
      ...(t.minMs > 0 ? [`${t.minMs - 1}ms`] : []),
    ];
  }
  throw new Error(`${name} has no bounds`);
}

const EMPTYISH = [' ', '\t', ' \n '];
const INT_BAD = [
  '1.5',
  '1e3',
  '99999999999',
  '1e309',
  'three',
  '10x',
  '0x10',
  '5 parsecs',
  ...EMPTYISH,
];
const int = (name: SettingName, extra: string[] = []): Group => ({
  cases: [...beyondBounds(name), '-5', ...INT_BAD, ...extra],
});
const DURATION_BAD = [
  '-1',
  '-0.5',
  '1e309',
  '1e999',
  '99999999999',
  '9'.repeat(400),
  '5 parsecs',
  '2 hours',
  '10x',
  '1d',
  '1M',
  '1m30s',
  '1,5',
  'NaN',
  'Infinity',
  'soon',
  ...EMPTYISH,
];
const duration = (name: SettingName, extra: (string | Case)[] = []): Group => ({
  cases: [...beyondBounds(name), ...DURATION_BAD, ...extra],
});
const URL_BAD = [
  'not a url',
  'http//x',
  'ftp://x',
  'http://',
  'https://',
  'http:x',
  'http:/x',
  'http:///hook',
  'http:// receiver/hook',
  'http://exa mple.com/hook',
  'http://receiver/a hook',
  'http://receiver/ho\nok',
  'http://receiver\\hook',
  'http://999.1.1.1/hook',
  'http://1.2.3/hook',
  'http://receiver:0/hook',
  'http://receiver:65536/hook',
  'http://-receiver/hook',
  'http://a..b/hook',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'receiver.example:8080/hook',
  `http://receiver/${'x'.repeat(2048)}`,
  ...EMPTYISH,
];
const url = (extra: string[] = []): Group => ({ cases: [...extra, ...URL_BAD] });
const IP_BAD = [
  '999.1.1.1',
  '10.0.0',
  '10.0.0.1.5',
  '010.0.0.1',
  '10.0.0.1:8080',
  '10.0.0.1/24',
  'localhost',
  'fe80::1%eth0',
  '::g',
  '[fd00::1]',
  '224.0.0.1',
  '255.255.255.255',
  'ff02::1',
  ...EMPTYISH,
];
const PORT_BAD = [
  '0',
  '65536',
  '99999999999',
  '1e309',
  'http',
  '-1',
  '-8080',
  '8080.5',
  '1e3',
  '0x1F90',
  '8080/tcp',
  ...EMPTYISH,
];
const DNS_BAD = [
  'Worker-1',
  'worker_1',
  'worker 1',
  '-worker',
  'worker-',
  'wörker',
  'worker@1',
  'worker/1',
  'worker:1',
  'worker\n1',
  ...EMPTYISH,
];
const PATH_BAD = ['/run/sec\nret', '/run/se\u0000cret', '/run/\u001b[31msecret', ...EMPTYISH];

const TABLE: Record<SettingName, Group> = {
  NODE_NAME: {
    base: KUBERNETES,
    cases: [
      ...DNS_BAD,
      'worker..1',
      '.worker',
      'worker.',
      'a'.repeat(254),
      { value: 'Worker_1', as: 'MY_NODE_NAME', base: { ...KUBERNETES, NODE_NAME: undefined } },
      { value: 'worker_1', base: STATIC },
      { value: '', label: '<set but empty>', base: STATIC, says: /set but empty/ },
    ],
  },
  POD_IP: {
    base: KUBERNETES,
    cases: [
      ...IP_BAD,
      '0.0.0.0',
      '::',
      { value: '999.1.1.1', base: STATIC },
      { value: '', label: '<set but empty>', base: STATIC, says: /set but empty.*status\.podIP/ },
      { value: '', label: '<set but empty, kubernetes>', says: /set but empty/ },
    ],
  },
  POD_NAME: {
    cases: [
      ...DNS_BAD,
      'a'.repeat(254),
      { value: '', label: '<set but empty>', says: /set but empty.*metadata\.name/ },
    ],
  },
  CONTAINER_PORT: { cases: PORT_BAD },
  LISTEN_HOST: { cases: IP_BAD },
  OPERATOR_LISTEN: {
    cases: [
      ...PORT_BAD,
      'loopback',
      'localhost',
      '127.0.0.1',
      '127.0.0.1:',
      ':9090',
      '127.0.0.1:0',
      '127.0.0.1:65536',
      '::1:9090',
      '[::1]',
      '[::1%lo]:9090',
      '[127.0.0.1]:9090',
      'knh.example:9090',
      'localhost:0',
      'http://127.0.0.1:9090',
      '127.0.0.1:9090/metrics',
      '224.0.0.1:9090',
      '255.255.255.255:9090',
      '[ff02::1]:9090',
      '9090,9091',
      { value: '8080', says: /CONTAINER_PORT/ },
      { value: '127.0.0.1:8080', says: /CONTAINER_PORT/ },
      {
        value: 'localhost:9000',
        base: { ...STATIC, CONTAINER_PORT: '9000' },
        says: /CONTAINER_PORT/,
      },
    ],
  },
  DISCOVERY: {
    cases: ['dns', 'Kubernetes', 'STATIC', 'static,kubernetes', 'true', '1', ...EMPTYISH],
  },
  PEERS: {
    base: { DISCOVERY: 'static' },
    says: /ip:port/,
    cases: [
      'nonsense',
      '10.0.0.1',
      '10.0.0.1:',
      '999.1.1.1:8080',
      '10.0.0.1:0',
      '10.0.0.1:65536',
      '10.0.0.1:99999999999',
      '10.0.0.1:-1',
      '10.0.0.1:http',
      'knh-0.knh:8080',
      'fd00::1:8080',
      '[fd00::1%eth0]:8080',
      '10.0.0.1:8080;10.0.0.2:8080',
      '10.0.0.1:8080 10.0.0.2:8080',
      '10.0.0.1:8080,10.0.0.2',
      'http://10.0.0.1:8080',
      '0.0.0.0:8080',
      '[::]:8080',
      '224.0.0.1:8080',
      ' , ',
      ',',
      ...EMPTYISH,
    ],
  },
  SERVICE_NAME: {
    base: KUBERNETES,
    cases: [...DNS_BAD, '1knh', 'knh.monitoring', 'knh,app=x', 'a'.repeat(64)],
  },
  NAMESPACE: {
    base: KUBERNETES,
    cases: [...DNS_BAD, 'kube.system', 'a'.repeat(64)],
  },
  KUBECONFIG: {
    base: KUBERNETES,
    cases: [
      ...PATH_BAD,
      { value: file('missing'), label: '<a missing file>' },
      { value: dir, label: '<a directory>' },
      'x'.repeat(4097),
    ],
  },
  CONNECT_MAX_RETRIES: int('CONNECT_MAX_RETRIES'),
  CONNECT_COOLDOWN_PERIOD: duration('CONNECT_COOLDOWN_PERIOD'),
  SEND_MAX_RETRIES: int('SEND_MAX_RETRIES'),
  SEND_COOLDOWN_PERIOD: duration('SEND_COOLDOWN_PERIOD'),
  ELECTION_COOLDOWN_PERIOD: duration('ELECTION_COOLDOWN_PERIOD', ['0']),
  PROBE_TIMEOUT: duration('PROBE_TIMEOUT', ['0']),
  UNHEALTHY_DURATION: duration('UNHEALTHY_DURATION'),
  INDIRECT_PROBES: int('INDIRECT_PROBES'),
  HEARTBEAT_INTERVAL: duration('HEARTBEAT_INTERVAL', ['0', '0.0004']),
  COORDINATOR_TIMEOUT: duration('COORDINATOR_TIMEOUT', [
    '0',
    { value: '0.5', says: /must exceed HEARTBEAT_INTERVAL/ },
  ]),
  ELECTION_TIMEOUT: duration('ELECTION_TIMEOUT', ['0']),
  SANITY_CHECK_URL: url(),
  PEER_STATUS_URL: url(),
  CLUSTER_STATUS_URL: url(),
  CLUSTER_STATUS_INTERVAL: duration('CLUSTER_STATUS_INTERVAL'),
  START_GRACE: duration('START_GRACE'),
  RECOVERY_HOLD: duration('RECOVERY_HOLD'),
  FLAP_WINDOW: duration('FLAP_WINDOW', ['0']),
  FLAP_CHANGES: int('FLAP_CHANGES', ['4 changes', '2.5']),
  FLAP_STABLE: duration('FLAP_STABLE', ['0']),
  WEBHOOK_TIMEOUT: duration('WEBHOOK_TIMEOUT', ['0']),
  WEBHOOK_RETRY_FOR: duration('WEBHOOK_RETRY_FOR'),
  WEBHOOK_QUEUE_SIZE: int('WEBHOOK_QUEUE_SIZE'),
  WEBHOOK_CONCURRENCY: int('WEBHOOK_CONCURRENCY'),
  SLACK_WEBHOOK_URL: url([
    'ftp://hooks.slack.com/services/T0/B0/secret-token',
    'https://hooks.slack.com/services/T0/B0/secret token',
  ]),
  ALERTMANAGER_URL: url(),
  PAGERDUTY_ROUTING_KEY: {
    cases: [
      'short-key-value',
      'R0123456789abcdef0123456789abcd',
      'R0123456789abcdef0123456789abcdef',
      'R0123456789abcdef 0123456789abcd',
      'R0123456789abcdef\u00010123456789abcd',
      'R0123456789abcdef\u00e90123456789abcd',
      'R'.repeat(10_000),
      ...EMPTYISH,
    ],
  },
  PAGERDUTY_URL: url(),
  ALERT_WEBHOOK_URL: url(),
  ALERT_WEBHOOK_AUTH_FILE: {
    base: { ...STATIC, ALERT_WEBHOOK_URL: 'http://receiver/hook' },
    cases: [
      { value: file('missing'), label: '<a missing file>' },
      { value: dir, label: '<a directory>' },
      { value: file('empty'), label: '<an empty file>' },
      { value: file('blank'), label: '<a file holding a newline>' },
      { value: file('spaces'), label: '<a file holding spaces>' },
      { value: file('two-lines'), label: '<a file of two lines>', hidden: 'X-Injected' },
      {
        value: file('control-char'),
        label: '<a file with a control character>',
        hidden: 'tok3n-sekrit',
      },
      { value: file('oversized'), label: '<a file over 8 KiB>' },
      {
        value: file('good-token'),
        label: '<a good file, but no ALERT_WEBHOOK_URL>',
        base: STATIC,
        says: /set both, or neither/,
      },
      ...PATH_BAD,
    ],
  },
  ALERT_WEBHOOK_AUTH_HEADER: {
    cases: [
      'content-type',
      'Host',
      'Content-Length',
      'Transfer-Encoding',
      'X Api Key',
      'X-Api-Key:',
      'X-Api-Key: 1',
      'Authorizatión',
      'X-Api-Key\u0000',
      'a'.repeat(257),
      ...EMPTYISH,
    ],
  },
  ALERT_WEBHOOK_HEARTBEAT: duration('ALERT_WEBHOOK_HEARTBEAT', [
    { value: '60', says: /goes there/ },
  ]),
  ALERT_HOLD_DOWN: duration('ALERT_HOLD_DOWN'),
  ALERT_GROUP_WAIT: duration('ALERT_GROUP_WAIT'),
  CLUSTER_NAME: {
    cases: [
      'c'.repeat(254),
      'c'.repeat(100_000),
      'prod\ncluster',
      'prod\rcluster',
      'prod\u0000',
      'prod\u0007',
      'prod\u001b[31mcluster',
      'prod\u007fcluster',
      'prod\u0085cluster',
      'prod\u2028cluster',
      'prod\u202ecluster',
      ...EMPTYISH,
    ],
  },
  PEER_SECRET: {
    says: /at least 32|at most 1024|printable ASCII|expected/,
    cases: [
      'hunter2hunter2',
      'a'.repeat(31),
      'b'.repeat(1025),
      `${'c'.repeat(20)} ${'c'.repeat(20)}`,
      `${'d'.repeat(20)}\t${'d'.repeat(20)}`,
      `${'e'.repeat(20)}\u00e9${'e'.repeat(20)}`,
      `${'f'.repeat(20)}\u0000${'f'.repeat(20)}`,
      {
        value: `${'g'.repeat(20)}-both-set-${'g'.repeat(20)}`,
        base: { ...STATIC, PEER_SECRET_FILE: file('good-secret') },
        says: /both set/,
      },
      ...EMPTYISH,
    ],
  },
  PEER_SECRET_FILE: {
    cases: [
      { value: file('missing'), label: '<a missing file>' },
      { value: dir, label: '<a directory>' },
      { value: file('empty'), label: '<an empty file>' },
      { value: file('blank'), label: '<a file holding a newline>' },
      { value: file('short-secret'), label: '<a file with a short secret>', hidden: 'hunter2' },
      { value: file('spaced-secret'), label: '<a file with spaces in the secret>', hidden: SECRET },
      { value: file('five-secrets'), label: '<a file of five secrets>', hidden: '0'.repeat(32) },
      { value: file('oversized'), label: '<a file over 8 KiB>' },
      ...PATH_BAD,
    ],
  },
  PEER_AUTH_MAX_SKEW: duration('PEER_AUTH_MAX_SKEW', ['0']),
  DRY_RUN: { cases: ['yes', 'no', '1', '0', 'on', 'truee', 'true,false', ...EMPTYISH] },
  MAX_MEMORY_USAGE: int('MAX_MEMORY_USAGE', ['0', '-0', '256Mi', '256 MiB', '1Gi']),
  METRICS_PER_PEER_LIMIT: int('METRICS_PER_PEER_LIMIT', [
    'all',
    'off',
    'none',
    '1k',
    '5,000',
    '5_000',
  ]),
  METRICS_PER_PATH_LIMIT: int('METRICS_PER_PATH_LIMIT', ['all', 'off', '1k', '1,000']),
  SHUTDOWN_GRACE_PERIOD: duration('SHUTDOWN_GRACE_PERIOD'),
  PAIR_PROBES: int('PAIR_PROBES', ['all', '20 peers']),
  PATH_WINDOW: duration('PATH_WINDOW', ['0']),
  DEGRADED_LOSS_RATIO: {
    cases: [
      ...beyondBounds('DEGRADED_LOSS_RATIO'),
      '-0.1',
      '10%',
      '1e-1',
      '0,1',
      'NaN',
      'Infinity',
      '.',
      'tenth',
      ...EMPTYISH,
    ],
  },
  DEGRADED_LATENCY: duration('DEGRADED_LATENCY', ['0']),
  DEGRADED_FOR: duration('DEGRADED_FOR'),
  MTU_PROBE_SIZE: int('MTU_PROBE_SIZE', ['1400 bytes', '1.4k', '-1']),
  STATUS_PAGE_URL: url([`http://knh.example/${'|'.repeat(700)}`]),
  RUNBOOK_URL: url([`http://wiki.example/knh/{kind}/${'^'.repeat(700)}`]),
  LOG_RECEIVER_URLS: { cases: ['full', 'host', 'Origin ', 'origin,path', ...EMPTYISH] },
  LOG_LEVEL: { cases: ['loud', 'verbose', 'warning', 'err', '3', 'info,debug', ...EMPTYISH] },
};

/** A value as a test title shows it: quoted, escaped, long ones cut short. */
function show(c: Case): string {
  if (c.label) return c.label;
  // JSON escapes C0 controls only; the rest (DEL, NEL, bidi overrides, separators) too.
  const quote = (text: string) =>
    JSON.stringify(text).replace(
      /[\p{C}\p{Zl}\p{Zp}]/gu,
      (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
  if (c.value.length <= 40) return quote(c.value);
  return `${quote(c.value.slice(0, 16))}… (${c.value.length} characters)`;
}

const asCase = (c: string | Case): Case => (typeof c === 'string' ? { value: c } : c);
const names = (SETTINGS as readonly Setting[]).map((s) => s.env as SettingName);
const namesItself = (name: string) => (e: string) =>
  e.startsWith(`${name}=`) || e.startsWith(`${name} `);

function errorsOf(env: Env): string[] {
  const result = loadConfig(env, HOST);
  if (result.ok) expect.fail(`expected errors, got a config for ${JSON.stringify(env)}`);
  return result.errors;
}

describe('settings given bad values', () => {
  before(() => {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(FILES)) writeFileSync(file(name), text);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has bad values for every setting, and only for settings', () => {
    expect(Object.keys(TABLE)).to.have.members(names);
    for (const name of names) {
      expect(TABLE[name].cases.length, `cases for ${name}`).to.be.at.least(3);
    }
  });

  it("starts from base environments that load (PEERS's once PEERS is added)", () => {
    for (const name of names) {
      const base = TABLE[name].base ?? STATIC;
      const env = name === 'PEERS' ? { ...base, PEERS: STATIC.PEERS } : base;
      const result = loadConfig(env, HOST);
      expect(result.ok, `${name}: ${JSON.stringify(result)}`).to.equal(true);
    }
  });

  for (const name of names) {
    const group = TABLE[name];
    const secret = setting(name).secret === true;
    describe(name, () => {
      for (const c of group.cases.map(asCase)) {
        const variable = c.as ?? name;
        it(`${variable}=${show(c)}`, () => {
          const env = { ...(c.base ?? group.base ?? STATIC), [variable]: c.value };
          const list = errorsOf(env);
          const mine = list.filter(namesItself(variable));
          expect(mine, `errors naming ${variable} in ${JSON.stringify(list)}`).to.have.length(1);
          // One bad value, one error: nothing knock-on (a setting that depends on it, a
          // requirement of the value it replaced).
          expect(list, 'no other error').to.have.length(1);
          if (variable !== name) expect(list.filter(namesItself(name)), 'as missing').to.be.empty;
          const error = mine[0] ?? '';
          expect(error).to.match(c.says ?? group.says ?? /\bexpected\b/);
          if (secret) {
            expect(error).not.to.include(JSON.stringify(c.value));
            if (c.value.trim().length >= 12) expect(error).not.to.include(c.value.trim());
          }
          if (c.hidden) expect(list.join('\n')).not.to.include(c.hidden);
        });
      }
    });
  }

  it('reports every setting set to a bad value at once, not just the first', () => {
    const env: Env = {};
    for (const name of names) {
      const first = asCase(TABLE[name].cases[0] ?? '');
      env[first.as ?? name] = first.value;
    }
    const list = errorsOf(env);
    for (const name of names) {
      expect(
        list.some(namesItself(name)),
        `an error naming ${name} in\n${list.join('\n')}`,
      ).to.equal(true);
    }
    const text = list.join('\n');
    for (const name of names.filter((n) => setting(n).secret)) {
      expect(text).not.to.include(env[name]);
    }
  });
});
