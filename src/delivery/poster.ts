// The interface webhook delivery sees for one HTTP POST; the axios adapter is in axios-poster.ts.

export type PostResult =
  { ok: true; status: number } | { ok: false; retryable: boolean; detail: string };

export interface Poster {
  post(
    url: string,
    body: unknown,
    timeoutMs: number,
    headers?: Record<string, string>,
  ): Promise<PostResult>;
}
