// Warnings about what is refused (requests, a peer's hand-over), at most one a reason per interval:
// a flood of refusals must not become a flood of log lines (disk, CPU, the log pipeline). The
// count of the quiet ones is told with the next.
import type { Logger } from '../core/logger.js';

export class WarnThrottle {
  private readonly last = new Map<string, { atMs: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly intervalMs = 10_000,
  ) {}

  warn(reason: string, fields: Record<string, unknown>, message: string): void {
    const t = this.now();
    const seen = this.last.get(reason);
    if (seen && t - seen.atMs < this.intervalMs && t >= seen.atMs) {
      seen.suppressed++;
      return;
    }
    const suppressed = seen?.suppressed ?? 0;
    this.last.set(reason, { atMs: t, suppressed: 0 });
    this.logger.warn(suppressed > 0 ? { ...fields, suppressed } : fields, message);
  }
}
