// PagerDuty Events API v2 events from alert groups: one page per group, not per node.
//
// A group whose firing changes hold several alerts opens one incident (`knh:group:<group key>`)
// listing them; it resolves when the last of them stops firing, so the adapter remembers which
// alerts each open grouped incident holds (bounded: the oldest incidents are forgotten first). A
// lone alert pages under its own key, which its resolution repeats. Rendering is otherwise pure.
import { createHash } from 'node:crypto';
import type { JudgementFacts } from '../wire/webhooks.js';
import type { Alert } from '../wire/alert.js';
import type { AlertGroup, ReceiverAdapter, ReceiverRequest } from '../alerts/receiver-adapter.js';
import { nodeNameOf } from '../wire/node-ref.js';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
/** PagerDuty's documented limits on `payload.summary` and `dedup_key`. */
export const SUMMARY_MAX = 1024;
export const DEDUP_KEY_MAX = 255;
/** Alerts a grouped incident's custom_details describe one by one (an event must stay < 512 KB). */
export const DETAILED = 200;
/** Alerts of open grouped incidents remembered by default. */
export const MAX_TRACKED = 10_000;
const WITNESSES_DETAILED = 20;
/** Peers a cannot_judge alert's custom_details name (KNH's events name at most as many). */
const UNREACHABLE_DETAILED = 50;

export interface PagerDutyOptions {
  routingKey: string;
  url?: string;
  /** payload.source for every event; by default the node's name (`knh` for a group). */
  source?: string;
  /** Alerts of open grouped incidents remembered; past it the oldest incidents are forgotten. */
  maxTracked?: number;
}

export interface PagerDutyAdapter extends ReceiverAdapter {
  /** Alerts remembered as members of open grouped incidents (at most `maxTracked`). */
  readonly tracked: number;
  /** Open grouped incidents remembered. */
  readonly openGroups: number;
}

export type Severity = 'critical' | 'error' | 'warning' | 'info';

export interface TriggerEvent {
  routing_key: string;
  event_action: 'trigger';
  dedup_key: string;
  payload: {
    summary: string;
    source: string;
    severity: Severity;
    timestamp: string;
    component: 'pod-network';
    group: 'knh';
    class: string;
    custom_details: Record<string, unknown>;
  };
  client: 'knh';
}
export interface ResolveEvent {
  routing_key: string;
  event_action: 'resolve';
  dedup_key: string;
}
export type PagerDutyEvent = TriggerEvent | ResolveEvent;

