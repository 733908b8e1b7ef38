// Which receivers this node delivers alerts to, from its settings: one adapter each.
import type { Config } from '../config/load.js';
import { routingKeyProblem } from '../config/cross-field-rules.js';
import { followSetting, type FileSetting } from '../config/setting-files.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { ReceiverAdapter } from '../alerts/receiver-adapter.js';
import { alertmanagerAdapter } from './alertmanager.js';
import { AuthHeaderSource } from '../secrets/auth-file.js';
import { pagerDutyAdapter } from './pagerduty.js';
import { slackAdapter } from './slack.js';
import { webhookAdapter } from './webhook.js';
import type { AlertLinks } from './links.js';

/** How often Alertmanager gets firing alerts re-posted, and the watchdog. */
export const ALERTMANAGER_RESEND_MS = 30_000;

/** The links every alert carries, as the settings give them. */
export function alertLinks(config: Config): AlertLinks {
  return {
    ...(config.statusPageUrl ? { statusPage: config.statusPageUrl } : {}),
    ...(config.runbookUrl ? { runbook: config.runbookUrl } : {}),
  };
}

/**
 * A receiver setting's value now: constant, or re-read from its `_FILE` as the Secret rotates
 * (a read that fails, or finds a value the setting does not take, keeps the last good one).
 */
export function settingNow(
  name: FileSetting,
  { config, clock, logger }: { config: Config; clock: Clock; logger: Logger },
  check?: (value: string) => string | null,
): () => string {
  const initial = followSetting(name, {
    config,
    now: () => clock.now(),
    onError: (error) =>
      logger.warn(
        { event: 'setting-file', setting: name, error },
        `${error}; keeping the last good value`,
      ),
    ...(check ? { check } : {}),
  });
  // Only called for a setting that is set: its value stays set.
  return () => initial() ?? '';
}

/** Throws, naming the setting, when ALERT_WEBHOOK_AUTH_FILE cannot be used. */
export function buildAdapters(config: Config, clock: Clock, logger: Logger): ReceiverAdapter[] {
  const cluster = config.clusterName ?? undefined;
  const links = alertLinks(config);
  const io = { config, clock, logger };
  const adapters: ReceiverAdapter[] = [];
  if (config.slackWebhookUrl) {
    adapters.push(
      slackAdapter({
        webhookUrl: settingNow('SLACK_WEBHOOK_URL', io),
        ...(cluster ? { clusterName: cluster } : {}),
        links,
      }),
    );
  }
  if (config.alertmanagerUrl) {
    adapters.push(
      alertmanagerAdapter({
        baseUrl: settingNow('ALERTMANAGER_URL', io),
        resendMs: ALERTMANAGER_RESEND_MS,
        ...(cluster ? { cluster } : {}),
        links,
      }),
    );
  }
  if (config.pagerDutyRoutingKey) {
    adapters.push(
      pagerDutyAdapter({
        routingKey: settingNow('PAGERDUTY_ROUTING_KEY', io, routingKeyProblem),
        url: config.pagerDutyUrl,
        ...(cluster ? { source: cluster } : {}),
        links,
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
        url: settingNow('ALERT_WEBHOOK_URL', io),
        links,
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
