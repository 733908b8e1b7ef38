// Reads every declared setting from the environment into its key, one bad value one error.
import { readBounded } from '../secrets/auth-file.js';
import { parseValue, quote, unreadableFile, type Value } from './parse-value.js';
import { SETTINGS, type Setting, type SettingName, type SettingValues } from './settings.js';

export interface ReadSettings {
  /**
   * Each setting's value under its key. One set to a bad value holds what it would hold unset
   * (its default, or null), so that the rules across settings can still look at it.
   */
  values: SettingValues;
  /** Set in the environment (not empty), or through its `_FILE`, valid or not. */
  given: ReadonlySet<SettingName>;
  /** Set, but invalid: already reported. */
  invalid: ReadonlySet<SettingName>;
  /** The settings read from a file (`<env>_FILE`), and the file's path: re-read as it rotates. */
  files: Readonly<Partial<Record<SettingName, string>>>;
  /** One a bad value, naming the variable and what it accepts. */
  errors: string[];
}

/** The variable that names a file holding a setting's value (a mounted Secret). */
export const fileVariable = (setting: Pick<Setting, 'env'>) => `${setting.env}_FILE`;

type Env = Readonly<Record<string, string | undefined>>;

/** Where a setting's text comes from: a variable, a file, or nowhere (unset); or why it cannot. */
type Found =
  | { from: 'env'; name: string; raw: string }
  | { from: 'file'; name: string; path: string; raw: string }
  | { from: 'nowhere' }
  | { error: string };

/** The first of a setting's names that is set; an empty variable counts as unset. */
function findSet(env: Env, setting: Setting): Found {
  const names = [setting.env, ...(setting.aliases ?? [])];
  const set = names.find((name) => env[name] !== undefined && env[name] !== '');
  const fileName = fileVariable(setting);
  const path = setting.file ? env[fileName] : undefined;
  if (path !== undefined && path !== '') {
    if (set !== undefined) {
      return { error: `${set} and ${fileName} are both set: set one of them` };
    }
    return readSettingFile(setting, fileName, path);
  }
  if (set !== undefined) return { from: 'env', name: set, raw: env[set] ?? '' };
  // Set but empty: for a variable from the downward API, a manifest mistake, not "use the default".
  const empty = setting.emptyIsError ? names.find((name) => env[name] === '') : undefined;
  if (empty !== undefined) {
    return { error: `${empty} is set but empty: expected ${emptyMeans(setting)}` };
  }
  return { from: 'nowhere' };
}

/** What an empty variable from the downward API should have held. */
function emptyMeans(setting: Setting): string {
  switch (setting.env) {
    case 'POD_IP':
      return "this pod's IP address (in Kubernetes, from the downward API's status.podIP); unset it for 127.0.0.1 with DISCOVERY=static";
    case 'NODE_NAME':
      return "the node's name (in Kubernetes, from the downward API's spec.nodeName); unset it for the host name with DISCOVERY=static";
    case 'POD_NAME':
      return "this pod's name (in Kubernetes, from the downward API's metadata.name); unset it to leave it out of alerts";
    default:
      return `a value, or ${setting.env} unset`;
  }
}

/** A setting's text from the file `fileName` names: one trailing newline dropped, never shown. */
function readSettingFile(setting: Setting, fileName: string, path: string): Found {
  const expected = `expected a readable file holding ${setting.env}'s value`;
  const problem = unreadableFile(path);
  if (problem) return { error: `${fileName}=${quote(path)}: ${problem}; ${expected}` };
  const read = readBounded(path, 'the file');
  if (!read.ok) return { error: `${fileName}=${quote(path)}: ${read.error}; ${expected}` };
  return { from: 'file', name: fileName, path, raw: read.text.replace(/\r?\n$/, '') };
}

/** What a setting holds when unset: its default, else null (a list: empty). */
function unsetValue(setting: Setting): Value {
  if (setting.default === undefined) return setting.type.kind === 'peers' ? [] : null;
  const parsed = parseValue(setting, setting.default);
  // The declaration's mistake, not the user's, so no error message blames their environment.
  if ('error' in parsed) throw new Error(`${setting.env}: invalid default: ${parsed.error}`);
  return parsed.value;
}

export function readSettings(env: Env): ReadSettings {
  const values: Record<string, Value> = {};
  const given = new Set<SettingName>();
  const invalid = new Set<SettingName>();
  const files: Partial<Record<SettingName, string>> = {};
  const errors: string[] = [];
  for (const declared of SETTINGS) {
    const setting: Setting = declared;
    const found = findSet(env, setting);
    values[setting.key] = unsetValue(setting);
    if ('error' in found) {
      errors.push(found.error);
      given.add(declared.env);
      invalid.add(declared.env);
      continue;
    }
    if (found.from === 'nowhere') continue;
    given.add(declared.env);
    const parsed = parseValue(setting, found.raw);
    if ('value' in parsed) {
      values[setting.key] = parsed.value;
      if (found.from === 'file') files[declared.env] = found.path;
      continue;
    }
    // A file's content is never shown: a file is where secrets are kept.
    const shown =
      found.from === 'file'
        ? `${quote(found.path)}: its content is not valid`
        : setting.secret
          ? '<not shown: a secret>'
          : setting.type.kind === 'url'
            ? quote(urlStart(found.raw))
            : quote(found.raw);
    errors.push(`${found.name}=${shown}: ${parsed.error}`);
    invalid.add(declared.env);
  }
  // The one place the declaration's types meet the parsed values: parseValue reads each kind as
  // SettingValues types it (a test loads every setting and checks the types).
  return { values: values as SettingValues, given, invalid, files, errors };
}

/**
 * What an error shows of a URL setting's bad value: up to the end of its host (a receiver's
 * token may be in the rest, and the value may not parse as a URL at all).
 */
function urlStart(raw: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?([^/?#\s]*)/.exec(raw);
  const start = m?.[0] ?? '';
  // Its user info, where it has one, is a credential.
  const hostOnly = start.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^@]*@/, '$1***@');
  return hostOnly.length < raw.length ? `${hostOnly}…` : hostOnly;
}