/** A key within PagerDuty's 255 characters: longer ones are hashed, the same for every event. */
export function dedupKeyOf(key: string): string {
  if (key.length <= DEDUP_KEY_MAX) return key;
  return `knh:sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/** `s`, cut to `max` characters ending in … (never splitting a surrogate pair). */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = /[\uD800-\uDBFF]/.test(s.charAt(max - 2)) ? max - 2 : max - 1;
  return `${s.slice(0, cut)}…`;
}

const iso = (ms: number) => new Date(ms).toISOString();
const isoSeconds = (ms: number) => iso(ms).replace(/\.\d{3}Z$/, 'Z');
/** `worker-3@10.0.0.3` → `worker-3` (ids are `NODE_NAME@POD_IP`). */
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const earliest = (alerts: readonly Alert[]) =>
  alerts.reduce((min, a) => Math.min(min, a.startsAt), Number.POSITIVE_INFINITY);
/**
 * A dead peer is critical. A coordinator that cannot judge the mesh is an error: nothing is
 * confirmed dead, but the mesh goes unjudged and several nodes may be down, so it pages too. A
 * broken path (its node reachable from others) is a warning.
 */
function severityOf(alerts: readonly Alert[]): Severity {
  if (alerts.some((a) => a.kind === 'peer_dead')) return 'critical';
  return alerts.some((a) => a.kind === 'cannot_judge') ? 'error' : 'warning';
}
/** The worst kind among them, as the event's class. */
function classOf(alerts: readonly Alert[]): Alert['kind'] {
  const kinds: readonly Alert['kind'][] = ['peer_dead', 'cannot_judge', 'path_broken'];
  return kinds.find((k) => alerts.some((a) => a.kind === k)) ?? 'path_broken';
}

function witnesses(a: Alert): string {
  const w = (a.path?.witnesses ?? []).map(nodeNameOf);
  if (w.length === 0) return 'other nodes';
  const shown = w.slice(0, WITNESSES_DETAILED).join(', ');
  return w.length > WITNESSES_DETAILED
    ? `${shown} and ${w.length - WITNESSES_DETAILED} more`
    : shown;
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
function summaryOf(a: Alert): string {
  if (a.kind === 'cannot_judge') return judgementSummary(a);
  const where = `${a.peer.node_name} (${a.peer.address})`;
  const seen = ` — seen by coordinator ${nodeNameOf(a.coordinator.id)} (${a.coordinator.address})`;
  const what =
    a.kind === 'peer_dead'
      ? `${where} unreachable since ${isoSeconds(a.startsAt)}${a.reason ? `; last failure: ${a.reason}` : ''}`
      : `path from ${nodeNameOf(a.path?.from ?? a.coordinator.id)} to ${where} broken since ` +
        `${isoSeconds(a.startsAt)}; reachable from ${witnesses(a)}`;
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

function detailsOf(a: Alert): Record<string, unknown> {
  return {
    alert_key: a.key,
    kind: a.kind,
    node: a.peer.node_name,
    peer_id: a.peer.id,
    pod_address: a.peer.address,
    since: iso(a.startsAt),
    coordinator: a.coordinator.id,
    coordinator_address: a.coordinator.address,
    reason: a.reason,
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
  };
}

/** A group's alert by name: a node, a path, or a coordinator that cannot judge the mesh. */
function nameOf(a: Alert): string {
  if (a.kind === 'peer_dead') return a.peer.node_name;
  if (a.kind === 'cannot_judge') return `${a.peer.node_name} (cannot judge)`;
  return `${nodeNameOf(a.path?.from ?? a.coordinator.id)}→${a.peer.node_name}`;
}

/** Several alerts as one title: counts, then names while they fit, then who saw them. */
function groupSummary(alerts: readonly Alert[]): string {
  const dead = alerts.filter((a) => a.kind === 'peer_dead');
  const judges = alerts.filter((a) => a.kind === 'cannot_judge');
  const paths = alerts.filter((a) => a.kind === 'path_broken');
  // A coordinator that cannot judge is counted apart: it is alive, not one of the nodes down.
  const counts = [
    dead.length > 0 ? `${plural(dead.length, 'node', 'nodes')} unreachable` : '',
    judges.length > 0
      ? `${plural(judges.length, 'coordinator cannot', 'coordinators cannot')} judge the mesh`
      : '',
    paths.length > 0 ? `${plural(paths.length, 'path', 'paths')} broken` : '',
  ].filter(Boolean);
  const coordinators = [...new Set(alerts.map((a) => nodeNameOf(a.coordinator.id)))];
  const since = earliest(alerts);
  const head = `knh: ${counts.join(', ')}: `;
  const tail = ` — since ${isoSeconds(since)}, seen by coordinator ${coordinators.slice(0, 3).join(', ')}`;
  const names = [...dead, ...judges, ...paths].map(nameOf);
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

export function pagerDutyAdapter({
  routingKey,
  url = PAGERDUTY_EVENTS_URL,
  source,
  maxTracked = MAX_TRACKED,
}: PagerDutyOptions): PagerDutyAdapter {
  /** Open grouped incidents (dedup key → alerts still firing), oldest first. */
  const members = new Map<string, Set<string>>();
  /** Alert key → the grouped incident it pages under. */
  const groupOf = new Map<string, string>();

  const request = (body: PagerDutyEvent): ReceiverRequest => ({ url, body, key: body.dedup_key });
  const resolve = (dedupKey: string) =>
    request({ routing_key: routingKey, event_action: 'resolve', dedup_key: dedupKey });
  const trigger = (
    dedupKey: string,
    fields: Omit<TriggerEvent['payload'], 'component' | 'group'>,
  ) =>
    request({
      routing_key: routingKey,
      event_action: 'trigger',
      dedup_key: dedupKey,
      payload: {
        summary: fields.summary,
        source: fields.source,
        severity: fields.severity,
        timestamp: fields.timestamp,
        component: 'pod-network',
        group: 'knh',
        class: fields.class,
        custom_details: fields.custom_details,
      },
      client: 'knh',
    });
  /** The payload fields alerts decide: where, how bad, since when, what kind. */
  const about = (alerts: readonly Alert[]) => ({
    source: source ?? ((alerts.length === 1 && alerts[0]?.peer.node_name) || 'knh'),
    severity: severityOf(alerts),
    timestamp: iso(earliest(alerts)),
    class: classOf(alerts),
  });

  function remember(dedupKey: string, alerts: readonly Alert[]) {
    const set = members.get(dedupKey) ?? new Set<string>();
    members.set(dedupKey, set);
    for (const a of alerts) {
      set.add(a.key);
      groupOf.set(a.key, dedupKey);
    }
    // Forget the oldest incidents (never the one just opened): their alerts then resolve under
    // their own keys, which PagerDuty drops, so such an incident waits for a person to resolve it.
    for (const [oldest, keys] of members) {
      if (groupOf.size <= maxTracked || oldest === dedupKey) break;
      for (const k of keys) groupOf.delete(k);
      members.delete(oldest);
    }
  }

  function test(group: AlertGroup): ReceiverRequest[] {
    const alerts = group.changes.map((c) => c.alert);
    const dedupKey = `knh:test:${group.at}`;
    const [only] = alerts;
    // The alert's title without its `knh: ` (a cannot_judge title is a sentence starting `knh `).
    const what = alerts.length === 1 && only ? `: ${summaryOf(only).replace(/^knh: /, '')}` : '';
    const fields =
      alerts.length > 0
        ? about(alerts)
        : { source: source ?? 'knh', timestamp: iso(group.at), class: 'test' };
    const open = trigger(dedupKey, {
      ...fields,
      summary: clip(`TEST: knh test alert, not a real problem${what}`, SUMMARY_MAX),
      severity: 'info',
      custom_details: {
        test: true,
        note: 'Sent by POST /test-alert to check this receiver; resolved at once.',
        alerts: alerts.slice(0, DETAILED).map(detailsOf),
      },
    });
    return [open, resolve(dedupKey)];
  }

  return {
    name: 'pagerduty',
    schema: 'pagerduty-event',
    get tracked() {
      return groupOf.size;
    },
    get openGroups() {
      return members.size;
    },
    render(group) {
      if (group.test) return test(group);
      const out: ReceiverRequest[] = [];
      // An alert already paged under a grouped incident is not paged again on its own.
      const firing = [
        ...new Map(
          group.changes
            .filter((c) => c.type === 'firing' && !groupOf.has(c.alert.key))
            .map((c) => [c.alert.key, c.alert]),
        ).values(),
      ];
      const [only] = firing;
      if (firing.length === 1 && only) {
        out.push(
          trigger(dedupKeyOf(only.key), {
            ...about(firing),
            summary: summaryOf(only),
            custom_details: detailsOf(only),
          }),
        );
      } else if (firing.length > 1) {
        const dedupKey = dedupKeyOf(`knh:group:${group.key}`);
        remember(dedupKey, firing);
        const details = {
          group_key: group.key,
          alert_count: firing.length,
          alerts: firing.slice(0, DETAILED).map(detailsOf),
          ...(firing.length > DETAILED ? { alerts_omitted: firing.length - DETAILED } : {}),
        };
        out.push(
          trigger(dedupKey, {
            ...about(firing),
            summary: groupSummary(firing),
            custom_details: details,
          }),
        );
      }
      const resolvedKeys = new Set<string>();
      for (const c of group.changes.filter((c) => c.type === 'resolved')) {
        const paged = c.alert.group;
        if (groupOf.has(c.alert.key)) resolvedKeys.add(c.alert.key);
        else if (paged !== undefined) {
          // Paged in a group by another coordinator: that page resolves with its last alert.
          const others = group.firing.some((a) => a.group === paged && a.key !== c.alert.key);
          if (!others) out.push(resolve(dedupKeyOf(`knh:group:${paged}`)));
        } else out.push(resolve(dedupKeyOf(c.alert.key)));
      }
      // A grouped incident resolves when none of its alerts fires any more: resolved in this
      // window, or missing from `group.firing` (which lists every alert still firing).
      const still = new Set(group.firing.map((a) => a.key));
      for (const [dedupKey, keys] of members) {
        for (const k of keys) {
          if (still.has(k) && !resolvedKeys.has(k)) continue;
          keys.delete(k);
          groupOf.delete(k);
        }
        if (keys.size > 0) continue;
        members.delete(dedupKey);
        out.push(resolve(dedupKey));
      }
      return out;
    },
  };
}
