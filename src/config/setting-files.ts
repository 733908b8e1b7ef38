// A setting read from its `_FILE` (a mounted Secret) is read again as the Secret rotates: the value
// to use now, re-read at most every AUTH_REFRESH_MS; a re-read that fails keeps the last good one.
import { AUTH_REFRESH_MS, followFile, readBounded } from '../secrets/auth-file.js';
import type { Config } from './load.js';
import { parseValue } from './parse-value.js';
import { fileVariable } from './read-settings.js';
import { SETTINGS, type Setting, type SettingName } from './settings.js';

/** The settings a file may hold: each is text (a URL, a key). */
export type FileSetting = Extract<(typeof SETTINGS)[number], { file: true }>['env'];

export interface FollowOptions {
  config: Config;
  /** Epoch ms. */
  now: () => number;
  /** A re-read failed, or found a value the setting does not take: the last good one stays. */
  onError: (error: string) => void;
  /** A further check of a value read again (the one load.ts makes at start), or null. */
  check?: (value: string) => string | null;
  refreshMs?: number;
}

/** The setting's value now: the same for ever unless it came from a file, which is followed. */
export function followSetting(name: FileSetting, options: FollowOptions): () => string | null {
  const { config, now, onError, check, refreshMs = AUTH_REFRESH_MS } = options;
  const setting = (SETTINGS as readonly Setting[]).find((s) => s.env === name);
  const initial = setting ? (config as unknown as Record<string, unknown>)[setting.key] : null;
  const path = (config.files as Partial<Record<SettingName, string>>)[name];
  if (typeof initial !== 'string' || path === undefined || !setting) {
    const value = typeof initial === 'string' ? initial : null;
    return () => value;
  }
  const where = `${fileVariable(setting)}=${path}`;
  return followFile<string | null>({
    initial,
    read: () => {
      const read = readBounded(path, 'the file');
      if (!read.ok) return { ok: false, error: `${where}: ${read.error}` };
      const parsed = parseValue(setting, read.text.replace(/\r?\n$/, ''));
      if ('error' in parsed || typeof parsed.value !== 'string') {
        return { ok: false, error: `${where}: its content is not valid now` };
      }
      const problem = check?.(parsed.value);
      return problem
        ? { ok: false, error: `${where}: ${problem}` }
        : { ok: true, value: parsed.value };
    },
    now,
    refreshMs,
    onError,
  });
}
