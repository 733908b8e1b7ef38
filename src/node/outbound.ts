// Everything that leaves the node as a webhook: KNH's two (Notifier) and the other receivers
// (AlertDispatcher), over one poster (axios, or the dry-run logger), each URL with its own queue.
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { AlertDispatcher } from '../delivery/alert-dispatcher.js';
import { buildAdapters, settingNow } from '../receivers/receivers.js';
import type { PodNameOf } from '../alerts/pod-names.js';
import type { SchemaRegistry } from '../wire/schemas.js';
import { axiosPoster } from '../delivery/axios-poster.js';
import { dryRunPoster } from '../delivery/dry-run-poster.js';
import { Notifier } from '../delivery/notifier.js';
import { shownUrl } from '../core/shown-url.js';
import { WebhookQueue, type WebhookEvent } from '../delivery/webhook-queue.js';
import type { DeliveryOutcome } from '../alerts/event-sink.js';

export interface Outbound {
  notifier: Notifier;
  dispatcher: AlertDispatcher;
}

/** Throws, naming the setting, when a receiver cannot be set up (ALERT_WEBHOOK_AUTH_FILE). */
export function outbound(opts: {
  config: Config;
  schemas: SchemaRegistry;
  clock: Clock;
  logger: Logger;
  userAgent: string;
  onSettled: (kind: WebhookEvent['kind'], outcome: DeliveryOutcome) => void;
  /** The pod at an address, where known: alerts name the pods involved. */
  podNameOf?: PodNameOf;
}): Outbound {
  const { config, schemas, clock, logger, onSettled } = opts;
  if (config.dryRun) {
    logger.warn({ event: 'dry-run' }, 'DRY_RUN=true: webhooks are logged, not sent');
  }
  const poster = config.dryRun
    ? dryRunPoster(logger.child({ component: 'webhooks' }), config.logReceiverUrls)
    : axiosPoster(opts.userAgent);
  const queue = (url: string, component: string, maxInFlight = 1) =>
    new WebhookQueue({
      url,
      // A receiver URL may carry its secret in the path (Slack's does): logs show its origin.
      logUrl: shownUrl(url, config.logReceiverUrls),
      poster,
      clock,
      logger: logger.child({ component }),
      timeoutMs: config.webhookTimeoutMs,
      retryForMs: config.webhookRetryForMs,
      maxSize: config.webhookQueueSize,
      maxInFlight,
      onSettled,
    });
  const io = { config, clock, logger: logger.child({ component: 'webhooks' }) };
  const notifier = new Notifier({
    schemas,
    peerStatusUrl: config.peerStatusUrl && settingNow('PEER_STATUS_URL', io),
    clusterStatusUrl: config.clusterStatusUrl && settingNow('CLUSTER_STATUS_URL', io),
    logger: logger.child({ component: 'webhooks' }),
    // Events about different peers may go together; the receivers' adapters post one at a time.
    makeQueue: (url) => queue(url, 'webhooks', config.webhookConcurrency),
  });
  const receiversLog = logger.child({ component: 'receivers' });
  const dispatcher = new AlertDispatcher({
    adapters: buildAdapters(config, clock, receiversLog),
    schemas,
    clock,
    logger: receiversLog,
    holdDownMs: config.alertHoldDownMs,
    groupWaitMs: config.alertGroupWaitMs,
    ...(opts.podNameOf ? { podNameOf: opts.podNameOf } : {}),
    makeQueue: (url) => queue(url, 'receivers'),
  });
  if (dispatcher.enabled) {
    receiversLog.info(
      { event: 'receivers', receivers: dispatcher.receivers },
      `alerts also go to ${dispatcher.receivers.join(', ')}`,
    );
  }
  return { notifier, dispatcher };
}
