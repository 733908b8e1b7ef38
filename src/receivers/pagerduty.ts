// PagerDuty Events API v2 events from alert groups: one page per group, not per node.
//
// A group whose firing changes hold several alerts opens one incident (`knh:group:<group key>`)
// listing them; it resolves when the last of them stops firing, so the adapter remembers which
// alerts each open grouped incident holds (bounded: the oldest incidents are forgotten first). A
// lone alert pages under its own key, which its resolution repeats. Rendering is otherwise pure.
import { createHash } from 'node:crypto';
import type { Alert } from '../wire/alert.js';
import type { AlertGroup, ReceiverAdapter, ReceiverRequest } from '../alerts/receiver-adapter.js';
import {
  classOf,
  clip,
  detailsOf,
  earliest,
  groupSummary,
  iso,
  severityOf,
  summaryOf,
  SUMMARY_MAX,
  type Severity,
} from './pagerduty-summary.js';
import { linksOf, statusPageHref, type AlertLinks } from './links.js';

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
/** PagerDuty's documented limit on `dedup_key`. */
export const DEDUP_KEY_MAX = 255;
/** Alerts a grouped incident's custom_details describe one by one (an event must stay < 512 KB). */
export const DETAILED = 200;
/** Alerts of open grouped incidents remembered by default. */
export const MAX_TRACKED = 10_000;

export interface PagerDutyOptions {
  /** The integration key, or where to read it now (PAGERDUTY_ROUTING_KEY_FILE, re-read). */
  routingKey: string | (() => string);
  url?: string;
  /** payload.source for every event; by default the node's name (`knh` for a group or a partition). */
  source?: string;
  /** Alerts of open grouped incidents remembered; past it the oldest incidents are forgotten. */
  maxTracked?: number;
  /** The status page (`client_url`, and a link) and the runbook (a link) of every trigger. */
  links?: AlertLinks;
}

export interface PagerDutyAdapter extends ReceiverAdapter {
  /** Alerts remembered as members of open grouped incidents (at most `maxTracked`). */
  readonly tracked: number;
  /** Open grouped incidents remembered. */
  readonly openGroups: number;
}

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
  client_url?: string;
  links?: { href: string; text: string }[];
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

export function pagerDutyAdapter({
  routingKey,
  url = PAGERDUTY_EVENTS_URL,
  source,
  maxTracked = MAX_TRACKED,
  links = {},
}: PagerDutyOptions): PagerDutyAdapter {
  const keyNow = typeof routingKey === 'function' ? routingKey : () => routingKey;
  const clientUrl = statusPageHref(links);
  /** Open grouped incidents (dedup key → alerts still firing), oldest first. */
  const members = new Map<string, Set<string>>();
  /** Alert key → the grouped incident it pages under. */
  const groupOf = new Map<string, string>();

  const request = (body: PagerDutyEvent): ReceiverRequest => ({ url, body, key: body.dedup_key });
  const resolve = (dedupKey: string) =>
    request({ routing_key: keyNow(), event_action: 'resolve', dedup_key: dedupKey });
  const trigger = (
    dedupKey: string,
    fields: Omit<TriggerEvent['payload'], 'component' | 'group'>,
    alerts: readonly Alert[],
  ) => {
    const linked = linksOf(links, alerts);
    return request({
      routing_key: keyNow(),
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
      ...(clientUrl ? { client_url: clientUrl } : {}),
      ...(linked.length > 0 ? { links: linked } : {}),
    });
  };
  /** The payload fields alerts decide: where, how bad, since when, what kind. */
  const about = (alerts: readonly Alert[]) => ({
    // A lone alert's node, but a partition's (the coordinator that told it): it is the mesh's.
    source:
      source ??
      ((alerts.length === 1 && alerts[0]?.kind !== 'partition' && alerts[0]?.peer.node_name) ||
        'knh'),
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
    const open = trigger(
      dedupKey,
      {
        ...fields,
        summary: clip(`TEST: knh test alert, not a real problem${what}`, SUMMARY_MAX),
        severity: 'info',
        custom_details: {
          test: true,
          note: 'Sent by POST /test-alert to check this receiver; resolved at once.',
          alerts: alerts.slice(0, DETAILED).map(detailsOf),
        },
      },
      alerts,
    );
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
          trigger(
            dedupKeyOf(only.key),
            { ...about(firing), summary: summaryOf(only), custom_details: detailsOf(only) },
            firing,
          ),
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
          trigger(
            dedupKey,
            { ...about(firing), summary: groupSummary(firing), custom_details: details },
            firing,
          ),
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
