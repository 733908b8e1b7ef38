// POST /test-alert: sends a test alert to every configured receiver (Slack, Alertmanager,
// PagerDuty, ALERT_WEBHOOK_URL) from this node, to check the wiring end to end. From the pod itself
// only (loopback), like maintenance changes.
import { Router } from 'express';
import type { Logger } from '../../core/logger.js';
import { isLoopback } from '../../wire/node-ref.js';

export function testAlertRouter(opts: {
  logger: Logger;
  /** Sends the test; returns the receivers it went to. */
  send: () => string[];
  mayChange?: (remote: string | undefined) => boolean;
}): Router {
  const router = Router();
  const may = opts.mayChange ?? isLoopback;
  router.post('/test-alert', (req, res) => {
    if (!may(req.socket.remoteAddress)) {
      res.status(403).json({
        error:
          'test alerts are sent from the pod itself: kubectl port-forward to it, or exec into it',
      });
      return;
    }
    const receivers = opts.send();
    if (receivers.length === 0) {
      res.status(409).json({
        error:
          'no receiver configured: set SLACK_WEBHOOK_URL, ALERTMANAGER_URL, PAGERDUTY_ROUTING_KEY or ALERT_WEBHOOK_URL',
      });
      return;
    }
    opts.logger.info(
      { event: 'test-alert', receivers },
      `test alert sent to ${receivers.join(', ')}`,
    );
    res.status(202).json({ sent_to: receivers });
  });
  return router;
}
