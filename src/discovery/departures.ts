// Peers that said they were leaving (POST /leave on SIGTERM): left out of the election and of the
// probes, so a node that shuts down in order is never reported dead. Any message from one again
// (it restarted: it holds an election, or announces itself), or discovery listing it anew, brings
// it back.
import type { NodeRef } from '../core/node-ref.js';
import type { Departed } from '../status/assemble.js';

export class Departures {
  private readonly left = new Map<string, Departed>();

  /** Records a departure; false when the address is not a discovered peer (ignored). */
  mark(from: NodeRef, discovered: readonly string[], now: number): boolean {
    if (!discovered.includes(from.address)) return false;
    this.left.set(from.address, { address: from.address, id: from.id, atMs: now });
    return true;
  }

  /** Forgets a departure; true when there was one. */
  clear(address: string): boolean {
    return this.left.delete(address);
  }

  has(address: string): boolean {
    return this.left.has(address);
  }

  /** The discovered peers minus the departed ones; departures of undiscovered peers are dropped. */
  present(discovered: readonly string[]): string[] {
    for (const address of this.left.keys())
      if (!discovered.includes(address)) this.left.delete(address);
    return discovered.filter((a) => !this.left.has(a));
  }

  list(): Departed[] {
    return [...this.left.values()];
  }
}
