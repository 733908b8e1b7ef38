// The relay side of an indirect probe: a peer probes a suspect peer for the coordinator.
import type { Clock } from '../core/clock.js';
import type { PeerTransport } from '../core/transport.js';
import type { RelayProbeRequest, RelayProbeResult } from '../wire/peer-messages.js';
import { probeWithRetries } from './attempts.js';
import type { RetryPolicy } from './policy.js';

export interface RelayOptions {
  transport: Pick<PeerTransport, 'ping'>;
  clock: Clock;
  policy: RetryPolicy;
  /** Only peers may ask, and only about peers: knh is no open proxy for probing any address. */
  isPeer(address: string): boolean;
  /** Indirect probes this node runs at once at most; more are refused (429). */
  maxInFlight?: number;
  /** Upper bound of a request's timeout_ms. */
  maxTimeoutMs: number;
}

export type RelayAnswer =
  { status: 200; body: RelayProbeResult } | { status: 403 | 429; error: string };

export class Relay {
  private inFlight = 0;

  constructor(private readonly opts: RelayOptions) {}

  async handle(request: RelayProbeRequest): Promise<RelayAnswer> {
    const { clock, transport, policy } = this.opts;
    if (!this.opts.isPeer(request.from.address)) {
      return { status: 403, error: `${request.from.address} is not a peer of this node` };
    }
    if (!this.opts.isPeer(request.target)) {
      return { status: 403, error: `${request.target} is not a peer of this node` };
    }
    if (this.inFlight >= (this.opts.maxInFlight ?? 64)) {
      return { status: 429, error: 'too many indirect probes at once' };
    }
    this.inFlight++;
    try {
      const deadline = clock.now() + Math.min(request.timeout_ms, this.opts.maxTimeoutMs);
      const { outcome, attempts } = await probeWithRetries(
        (signal) => transport.ping(request.target, signal),
        policy,
        clock,
        undefined,
        { deadlineMs: deadline },
      );
      const body: RelayProbeResult = {
        target: request.target,
        reachable: outcome.ok,
        attempts,
        latency_ms: Math.round(outcome.latencyMs),
        ...(outcome.ok
          ? { id: outcome.value.id }
          : { detail: `${outcome.reason} (${outcome.detail})` }),
      };
      return { status: 200, body };
    } finally {
      this.inFlight--;
    }
  }
}
