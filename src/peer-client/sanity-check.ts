// SANITY_CHECK_URL: can the coordinator itself reach the world? Any HTTP answer, whatever its
// status, shows the network path works; no answer (refused, timeout, DNS, TLS) shows it does not.
import type { AxiosError } from 'axios';
import type { SanityCheck } from '../core/transport.js';

export function httpSanityCheck(url: string, timeoutMs: number, userAgent: string): SanityCheck {
  return {
    async check() {
      const started = performance.now();
      // Loaded when first needed, like the webhook poster: most nodes never check.
      const { default: axios } = await import('axios');
      try {
        await axios.get(url, {
          signal: AbortSignal.timeout(timeoutMs),
          headers: { 'user-agent': userAgent },
          validateStatus: () => true,
          maxRedirects: 0,
          responseType: 'text',
          maxContentLength: 1024 * 1024,
        });
        return { ok: true, value: undefined, latencyMs: performance.now() - started };
      } catch (err) {
        const e = err as AxiosError;
        return {
          ok: false,
          reason: e.code === 'ERR_CANCELED' ? 'timeout' : 'unreachable',
          phase: 'connect',
          detail:
            e.code === 'ERR_CANCELED' ? `no answer within ${timeoutMs} ms` : (e.code ?? e.message),
          latencyMs: performance.now() - started,
        };
      }
    },
  };
}
