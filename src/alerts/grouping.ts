// Alert changes close in time go out together: the first change opens a window of `waitMs`, and
// everything decided within it is one group, one message. A zone or CNI outage is then one page
// listing the nodes, not one page per node. Pure: time is given.
import type { Alert } from '../wire/alert.js';
import type { AlertChange, AlertGroup } from './receiver-adapter.js';

export class Grouper {
  private pending: AlertChange[] = [];
  private openedAt: number | null = null;

  constructor(private readonly waitMs: number) {}

  add(changes: readonly AlertChange[], now: number): void {
    if (changes.length === 0) return;
    if (this.openedAt === null) this.openedAt = now;
    this.pending.push(...changes);
  }

  clear(): void {
    this.pending = [];
    this.openedAt = null;
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
    // Named for its first firing alert: each alert fires once, so no two groups share a name.
    const first = changes.find((c) => c.type === 'firing') ?? changes[0];
    const key =
      first?.type === 'firing' ? first.alert.key : `${first?.alert.key ?? 'knh'}:resolved:${now}`;
    return {
      key,
      at: now,
      changes,
      firing: [...firing],
      test: false,
    };
  }
}
