// How the coordinator judges peers: the retry and detection settings, and the bounds derived from
// them that the prober, the health checks and the metrics share.

export interface RetryPolicy {
  connectMaxRetries: number;
  connectCooldownMs: number;
  sendMaxRetries: number;
  sendCooldownMs: number;
}

export interface DetectionPolicy extends RetryPolicy {
  /** Timeout of one probe attempt. */
  probeTimeoutMs: number;
  /** How long a peer must stay unreachable before it can be declared dead. */
  unhealthyMs: number;
  /** How many other peers are asked to probe a suspect peer (0: none). */
  indirectProbes: number;
}

/**
 * Event-loop lag that voids this node's own timeouts: max(100 ms, PROBE_TIMEOUT / 4). A request
 * sent that late, or its answer read that late, may time out with the peer well.
 */
export function overloadLagMs(probeTimeoutMs: number): number {
  return Math.max(100, probeTimeoutMs / 4);
}

/**
 * How long overload excuses a peer's timeouts, from its first failed probe: UNHEALTHY_DURATION and
 * 8 probe timeouts more. A live peer answers some probe in that time even to a node running that
 * late, so one that has not is judged as usual: an overloaded coordinator is slower to call a
 * black hole, never blind to one.
 */
export function overloadPatienceMs(
  policy: Pick<DetectionPolicy, 'unhealthyMs' | 'probeTimeoutMs'>,
): number {
  return policy.unhealthyMs + 8 * policy.probeTimeoutMs;
}

/** A round starting later than this after it was due counts as late: max(100 ms, interval / 2). */
export function lateThresholdMs(intervalMs: number): number {
  return Math.max(100, intervalMs / 2);
}
