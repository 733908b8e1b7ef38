// The node's recent events for the status page: a bounded list, newest first.
import type { StatusEvent } from './status-types.js';

export const MAX_EVENTS = 100;

export class EventLog {
  private readonly events: StatusEvent[] = [];

  constructor(
    private readonly now: () => number,
    private readonly max = MAX_EVENTS,
  ) {}

  add(kind: string, text: string, peer: string | null = null, suppressed = false): void {
    this.events.unshift({ time: new Date(this.now()).toISOString(), kind, peer, text, suppressed });
    if (this.events.length > this.max) this.events.length = this.max;
  }

  recent(): StatusEvent[] {
    return [...this.events];
  }
}
