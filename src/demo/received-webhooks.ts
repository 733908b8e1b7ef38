// Typed views of the webhooks a Receiver got, and abortable waits for the next matching one.
import type { ClusterStatusPayload, PeerStatusPayload } from '../wire/webhooks.js';
import type { ReceivedWebhook, Receiver } from './webhook-sink.js';

/** The payload of a schema-valid peer-status webhook, else null. */
export function peerStatusOf(w: ReceivedWebhook): PeerStatusPayload | null {
  // The receiver checked the body against knh's schema, which is what this type describes.
  return w.kind === 'peer-status' && w.errors.length === 0 ? (w.body as PeerStatusPayload) : null;
}

/** The payload of a schema-valid cluster-status webhook, else null. */
export function clusterStatusOf(w: ReceivedWebhook): ClusterStatusPayload | null {
  return w.kind === 'cluster-status' && w.errors.length === 0
    ? (w.body as ClusterStatusPayload)
    : null;
}

/** Whether a cluster status lists exactly `peers` peers, all of them alive. */
export function allAlive(status: ClusterStatusPayload, peers: number): boolean {
  return status.peer_map.length === peers && status.peer_map.every((p) => p.alive);
}

export interface WaitOptions {
  timeoutMs: number;
  /** Only webhooks received at or after this time (epoch ms) count. */
  sinceMs: number;
  signal?: AbortSignal;
  /** Named in the timeout error: what was being waited for. */
  what: string;
}

/**
 * Resolves with the first webhook received since `sinceMs` for which `pick` returns a value.
 * Unlike Receiver.waitFor, it ignores older webhooks and stops waiting (rejects) on abort, so an
 * interrupted caller leaves no timer behind.
 */
export function waitForWebhook<T>(
  receiver: Receiver,
  pick: (w: ReceivedWebhook) => T | null,
  { timeoutMs, sinceMs, signal, what }: WaitOptions,
): Promise<{ webhook: ReceivedWebhook; value: T }> {
  for (const w of receiver.received) {
    const value = w.receivedMs >= sinceMs ? pick(w) : null;
    if (value !== null) return Promise.resolve({ webhook: w, value });
  }
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      receiver.off('webhook', onWebhook);
      signal?.removeEventListener('abort', onAbort);
    };
    const onWebhook = (w: ReceivedWebhook) => {
      const value = w.receivedMs >= sinceMs ? pick(w) : null;
      if (value === null) return;
      done();
      resolve({ webhook: w, value });
    };
    const onAbort = () => {
      done();
      reject(new Error(`stopped waiting for ${what}`, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`));
    }, timeoutMs);
    receiver.on('webhook', onWebhook);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
  });
}
