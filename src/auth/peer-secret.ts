// The shared peer secret: from PEER_SECRET, or from PEER_SECRET_FILE (a mounted Secret), which is
// re-read as the Secret rotates. A file may hold several secrets, one a line: the first signs and
// any of them verifies, so a secret can be rotated without a moment where nodes disagree.
import { AUTH_REFRESH_MS, followFile, readBounded } from '../secrets/auth-file.js';

/** 32 characters: 128 bits or more for a hex or base64 secret (`openssl rand -hex 32` gives 64). */
export const MIN_SECRET_CHARS = 32;
export const MAX_SECRET_CHARS = 1024;
/** Old, current and next, with room to spare. */
export const MAX_SECRETS = 4;

export type SecretsResult = { ok: true; secrets: string[] } | { ok: false; error: string };

const PRINTABLE = /^[\x21-\x7e]+$/;

/** The value daemonset.yaml ships with, replaced at install (README, "Deploy"; docs/deploying.md). */
export const SECRET_PLACEHOLDER = 'REPLACE_WITH_A_RANDOM_SECRET';

/** Checks one secret; the error names where it came from and never repeats it. */
export function checkSecret(secret: string, where: string): string | null {
  if (secret === SECRET_PLACEHOLDER) {
    return `${where} is still the placeholder of daemonset.yaml: install with a random secret (e.g. \`openssl rand -hex 32\`, see the README's Deploy section)`;
  }
  if (secret.length < MIN_SECRET_CHARS) {
    return `${where} has ${secret.length} characters: a peer secret needs at least ${MIN_SECRET_CHARS} (e.g. \`openssl rand -hex 32\`)`;
  }
  if (secret.length > MAX_SECRET_CHARS) {
    return `${where} has ${secret.length} characters: a peer secret has at most ${MAX_SECRET_CHARS}`;
  }
  if (!PRINTABLE.test(secret)) {
    return `${where} holds spaces, control or non-ASCII characters: expected printable ASCII (hex or base64)`;
  }
  return null;
}

/** The secrets in a file's text: one a line, blank lines ignored, CRLF accepted. */
export function parseSecrets(text: string, path: string): SecretsResult {
  const lines = text
    .split('\n')
    .map((line) => line.replace(/\r$/, ''))
    .filter((line) => line.trim() !== '');
  if (lines.length === 0) return { ok: false, error: `peer secret file ${path} is empty` };
  if (lines.length > MAX_SECRETS) {
    return {
      ok: false,
      error: `peer secret file ${path} has ${lines.length} secrets: at most ${MAX_SECRETS} (the first signs, the others are accepted while rotating)`,
    };
  }
  for (const [i, line] of lines.entries()) {
    const problem = checkSecret(line, `peer secret file ${path}, secret ${i + 1},`);
    if (problem) return { ok: false, error: problem };
  }
  return { ok: true, secrets: lines };
}

export function readSecretFile(path: string): SecretsResult {
  const read = readBounded(path, 'peer secret file');
  return read.ok ? parseSecrets(read.text, path) : read;
}

export interface SecretFileSourceOptions {
  path: string;
  /** First secrets, as loadConfig read them. */
  initial: readonly string[];
  now: () => number;
  refreshMs?: number;
  /** A re-read failed; the last good secrets stay in force. */
  onError?: (error: string) => void;
  /** The file now holds other secrets. */
  onChange?: (count: number) => void;
}

/** The secrets in force, following the file; reads are synchronous and tiny (at most 8 KiB). */
export function secretFileSource(opts: SecretFileSourceOptions): () => readonly string[] {
  let current: readonly string[] = opts.initial;
  return followFile<readonly string[]>({
    initial: current,
    read: () => {
      const next = readSecretFile(opts.path);
      if (!next.ok) return next;
      if (next.secrets.join('\n') !== current.join('\n')) {
        current = next.secrets;
        opts.onChange?.(current.length);
      }
      return { ok: true, value: current };
    },
    now: opts.now,
    refreshMs: opts.refreshMs ?? AUTH_REFRESH_MS,
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
}
