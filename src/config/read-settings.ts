// Reads every declared setting from the environment into its key, one bad value one error.
import { parseValue, quote, type Value } from './parse-value.js';
import { SETTINGS, type Setting, type SettingName, type SettingValues } from './settings.js';

export interface ReadSettings {
  /**
   * Each setting's value under its key. One set to a bad value holds what it would hold unset
   * (its default, or null), so that the rules across settings can still look at it.
   */
  values: SettingValues;
  /** Set in the environment (not empty), valid or not. */
  given: ReadonlySet<SettingName>;
  /** Set, but invalid: already reported. */
  invalid: ReadonlySet<SettingName>;
  /** One a bad value, naming the variable and what it accepts. */
  errors: string[];
}

/** The first of a setting's names that is set; an empty variable counts as unset. */
function findSet(
  env: Readonly<Record<string, string | undefined>>,
  setting: Setting,
): { name: string; raw: string } | undefined {
  for (const name of [setting.env, ...(setting.aliases ?? [])]) {
    const raw = env[name];
    if (raw !== undefined && raw !== '') return { name, raw };
  }
  return undefined;
}

/** What a setting holds when unset: its default, else null (a list: empty). */
function unsetValue(setting: Setting): Value {
  if (setting.default === undefined) return setting.type.kind === 'peers' ? [] : null;
  const parsed = parseValue(setting, setting.default);
  // The declaration's mistake, not the user's, so no error message blames their environment.
  if ('error' in parsed) throw new Error(`${setting.env}: invalid default: ${parsed.error}`);
  return parsed.value;
}

export function readSettings(env: Readonly<Record<string, string | undefined>>): ReadSettings {
  const values: Record<string, Value> = {};
  const given = new Set<SettingName>();
  const invalid = new Set<SettingName>();
  const errors: string[] = [];
  for (const declared of SETTINGS) {
    const setting: Setting = declared;
    const set = findSet(env, setting);
    if (set === undefined) {
      values[setting.key] = unsetValue(setting);
      continue;
    }
    given.add(declared.env);
    const parsed = parseValue(setting, set.raw);
    if ('value' in parsed) {
      values[setting.key] = parsed.value;
      continue;
    }
    const shown = setting.secret ? '<not shown: a secret>' : quote(set.raw);
    errors.push(`${set.name}=${shown}: ${parsed.error}`);
    invalid.add(declared.env);
    values[setting.key] = unsetValue(setting);
  }
  // The one place the declaration's types meet the parsed values: parseValue reads each kind as
  // SettingValues types it (a test loads every setting and checks the types).
  return { values: values as SettingValues, given, invalid, errors };
}
