// Every receiver secret can come from a mounted file (`<NAME>_FILE`), as PEER_SECRET_FILE does:
// read at start-up (a bad one stops it, never quoted), both set is an error, and the file is
// followed as the Secret rotates, each receiver using the new value.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { effectiveSettings } from '../../src/config/effective.js';
import { loadConfig, type Config } from '../../src/config/load.js';
import { AUTH_REFRESH_MS } from '../../src/secrets/auth-file.js';
import { followSetting } from '../../src/config/setting-files.js';
import { SETTINGS } from '../../src/config/settings.js';
import { buildAdapters } from '../../src/receivers/receivers.js';
import { Notifier } from '../../src/delivery/notifier.js';
import type { WebhookQueue } from '../../src/delivery/webhook-queue.js';
import { loadSchemas } from '../../src/wire/schemas.js';
import { CapturingLogger } from '../support/capturing-logger.js';
import { FakeClock } from '../support/fake-clock.js';
import { HOST, STATIC, type Env } from '../support/config-env.js';
import { alertGroup, deadAlert, deadPayload, firing } from '../support/alerts.js';
import { upRecord } from '../support/verdicts.js';

const SLACK = 'https://hooks.slack.com/services/T0/B0/first-t0ken';
const SLACK_ROTATED = 'https://hooks.slack.com/services/T0/B0/second-t0ken';
const KEY = 'R0123456789abcdef0123456789abcde';
const KEY_ROTATED = 'S0123456789abcdef0123456789abcde';

/** A valid value of each setting a file may hold. */
const VALUES: Record<string, string> = {
  PEER_STATUS_URL: 'http://receiver:8080/peer?token=p3er-t0ken',
  CLUSTER_STATUS_URL: 'http://receiver:8080/cluster?token=clust3r-t0ken',
  SLACK_WEBHOOK_URL: SLACK,
  ALERTMANAGER_URL: 'https://am:s3cret@alertmanager.example:9093',
  PAGERDUTY_ROUTING_KEY: KEY,
  ALERT_WEBHOOK_URL: 'https://receiver.example/hook/h00k-t0ken',
};

