// A receiver's Retry-After (RFC 9110 §10.2.3) on a 429 or 503: how long it asks knh to wait before
// trying again, in seconds or as an HTTP date. Pure: the time is given.

/**
 * The longest wait a receiver can ask for: past it, knh tries again after this anyway. A proxy
 * answering "a day" must not hold a page back for a day (WEBHOOK_RETRY_FOR still bounds the whole).
 */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;

const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
/** The preferred format, `Sun, 06 Nov 1994 08:49:37 GMT`. */
const IMF_FIXDATE = new RegExp(
  `^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} ${MONTH} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$`,
);
/** The obsolete ones a recipient still accepts: RFC 850's and asctime's (both in GMT). */
const RFC_850 = new RegExp(
  `^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MONTH}-\\d{2} \\d{2}:\\d{2}:\\d{2} GMT$`,
);
const ASCTIME = new RegExp(
  `^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) ${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2} \\d{4}$`,
);

/** When an HTTP date is (epoch ms), or null if the text is none of its three formats. */
function httpDate(text: string): number | null {
  let ms = Number.NaN;
  if (IMF_FIXDATE.test(text) || RFC_850.test(text)) ms = Date.parse(text);
  // asctime names no zone, and HTTP dates are all in GMT: never read it as local time.
  else if (ASCTIME.test(text)) ms = Date.parse(`${text} GMT`);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * How long to wait (ms, from 0 to MAX_RETRY_AFTER_MS) as a Retry-After asks at `now`; null when
 * there is none, or it is neither a number of seconds nor an HTTP date.
 */
export function retryAfterMs(value: string | undefined, now: number): number | null {
  const text = value?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  const at = httpDate(text);
  if (at === null) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}
