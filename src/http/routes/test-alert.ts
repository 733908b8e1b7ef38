// POST /test-alert: sends a test alert to every configured receiver (Slack, Alertmanager,
// PagerDuty, ALERT_WEBHOOK_URL) from this node, to check the wiring end to end. From the pod itself
// only, and not from a browser page, like maintenance changes (operator-guard.ts).
import { Router } from 'express';
import type { Logger } from '../../core/logger.js';
import { operatorGuard } from '../operator-guard.js';

export function testAlertRouter(opts: {
  logger: Logger;
  /** Sends the test; returns the receivers it went to. */
  send: () => string[];
  mayChange?: (remote: string | undefined) => boolean;
  /** This node's own names a request's Host may carry, beside loopback's. */
  ownNames?: readonly string[];
}): Router {
  const router = Router();
  const guard = operatorGuard({
    ...(opts.mayChange ? { mayChange: opts.mayChange } : {}),
    ...(opts.ownNames ? { ownNames: opts.ownNames } : {}),
    fromThePod:
      'test alerts are sent from the pod itself: kubectl port-forward to it, or exec into it',
    onRefused: (req, why) =>
      opts.logger.warn(
        { path: req.path, from: req.socket.remoteAddress, reason: why },
        `test alert refused: ${why}`,
      ),
  });
  router.post('/test-alert', guard, (_req, res) => {
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
