// POSTs JSON with axios; classifies failures as retryable (network, 408, 429, 5xx) or final.
import axios, { AxiosError } from 'axios';
import type { Poster } from './poster.js';

const RETRYABLE_STATUS = new Set([408, 425, 429]);

export function axiosPoster(userAgent: string): Poster {
  const client = axios.create({
    headers: { 'content-type': 'application/json', 'user-agent': userAgent },
    maxRedirects: 0,
    // Status handling is ours: every answer resolves, so only transport errors throw.
    validateStatus: () => true,
    maxContentLength: 1024 * 1024,
  });
  return {
    async post(url, body, timeoutMs) {
      try {
        const res = await client.post(url, body, { signal: AbortSignal.timeout(timeoutMs) });
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
