// Which peer-status events the demo's receiver already got, by dedup key: a key seen again is a
// redelivery (a retry, or a successor resending what its predecessor decided), not a new event.

export interface Delivery {
  /** 1 for the event's first delivery, 2 for the next... */
  count: number;
  /** When its first delivery was received (epoch ms). */
  firstMs: number;
}

export class Deliveries {
  /** By dedup key, oldest first (a Map keeps insertion order). */
  private readonly seen = new Map<string, Delivery>();

  /** `maxKept`: keys remembered; a demo may run for days, so the oldest are forgotten. */
  constructor(private readonly maxKept = 10_000) {}

  /** Notes one delivery of the event with this key, received at `receivedMs`. */
  note(key: string, receivedMs: number): Delivery {
    const before = this.seen.get(key);
    const delivery = before
      ? { count: before.count + 1, firstMs: before.firstMs }
      : { count: 1, firstMs: receivedMs };
    this.seen.set(key, delivery);
    for (const oldest of this.seen.keys()) {
      if (this.seen.size <= this.maxKept) break;
      this.seen.delete(oldest);
    }
    return delivery;
  }
}
