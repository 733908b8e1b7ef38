// The git revision a build is made from, as scripts/bundle.ts bakes it in: KNH_REVISION when set
// (a build without .git, such as the Dockerfile's, is told it as a build argument), else the
// checkout's short hash with `-dirty` when tracked files have changes, else `unknown`.
import { execFileSync } from 'node:child_process';

/** What a revision may be: it goes into a User-Agent header and a Prometheus label verbatim. */
const REVISION = /^[0-9A-Za-z][0-9A-Za-z._+-]{0,63}$/;

export interface GitCheckout {
  /** The short hash of HEAD. */
  head: string;
  /** Whether tracked files differ from HEAD (untracked ones, such as dist/, do not count). */
  dirty: boolean;
}

/** The checkout at `root`, or null without git or outside a repository. */
export function gitCheckout(root: string): GitCheckout | null {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const head = git('rev-parse', '--short', 'HEAD').trim();
    const dirty = git('status', '--porcelain', '--untracked-files=no').trim() !== '';
    return { head, dirty };
  } catch {
    return null;
  }
}

/** Throws, naming KNH_REVISION, when it is set to something a header or a label cannot carry. */
export function buildRevision(
  env: Record<string, string | undefined>,
  checkout: () => GitCheckout | null,
): string {
  const given = env.KNH_REVISION?.trim();
  if (given) {
    if (!REVISION.test(given)) {
      throw new Error(
        `KNH_REVISION=${JSON.stringify(given)}: a revision is 1-64 letters, digits, '.', '_', '+' or '-', starting with a letter or digit (e.g. the output of git rev-parse --short HEAD)`,
      );
    }
    return given;
  }
  const git = checkout();
  if (git) return git.dirty ? `${git.head}-dirty` : git.head;
  return 'unknown';
}
