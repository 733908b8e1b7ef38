// What to check first, in one line, for each way a node can fail as knh sees it: the failure the
// prober last saw (a connection refused, a timeout …) or, where there is none, the kind of alert.
// Every receiver shows it beside its alert; the words are said once, here. Pure.
import { relayFailureReason } from '../core/evidence.js';
import type { FailureReason } from '../core/transport.js';
import type { Alert, AlertKind } from '../wire/alert.js';

/** A dead peer, by the failure that decided it (the first word of its reason). */
const BY_FAILURE: Readonly<Record<FailureReason, string>> = {
  refused:
    "connection refused: the node is up but nothing listens on knh's port, so the knh pod or its container is down; check the pod's status and restarts",
  reset:
    "connection reset: the pod's process died mid-request, or conntrack or a proxy on the path cut it; check the pod's restarts and the node's conntrack",
  unreachable:
    "no route to the pod: the node is down or off the network, or the CNI has no route to the pod's IP; check the node's state, then the CNI on it",
  'connect-timeout':
    'connection timed out: packets are dropped on the way, by the CNI, a NetworkPolicy, or a node that is down or cut off; check the node, then policies and CNI',
  timeout:
    "connected, but no answer in time: the pod is overloaded or stuck (CPU throttling, memory) or the path drops packets; check the pod's CPU, memory and logs",
  'http-status':
    "the pod answered with an HTTP error: knh runs there but fails to answer; check the pod's logs",
  'bad-response':
    "not a valid knh answer: something else listens on the port, or that node's PEER_SECRET or version differs; check what runs there and its settings",
  aborted:
    'the probes were cut short here (the coordinator stopped, or its term ended): no evidence about this node; see whether the next coordinator alerts too',
};

/** The other kinds of alert, and a dead peer whose failure is not told. */
const BY_KIND: Readonly<Record<AlertKind, string>> = {
  peer_dead:
    "the node's knh pod does not answer: check the node's state, then the pod's status and restarts",
  path_broken:
    'other nodes reach it, one does not: a NetworkPolicy, the CNI routes between these two nodes, or a firewall on one of them',
  cannot_judge:
    "the coordinator's own node or network is the likely problem: check that node's network, its CNI, and the NetworkPolicies that apply to knh",
  peer_degraded:
    "loss or latency on most of this node's paths: check the node (CPU, NIC, conntrack) and the CNI on it",
  path_degraded:
    'loss or latency between these two nodes: check the network between them (overlay tunnels, links, zones)',
  peer_mtu:
    "full-size packets dropped on this node's paths: an MTU mismatch between the pod network (overlay) and the node's interfaces; check the CNI's MTU setting on it",
  path_mtu:
    "full-size packets dropped between these two nodes: an MTU mismatch on the way (overlay, tunnel, a link with a smaller MTU); check the CNI's MTU setting",
  egress_broken:
    "the node cannot send to the others, though they reach it: check egress NetworkPolicies, and the node's outbound routes and firewall",
  partition:
    "the nodes split into groups that cannot reach each other: check the links between zones or subnets, and the CNI's routes between them",
  peer_unauthenticated:
    "the node answers, but its knh and the coordinator's refuse each other's signed messages: its PEER_SECRET differs (a rotation half done) or is unset, or its clock is far off (NTP); the reason says which",
};

/** The one-line hint for an alert: by the failure the prober saw, else by its kind. */
export function hintOf(alert: Pick<Alert, 'kind' | 'reason'>): string {
  if (alert.kind === 'peer_dead' && alert.reason !== null) {
    const failure = relayFailureReason({ detail: alert.reason });
    if (failure) return BY_FAILURE[failure];
  }
  return BY_KIND[alert.kind];
}
