// Prometheus Alertmanager as a receiver: knh's alerts as postable alerts of its API v2 (POST /api/v2/alerts).
import type { Alert } from '../wire/alert.js';
import type { AlertGroup, ReceiverAdapter, ReceiverRequest } from '../alerts/receiver-adapter.js';
import { nodeNameOf } from '../wire/node-ref.js';
import {
  alertSeverity,
  findingSentence,
  isFindingKind,
  sidesText,
  type FindingKind,
} from './finding-text.js';
import { hintOf } from './hints.js';
import { runbookHref, statusPageHref, type AlertLinks } from './links.js';

export interface AlertmanagerOptions {
  /**
   * Alertmanager's base URL, e.g. `http://alertmanager:9093` (a path prefix is kept), or where to
   * read it now (ALERTMANAGER_URL_FILE, re-read).
   */
  baseUrl: string | (() => string);
  /** How often firing alerts and the watchdog are re-posted. */
  resendMs?: number;
  /**
   * The status page: every alert's source link (`generatorURL`, Alertmanager's "Source"); the
   * runbook: each alert's `runbook_url` annotation.
   */
  links?: AlertLinks;
  /** Added as the `cluster` label to every alert, to tell clusters apart in one Alertmanager. */
  cluster?: string;
}

/** One element of Alertmanager's `postableAlerts` (schemas/alertmanager-alerts.schema.json). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
}

/**
 * A firing alert ends by itself this many resend intervals after it was last posted. Alertmanager
 * keeps an alert firing until its endsAt; if knh stops re-posting (every coordinator gone, the
 * network to Alertmanager cut) its alerts resolve by themselves instead of firing forever, while
 * three lost re-posts in a row do not make a real problem look resolved.
 */
const EXPIRY_RESENDS = 4;
/** The test alert (POST /test-alert) is never resolved by knh: Alertmanager ends it after this. */
const TEST_ALERT_MS = 60_000;

const ALERTNAME: Record<Alert['kind'], string> = {
  peer_dead: 'KnhPeerUnreachable',
  path_broken: 'KnhPathBroken',
  cannot_judge: 'KnhCannotJudge',
  peer_degraded: 'KnhPeerDegraded',
  path_degraded: 'KnhPathDegraded',
  peer_mtu: 'KnhPeerMtu',
  path_mtu: 'KnhPathMtu',
  egress_broken: 'KnhEgressBroken',
  partition: 'KnhPartition',
  peer_unauthenticated: 'KnhPeerUnauthenticated',
};
/** Annotations naming any number of nodes (cannot_judge's, a finding's) are cut here. */
const LIST_MAX = 4000;
/** A partition's sides each name at most this many nodes (each side is counted). */
const LISTED = 50;

const iso = (ms: number) => new Date(ms).toISOString();

/** The IP of `ip:port` or `[ipv6]:port`. */
function ipOf(address: string): string {
  const ip = address.slice(0, address.lastIndexOf(':'));
  return ip.startsWith('[') ? ip.slice(1, -1) : ip;
}

/**
 * Alertmanager identifies an alert by its whole label set, so labels hold only what stays the same
 * from firing to resolution. The coordinator is not one of them: the coordinator that resolves an
 * alert may not be the one that fired it (it is in the annotations). Alertmanager drops labels with
 * an empty value, so they are left out here too.
 */
function alertLabels(alert: Alert, cluster: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {
    alertname: ALERTNAME[alert.kind],
    // cannot_judge is critical like a dead peer, though no node is confirmed dead: while it fires
    // the mesh goes unjudged and nodes may be down unannounced. What leaves nodes up warns.
    severity: alertSeverity(alert),
    // A partition is about the mesh: its node is whichever coordinator told it, maybe another
    // one for its resolution.
    ...(alert.kind === 'partition'
      ? {}
      : {
          node: alert.peer.node_name,
          pod_ip: ipOf(alert.peer.address),
          instance: alert.peer.address,
        }),
    knh_key: alert.key,
  };
  if (alert.path) {
    labels.path_from = alert.path.from;
    labels.path_to = alert.path.to;
  }
  if (cluster) labels.cluster = cluster;
  return Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== ''));
}

