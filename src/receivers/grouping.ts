// Alert changes close in time go out together: the first change opens a window of `waitMs`, and
// everything decided within it is one group, one message. A zone or CNI outage is then one page
// listing the nodes, not one page per node. Pure: time is given.
import type { Alert, AlertChange, AlertGroup } from './alert.js';

export class Grouper {
  private pending: AlertChange[] = [];
  private openedAt: number | null = null;

  constructor(private readonly waitMs: number) {}

  add(changes: readonly AlertChange[], now: number): void {
    if (changes.length === 0) return;
    if (this.openedAt === null) this.openedAt = now;
    this.pending.push(...changes);
  }

  /** When the open window closes, if one is open. */
  dueAt(): number | null {
    return this.openedAt === null ? null : this.openedAt + this.waitMs;
  }

  /** The group whose window has closed by `now`, if any. */
  take(now: number, firing: readonly Alert[], force = false): AlertGroup | null {
    const due = this.dueAt();
    if (due === null || (now < due && !force) || this.pending.length === 0) return null;
    const changes = this.pending;
    this.pending = [];
    this.openedAt = null;
    return {
      key: changes[0]?.alert.key ?? 'knh:group',
      at: now,
      changes,
      firing: [...firing],
      test: false,
    };
  }
}
