// The declaration in settings.ts is what Config is derived from: each setting fills one field, of
// the type its kind says (the loader's one cast relies on it).
import { expect } from 'chai';
import { loadConfig } from '../../src/config/load.js';
import { readSettings } from '../../src/config/read-settings.js';
import { SETTINGS, type Setting } from '../../src/config/settings.js';
import { HOST, KUBERNETES, STATIC, type Env } from '../support/config-env.js';

const settings: readonly Setting[] = SETTINGS;

/** A valid value of the setting's kind, other than its default where it can be. */
function goodValue(setting: Setting): string {
  const t = setting.type;
  switch (t.kind) {
    case 'string':
    case 'text':
      return 'some text';
    case 'dns-subdomain':
    case 'dns-label':
    case 'dns-1035-label':
      return 'knh-1';
    case 'path':
      return '/run/secrets/x';
    case 'ip':
      return '10.0.0.9';
    case 'port':
      return '9000';
    case 'listen':
      return '127.0.0.1:9090';
    case 'int':
      return String(t.max);
    case 'ratio':
      return String(t.max / 2);
    case 'duration':
      return `${t.maxMs}ms`;
    case 'enum':
      return t.values.find((v) => v !== setting.default) ?? '';
    case 'boolean':
      return setting.default === 'true' ? 'false' : 'true';
    case 'url':
      return 'http://receiver:8080/hook';
    case 'peers':
      return '10.0.0.1:8080';
  }
}

/** Whether `value` has the type SettingValues gives a set setting of this kind. */
function hasKindType(setting: Setting, value: unknown): boolean {
  const t = setting.type;
  switch (t.kind) {
    case 'port':
    case 'int':
    case 'ratio':
    case 'duration':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'peers':
      return Array.isArray(value) && value.every((v) => typeof v === 'string');
    case 'enum':
      return (
        typeof value === 'string' && t.values.includes(value) && !(value in (t.synonyms ?? {}))
      );
    default:
      return typeof value === 'string';
  }
}

describe('the settings declaration', () => {
  it('gives every setting its own key, names and aliases', () => {
    const keys = settings.map((s) => s.key);
    expect(new Set(keys).size, `keys: ${keys.join(', ')}`).to.equal(keys.length);
    const names = settings.flatMap((s) => [s.env, ...(s.aliases ?? [])]);
    expect(new Set(names).size, `names: ${names.join(', ')}`).to.equal(names.length);
  });

  it('names the field of every duration in milliseconds', () => {
    for (const s of settings.filter((s) => s.type.kind === 'duration')) {
      expect(s.key, s.env).to.match(/Ms$/);
    }
  });

  it('reads every setting, set, into its key as the type its kind says', () => {
    const env: Env = Object.fromEntries(settings.map((s) => [s.env, goodValue(s)]));
    const read = readSettings(env);
    expect(read.errors).to.deep.equal([]);
    for (const s of settings) {
      const value: unknown = read.values[s.key as keyof typeof read.values];
      expect(
        hasKindType(s, value),
        `${s.env}=${env[s.env]} read as ${JSON.stringify(value)}`,
      ).to.equal(true);
    }
  });

  it('reads every setting, unset, as its default, null without one, or an empty list', () => {
    const read = readSettings({});
    for (const s of settings) {
      const value: unknown = read.values[s.key as keyof typeof read.values];
      if (s.default !== undefined) {
        const off = s.type.kind === 'int' && String(s.type.off) === s.default;
        expect(off ? value === null : hasKindType(s, value), `${s.env} unset`).to.equal(true);
      } else if (s.type.kind === 'peers') expect(value, s.env).to.deep.equal([]);
      else expect(value, s.env).to.equal(null);
    }
  });

  for (const [label, env] of [
    ['static', STATIC],
    ['kubernetes', KUBERNETES],
  ] as const) {
    it(`derives a Config with a value for every setting from a minimal ${label} environment`, () => {
      const result = loadConfig(env, HOST);
      if (!result.ok) expect.fail(result.errors.join('\n'));
      for (const s of settings) {
        expect(result.config, s.env).to.have.property(s.key).that.is.not.undefined;
      }
    });
  }

  it('reads the synonyms and the off value the declaration gives', () => {
    const read = readSettings({ LOG_LEVEL: 'panic', MAX_MEMORY_USAGE: '-1', DRY_RUN: 'true' });
    expect(read.values).to.deep.include({ logLevel: 'fatal', maxMemoryMiB: null, dryRun: true });
  });
});
