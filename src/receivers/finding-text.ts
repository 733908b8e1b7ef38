// How the receivers rank alerts, and word the findings of every node's paths (peer_degraded …
// partition): what is wrong, where, with which figures. Each receiver formats these its own way
// (Slack's mrkdwn, PagerDuty's and Alertmanager's plain text); the words are said once, here. Pure.
import type { Alert, AlertKind } from '../wire/alert.js';
import {
  isFindingEvent,
  type FindingEvent,
  type FindingFacts,
  type PathFigures,
  type Severity,
} from '../wire/webhooks.js';
import { nodeNameOf } from '../wire/node-ref.js';

/** The kinds of alert only findings open (a path_broken may be one too: its severity says). */
export type FindingKind = Extract<AlertKind, FindingEvent>;

export const isFindingKind = (kind: AlertKind): kind is FindingKind => isFindingEvent(kind);

/**
 * Every kind, most urgent first: a node down, a mesh nobody judges, then what leaves the nodes up
 * (in the order the localization finds them: the widest first). Receivers list and class by it.
 */
export const BY_URGENCY: readonly AlertKind[] = [
  'peer_dead',
  'cannot_judge',
  'partition',
  'egress_broken',
  'path_broken',
  'peer_mtu',
  'path_mtu',
  'peer_degraded',
  'path_degraded',
  'peer_unauthenticated',
];

/**
 * How urgent an alert is at the receivers: a node down, or a mesh nobody can judge, is critical;
 * anything whose nodes still answer (a broken path, every finding) is a warning.
 */
export function alertSeverity(a: Alert): Severity {
  if (a.severity) return a.severity;
  return a.kind === 'peer_dead' || a.kind === 'cannot_judge' ? 'critical' : 'warning';
}

