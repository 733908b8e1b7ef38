// A webhook Poster that answers from a script: success, a failure, or a POST that hangs until released.
import type { PostResult, Poster } from '../../src/delivery/poster.js';
import type { Clock } from '../../src/core/clock.js';

export interface PostCall {
  url: string;
  body: unknown;
  timeoutMs: number;
  /** Clock time of the call. */
  atMs: number;
}

export type Answer = PostResult | 'hang';

export const OK: PostResult = { ok: true, status: 200 };
export const UNAVAILABLE: PostResult = { ok: false, retryable: true, detail: 'HTTP 503' };
export const BAD_REQUEST: PostResult = { ok: false, retryable: false, detail: 'HTTP 400' };

export class FakePoster implements Poster {
  readonly calls: PostCall[] = [];
  private readonly hanging: ((result: PostResult) => void)[] = [];

  /** `answer` decides each call's fate from the call and how many came before it. */
  constructor(
    private readonly clock: Clock,
    private readonly answer: (call: PostCall, index: number) => Answer = () => OK,
  ) {}

  /** The bodies posted, in order (retries included). */
  get bodies(): unknown[] {
    return this.calls.map((c) => c.body);
  }

  post(url: string, body: unknown, timeoutMs: number): Promise<PostResult> {
    const call = { url, body, timeoutMs, atMs: this.clock.now() };
    this.calls.push(call);
    const answer = this.answer(call, this.calls.length - 1);
    if (answer !== 'hang') return Promise.resolve(answer);
    return new Promise((resolve) => this.hanging.push(resolve));
  }

  /** Answers the oldest hanging call. */
  release(result: PostResult = OK): void {
    const resolve = this.hanging.shift();
    if (!resolve) throw new Error('no hanging call to release');
    resolve(result);
  }
}
