// Requests per remote IP: a token bucket each. Peers send a few requests a second, the kubelet and
// Prometheus one every few seconds; a client far above that is a flood, and its excess is refused
// (429, connection closed) before any route runs, so it cannot take the event loop from the probes.
export interface RateLimit {
  /** Sustained requests a second one IP may make. */
  perSecond: number;
  /** Requests it may make at once (a bucket's size). */
  burst: number;
}

interface Bucket {
  tokens: number;
  atMs: number;
}

/** More IPs than this and idle ones (full buckets) are forgotten: the map stays bounded. */
const MAX_TRACKED = 10_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly limit: RateLimit) {}

  /** Whether `ip` may make a request at `nowMs` (one token taken if so). */
  take(ip: string, nowMs: number): boolean {
    const { perSecond, burst } = this.limit;
    let bucket = this.buckets.get(ip);
    if (!bucket) {
      if (this.buckets.size >= MAX_TRACKED) this.forgetIdle(nowMs);
      bucket = { tokens: burst, atMs: nowMs };
      this.buckets.set(ip, bucket);
    }
    const elapsed = Math.max(0, nowMs - bucket.atMs);
    bucket.tokens = Math.min(burst, bucket.tokens + (elapsed * perSecond) / 1000);
    bucket.atMs = nowMs;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }

  get tracked(): number {
    return this.buckets.size;
  }

  private forgetIdle(nowMs: number): void {
    const { perSecond, burst } = this.limit;
    for (const [ip, b] of this.buckets) {
      if (b.tokens + ((nowMs - b.atMs) * perSecond) / 1000 >= burst) this.buckets.delete(ip);
    }
    // Every IP busy (a flood from many addresses): start over rather than grow.
    if (this.buckets.size >= MAX_TRACKED) this.buckets.clear();
  }
}

/**
 * Reads of the operator's views (/, /status, /metrics) per remote IP, beside the limit every
 * request has (views.ts): the page polls every few seconds and Prometheus scrapes every 15 s or
 * more, so a client far above that is refused (429) before a snapshot is even looked at. The pod's
 * own loopback (127.0.0.1, ::1: a port-forward) is never limited, as for every request.
 */
export const DEFAULT_READ_RATE_LIMIT: RateLimit = { perSecond: 20, burst: 40 };

/** 127.0.0.1 or ::1: inside the pod (kubectl port-forward and exec arrive there), or the demo. */
export function isPodItself(ip: string): boolean {
  return ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';
}