describe('receiver settings read from a file (<NAME>_FILE)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'knh-setting-files-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const load = (env: Env) => loadConfig({ ...STATIC, ...env }, HOST);
  function config(env: Env): Config {
    const result = load(env);
    if (!result.ok) expect.fail(result.errors.join('\n'));
    return result.config;
  }
  function errors(env: Env): string[] {
    const result = load(env);
    if (result.ok) expect.fail('expected errors');
    return result.errors;
  }

  it('takes a file for every receiver secret, and for no other setting but PEER_SECRET', () => {
    const fileable = SETTINGS.filter((s) => 'file' in s && s.file).map((s) => s.env);
    expect(fileable).to.have.members(Object.keys(VALUES));
  });

  for (const [name, value] of Object.entries(VALUES)) {
    it(`reads ${name} from ${name}_FILE (one trailing newline dropped), never logging it`, () => {
      const path = file(name, `${value}\n`);
      const c = config({ [`${name}_FILE`]: path });
      const setting = SETTINGS.find((s) => s.env === name);
      expect((c as unknown as Record<string, unknown>)[setting?.key ?? '']).to.equal(value);
      expect(c.files).to.deep.equal({ [name]: path });
      expect(effectiveSettings(c)[name]).to.equal(`<read from ${path}>`);
    });

    it(`refuses ${name} and ${name}_FILE both set, naming both`, () => {
      const list = errors({ [name]: value, [`${name}_FILE`]: file(name, value) });
      expect(list).to.deep.equal([`${name} and ${name}_FILE are both set: set one of them`]);
    });

    it(`refuses a missing ${name}_FILE, naming it and the path`, () => {
      const path = join(dir, 'missing');
      expect(errors({ [`${name}_FILE`]: path })).to.deep.equal([
        `${name}_FILE=${JSON.stringify(path)}: not found (ENOENT); expected a readable file holding ${name}'s value`,
      ]);
    });
  }

  it('refuses a file whose content is not valid, without quoting it', () => {
    const path = file('slack', 'hooks.slack.com/services/T0/B0/n0-scheme-t0ken\n');
    const list = errors({ SLACK_WEBHOOK_URL_FILE: path });
    expect(list).to.have.length(1);
    expect(list[0]).to.match(
      /^SLACK_WEBHOOK_URL_FILE=".*": its content is not valid: expected an http/,
    );
    expect(list.join('\n')).not.to.include('n0-scheme-t0ken');
  });

  it('checks a routing key from a file as one from the environment, without quoting it', () => {
    const path = file('pd', 'sh0rt-key\n');
    const list = errors({ PAGERDUTY_ROUTING_KEY_FILE: path });
    expect(list).to.deep.equal([
      `PAGERDUTY_ROUTING_KEY_FILE=${JSON.stringify(path)}: its content has 9 characters (not shown): expected the 32-character integration key of a PagerDuty Events API v2 integration (printable ASCII, no spaces)`,
    ]);
  });

  it('counts a receiver read from a file as set: no warning that alerts go nowhere', () => {
    const result = load({ SLACK_WEBHOOK_URL_FILE: file('slack', SLACK) });
    expect(result.warnings).to.deep.equal([]);
  });

  describe('as the Secret rotates', () => {
    it('follows the file: the new value after AUTH_REFRESH_MS; a bad one keeps the last good', () => {
      const path = file('slack', SLACK);
      const c = config({ SLACK_WEBHOOK_URL_FILE: path });
      const clock = new FakeClock();
      const problems: string[] = [];
      const now = followSetting('SLACK_WEBHOOK_URL', {
        config: c,
        now: () => clock.now(),
        onError: (e) => problems.push(e),
      });
      writeFileSync(path, `${SLACK_ROTATED}\n`);
      expect(now()).to.equal(SLACK);
      clock.advance(AUTH_REFRESH_MS);
      expect(now()).to.equal(SLACK_ROTATED);
      writeFileSync(path, 'not a url-t0ken');
      clock.advance(AUTH_REFRESH_MS);
      expect(now()).to.equal(SLACK_ROTATED);
      expect(problems).to.deep.equal([
        `SLACK_WEBHOOK_URL_FILE=${path}: its content is not valid now`,
      ]);
      rmSync(path);
      clock.advance(AUTH_REFRESH_MS);
      expect(now()).to.equal(SLACK_ROTATED);
      expect(problems[1]).to.match(/not found \(ENOENT\)/);
    });

    it('gives a setting from the environment as it is, for ever', () => {
      const c = config({ SLACK_WEBHOOK_URL: SLACK });
      const clock = new FakeClock();
      const now = followSetting('SLACK_WEBHOOK_URL', {
        config: c,
        now: () => clock.now(),
        onError: () => {},
      });
      clock.advance(10 * AUTH_REFRESH_MS);
      expect(now()).to.equal(SLACK);
    });

    it('has Slack post to the rotated webhook and PagerDuty sign with the rotated key', () => {
      const slackFile = file('slack', SLACK);
      const keyFile = file('pd', KEY);
      const c = config({ SLACK_WEBHOOK_URL_FILE: slackFile, PAGERDUTY_ROUTING_KEY_FILE: keyFile });
      const clock = new FakeClock();
      const logger = new CapturingLogger();
      const adapters = buildAdapters(c, clock, logger);
      const group = alertGroup([firing(deadAlert(3, clock.now()))], clock.now());
      const sent = () =>
        adapters.flatMap((a) => a.render(group)).map((r) => ({ url: r.url, body: r.body }));
      const keyOf = (body: unknown) => (body as { routing_key: string }).routing_key;

      const before = sent();
      expect(before.map((r) => r.url)).to.include(SLACK);
      expect(
        before
          .map((r) => r.body)
          .filter((b) => keyOf(b))
          .map(keyOf),
      ).to.deep.equal([KEY]);

      writeFileSync(slackFile, SLACK_ROTATED);
      writeFileSync(keyFile, `${KEY_ROTATED}\n`);
      clock.advance(AUTH_REFRESH_MS);
      const after = sent();
      expect(after.map((r) => r.url))
        .to.include(SLACK_ROTATED)
        .and.not.include(SLACK);
      expect(
        after
          .map((r) => r.body)
          .filter((b) => keyOf(b))
          .map(keyOf),
      ).to.deep.equal([KEY_ROTATED]);

      // A key that is not one (rotated by mistake) is not used, and said once a read.
      writeFileSync(keyFile, 'sh0rt');
      clock.advance(AUTH_REFRESH_MS);
      expect(
        sent()
          .map((r) => r.body)
          .filter((b) => keyOf(b))
          .map(keyOf),
      ).to.deep.equal([KEY_ROTATED]);
      const warned = logger.at('warn').map((r) => r.msg);
      expect(warned.join('\n')).to.include('PAGERDUTY_ROUTING_KEY_FILE=').and.not.include('sh0rt');
    });

    it("has KNH's webhooks go to the rotated PEER_STATUS_URL", () => {
      const path = file('peer', 'http://receiver:8080/first');
      const c = config({ PEER_STATUS_URL_FILE: path });
      const clock = new FakeClock();
      const posted: string[] = [];
      const notifier = new Notifier({
        schemas: loadSchemas(),
        peerStatusUrl: followSetting('PEER_STATUS_URL', {
          config: c,
          now: () => clock.now(),
          onError: () => {},
        }),
        clusterStatusUrl: null,
        // A queue per URL, as outbound.ts makes them: each tells which URL it was made for.
        makeQueue: (url) => ({ enqueue: () => posted.push(url) }) as unknown as WebhookQueue,
        logger: new CapturingLogger(),
      });
      const payload = deadPayload(upRecord('worker-3', '10.0.0.3', clock.now()), clock.now());
      notifier.peerStatus(payload);
      writeFileSync(path, 'http://receiver:8080/second\n');
      clock.advance(AUTH_REFRESH_MS);
      notifier.peerStatus(payload);
      expect(posted).to.deep.equal(['http://receiver:8080/first', 'http://receiver:8080/second']);
    });
  });
});
