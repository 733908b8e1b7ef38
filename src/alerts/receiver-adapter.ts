// Alerts as receivers other than KNH's webhooks see them: one alert per problem (a peer dead, a
// path broken, a coordinator that cannot judge the mesh), with a stable key, a firing and a
// resolved change; changes close in time are delivered together as one group (one message, not
// one page per node).
import type { Alert } from '../wire/alert.js';

export interface AlertChange {
  type: 'firing' | 'resolved';
  alert: Alert;
}

/** What one notification carries: every change decided within one grouping window. */
export interface AlertGroup {
  /** Stable id of the group: the key of its first change. */
  key: string;
  /** When the group was sent (epoch ms). */
  at: number;
  changes: AlertChange[];
  /** Every alert firing after these changes (for receivers that show the whole picture). */
  firing: Alert[];
  /** A test alert (POST /test-alert): not a real problem. */
  test: boolean;
}

/** One HTTP request a receiver adapter wants sent. */
export interface ReceiverRequest {
  url: string;
  body: unknown;
  headers?: Record<string, string>;
  /** For logs and delivery metrics, e.g. the alert or group key. */
  key: string;
}

/**
 * A receiver's payload adapter: pure, from groups (and heartbeats) to requests. Every body it
 * builds is validated against `schema` before it is sent.
 */
export interface ReceiverAdapter {
  /** slack, alertmanager, pagerduty, webhook: also the metrics' `kind` label. */
  readonly name: string;
  readonly schema: string;
  render(group: AlertGroup): ReceiverRequest[];
  /**
   * Requests to repeat while alerts fire (Alertmanager expires alerts not re-posted) and the
   * dead man's switch, called every `heartbeatMs`; none by default.
   */
  heartbeat?(firing: readonly Alert[], now: number): ReceiverRequest[];
  readonly heartbeatMs?: number;
}
