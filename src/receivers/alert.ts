// Alerts as receivers other than KNH's webhooks see them: one alert per problem (a peer dead, a
// path broken, a coordinator that cannot judge the mesh), with a stable key, a firing and a
// resolved change; changes close in time are delivered together as one group (one message, not
// one page per node).
import type { JudgementFacts } from '../alerts/payloads.js';

/**
 * cannot_judge: the coordinator (`peer`) cannot reach most of its peers and withholds their
 * verdicts; `reason` says so in a sentence, `judgement` in figures.
 */
export type AlertKind = 'peer_dead' | 'path_broken' | 'cannot_judge';

export interface Alert {
  /** Stable identity across firing, resolution and coordinators: `knh:<subject>:<incident ms>`. */
  key: string;
  kind: AlertKind;
  peer: { id: string; address: string; node_name: string };
  /** The coordinator that decided it. */
  coordinator: { id: string; address: string };
  /** Why the peer was judged down (the last failure), when known. */
  reason: string | null;
  /** Path alerts: who cannot reach whom, and who can. */
  path: { from: string; to: string; witnesses: string[] } | null;
  /** cannot_judge: what the coordinator could see when it said so. */
  judgement?: JudgementFacts;
  /** Epoch ms the problem started. */
  startsAt: number;
  /** Epoch ms it ended; null while firing. */
  endsAt: number | null;
  /**
   * The key of the group it first fired in, when that group fired several alerts (one grouped
   * page). Shared with the followers, so a successor resolves the grouped page too.
   */
  group?: string;
  /** Shared by a coordinator before it was sent (still in the grouping window). */
  unsent?: boolean;
}

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
