// What goes into the status page's event list: verdict changes as sentences. A coordinator logs its
// own judgements; a follower logs the changes between two views its coordinator announced.
import {
  placeholderId,
  type Judgement,
  type Transition,
  type Withhold,
} from '../prober/verdict.js';
import type { MaintenanceWindow } from '../wire/maintenance-window.js';
import type { PeerView } from '../wire/peer-view.js';
import type { PeerStatusPayload } from '../wire/webhooks.js';

export interface FeedEntry {
  kind: string;
  peer: string;
  text: string;
}

const SENTENCES: Partial<Record<NonNullable<Transition>, [string, (peer: string) => string]>> = {
  died: ['peer_dead', (p) => `${p} is dead`],
  recovered: ['peer_recovered', (p) => `${p} recovered`],
  'path-broken': ['path_broken', (p) => `cannot reach ${p}, but other peers can: path broken`],
  'path-restored': ['path_restored', (p) => `path to ${p} restored`],
  suspected: ['suspected', (p) => `${p} did not answer a probe: confirming`],
  cleared: ['cleared', (p) => `${p} answered again`],
  'first-alive': ['alive', (p) => `${p} is alive`],
  'never-alive': ['never_alive', (p) => `${p} has not answered since it was discovered`],
};

/** A peer not yet heard from has a placeholder id (`unknown@ip`): its address says more. */
const nameOf = (id: string, address: string) => (id === placeholderId(address) ? address : id);

/** A withheld verdict, by why. */
const WITHHELD: Record<NonNullable<Withhold>, (peer: string) => string> = {
  'self-suspect': (p) => `${p} unreachable, but so is most of the mesh: not declared dead`,
  'sanity-check': (p) => `${p} unreachable, but so is SANITY_CHECK_URL: not declared dead`,
  overloaded: (p) => `${p} timed out while this node ran too late to tell: not declared dead`,
};

export function judgementEntry(j: Judgement): FeedEntry | null {
  const name = nameOf(j.record.id, j.record.address);
  if (j.transition === 'withheld') {
    const text = WITHHELD[j.withheld ?? 'self-suspect'](name);
    return { kind: 'withheld', peer: j.record.id, text };
  }
  const s = j.transition ? SENTENCES[j.transition] : undefined;
  return s ? { kind: s[0], peer: j.record.id, text: s[1](name) } : null;
}

/** A follower's view of what changed between two announcements (by health, per address). */
export function viewChanges(before: readonly PeerView[], after: readonly PeerView[]): FeedEntry[] {
  const old = new Map(before.map((v) => [v.address, v]));
  const out: FeedEntry[] = [];
  for (const v of after) {
    const was = old.get(v.address);
    if (!was || was.health === v.health) continue;
    const name = nameOf(v.id, v.address);
    const live = was.health === 'alive' || was.health === 'suspect';
    if (v.health === 'dead' && live) {
      out.push({ kind: 'peer_dead', peer: v.id, text: `${name} is dead (coordinator's verdict)` });
    } else if (was.health === 'dead' && was.alerted && v.health === 'alive') {
      out.push({
        kind: 'peer_recovered',
        peer: v.id,
        text: `${name} recovered (coordinator's verdict)`,
      });
    } else if (v.health === 'suspect') {
      out.push({
        kind: 'suspected',
        peer: v.id,
        text: `${name} is suspect (coordinator's verdict)`,
      });
    }
  }
  return out;
}

/** Maintenance windows opened, and ended early, as sentences (no peer of their own). */
export function windowChanges(
  added: readonly MaintenanceWindow[],
  ended: readonly MaintenanceWindow[],
): { kind: 'maintenance'; text: string }[] {
  return [
    ...added.map((w) => {
      const what = w.scope === 'mesh' ? 'the whole mesh' : w.nodes.join(', ');
      const text = `alerts paused for ${what} until ${new Date(w.until).toISOString()}: ${w.reason}`;
      return { kind: 'maintenance' as const, text };
    }),
    ...ended.map((w) => ({
      kind: 'maintenance' as const,
      text: `maintenance window ${w.id} ended early`,
    })),
  ];
}

/** An event the reporter held back: for maintenance, or as the end of an alert never sent. */
export function heldText(
  payload: Pick<PeerStatusPayload, 'event' | 'peer'>,
  window: Pick<MaintenanceWindow, 'reason' | 'until'> | null,
): string {
  return window
    ? `${payload.event} for ${payload.peer.id} held: maintenance (${window.reason}) until ${new Date(window.until).toISOString()}`
    : `${payload.event} for ${payload.peer.id}: resolves an alert held during maintenance; neither sent`;
}
