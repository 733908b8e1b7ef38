// A Notifier whose queues post through `poster` on `clock`: the reporter tests' receiver side.
import { Notifier } from '../../src/delivery/notifier.js';
import type { Poster } from '../../src/delivery/poster.js';
import { WebhookQueue, type WebhookQueueOptions } from '../../src/delivery/webhook-queue.js';
import type { Clock } from '../../src/core/clock.js';
import type { Logger } from '../../src/core/logger.js';
import { loadSchemas } from '../../src/wire/schemas.js';

export const PEER_URL = 'http://receiver/peer';
export const CLUSTER_URL = 'http://receiver/cluster';

/** A queue as the tests use them: 1 s timeout, retried for 10 min, 100 waiting at most. */
export function testQueue(
  url: string,
  poster: Poster,
  clock: Clock,
  logger: Logger,
  over: Partial<WebhookQueueOptions> = {},
): WebhookQueue {
  return new WebhookQueue({
    url,
    poster,
    clock,
    logger,
    timeoutMs: 1000,
    retryForMs: 600_000,
    maxSize: 100,
    ...over,
  });
}

export function testNotifier(poster: Poster, clock: Clock, logger: Logger): Notifier {
  return new Notifier({
    schemas: loadSchemas(),
    peerStatusUrl: PEER_URL,
    clusterStatusUrl: CLUSTER_URL,
    logger,
    makeQueue: (url) => testQueue(url, poster, clock, logger),
  });
}
