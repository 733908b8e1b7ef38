// What a PagerDuty event says about its alerts: how bad (severity, class), a title within PagerDuty's
// 1,024 characters, and bounded custom_details. Pure.
import type { FindingFacts, JudgementFacts } from '../wire/webhooks.js';
import type { Alert } from '../wire/alert.js';
import { nodeNameOf } from '../wire/node-ref.js';
import { hintOf } from './hints.js';
import {
  BY_URGENCY,
  findingCount,
  findingSentence,
  isFindingKind,
  plural,
  someOf,
} from './finding-text.js';

/** PagerDuty's documented limit on `payload.summary`. */
export const SUMMARY_MAX = 1024;
/** Nodes a list in custom_details names (witnesses, a finding's reach and sides): all counted. */
const WITNESSES_DETAILED = 20;
/** Peers a cannot_judge alert's custom_details name (KNH's events name at most as many). */
const UNREACHABLE_DETAILED = 50;

export type Severity = 'critical' | 'error' | 'warning' | 'info';

/** `s`, cut to `max` characters ending in … (never splitting a surrogate pair). */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = /[\uD800-\uDBFF]/.test(s.charAt(max - 2)) ? max - 2 : max - 1;
  return `${s.slice(0, cut)}…`;
}

export const iso = (ms: number) => new Date(ms).toISOString();
const isoSeconds = (ms: number) => iso(ms).replace(/\.\d{3}Z$/, 'Z');
export const earliest = (alerts: readonly Alert[]) =>
  alerts.reduce((min, a) => Math.min(min, a.startsAt), Number.POSITIVE_INFINITY);

/**
 * A dead peer is critical. A coordinator that cannot judge the mesh is an error: nothing is
 * confirmed dead, but the mesh goes unjudged and several nodes may be down, so it pages too. A
 * broken path and every finding of the nodes' paths (their nodes answer) are warnings.
 */
export function severityOf(alerts: readonly Alert[]): Severity {
  if (alerts.some((a) => a.kind === 'peer_dead')) return 'critical';
  return alerts.some((a) => a.kind === 'cannot_judge') ? 'error' : 'warning';
}

/** The most urgent kind among them, as the event's class. */
export function classOf(alerts: readonly Alert[]): Alert['kind'] {
  return BY_URGENCY.find((k) => alerts.some((a) => a.kind === k)) ?? 'path_broken';
}

function witnesses(a: Alert): string {
  const w = (a.path?.witnesses ?? []).map(nodeNameOf);
  return w.length === 0 ? 'other nodes' : someOf(w, WITNESSES_DETAILED);
}

/**
 * cannot_judge: knh's own sentence (who cannot judge, whom it does not reach, why that is no
 * verdict); without one, the figures.
 */
function judgementSummary(a: Alert): string {
  if (a.reason) return clip(a.reason, SUMMARY_MAX);
  const facts = a.judgement
    ? `reaches ${a.judgement.reaches} of ${a.judgement.peers} peers`
    : 'cannot reach most of its peers';
  return clip(
    `knh cannot judge the mesh: coordinator ${a.peer.node_name} (${a.peer.address}) ${facts} since ${isoSeconds(a.startsAt)}`,
    SUMMARY_MAX,
  );
}

/** What failed, where, since when, and who saw it: one alert as an incident title. */
export function summaryOf(a: Alert): string {
  if (a.kind === 'cannot_judge') return judgementSummary(a);
  const where = `${a.peer.node_name} (${a.peer.address})`;
  const seen = ` — seen by coordinator ${nodeNameOf(a.coordinator.id)} (${a.coordinator.address})`;
  const since = isoSeconds(a.startsAt);
  const what = isFindingKind(a.kind)
    ? findingSentence(a, a.kind, 'firing', { since, max: WITNESSES_DETAILED })
    : a.kind === 'peer_dead'
      ? `${where} unreachable since ${since}${a.reason ? `; last failure: ${a.reason}` : ''}`
      : `path from ${nodeNameOf(a.path?.from ?? a.coordinator.id)} to ${where} broken since ` +
        `${since}; reachable from ${witnesses(a)}`;
  return clip(`knh: ${what}${seen}`, SUMMARY_MAX);
}

/** cannot_judge: the figures the coordinator decided on, bounded like the other lists. */
function judgementDetails(j: JudgementFacts): Record<string, unknown> {
  return {
    reaches: j.reaches,
    peers: j.peers,
    unreachable: j.unreachable.slice(0, UNREACHABLE_DETAILED),
    unreachable_count: j.unreachable_count,
    corroborated_by: j.corroborated_by.slice(0, UNREACHABLE_DETAILED),
    corroborated_count: j.corroborated_by.length,
  };
}