/** `s`, cut to `max` characters ending in …. */
const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`);

/** A list of names, with how many more there are than it names. */
function listed(names: readonly string[], total: number): string {
  if (total === 0) return 'none';
  const more = total - names.length;
  return clip(`${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`, LIST_MAX);
}

/**
 * cannot_judge: the alert's node is the coordinator that cannot judge (alive, not failed); the
 * description is knh's own sentence (which says why it cannot tell failure from its own isolation),
 * and the figures it decided on have annotations of their own.
 */
function judgementAnnotations(alert: Alert): Record<string, string> {
  const node = `${alert.peer.node_name || alert.peer.id} (${alert.peer.address})`;
  const summary = `knh cannot judge the mesh: coordinator ${node} cannot reach most of its peers`;
  const ended = alert.endsAt === null ? '' : `; ended ${iso(alert.endsAt)}`;
  const sender = `${nodeNameOf(alert.coordinator.id)} (${alert.coordinator.address})`;
  const annotations: Record<string, string> = {
    summary,
    description: clip(
      `${alert.reason ?? summary}; since ${iso(alert.startsAt)}${ended}; sent by coordinator ${sender}.`,
      LIST_MAX,
    ),
    coordinator: alert.coordinator.id,
  };
  const facts = alert.judgement;
  if (facts) {
    annotations.reaches = `${facts.reaches} of ${facts.peers} peers`;
    annotations.unreachable = listed(
      facts.unreachable.map((p) => p.node_name || p.id),
      facts.unreachable_count,
    );
    annotations.corroborated_by = listed(
      facts.corroborated_by.map(nodeNameOf),
      facts.corroborated_by.length,
    );
  }
  return annotations;
}

/**
 * A finding: knh's words for what is wrong and where (its sentence, with node names), and its
 * facts one annotation each, for templates: figures, probe size, reach, sides.
 */
function findingAnnotations(alert: Alert, kind: FindingKind): Record<string, string> {
  const summary = `knh: ${findingSentence(alert, kind, 'firing')}`;
  const told = findingSentence(alert, kind, 'firing', { since: iso(alert.startsAt), max: LISTED });
  const ended = alert.endsAt === null ? '' : `; ended ${iso(alert.endsAt)}`;
  const sender = `${nodeNameOf(alert.coordinator.id)} (${alert.coordinator.address})`;
  const annotations: Record<string, string> = {
    summary: clip(summary, LIST_MAX),
    description: clip(
      `knh: ${told}${ended}; a warning: no node is down; decided by coordinator ${sender}.`,
      LIST_MAX,
    ),
    coordinator: alert.coordinator.id,
  };
  const { figures, mtu, egress, partition, auth } = alert.facts ?? {};
  if (figures) {
    annotations.loss_percent = String(Math.round(figures.loss_ratio * 1000) / 10);
    annotations.samples = String(figures.samples);
    if (figures.p50_ms !== null) annotations.p50_ms = String(figures.p50_ms);
    if (figures.p99_ms !== null) annotations.p99_ms = String(figures.p99_ms);
  }
  if (mtu) annotations.mtu_bytes = String(mtu.size);
  if (egress) {
    annotations.reaches = listed(egress.reaches, egress.reaches.length);
    annotations.reached_by = listed(egress.reached_by, egress.reached_by.length);
  }
  if (partition) annotations.sides = clip(sidesText(partition.sides, LISTED), LIST_MAX);
  if (auth) {
    annotations.refusal = auth.refusal;
    if (auth.offset_ms !== null) annotations.clock_offset_ms = String(auth.offset_ms);
  }
  return annotations;
}

/**
 * What every alert's annotations carry besides its own words: what to check first, the pods
 * involved (annotations, not labels: a pod is not known to every coordinator that may resolve it)
 * and the runbook, by the annotation name Prometheus' alerting rules use for it.
 */
function commonAnnotations(alert: Alert, links: AlertLinks): Record<string, string> {
  const runbook = runbookHref(links, alert.kind);
  return {
    hint: hintOf(alert),
    ...(alert.peer.pod_name && alert.kind !== 'partition' ? { pod: alert.peer.pod_name } : {}),
    ...(alert.coordinator.pod_name ? { coordinator_pod: alert.coordinator.pod_name } : {}),
    ...(runbook ? { runbook_url: runbook } : {}),
  };
}

function alertAnnotations(alert: Alert, links: AlertLinks): Record<string, string> {
  return { ...ownAnnotations(alert), ...commonAnnotations(alert, links) };
}

function ownAnnotations(alert: Alert): Record<string, string> {
  if (alert.kind === 'cannot_judge') return judgementAnnotations(alert);
  if (isFindingKind(alert.kind)) return findingAnnotations(alert, alert.kind);
  const node = `${alert.peer.node_name} (${alert.peer.address})`;
  const coordinator = nodeNameOf(alert.coordinator.id);
  const summary = alert.path
    ? `knh: ${alert.path.from} cannot reach ${alert.path.to}`
    : `knh: node ${node} is unreachable`;
  const since = `since ${iso(alert.startsAt)}`;
  // A path broken between two other nodes (a finding) has knh's sentence, not a probe's failure.
  const found = alert.severity === 'warning';
  const why = alert.reason ? `; ${found ? '' : 'last failure: '}${alert.reason}` : '';
  const ended = alert.endsAt === null ? '' : `; ended ${iso(alert.endsAt)}`;
  const annotations: Record<string, string> = {
    summary,
    description: `${summary} ${since}${why}${ended}; decided by coordinator ${coordinator} (${alert.coordinator.address}).`,
    coordinator: alert.coordinator.id,
  };
  if (alert.path) {
    annotations.witnesses = alert.path.witnesses.join(', ') || 'none';
  }
  return annotations;
}

export function alertmanagerAdapter({
  baseUrl,
  resendMs = 30_000,
  links = {},
  cluster,
}: AlertmanagerOptions): ReceiverAdapter {
  const baseNow = typeof baseUrl === 'function' ? baseUrl : () => baseUrl;
  const urlNow = () => `${baseNow().replace(/\/+$/, '')}/api/v2/alerts`;
  const page = statusPageHref(links);
  const source = page ? { generatorURL: page } : {};

  const postable = (alert: Alert, endsAt: number): PostableAlert => ({
    labels: alertLabels(alert, cluster),
    annotations: alertAnnotations(alert, links),
    startsAt: iso(alert.startsAt),
    // Alertmanager rejects an alert that ends before it starts (clocks of two coordinators may differ).
    endsAt: iso(Math.max(alert.startsAt, endsAt)),
    ...source,
  });
  const firing = (alert: Alert, now: number) => postable(alert, now + EXPIRY_RESENDS * resendMs);
  const request = (body: PostableAlert[], key: string): ReceiverRequest[] =>
    body.length === 0
      ? []
      : [{ url: urlNow(), body, key, headers: { 'content-type': 'application/json' } }];

  /** Always firing: an external dead man's switch pages when it stops arriving. */
  const watchdog = (now: number): PostableAlert => ({
    labels: { alertname: 'KnhWatchdog', severity: 'none', ...(cluster ? { cluster } : {}) },
    annotations: {
      summary: 'knh is alive and posting to Alertmanager',
      description:
        "Always firing while a knh coordinator runs. Route it to a dead man's switch: its silence means knh (or its path to Alertmanager) is broken, not that the cluster is healthy.",
    },
    startsAt: iso(now),
    endsAt: iso(now + EXPIRY_RESENDS * resendMs),
    ...source,
  });

  // A test alert is of no kind: it links to the runbook with `{kind}` left empty.
  const testRunbook = runbookHref(links);
  const testAlerts = (group: AlertGroup): PostableAlert[] => {
    const labels = (alert: Alert | undefined): Record<string, string> => ({
      ...(alert ? alertLabels(alert, cluster) : cluster ? { cluster } : {}),
      alertname: 'KnhTestAlert',
      severity: 'none',
      knh_key: group.key,
    });
    const one = (alert: Alert | undefined): PostableAlert => ({
      labels: labels(alert),
      annotations: {
        summary: 'knh test alert: not a real problem',
        description: `Sent by POST /test-alert at ${iso(group.at)}; Alertmanager resolves it by itself after a minute.`,
        ...(testRunbook ? { runbook_url: testRunbook } : {}),
      },
      startsAt: iso(group.at),
      endsAt: iso(group.at + TEST_ALERT_MS),
      ...source,
    });
    return group.changes.length === 0 ? [one(undefined)] : group.changes.map((c) => one(c.alert));
  };

  return {
    name: 'alertmanager',
    schema: 'alertmanager-alerts',
    heartbeatMs: resendMs,
    render(group) {
      if (group.test) return request(testAlerts(group), group.key);
      // Every change goes in one request: Alertmanager groups and routes them itself.
      const body = group.changes.map(({ type, alert }) =>
        type === 'firing' ? firing(alert, group.at) : postable(alert, alert.endsAt ?? group.at),
      );
      return request(body, group.key);
    },
    heartbeat(alerts, now) {
      return request([...alerts.map((a) => firing(a, now)), watchdog(now)], 'knh-watchdog');
    },
  };
}
