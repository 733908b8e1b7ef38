// DRY_RUN=true: every webhook is logged with its payload, as it would have been sent, and counts as
// delivered; nothing leaves the node. Secrets (a routing key, a URL's token) are masked.
import type { Logger } from '../core/logger.js';
import type { Poster } from './poster.js';
import { redactBody } from './redact.js';
import { shownUrl, type UrlShown } from '../core/shown-url.js';

export function dryRunPoster(logger: Logger, urls: UrlShown = 'origin'): Poster {
  return {
    post(url, body) {
      const shown = shownUrl(url, urls);
      logger.info(
        { event: 'dry-run-webhook', url: shown, payload: redactBody(body) },
        `dry run: would POST to ${shown}`,
      );
      return Promise.resolve({ ok: true, status: 200 });
    },
  };
}
