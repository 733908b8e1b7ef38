// The generic webhook receiver for in-house receivers: knh's own JSON (schemas/alert-webhook); pure.
import {
  MAX_LISTED_UNREACHABLE,
  type FindingFacts,
  type JudgementFacts,
  type Severity,
} from '../wire/webhooks.js';
import type { Alert, AlertKind } from '../wire/alert.js';
import type {
  AlertChange,
  AlertGroup,
  ReceiverAdapter,
  ReceiverRequest,
} from '../alerts/receiver-adapter.js';
import {
  alertSeverity,
  BY_URGENCY,
  findingCount,
  findingSentence,
  isFindingKind,
  plural,
} from './finding-text.js';
import { hintOf } from './hints.js';
import { runbookHref, statusPageHref, type AlertLinks } from './links.js';

/** Bounds shared with schemas/alert-webhook.schema.json: text longer than these is clipped. */
export const SUMMARY_MAX = 1000;
export const REASON_MAX = 1000;
export const CLUSTER_MAX = 253;

export interface WebhookAlert {
  status: 'firing' | 'resolved';
  key: string;
  kind: AlertKind;
  node_name: string;
  peer_id: string;
  address: string;
  /** The peer's pod, where discovery names it. */
  pod_name?: string;
  starts_at: string;
  /** When it ended; null while firing. */
  ends_at: string | null;
  /** The coordinator that decided it, and its pod where known (POD_NAME). */
  coordinator: { id: string; address: string; pod_name?: string };
  reason: string | null;
  /** What to check first, in one line (src/receivers/hints.ts): firing changes only. */
  hint?: string;
  /** RUNBOOK_URL for this kind of alert, when set. */
  runbook_url?: string;
  path: { from: string; to: string; witnesses: string[] } | null;
  /**
   * cannot_judge: what the coordinator (`node_name`, `peer_id`, `address`: alive, not failed)
   * could see, as the alert carries it (a resolution: the opening's figures, or those of the
   * coordinator that resolved it). Absent for the other kinds, so their alerts are unchanged.
   */
  judgement?: JudgementFacts;
  /**
   * critical: a node down, or a coordinator that cannot judge the mesh; warning: the nodes answer
   * (a broken path, every finding). Always sent; optional in the schema (older versions left it out).
   */
  severity?: Severity;
  /** Findings of every node's paths: their figures, probe size, reach or sides, as told. */
  facts?: FindingFacts;
}

export interface WebhookAlertBody {
  version: 1;
  type: 'alert' | 'test';
  group_key: string;
  timestamp: string;
  cluster?: string;
  /** firing if any change in the group fires. */
  status: 'firing' | 'resolved';
  changes: WebhookAlert[];
  /** Every alert still firing after these changes. */
  firing: WebhookAlert[];
  summary: string;
  /** STATUS_PAGE_URL, when set. */
  status_page_url?: string;
}

export interface WebhookHeartbeatBody {
  version: 1;
  type: 'heartbeat';
  timestamp: string;
  cluster?: string;
  firing_count: number;
  summary: string;
}

export interface WebhookOptions {
  /** Where to POST, or where to read it now (ALERT_WEBHOOK_URL_FILE, re-read). */
  url: string | (() => string);
  /** Called for every request, so a rotated Secret (AuthHeaderSource) is used at once. */
  auth?: () => Record<string, string>;
  /** Send a heartbeat this often (ms); none when absent. */
  heartbeatMs?: number;
  /** A name for the cluster, for receivers that hear from several. */
  cluster?: string;
  /** The status page (every body's `status_page_url`) and the runbook (each alert's). */
  links?: AlertLinks;
}

const iso = (ms: number) => new Date(ms).toISOString();

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function webhookAlert(
  alert: Alert,
  status: 'firing' | 'resolved',
  at: number,
  { links, hinted }: { links: AlertLinks; hinted: boolean },
): WebhookAlert {
  const { pod_name: coordinatorPod } = alert.coordinator;
  const runbook = runbookHref(links, alert.kind);
  return {
    status,
    key: alert.key,
    kind: alert.kind,
    node_name: alert.peer.node_name,
    peer_id: alert.peer.id,
    address: alert.peer.address,
    ...(alert.peer.pod_name ? { pod_name: alert.peer.pod_name } : {}),
    starts_at: iso(alert.startsAt),
    // A resolution always says when: the group's time if the alert did not record it.
    ends_at: status === 'resolved' ? iso(alert.endsAt ?? at) : null,
    // Its node is in its id (`NODE_NAME@POD_IP`); its pod, where known, beside it.
    coordinator: {
      id: alert.coordinator.id,
      address: alert.coordinator.address,
      ...(coordinatorPod ? { pod_name: coordinatorPod } : {}),
    },
    reason: alert.reason === null ? null : clip(alert.reason, REASON_MAX),
    // What fires now needs checking; a resolution or a repeat in `firing` does not (and 5,000
    // nodes lost together would carry the same sentence 10,000 times).
    ...(hinted ? { hint: hintOf(alert) } : {}),
    ...(runbook ? { runbook_url: runbook } : {}),
    path: alert.path
      ? { from: alert.path.from, to: alert.path.to, witnesses: [...alert.path.witnesses] }
      : null,
    ...(alert.judgement ? { judgement: judgementOf(alert.judgement) } : {}),
    severity: alertSeverity(alert),
    ...(alert.facts ? { facts: factsOf(alert.facts) } : {}),
  };
}

