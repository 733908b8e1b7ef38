// One readable line per received webhook; a payload failing its schema is described loudly.
import type { PeerPayload } from '../wire/webhooks.js';
import type { ReceivedWebhook } from './webhook-sink.js';
import { clusterStatusOf, peerStatusOf } from './received-webhooks.js';
import type { Colour } from './terminal-style.js';
import { nodeNameOf } from '../wire/node-ref.js';

export interface WebhookLine {
  text: string;
  colour: Colour;
  /** The payload failed knh's own schema (or was of no known kind). */
  bad: boolean;
}

function names(peers: readonly PeerPayload[]): string {
  return peers.map((p) => p.node_name).join(', ');
}

function truncated(value: unknown, max = 300): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function describeWebhook(w: ReceivedWebhook): WebhookLine {
  const peer = peerStatusOf(w);
  if (peer && (peer.event === 'cannot_judge' || peer.event === 'can_judge')) {
    return {
      text: `${peer.event}: ${peer.reason ?? ''}, dedup ${peer.dedup_key}`,
      colour: peer.event === 'cannot_judge' ? 'yellow' : 'green',
      bad: false,
    };
  }
  if (peer) {
    const dead = peer.event === 'peer_dead' || peer.event === 'path_broken';
    const flapping = peer.event === 'peer_flapping';
    const why = (dead || flapping) && peer.reason ? `, reason: ${peer.reason}` : '';
    const witnesses = peer.path ? `, reached by ${peer.path.witnesses.join(', ')}` : '';
    return {
      text:
        `${peer.event} ${peer.peer.id} (${peer.peer.address}) reported by ` +
        `${nodeNameOf(peer.coordinator)}, epoch ${peer.epoch}${why}${witnesses}, dedup ${peer.dedup_key}`,
      colour: dead ? 'red' : flapping ? 'yellow' : 'green',
      bad: false,
    };
  }
  const cluster = clusterStatusOf(w);
  if (cluster) {
    const map = cluster.peer_map;
    const alive = map.filter((p) => p.alive);
    const dead = map.filter((p) => p.health === 'dead');
    const unknown = map.filter((p) => p.health === 'unknown');
    const unseen = cluster.unseen_peers ?? 0;
    const details = [
      dead.length > 0 ? `dead: ${names(dead)}` : '',
      unknown.length > 0 ? `not yet seen: ${names(unknown)}` : '',
      unseen > 0 ? `${unseen} starting (not yet seen)` : '',
      cluster.sanity_check === 'not-configured' ? '' : `sanity check ${cluster.sanity_check}`,
      cluster.self_suspect
        ? `coordinator suspects itself (${cluster.unreachable_peers} peers unreachable)`
        : '',
    ].filter(Boolean);
    return {
      text:
        `cluster_status (${cluster.reason}): ${alive.length}/${map.length} alive, ` +
        `coordinator ${nodeNameOf(cluster.coordinator)}, epoch ${cluster.epoch}` +
        (details.length > 0 ? `; ${details.join('; ')}` : ''),
      colour: alive.length === map.length ? 'blue' : 'yellow',
      bad: false,
    };
  }
  return {
    text:
      `!!! ${w.kind} payload on ${w.path} FAILS ITS SCHEMA: ${w.errors.join('; ')} — ` +
      `body ${truncated(w.body)}`,
    colour: 'red',
    bad: true,
  };
}