/** A finding's facts as its event told them, each list of nodes bounded and counted. */
function factsDetails(f: FindingFacts): Record<string, unknown> {
  const some = (nodes: readonly string[]) => nodes.slice(0, WITNESSES_DETAILED);
  const { figures, mtu, egress, partition, auth } = f;
  return {
    ...(figures ? { figures } : {}),
    ...(auth ? { auth: { refusal: auth.refusal, offset_ms: auth.offset_ms } } : {}),
    ...(mtu ? { mtu } : {}),
    ...(egress
      ? {
          egress: {
            reaches: some(egress.reaches),
            reaches_count: egress.reaches.length,
            reached_by: some(egress.reached_by),
            reached_by_count: egress.reached_by.length,
          },
        }
      : {}),
    ...(partition
      ? {
          partition: {
            sides: partition.sides.slice(0, WITNESSES_DETAILED).map(some),
            side_sizes: partition.sides.slice(0, WITNESSES_DETAILED).map((s) => s.length),
            side_count: partition.sides.length,
          },
        }
      : {}),
  };
}

export function detailsOf(a: Alert): Record<string, unknown> {
  return {
    alert_key: a.key,
    kind: a.kind,
    node: a.peer.node_name,
    peer_id: a.peer.id,
    ...(a.peer.pod_name ? { pod: a.peer.pod_name } : {}),
    pod_address: a.peer.address,
    since: iso(a.startsAt),
    coordinator: a.coordinator.id,
    coordinator_address: a.coordinator.address,
    ...(a.coordinator.pod_name ? { coordinator_pod: a.coordinator.pod_name } : {}),
    reason: a.reason,
    what_to_check: hintOf(a),
    ...(a.severity ? { severity: a.severity } : {}),
    ...(a.path
      ? {
          path: {
            from: a.path.from,
            to: a.path.to,
            witnesses: a.path.witnesses.slice(0, WITNESSES_DETAILED),
            witness_count: a.path.witnesses.length,
          },
        }
      : {}),
    ...(a.judgement ? { judgement: judgementDetails(a.judgement) } : {}),
    ...(a.facts ? { facts: factsDetails(a.facts) } : {}),
  };
}

/** Words after a finding's name in a group's title, where its count is not next to it. */
const TAG: Partial<Record<Alert['kind'], string>> = {
  cannot_judge: 'cannot judge',
  peer_degraded: 'degraded',
  path_degraded: 'degraded',
  peer_mtu: 'MTU',
  path_mtu: 'MTU',
  egress_broken: 'egress',
  peer_unauthenticated: 'out of sight',
};

/** A group's alert by name: a node, a path, the mesh; tagged unless it is a node down or a path broken. */
function nameOf(a: Alert): string {
  if (a.kind === 'partition') return 'the mesh (partitioned)';
  const tag = TAG[a.kind] ? ` (${TAG[a.kind]})` : '';
  const path = a.kind === 'path_broken' || a.kind === 'path_degraded' || a.kind === 'path_mtu';
  const from = path ? `${nodeNameOf(a.path?.from ?? a.coordinator.id)}→` : '';
  return `${from}${a.peer.node_name}${tag}`;
}

/** How many alerts of a kind fire, as a group's title counts them. */
function countOf(kind: Alert['kind'], n: number): string {
  if (isFindingKind(kind)) return findingCount(kind, n, 'firing');
  // A coordinator that cannot judge is counted apart: it is alive, not one of the nodes down.
  if (kind === 'cannot_judge')
    return `${plural(n, 'coordinator cannot', 'coordinators cannot')} judge the mesh`;
  return kind === 'peer_dead'
    ? `${plural(n, 'node', 'nodes')} unreachable`
    : `${plural(n, 'path', 'paths')} broken`;
}

/** Several alerts as one title: counts, most urgent first, then names while they fit, then who saw them. */
export function groupSummary(alerts: readonly Alert[]): string {
  const byKind = BY_URGENCY.map((k) => alerts.filter((a) => a.kind === k)).filter(
    (of) => of.length > 0,
  );
  const counts = byKind.map((of) => countOf(of[0]?.kind ?? 'peer_dead', of.length));
  const coordinators = [...new Set(alerts.map((a) => nodeNameOf(a.coordinator.id)))];
  const since = earliest(alerts);
  const head = `knh: ${counts.join(', ')}: `;
  const tail = ` — since ${isoSeconds(since)}, seen by coordinator ${coordinators.slice(0, 3).join(', ')}`;
  const names = byKind.flat().map(nameOf);
  const room = SUMMARY_MAX - head.length - tail.length - ` and ${names.length} more`.length;
  let listed = '';
  let shown = 0;
  for (const n of names) {
    const next = shown === 0 ? n : `${listed}, ${n}`;
    if (next.length > room) break;
    listed = next;
    shown += 1;
  }
  const more =
    shown < names.length ? `${shown > 0 ? ' and' : ''} ${names.length - shown} more` : '';
  return clip(`${head}${listed}${more}${tail}`, SUMMARY_MAX);
}