/** A copy of the facts the schema knows (an alert shared by a newer version may carry more). */
function factsOf({ figures, mtu, egress, partition, auth }: FindingFacts): FindingFacts {
  return {
    ...(auth ? { auth: { refusal: auth.refusal, offset_ms: auth.offset_ms } } : {}),
    ...(figures
      ? {
          figures: {
            samples: figures.samples,
            loss_ratio: figures.loss_ratio,
            p50_ms: figures.p50_ms,
            p99_ms: figures.p99_ms,
          },
        }
      : {}),
    ...(mtu ? { mtu: { size: mtu.size } } : {}),
    ...(egress
      ? { egress: { reaches: [...egress.reaches], reached_by: [...egress.reached_by] } }
      : {}),
    ...(partition ? { partition: { sides: partition.sides.map((side) => [...side]) } } : {}),
  };
}

/** A copy within the schema's bound on the peers listed (all of them are still counted). */
function judgementOf(j: JudgementFacts): JudgementFacts {
  return {
    reaches: j.reaches,
    peers: j.peers,
    unreachable: j.unreachable
      .slice(0, MAX_LISTED_UNREACHABLE)
      .map((p) => ({ id: p.id, address: p.address, node_name: p.node_name })),
    unreachable_count: j.unreachable_count,
    corroborated_by: [...j.corroborated_by],
  };
}

const node = (a: Alert) => `node ${a.peer.node_name || a.peer.id} (${a.peer.address})`;

/**
 * cannot_judge in words: the coordinator is alive and cannot tell its peers' failure from its own
 * isolation (knh's full sentence is in `reason`). A resolution states no figures: its alert is
 * usually the firing one ended, whose figures are the opening's.
 */
function describeJudgement({ type, alert }: AlertChange): string {
  const who = `coordinator ${alert.peer.node_name || alert.peer.id} (${alert.peer.address})`;
  if (type === 'resolved') return `the mesh is judged again after ${who} could not judge it`;
  const j = alert.judgement;
  return `${who} cannot judge the mesh${j ? `: it reaches ${j.reaches} of ${j.peers} peers` : ''}`;
}

/** One change in words: what a person reading a chat line or a log needs first. */
function describeChange(change: AlertChange): string {
  const { type, alert } = change;
  if (alert.kind === 'cannot_judge') return describeJudgement(change);
  if (isFindingKind(alert.kind)) return findingSentence(alert, alert.kind, type, { max: 5 });
  if (alert.kind === 'peer_dead') {
    if (type === 'resolved') return `${node(alert)} is back up`;
    return `${node(alert)} is down${alert.reason ? ` (${alert.reason})` : ''}`;
  }
  const path = `the path from ${alert.path?.from ?? alert.coordinator.id} to ${node(alert)}`;
  if (type === 'resolved') return `${path} is restored`;
  const witnesses = alert.path?.witnesses.length ?? 0;
  return `${path} is broken (${plural(witnesses, 'other node reaches', 'other nodes reach')} it)`;
}

/** Several changes in words: counts per kind, so the sentence stays short for any group size. */
function describeChanges(changes: readonly AlertChange[]): string {
  const [only] = changes;
  if (changes.length === 1 && only) return describeChange(only);
  if (changes.length === 0) return 'no changes';
  const count = (kind: AlertKind, type: AlertChange['type']) =>
    changes.filter((c) => c.alert.kind === kind && c.type === type).length;
  const parts = [
    [count('peer_dead', 'firing'), 'node down', 'nodes down'],
    [count('peer_dead', 'resolved'), 'node back up', 'nodes back up'],
    [count('path_broken', 'firing'), 'path broken', 'paths broken'],
    [count('path_broken', 'resolved'), 'path restored', 'paths restored'],
    // Not `nodes down`: a coordinator that cannot judge is up; it withholds its verdicts.
    [
      count('cannot_judge', 'firing'),
      'coordinator cannot judge the mesh',
      'coordinators cannot judge the mesh',
    ],
    [
      count('cannot_judge', 'resolved'),
      'cannot-judge alert resolved',
      'cannot-judge alerts resolved',
    ],
  ] as const;
  const findings = BY_URGENCY.filter(isFindingKind).flatMap((kind) =>
    (['firing', 'resolved'] as const).map((type) => ({ kind, type, n: count(kind, type) })),
  );
  return [
    ...parts.filter(([n]) => n > 0).map(([n, one, many]) => plural(n, one, many)),
    ...findings.filter(({ n }) => n > 0).map(({ kind, type, n }) => findingCount(kind, n, type)),
  ].join(', ');
}

