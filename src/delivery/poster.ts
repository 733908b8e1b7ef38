// The interface webhook delivery sees for one HTTP POST; the axios adapter is in axios-poster.ts.

/** `retryAfter`: the Retry-After header of a 429 or 503, as the receiver sent it. */
export type PostResult =
  | { ok: true; status: number }
  | { ok: false; retryable: boolean; detail: string; retryAfter?: string };

export interface Poster {
  post(
    url: string,
    body: unknown,
    timeoutMs: number,
    headers?: Record<string, string>,
  ): Promise<PostResult>;
}
