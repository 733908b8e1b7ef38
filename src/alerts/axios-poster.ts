// POSTs JSON with axios; classifies failures as retryable (network, 429, 5xx) or final.
import type { AxiosError, AxiosInstance } from 'axios';
import type { Poster } from './poster.js';

// Of the 4xx, only 429 (Too Many Requests) is worth another try: the others will fail again.
const RETRYABLE_STATUS = new Set([429]);

export function axiosPoster(userAgent: string): Poster {
  // Loaded on the first webhook: only a coordinator sends any, and axios costs ~0.1 s to load.
  let client: Promise<AxiosInstance> | null = null;
  const getClient = () =>
    (client ??= import('axios').then(({ default: axios }) =>
      axios.create({
        headers: { 'content-type': 'application/json', 'user-agent': userAgent },
        maxRedirects: 0,
        // Status handling is ours: every answer resolves, so only transport errors throw.
        validateStatus: () => true,
        maxContentLength: 1024 * 1024,
      }),
    ));
  return {
    async post(url, body, timeoutMs, headers) {
      try {
        const http = await getClient();
        const res = await http.post(url, body, {
          signal: AbortSignal.timeout(timeoutMs),
          ...(headers ? { headers } : {}),
        });
        if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
        const retryable = res.status >= 500 || RETRYABLE_STATUS.has(res.status);
        return { ok: false, retryable, detail: `HTTP ${res.status}` };
      } catch (err) {
        const e = err as AxiosError;
        const detail =
          e.code === 'ERR_CANCELED' ? `timeout after ${timeoutMs} ms` : (e.code ?? e.message);
        return { ok: false, retryable: true, detail };
      }
    },
  };
}