const firingNow = (n: number) =>
  n === 0 ? 'no alerts firing' : `${plural(n, 'alert', 'alerts')} firing`;

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function webhookAlertBody(
  group: AlertGroup,
  cluster?: string,
  links: AlertLinks = {},
): WebhookAlertBody {
  const prefix = cluster ? `[${cluster}] ` : '';
  const what = `${describeChanges(group.changes)}; ${firingNow(group.firing.length)}`;
  const page = statusPageHref(links);
  const summary = group.test
    ? `${prefix}Test alert from knh, not a real problem: ${what}.`
    : `${prefix}${capitalized(what)}.`;
  return {
    version: 1,
    type: group.test ? 'test' : 'alert',
    group_key: group.key,
    timestamp: iso(group.at),
    ...(cluster ? { cluster } : {}),
    status: group.changes.some((c) => c.type === 'firing') ? 'firing' : 'resolved',
    changes: group.changes.map((c) =>
      webhookAlert(c.alert, c.type, group.at, { links, hinted: c.type === 'firing' }),
    ),
    firing: group.firing.map((a) => webhookAlert(a, 'firing', group.at, { links, hinted: false })),
    summary: clip(summary, SUMMARY_MAX),
    ...(page ? { status_page_url: page } : {}),
  };
}

export function webhookHeartbeatBody(
  firing: readonly Alert[],
  now: number,
  cluster?: string,
): WebhookHeartbeatBody {
  const prefix = cluster ? `[${cluster}] ` : '';
  return {
    version: 1,
    type: 'heartbeat',
    timestamp: iso(now),
    ...(cluster ? { cluster } : {}),
    firing_count: firing.length,
    summary: clip(`${prefix}knh is watching: ${firingNow(firing.length)}.`, SUMMARY_MAX),
  };
}

/**
 * A receiver that POSTs knh's own JSON to `url`. Alert groups and test alerts are rendered as
 * they come. With `heartbeatMs`, a heartbeat is also POSTed to the same URL that often, for a
 * dead man's switch: the receiver must page when heartbeats stop (say after three missed ones),
 * because a dead cluster, a dead knh or a broken route to the receiver all look like silence,
 * and silence must not pass for health. A heartbeat carries `firing_count`, so a receiver can
 * also notice an alert it missed. Throws on options a config loader should have refused.
 */
export function webhookAdapter({
  url,
  auth,
  heartbeatMs,
  cluster,
  links = {},
}: WebhookOptions): ReceiverAdapter {
  const urlNow = typeof url === 'function' ? url : () => url;
  let parsed: URL;
  try {
    parsed = new URL(urlNow());
  } catch (err) {
    throw new Error(`webhook url is not a URL`, { cause: err });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`webhook url must be http or https, got ${parsed.protocol}`);
  }
  if (heartbeatMs !== undefined && !(Number.isInteger(heartbeatMs) && heartbeatMs > 0)) {
    throw new Error(`webhook heartbeatMs must be a positive integer, got ${heartbeatMs}`);
  }
  if (cluster !== undefined && (cluster.length === 0 || cluster.length > CLUSTER_MAX)) {
    throw new Error(`webhook cluster name must be 1 to ${CLUSTER_MAX} characters`);
  }
  // Read per request, never cached: the Secret may have rotated since the last one.
  const request = (key: string, body: unknown): ReceiverRequest => ({
    url: urlNow(),
    body,
    key,
    ...(auth ? { headers: { ...auth() } } : {}),
  });
  const adapter: ReceiverAdapter = {
    name: 'webhook',
    schema: 'alert-webhook',
    render: (group) => [request(group.key, webhookAlertBody(group, cluster, links))],
  };
  if (heartbeatMs === undefined) return adapter;
  return {
    ...adapter,
    heartbeatMs,
    // A key per beat: each is a delivery of its own, never a duplicate of the previous one.
    heartbeat: (firing, now) => [
      request(`knh:heartbeat:${now}`, webhookHeartbeatBody(firing, now, cluster)),
    ],
  };
}
