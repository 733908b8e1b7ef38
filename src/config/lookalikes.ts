// Environment variables that look like knh's settings but are none: a misspelled name, or a known
// one in another case, would otherwise be ignored without a word. Pure.
import { fileVariable } from './read-settings.js';
import { SETTINGS, type Setting } from './settings.js';

export interface Lookalike {
  /** The variable as set. */
  name: string;
  /** The setting it most likely meant. */
  meant: string;
  /** Why it is taken for that one. */
  why: 'case' | 'prefix' | 'spelling';
}

/** Every name knh reads: each setting's, its aliases, and `<name>_FILE` where a file may hold it. */
export function knownNames(): string[] {
  const settings: readonly Setting[] = SETTINGS;
  return settings.flatMap((s) => [
    s.env,
    ...(s.aliases ?? []),
    ...(s.file ? [fileVariable(s)] : []),
  ]);
}

/** Variables of the system, the shell, Node.js and npm: never knh's, whatever they look like. */
const OTHERS = new Set([
  'PATH',
  'HOME',
  'HOSTNAME',
  'PWD',
  'OLDPWD',
  'SHLVL',
  'SHELL',
  'TERM',
  'LANG',
  'LANGUAGE',
  'TZ',
  'USER',
  'LOGNAME',
  'TMPDIR',
  '_',
  'NODE_ENV',
  'NODE_OPTIONS',
  'NODE_VERSION',
  'NODE_PATH',
  'NODE_DEBUG',
  'NODE_EXTRA_CA_CERTS',
  'NODE_NO_WARNINGS',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'NODE_PENDING_DEPRECATION',
  'YARN_VERSION',
  'UV_THREADPOOL_SIZE',
]);
const OTHER_PREFIXES = ['KUBERNETES_', 'npm_', 'LC_', 'XDG_'];

/**
 * The variables Kubernetes sets for every Service in the namespace (`<SVC>_SERVICE_HOST`,
 * `<SVC>_PORT_8080_TCP_ADDR` …), which may happen to resemble a setting.
 */
function isServiceLink(name: string, value: string): boolean {
  if (/_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name)) return true;
  if (/_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  return /_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value);
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`, or more than `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  // Optimal string alignment: Levenshtein plus transpositions ("ULR" for "URL" is one edit).
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (previous[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, (before[j - 2] ?? 0) + 1);
      }
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > max) return max + 1;
    before = previous;
    previous = row;
  }
  return previous[b.length] ?? max + 1;
}

/** Edits a misspelling of `known` may have: one in a short name, two in a longer one. */
const editsAllowed = (known: string) => (known.length <= 6 ? 1 : 2);

/** The setting `name` most likely meant, if it looks like one and is none. */
function lookalike(name: string, known: readonly string[]): Lookalike | null {
  const upper = name.toUpperCase();
  const sameCase = known.find((k) => k === upper);
  if (sameCase) return { name, meant: sameCase, why: 'case' };
  const unprefixed = upper.startsWith('KNH_') ? upper.slice('KNH_'.length) : null;
  const prefixed = unprefixed !== null && known.find((k) => k === unprefixed);
  if (prefixed) return { name, meant: prefixed, why: 'prefix' };
  let best: { meant: string; edits: number } | null = null;
  for (const k of known) {
    const max = editsAllowed(k);
    const edits = editDistance(upper, k, max);
    if (edits <= max && (best === null || edits < best.edits)) best = { meant: k, edits };
  }
  return best && { name, meant: best.meant, why: 'spelling' };
}

/** The variables set in `env` that look like a setting of knh's but are none. */
export function lookalikes(env: Readonly<Record<string, string | undefined>>): Lookalike[] {
  const known = knownNames();
  const exact = new Set(known);
  const found: Lookalike[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || exact.has(name) || OTHERS.has(name)) continue;
    if (OTHER_PREFIXES.some((p) => name.startsWith(p)) || isServiceLink(name, value)) continue;
    const match = lookalike(name, known);
    if (match) found.push(match);
  }
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A lookalike as the warning logged at start-up says it. */
export function lookalikeWarning({ name, meant, why }: Lookalike): string {
  const tail =
    why === 'case'
      ? ' (names are case-sensitive)'
      : why === 'prefix'
        ? ' (knh reads its settings without a prefix)'
        : '';
  return `${name} is not a knh setting and is ignored: did you mean ${meant}?${tail}`;
}
