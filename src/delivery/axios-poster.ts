// POSTs JSON with axios; classifies failures as retryable (network, 429, 5xx) or final.
import type { AxiosError, AxiosInstance } from 'axios';
import type { Readable } from 'node:stream';
import type { Poster } from './poster.js';

// Of the 4xx, only 429 (Too Many Requests) is worth another try: the others will fail again.
const RETRYABLE_STATUS = new Set([429]);
/** Answers whose Retry-After knh honours (RFC 9110: Too Many Requests, Service Unavailable). */
const RETRY_AFTER_STATUS = new Set([429, 503]);

export function axiosPoster(userAgent: string): Poster {
  // Loaded on the first webhook: only a coordinator sends any, and axios costs ~0.1 s to load.
  let client: Promise<AxiosInstance> | null = null;
  const getClient = () =>
    (client ??= import('axios').then(({ default: axios }) =>
      axios.create({
        headers: { 'content-type': 'application/json', 'user-agent': userAgent },
        // A webhook is never bounced to another host (with its auth header): a 3xx is an answer,
        // and fails as a 4xx does (test/unit/hostile-receivers.test.ts).
        maxRedirects: 0,
        // Status handling is ours: every answer resolves, so only transport errors throw.
        validateStatus: () => true,
        // Answers are not read at all: the status says whether it arrived. A stream is closed
        // unread, so a huge or endless answer costs nothing and a 2xx is never posted again.
        responseType: 'stream',
      }),
    ));
  return {
    async post(url, body, timeoutMs, headers) {
      try {
        const http = await getClient();
        const res = await http.post(url, body, {
          // Not axios' `timeout`: that one leaves a body dripping a byte at a time unbounded. The
          // signal bounds the whole request, the answer's body included.
          signal: AbortSignal.timeout(timeoutMs),
          ...(headers ? { headers } : {}),
        });
        (res.data as Readable).destroy();
        if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
        const retryable = res.status >= 500 || RETRYABLE_STATUS.has(res.status);
        // The receiver says when to try again when it is rate-limiting or briefly unavailable.
        const after: unknown = RETRY_AFTER_STATUS.has(res.status)
          ? res.headers['retry-after']
          : undefined;
        return {
          ok: false,
          retryable,
          detail: `HTTP ${res.status}`,
          ...(typeof after === 'string' ? { retryAfter: after } : {}),
        };
      } catch (err) {
        const e = err as AxiosError;
        const detail =
          e.code === 'ERR_CANCELED' ? `timeout after ${timeoutMs} ms` : (e.code ?? e.message);
        return { ok: false, retryable: true, detail };
      }
    },
  };
}
