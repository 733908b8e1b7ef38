// The settings in effect, as logged once at start-up: every setting by its name, secrets hidden,
// so that "which value did this pod run with" has an answer in its logs. Pure.
import type { Config } from './load.js';
import { formatDuration } from './duration.js';
import { SETTINGS, type Setting } from './settings.js';
import { shownUrl, type UrlShown } from '../core/shown-url.js';

/** Peers named one by one up to this many; a longer list is logged by its size. */
const PEERS_SHOWN = 20;

export type Shown = string | number | boolean | string[] | null;

function shown(setting: Setting, value: unknown, file: string | undefined, urls: UrlShown): Shown {
  if (value === null || value === undefined) return null;
  // Read from a file: that file is where a secret is kept, so its content is never logged.
  if (file !== undefined) return `<read from ${file}>`;
  if (setting.secret) return '<set, not shown: a secret>';
  const t = setting.type;
  if (t.kind === 'duration' && typeof value === 'number') return formatDuration(value);
  if (t.kind === 'url' && typeof value === 'string') return shownUrl(value, urls);
  if (t.kind === 'peers' && Array.isArray(value)) {
    return value.length <= PEERS_SHOWN ? (value as string[]) : `${value.length} peers`;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  return null;
}

/** Every setting by its variable's name, as this node runs with it (null: unset, or off). */
export function effectiveSettings(config: Config): Record<string, Shown> {
  const settings: readonly Setting[] = SETTINGS;
  const fields = config as unknown as Record<string, unknown>;
  const files = config.files as Readonly<Record<string, string | undefined>>;
  // PEER_SECRET's field holds the secrets in force, PEER_SECRET_FILE's when that is set.
  const value = (s: Setting) =>
    s.env === 'PEER_SECRET' && config.peerSecretFile !== null ? null : fields[s.key];
  return Object.fromEntries(
    settings.map((s) => [s.env, shown(s, value(s), files[s.env], config.logReceiverUrls)]),
  );
}
