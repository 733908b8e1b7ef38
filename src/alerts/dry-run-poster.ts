// DRY_RUN=true: every webhook is logged with its payload, as it would have been sent, and counts as
// delivered; nothing leaves the node.
import type { Logger } from '../core/logger.js';
import type { Poster } from './poster.js';

export function dryRunPoster(logger: Logger): Poster {
  return {
    post(url, body) {
      logger.info(
        { event: 'dry-run-webhook', url, payload: body },
        `dry run: would POST to ${url}`,
      );
      return Promise.resolve({ ok: true, status: 200 });
    },
  };
}
