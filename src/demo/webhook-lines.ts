// One readable line per received webhook; a payload failing its schema is described loudly.
import type { ClusterStatusPayload, PeerPayload } from '../wire/webhooks.js';
import type { ReceivedWebhook } from './webhook-sink.js';
import type { Delivery } from './deliveries.js';
import { clusterStatusOf, peerStatusOf } from './received-webhooks.js';
import { seconds, type Colour } from './terminal-style.js';
import { nodeNameOf } from '../wire/node-ref.js';

export interface WebhookLine {
  text: string;
  colour: Colour;
  /** The payload failed knh's own schema (or was of no known kind). */
  bad: boolean;
}

export interface LineOptions {
  /** Show each peer-status event's dedup key (`--show-keys`). */
  showKeys?: boolean;
  /** Which delivery of its event a peer-status webhook is (by dedup key); absent: the first. */
  delivery?: Delivery;
}

function names(peers: readonly PeerPayload[]): string {
  return peers.map((p) => p.node_name).join(', ');
}

function truncated(value: unknown, max = 300): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `redelivery (delivery 2, first received 1.58 s earlier): `, or nothing for a first delivery. */
function redelivery(w: ReceivedWebhook, delivery: Delivery | undefined): string {
  if (!delivery || delivery.count < 2) return '';
  const earlier = seconds(w.receivedMs - delivery.firstMs);
  return `redelivery (delivery ${delivery.count}, first received ${earlier} earlier): `;
}

type Health = PeerPayload['health'];

/**
 * `cluster_status (election): 3 alive, 1 suspect of 4 peers, …`. A suspect peer is `alive: true`
 * in the payload (KNH's receivers page on false), so counting `alive` would show a crashed
 * coordinator its successor has not confirmed dead yet as alive. Not yet judged: never answered,
 * whether listed (health unknown) or still starting (counted in unseen_peers).
 */
function clusterLine(cluster: ClusterStatusPayload): WebhookLine {
  const map = cluster.peer_map;
  const peers = (health: Health) => map.filter((p) => p.health === health);
  const alive = peers('alive');
  const suspect = peers('suspect');
  const dead = peers('dead');
  const unknown = peers('unknown');
  const unseen = cluster.unseen_peers ?? 0;
  const total = map.length + unseen;
  const notJudged = unknown.length + unseen;
  const counts = [
    `${alive.length} alive`,
    suspect.length > 0 ? `${suspect.length} suspect` : '',
    dead.length > 0 ? `${dead.length} dead` : '',
    notJudged > 0 ? `${notJudged} not yet judged` : '',
  ].filter(Boolean);
  const details = [
    suspect.length > 0 ? `suspect: ${names(suspect)}` : '',
    dead.length > 0 ? `dead: ${names(dead)}` : '',
    unknown.length > 0 ? `never answered: ${names(unknown)}` : '',
    unseen > 0 ? `${unseen} starting (not yet seen)` : '',
    cluster.sanity_check === 'not-configured' ? '' : `sanity check ${cluster.sanity_check}`,
    cluster.self_suspect
      ? `coordinator suspects itself (${cluster.unreachable_peers} peers unreachable)`
      : '',
  ].filter(Boolean);
  return {
    text:
      `cluster_status (${cluster.reason}): ${counts.join(', ')} of ${total} peer${total === 1 ? '' : 's'}, ` +
      `coordinator ${nodeNameOf(cluster.coordinator)}, epoch ${cluster.epoch}` +
      (details.length > 0 ? `; ${details.join('; ')}` : ''),
    colour: alive.length === total ? 'blue' : 'yellow',
    bad: false,
  };
}

export function describeWebhook(
  w: ReceivedWebhook,
  { showKeys = false, delivery }: LineOptions = {},
): WebhookLine {
  const peer = peerStatusOf(w);
  const key = peer && showKeys ? `, dedup ${peer.dedup_key}` : '';
  const again = redelivery(w, delivery);
  // A redelivery is no news: dimmed, whatever its event, so only new events stand out.
  const colourOf = (colour: Colour): Colour => (again ? 'dim' : colour);
  if (peer && (peer.event === 'cannot_judge' || peer.event === 'can_judge')) {
    return {
      text: `${again}${peer.event}: ${peer.reason ?? ''}${key}`,
      colour: colourOf(peer.event === 'cannot_judge' ? 'yellow' : 'green'),
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
        `${again}${peer.event} ${peer.peer.id} (${peer.peer.address}) reported by ` +
        `${nodeNameOf(peer.coordinator)}, epoch ${peer.epoch}${why}${witnesses}${key}`,
      colour: colourOf(dead ? 'red' : flapping ? 'yellow' : 'green'),
      bad: false,
    };
  }
  const cluster = clusterStatusOf(w);
  if (cluster) return clusterLine(cluster);
  return {
    text:
      `!!! ${w.kind} payload on ${w.path} FAILS ITS SCHEMA: ${w.errors.join('; ')} — ` +
      `body ${truncated(w.body)}`,
    colour: 'red',
    bad: true,
  };
}
