// Request bodies being read, in bytes, over every connection: bounded, so that many clients each
// sending a large body (up to 4 MiB for /coordinator) cannot take the pod's memory before a single
// signature or schema is checked. A body that does not fit now gets 503 and its connection closed.
import type { RequestHandler } from 'express';

/** Far below the DaemonSet's 192 MiB limit; a few announcements at once fit. */
export const DEFAULT_BODY_BUDGET_BYTES = 24 * 1024 * 1024;

export function bodyBudget(
  budgetBytes: number,
  limitFor: (path: string) => number,
): RequestHandler {
  let reserved = 0;
  return (req, res, next) => {
    const declared = Number(req.get('content-length') ?? NaN);
    const chunked = req.get('transfer-encoding') !== undefined;
    if (!chunked && !(declared > 0)) {
      next();
      return;
    }
    // A chunked body may be as large as its route takes; a declared one is what it says (the
    // parser refuses a body longer than declared, and refuseOversized one declared too large).
    const bytes = chunked ? limitFor(req.path) : Math.min(declared, limitFor(req.path));
    if (reserved + bytes > budgetBytes) {
      res.set('connection', 'close');
      res.status(503).json({ error: 'too many request bodies being read; try again' });
      return;
    }
    reserved += bytes;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      reserved -= bytes;
    };
    res.once('close', release);
    res.once('finish', release);
    next();
  };
}
