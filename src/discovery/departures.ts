// Peers that said they were leaving (POST /leave on SIGTERM): left out of the election and of the
// probes, so a node that shuts down in order is never reported dead. It comes back when it speaks
// again (it restarted: it holds an election or announces itself) once a short quarantine is over
// (messages it sent just before leaving may still arrive), when discovery lists it anew, or when
// the departure expires: a node gone for longer than that is probed again, as a live node would be.
import type { NodeRef } from '../wire/node-ref.js';

export interface Departed {
  address: string;
  id: string;
  atMs: number;
}

export class Departures {
  private readonly left = new Map<string, Departed>();

  constructor(
    private readonly quarantineMs: number,
    private readonly expireAfterMs: number,
  ) {}

  /** Records a departure; false when the address is not a discovered peer (ignored). */
  mark(from: NodeRef, discovered: readonly string[], now: number): boolean {
    if (!discovered.includes(from.address)) return false;
    this.left.set(from.address, { address: from.address, id: from.id, atMs: now });
    return true;
  }

  /** The departed node spoke: forgets its departure unless within the quarantine. */
  spoke(address: string, now: number): boolean {
    const d = this.left.get(address);
    if (!d || now - d.atMs < this.quarantineMs) return false;
    return this.left.delete(address);
  }

  /** Discovery listed it anew: forgets its departure. */
  clear(address: string): boolean {
    return this.left.delete(address);
  }

  /** Removes and returns the departures older than the expiry. */
  expire(now: number): Departed[] {
    const old = [...this.left.values()].filter((d) => now - d.atMs >= this.expireAfterMs);
    for (const d of old) this.left.delete(d.address);
    return old;
  }

  has(address: string): boolean {
    return this.left.has(address);
  }

  /** The discovered peers minus the departed ones; departures of undiscovered peers are dropped. */
  present(discovered: readonly string[]): string[] {
    for (const address of this.left.keys()) {
      if (!discovered.includes(address)) this.left.delete(address);
    }
    return discovered.filter((a) => !this.left.has(a));
  }

  list(): Departed[] {
    return [...this.left.values()];
  }
}
