// The confirmation of a failed probe: retries, indirect probes and the unhealthy duration, then a
// verdict (alive, broken path, dead or withheld) applied through the pure transitions of verdict.ts.
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NodeRef } from '../wire/node-ref.js';
import type { Outcome, PeerTransport } from '../core/transport.js';
import type { PingResponse } from '../wire/peer-messages.js';
import { probeWithRetries } from './attempts.js';
import { evidenceOf } from '../core/evidence.js';
import { pickRelays, probeThroughRelays, RELAY_MARGIN_MS, type RelayFindings } from './indirect.js';
import type { DetectionPolicy } from './policy.js';
import {
  answered,
  attemptFailed,
  confirm,
  type Answer,
  type Judgement,
  type PeerRecord,
  type Withhold,
} from './verdict.js';

/** What a confirmation reads and changes of the prober's state. */
export interface ConfirmationContext {
  self: NodeRef;
  transport: Pick<PeerTransport, 'ping' | 'probeVia'>;
  clock: Clock;
  logger: Logger;
  policy: DetectionPolicy;
  random: () => number;
  lastHeard(address: string): number | null;
  /** The peers, in the peer list's order. */
  peers(): readonly string[];
  record(address: string): PeerRecord | undefined;
  selfSuspect(): boolean;
  /** Whether this node's event loop has run late enough since `sinceMs` to void its timeouts. */
  overloaded(sinceMs: number): boolean;
  apply(address: string, judge: (r: PeerRecord) => Judgement): void;
}

/**
 * Until the peer has been unreachable for the unhealthy duration (and for at least one probe
 * timeout after the failure, so relays get a full probe): the remaining retries, indirect probes
 * through up to `indirectProbes` live peers, and any answer the peer gives to other requests
 * meanwhile. Then the verdict: alive, broken path, dead, or withheld.
 */
export async function confirmUnreachable(
  ctx: ConfirmationContext,
  address: string,
  first: Outcome<PingResponse> & { ok: false },
  signal: AbortSignal,
  selfHealthy: () => Promise<boolean>,
): Promise<void> {
  const { clock, transport, policy } = ctx;
  const since = ctx.record(address)?.unreachableSinceMs;
  if (since === null || since === undefined) return;
  // Relays get a full PROBE_TIMEOUT of their own, and their answer is back by the deadline.
  const deadline = Math.max(
    since + policy.unhealthyMs,
    clock.now() + policy.probeTimeoutMs + RELAY_MARGIN_MS,
  );
  const relays = pickRelays(
    ctx.peers(),
    (a) => ctx.record(a),
    address,
    policy.indirectProbes,
    ctx.random,
  );
  const indirect = probeThroughRelays(ctx, relays, address, deadline, signal);
  const connect = first.phase === 'connect';
  // A dead peer's recheck asks the relays only: its own retries would tell no more than the next
  // round's probe of it will.
  const dead = ctx.record(address)?.health === 'dead';
  const budget = dead ? 0 : connect ? policy.connectMaxRetries : policy.sendMaxRetries;
  const cooldown = connect ? policy.connectCooldownMs : policy.sendCooldownMs;
  const retried: Promise<{ outcome: Outcome<PingResponse>; attempts: number }> =
    budget > 0 && clock.now() + cooldown < deadline
      ? probeWithRetries((s) => transport.ping(address, s), policy, clock, signal, {
          deadlineMs: deadline,
          spent: { connect: connect ? 1 : 0, send: connect ? 0 : 1 },
          firstDelayMs: cooldown,
        })
      : Promise.resolve({ outcome: first, attempts: 0 });
  const [direct, relayed] = await Promise.all([retried, indirect]);
  if (signal.aborted) return;
  const { outcome, attempts } = direct;
  if (outcome.ok) return ctx.apply(address, (r) => answered(r, answerOf(outcome), clock.now()));
  ctx.apply(address, (r) => attemptFailed(r, failureOf(outcome, attempts + 1), since, clock.now()));
  const wait = since + policy.unhealthyMs - clock.now();
  if (wait > 0) {
    try {
      await clock.sleep(wait, signal);
    } catch {
      return;
    }
  }
  const heard = ctx.lastHeard(address);
  if (heard !== null && heard >= since) {
    // It answered an announcement or another request meanwhile: reachable after all.
    return ctx.apply(address, (r) => answered(r, null, clock.now()));
  }
  const withhold = await withholding(ctx, { first, last: outcome, since, relayed }, selfHealthy);
  if (signal.aborted) return;
  ctx.apply(address, (r) =>
    confirm(
      r,
      {
        reachedBy: relayed.reached,
        corroboratedBy: relayed.silent,
        unhealthyMs: policy.unhealthyMs,
        withhold,
      },
      clock.now(),
    ),
  );
}

/**
 * What holds a verdict back (see the table in docs/detection.md). A refusal, by the peer's host to
 * this node or to a relay, proves the path works: the peer is judged whatever this node suspects
 * of itself. Silence is judged only by a node that can vouch for its own network: not overloaded
 * (for timeouts), not silent to most of its peers, and reaching SANITY_CHECK_URL if set.
 */
async function withholding(
  ctx: ConfirmationContext,
  seen: {
    first: Outcome<PingResponse> & { ok: false };
    last: Outcome<PingResponse> & { ok: false };
    since: number;
    relayed: RelayFindings;
  },
  selfHealthy: () => Promise<boolean>,
): Promise<Withhold> {
  const { first, last, since, relayed } = seen;
  // Only timeouts, first to last: a refusal is the peer's kernel speaking, whatever the load here.
  const timedOut = [first, last].every(
    (o) => o.reason === 'timeout' || o.reason === 'connect-timeout',
  );
  if (relayed.reached.length > 0) return timedOut && ctx.overloaded(since) ? 'overloaded' : null;
  if (evidenceOf(last.reason) === 'refusal' || relayed.refused.length > 0) return null;
  if (timedOut && ctx.overloaded(since)) return 'overloaded';
  if (ctx.selfSuspect()) return 'self-suspect';
  return (await selfHealthy()) ? null : 'sanity-check';
}

export function answerOf(outcome: Outcome<PingResponse> & { ok: true }): Answer {
  return { latencyMs: outcome.latencyMs, id: outcome.value.id, nodeName: outcome.value.node_name };
}

export function failureOf(outcome: Outcome<PingResponse> & { ok: false }, attempts: number) {
  return {
    latencyMs: outcome.latencyMs,
    evidence: evidenceOf(outcome.reason),
    detail: `${outcome.reason} (${outcome.detail}) after ${attempts} attempt${attempts > 1 ? 's' : ''}`,
  };
}
