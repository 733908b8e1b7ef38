// Faults on a node go at least FLAP_WINDOW apart: with knh's default settings, a node that goes
// down again within a minute of its last fault is flapping (RECOVERY_HOLD, FLAP_CHANGES: one page,
// then peer_flapping, not a peer_dead per fault), and this bench times independent faults.
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultMs } from '../src/config/settings.js';
import type { HostNode } from '../test/support/netns-hosts.js';

/** The window, and a margin for the verdicts' own delays. */
const SPACING_MS = defaultMs('FLAP_WINDOW') + 5_000;

export class FaultSpacing {
  private readonly last = new Map<string, number>();

  /** Waits until none of `victims` was faulted within the window; says so when it waits. */
  async ready(victims: readonly HostNode[], progress: (text: string) => void): Promise<void> {
    const due = Math.max(0, ...victims.map((v) => (this.last.get(v.address) ?? 0) + SPACING_MS));
    const wait = due - Date.now();
    if (wait <= 0) return;
    progress(
      `  waiting ${(wait / 1000).toFixed(0)} s: ${victims.map((v) => v.name).join(', ')} faulted within FLAP_WINDOW`,
    );
    await sleep(wait);
  }

  /** `victims` were faulted at `atMs`. */
  hit(victims: readonly HostNode[], atMs: number): void {
    for (const v of victims) this.last.set(v.address, atMs);
  }
}