export const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** `names`, the first `max` of them, and how many more of `total` there are. */
export function someOf(names: readonly string[], max: number, total = names.length): string {
  const shown = names.slice(0, max);
  const more = total - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

type Change = 'firing' | 'resolved';

/** What a finding's subject is while it fires, and once it is resolved. */
const STATE: Record<FindingKind, Record<Change, string>> = {
  peer_degraded: { firing: 'degraded', resolved: 'healthy again' },
  path_degraded: { firing: 'degraded', resolved: 'healthy again' },
  peer_mtu: {
    firing: 'dropping full-size packets (MTU)',
    resolved: 'passing full-size packets again',
  },
  path_mtu: {
    firing: 'dropping full-size packets (MTU)',
    resolved: 'passing full-size packets again',
  },
  egress_broken: { firing: 'broken', resolved: 'restored' },
  partition: { firing: 'partitioned', resolved: 'whole again' },
  peer_unauthenticated: {
    firing: 'out of sight (its messages cannot be authenticated)',
    resolved: 'authenticated again',
  },
};

export const findingState = (kind: FindingKind, change: Change): string => STATE[kind][change];

/** How many alerts of a kind, as a section title or a summary counts them: `2 nodes degraded`. */
export function findingCount(kind: FindingKind, n: number, change: Change): string {
  const state = STATE[kind][change];
  switch (kind) {
    case 'peer_degraded':
    case 'peer_mtu':
    case 'peer_unauthenticated':
      return `${plural(n, 'node', 'nodes')} ${state}`;
    case 'path_degraded':
    case 'path_mtu':
      return `${plural(n, 'path', 'paths')} ${state}`;
    case 'egress_broken':
      return `egress ${state} on ${plural(n, 'node', 'nodes')}`;
    case 'partition':
      // One partition at a time; two only when one coordinator resolves and another opens.
      return `mesh ${state}${n > 1 ? ` (${n} alerts)` : ''}`;
  }
}

/** A finding as a short title: `worker-3 degraded`, `path worker-2 → worker-3 degraded`. */
export function findingHeadline(a: Alert, kind: FindingKind, change: Change): string {
  const state = STATE[kind][change];
  switch (kind) {
    case 'partition':
      return `mesh ${state}`;
    case 'egress_broken':
      return `${a.peer.node_name} egress ${state}`;
    case 'path_degraded':
    case 'path_mtu':
      return `path ${nodeNameOf(a.path?.from ?? a.coordinator.id)} → ${a.peer.node_name} ${state}`;
    default:
      return `${a.peer.node_name} ${state}`;
  }
}

/** How a receiver writes the parts taken from an alert (escaped, emphasised, bounded). */
export interface Words {
  name(s: string): string;
  address(s: string): string;
  text(s: string): string;
}
export const PLAIN: Words = { name: (s) => s, address: (s) => s, text: (s) => s };

/** What a finding is about: `node worker-3 (10.0.0.3:8080)`, `the path from A to B (…)`, `the mesh`. */
export function findingSubject(a: Alert, kind: FindingKind, w: Words = PLAIN): string {
  const node = `${w.name(a.peer.node_name || a.peer.id)} (${w.address(a.peer.address)})`;
  switch (kind) {
    case 'partition':
      return 'the mesh';
    case 'egress_broken':
      return `the egress of node ${node}`;
    case 'path_degraded':
    case 'path_mtu':
      return `the path from ${w.name(nodeNameOf(a.path?.from ?? a.coordinator.id))} to ${node}`;
    default:
      return `node ${node}`;
  }
}

/** `25% of 40 probes` lost. */
export const lossText = (f: PathFigures) =>
  `${Math.round(f.loss_ratio * 1000) / 10}% of ${plural(f.samples, 'probe', 'probes')}`;

/** `p50 12.3 ms, p99 480 ms` (a percentile is n/a when no probe was answered). */
export function latencyText(f: PathFigures): string {
  const ms = (v: number | null) => (v === null ? 'n/a' : `${v} ms`);
  return `p50 ${ms(f.p50_ms)}, p99 ${ms(f.p99_ms)}`;
}

/** `loss 25% of 40 probes, p50 12.3 ms, p99 480 ms`. */
export const figuresText = (f: PathFigures) => `loss ${lossText(f)}, ${latencyText(f)}`;

export const mtuText = (size: number) =>
  `packets of ${size} bytes of payload are dropped, smaller ones pass`;

export function egressText(e: NonNullable<FindingFacts['egress']>): string {
  const out =
    e.reaches.length === 0 ? 'no other node' : `only ${plural(e.reaches.length, 'node', 'nodes')}`;
  return `it reaches ${out}, while ${plural(e.reached_by.length, 'node reaches', 'nodes reach')} it`;
}

/** The sides, the first `max` of them, each naming its first `max` nodes: `[a, b] | [c, d]`. */
export function sidesText(sides: readonly string[][], max: number): string {
  const shown = sides.slice(0, max).map((side) => `[${someOf(side, max)}]`);
  const more = sides.length > max ? ` and ${sides.length - max} more sides` : '';
  return `${plural(sides.length, 'side', 'sides')} cannot reach each other: ${shown.join(' | ')}${more}`;
}

/** `it refuses the coordinator's messages (expired); its clock is 120 s ahead`. */
export function authText(a: NonNullable<FindingFacts['auth']>): string {
  const off = a.offset_ms;
  const clock =
    off === null
      ? ''
      : `; its clock is ${Math.round(Math.abs(off) / 1000)} s ${off > 0 ? 'ahead' : 'behind'}`;
  if (a.refusal === 'unsigned') {
    return `it has no PEER_SECRET: it answers the coordinator's messages unsigned, and its own are refused${clock}`;
  }
  if (a.refusal.startsWith('ping-')) {
    return `its answers to the coordinator's probes prove nothing (${a.refusal}): it holds another PEER_SECRET or none, or something else answers for its address${clock}`;
  }
  return `its signed messages and the coordinator's are refused (${a.refusal})${clock}`;
}

/** The facts a finding's event told, in words, naming at most `max` nodes a list; '' if none. */
export function factsText(facts: FindingFacts | undefined, max: number): string {
  if (facts?.auth) return authText(facts.auth);
  if (facts?.figures) return figuresText(facts.figures);
  if (facts?.mtu) return mtuText(facts.mtu.size);
  if (facts?.egress) return egressText(facts.egress);
  if (facts?.partition) return sidesText(facts.partition.sides, max);
  return '';
}

/**
 * A finding in a sentence: `worker-3 (10.0.0.3:8080) is degraded since <since>: loss …` while it
 * fires, its facts naming at most `max` nodes a list (none without `max`); `… is healthy again
 * after <after>` once resolved (without figures: a resolved alert carries the opening's, no longer
 * true). `since` and `after` as the receiver writes times.
 */
export function findingSentence(
  a: Alert,
  kind: FindingKind,
  change: Change,
  {
    since,
    after,
    words = PLAIN,
    max,
  }: { since?: string; after?: string; words?: Words; max?: number } = {},
): string {
  const head = `${findingSubject(a, kind, words)} is ${STATE[kind][change]}`;
  if (change === 'resolved') return `${head}${after ? ` after ${after}` : ''}`;
  const facts = max === undefined ? '' : factsText(a.facts, max);
  return `${head}${since ? ` since ${since}` : ''}${facts ? `: ${words.text(facts)}` : ''}`;
}

/** `text` with its first letter a capital (a sentence that starts with `the path …`). */
export const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
