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
import { isFindingPayload, isJudgementEvent, type PeerStatusPayload } from '../wire/webhooks.js';

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

/** A node as the feed names it. */
export interface FeedNode {
  id: string;
  address: string;
  node_name: string;
}

/** At most this many nodes of a side of a partition are named, and this many sides. */
const SIDE_NODES_NAMED = 10;
const SIDES_NAMED = 3;

/**
 * A finding of the localization of every node's paths (a warning) as the feed tells it: the
 * webhook's sentence, which names nodes by node name only, then the nodes it is about by node name
 * and address. `nodes`: those the coordinator knows, itself included (paths name their ends by id).
 */
export function findingEntry(
  payload: Pick<PeerStatusPayload, 'event' | 'peer' | 'reason' | 'path' | 'partition'>,
  nodes: readonly FeedNode[],
): FeedEntry {
  const byAddress = new Map(nodes.map((n) => [n.address, n]));
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const named = (n: FeedNode | undefined, fallback: string) =>
    n ? `${n.node_name} (${n.address})` : fallback;
  const peer = `${payload.peer.node_name} (${payload.peer.address})`;
  let about: string;
  if (payload.partition) {
    const { sides } = payload.partition;
    const side = (addresses: readonly string[]) => {
      const shown = addresses.slice(0, SIDE_NODES_NAMED).map((a) => named(byAddress.get(a), a));
      const more = addresses.length - shown.length;
      return `[${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}]`;
    };
    const more = sides.length - SIDES_NAMED;
    about =
      sides.slice(0, SIDES_NAMED).map(side).join(' | ') +
      (more > 0 ? ` and ${more} more sides` : '');
  } else if (payload.path) {
    about = `${named(byId.get(payload.path.from), payload.path.from)} \u2192 ${peer}`;
  } else {
    about = peer;
  }
  const sentence = payload.reason ?? payload.event.replace(/_/g, ' ');
  return { kind: payload.event, peer: payload.peer.id, text: `${sentence} \u2014 ${about}` };
}

/** Events the feed shows as they are sent, as the webhook says them, besides the judgement ones. */
const FED: ReadonlySet<string> = new Set([
  'peer_flapping',
  'peer_unauthenticated',
  'peer_authenticated',
]);

/**
 * What the feed shows of an event the coordinator sent: its own ability to judge, flaps and
 * authentication as the webhook says them, the findings about the paths with their nodes
 * (`nodes`, called for those only); null for the verdicts' events, which judgementEntry tells as
 * they are made.
 */
export function sentEntry(
  payload: PeerStatusPayload,
  nodes: () => readonly FeedNode[],
): FeedEntry | null {
  if (isJudgementEvent(payload.event) || FED.has(payload.event)) {
    return { kind: payload.event, peer: payload.peer.id, text: payload.reason ?? payload.event };
  }
  return isFindingPayload(payload) ? findingEntry(payload, nodes()) : null;
}
