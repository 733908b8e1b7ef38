// Which receivers this node delivers alerts to, from its settings: one adapter each.
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ReceiverAdapter } from '../alerts/receiver-adapter.js';
import { alertmanagerAdapter } from './alertmanager.js';
import { AuthHeaderSource } from '../secrets/auth-file.js';
import { pagerDutyAdapter } from './pagerduty.js';
import { slackAdapter } from './slack.js';
import { webhookAdapter } from './webhook.js';

/** How often Alertmanager gets firing alerts re-posted, and the watchdog. */
export const ALERTMANAGER_RESEND_MS = 30_000;

/** Throws, naming the setting, when ALERT_WEBHOOK_AUTH_FILE cannot be used. */
export function buildAdapters(config: Config, clock: Clock, logger: Logger): ReceiverAdapter[] {
  const cluster = config.clusterName ?? undefined;
  const adapters: ReceiverAdapter[] = [];
  if (config.slackWebhookUrl) {
    adapters.push(
      slackAdapter({
        webhookUrl: config.slackWebhookUrl,
        ...(cluster ? { clusterName: cluster } : {}),
      }),
    );
  }
  if (config.alertmanagerUrl) {
    adapters.push(
      alertmanagerAdapter({
        baseUrl: config.alertmanagerUrl,
        resendMs: ALERTMANAGER_RESEND_MS,
        ...(cluster ? { cluster } : {}),
      }),
    );
  }
  if (config.pagerDutyRoutingKey) {
    adapters.push(
      pagerDutyAdapter({
        routingKey: config.pagerDutyRoutingKey,
        url: config.pagerDutyUrl,
        ...(cluster ? { source: cluster } : {}),
      }),
    );
  }
  if (config.alertWebhookUrl) {
    let auth: (() => Record<string, string>) | undefined;
    if (config.alertWebhookAuthFile) {
      const opened = AuthHeaderSource.open({
        path: config.alertWebhookAuthFile,
        headerName: config.alertWebhookAuthHeader,
        now: () => clock.now(),
        onError: (error) =>
          logger.warn(
            { event: 'auth-file' },
            `ALERT_WEBHOOK_AUTH_FILE: ${error}; keeping the last good value`,
          ),
      });
      if (!opened.ok)
        throw new Error(`ALERT_WEBHOOK_AUTH_FILE=${config.alertWebhookAuthFile}: ${opened.error}`);
      const source = opened.source;
      auth = () => source.headers();
    }
    adapters.push(
      webhookAdapter({
        url: config.alertWebhookUrl,
        ...(auth ? { auth } : {}),
        ...(config.alertWebhookHeartbeatMs > 0
          ? { heartbeatMs: config.alertWebhookHeartbeatMs }
          : {}),
        ...(cluster ? { cluster } : {}),
      }),
    );
  }
  return adapters;
}
