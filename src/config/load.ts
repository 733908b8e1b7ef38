// Loads and validates every setting in one pass; all problems are reported together.
import { isIP } from 'node:net';
import { canonicalAddress, canonicalIp, formatAddress, nodeId } from '../core/node-ref.js';
import { parseDuration } from './duration.js';
import { checkHeaderName } from '../receivers/auth-file.js';
import { SETTINGS, type Setting, type SettingName } from './settings.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  nodeName: string;
  podIp: string;
  port: number;
  listenHost: string;
  /** `POD_IP:CONTAINER_PORT`, what peers dial and what ranks this node. */
  address: string;
  /** `NODE_NAME@POD_IP`. */
  id: string;
  discovery: 'kubernetes' | 'static';
  peers: string[];
  serviceName: string | null;
  namespace: string | null;
  kubeconfig: string | null;
  connectMaxRetries: number;
  connectCooldownMs: number;
  sendMaxRetries: number;
  sendCooldownMs: number;
  roundIntervalMs: number;
  probeTimeoutMs: number;
  unhealthyMs: number;
  indirectProbes: number;
  heartbeatIntervalMs: number;
  coordinatorTimeoutMs: number;
  electionTimeoutMs: number;
  sanityCheckUrl: string | null;
  peerStatusUrl: string | null;
  clusterStatusUrl: string | null;
  clusterStatusIntervalMs: number;
  webhookTimeoutMs: number;
  webhookRetryForMs: number;
  webhookQueueSize: number;
  logLevel: LogLevel;
  /** Webhooks are logged, not sent. */
  dryRun: boolean;
  /** Resident memory limit of /healthz in MiB; null: no limit. */
  maxMemoryMiB: number | null;
  /** On SIGTERM: the bound on draining webhooks. */
  shutdownGraceMs: number;
  slackWebhookUrl: string | null;
  alertmanagerUrl: string | null;
  pagerDutyRoutingKey: string | null;
  pagerDutyUrl: string;
  alertWebhookUrl: string | null;
  alertWebhookAuthFile: string | null;
  alertWebhookAuthHeader: string;
  alertWebhookHeartbeatMs: number;
  alertHoldDownMs: number;
  alertGroupWaitMs: number;
  clusterName: string | null;
}

export type LoadResult = { ok: true; config: Config } | { ok: false; errors: string[] };

type Value = string | number | string[] | null;

function describe(setting: Setting): string {
  const t = setting.type;
  switch (t.kind) {
    case 'string':
      return 'a non-empty string';
    case 'ip':
      return 'an IPv4 or IPv6 address';
    case 'port':
      return 'a port number from 1 to 65535';
    case 'int':
      return `a whole number from ${t.min} to ${t.max}`;
    case 'duration':
      return `a duration from ${t.minMs / 1000} to ${t.maxMs / 1000} seconds: plain seconds like "2" or "0.5", or "500ms", "2s", "1m"`;
    case 'enum':
      return `one of ${t.values.join(', ')}`;
    case 'url':
      return 'an http:// or https:// URL';
    case 'peers':
      return 'a comma-separated list of ip:port, e.g. "10.0.0.1:8080,10.0.0.2:8080"';
  }
}

/** Parses one raw value; returns an error sentence's tail, or the value. */
function parseValue(setting: Setting, raw: string): { value: Value } | { error: string } {
  const t = setting.type;
  const text = raw.trim();
  const bad = { error: `expected ${describe(setting)}` };
  switch (t.kind) {
    case 'string':
      return text ? { value: text } : bad;
    case 'ip': {
      const ip = canonicalIp(text);
      return ip === null ? bad : { value: ip };
    }
    case 'port': {
      const n = Number(text);
      return /^\d+$/.test(text) && n >= 1 && n <= 65535 ? { value: n } : bad;
    }
    case 'int': {
      const n = Number(text);
      return /^-?\d+$/.test(text) && n >= t.min && n <= t.max ? { value: n } : bad;
    }
    case 'duration': {
      const ms = parseDuration(text);
      return ms !== null && ms >= t.minMs && ms <= t.maxMs ? { value: ms } : bad;
    }
    case 'enum':
      return t.values.includes(text) ? { value: text } : bad;
    case 'url': {
      if (!text) return { value: null };
      try {
        const u = new URL(text);
        return u.protocol === 'http:' || u.protocol === 'https:' ? { value: text } : bad;
      } catch {
        return bad;
      }
    }
    case 'peers': {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      // Canonical spelling, so that the same node is always the same string (self-removal, rank).
      const normal = items.map(canonicalAddress);
      const wrong = items.filter((_, i) => normal[i] === null);
      if (wrong.length > 0) return { error: `${bad.error}; not ip:port: ${wrong.join(', ')}` };
      return { value: [...new Set(normal as string[])] };
    }
  }
}

export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  { hostname }: { hostname: string },
): LoadResult {
  const errors: string[] = [];
  const values = new Map<SettingName, Value>();

  for (const setting of SETTINGS as readonly Setting[]) {
    const name = setting.env as SettingName;
    const source = [setting.env, ...(setting.aliases ?? [])].find(
      (n) => env[n] !== undefined && env[n] !== '',
    );
    const raw = source ? env[source] : setting.default;
    if (raw === undefined) {
      values.set(name, null);
      continue;
    }
    const parsed = parseValue(setting, raw);
    if ('error' in parsed) {
      const shown = setting.secret ? '<not shown: a secret>' : JSON.stringify(raw);
      errors.push(`${source ?? setting.env}=${shown}: ${parsed.error}`);
      values.set(name, null);
    } else {
      values.set(name, parsed.value);
    }
  }

  const str = (n: SettingName) => values.get(n) as string | null;
  const num = (n: SettingName) => values.get(n) as number;
  const discovery = (str('DISCOVERY') ?? 'kubernetes') as Config['discovery'];
  const require = (n: SettingName, why: string) => {
    if (values.get(n) === null && !errors.some((e) => e.startsWith(`${n}=`))) {
      errors.push(`${n} is required ${why}`);
    }
  };

  if (discovery === 'kubernetes') {
    require('NODE_NAME', 'with DISCOVERY=kubernetes (set it from spec.nodeName; MY_NODE_NAME is accepted too)');
    require('POD_IP', 'with DISCOVERY=kubernetes (set it from status.podIP)');
    require('SERVICE_NAME', 'with DISCOVERY=kubernetes: the Service whose EndpointSlices list the knh pods');
    require('NAMESPACE', 'with DISCOVERY=kubernetes (set it from metadata.namespace)');
  } else {
    const peers = values.get('PEERS') as string[] | null;
    if (peers === null || peers.length === 0) {
      if (!errors.some((e) => e.startsWith('PEERS='))) {
        errors.push('PEERS is required with DISCOVERY=static: a comma-separated list of ip:port');
      }
    }
  }

  const heartbeat = num('HEARTBEAT_INTERVAL');
  const coordTimeout = num('COORDINATOR_TIMEOUT');
  if (heartbeat && coordTimeout && coordTimeout <= heartbeat) {
    errors.push(
      `COORDINATOR_TIMEOUT (${coordTimeout} ms) must exceed HEARTBEAT_INTERVAL (${heartbeat} ms), or followers would hold elections between heartbeats`,
    );
  }

  const routingKey = str('PAGERDUTY_ROUTING_KEY');
  if (routingKey !== null && !/^\S{32}$/.test(routingKey)) {
    errors.push(
      `PAGERDUTY_ROUTING_KEY=<${routingKey.length} characters, not shown>: expected the 32-character integration key of a PagerDuty Events API v2 integration`,
    );
  }
  if (values.get('ALERT_WEBHOOK_AUTH_FILE') && !values.get('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_AUTH_FILE is set but ALERT_WEBHOOK_URL is not: set both, or neither',
    );
  }
  const headerProblem = checkHeaderName(str('ALERT_WEBHOOK_AUTH_HEADER') ?? 'Authorization');
  if (headerProblem) {
    errors.push(
      `ALERT_WEBHOOK_AUTH_HEADER=${JSON.stringify(str('ALERT_WEBHOOK_AUTH_HEADER'))}: ${headerProblem}; expected a header name such as Authorization or X-Api-Key`,
    );
  }
  if (num('ALERT_WEBHOOK_HEARTBEAT') > 0 && !values.get('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_HEARTBEAT is set but ALERT_WEBHOOK_URL is not: the heartbeat goes there',
    );
  }
  const cluster = str('CLUSTER_NAME');
  if (cluster !== null && cluster.length > 253) {
    errors.push(`CLUSTER_NAME=<${cluster.length} characters>: expected at most 253 characters`);
  }
  if (num('MAX_MEMORY_USAGE') === 0) {
    errors.push('MAX_MEMORY_USAGE=0: expected -1 (off) or a limit in MiB from 1 to 1048576');
  }

  if (errors.length > 0) return { ok: false, errors };

  const podIp = str('POD_IP') ?? '127.0.0.1';
  const nodeName = str('NODE_NAME') ?? hostname;
  const port = num('CONTAINER_PORT');
  const level = str('LOG_LEVEL') ?? 'info';
  return {
    ok: true,
    config: {
      nodeName,
      podIp,
      port,
      listenHost: str('LISTEN_HOST') ?? (isIP(podIp) === 6 ? '::' : '0.0.0.0'),
      address: formatAddress(podIp, port),
      id: nodeId(nodeName, podIp),
      discovery,
      peers: (values.get('PEERS') as string[] | null) ?? [],
      serviceName: str('SERVICE_NAME'),
      namespace: str('NAMESPACE'),
      kubeconfig: str('KUBECONFIG'),
      connectMaxRetries: num('CONNECT_MAX_RETRIES'),
      connectCooldownMs: num('CONNECT_COOLDOWN_PERIOD'),
      sendMaxRetries: num('SEND_MAX_RETRIES'),
      sendCooldownMs: num('SEND_COOLDOWN_PERIOD'),
      roundIntervalMs: num('ELECTION_COOLDOWN_PERIOD'),
      probeTimeoutMs: num('PROBE_TIMEOUT'),
      unhealthyMs: num('UNHEALTHY_DURATION'),
      indirectProbes: num('INDIRECT_PROBES'),
      heartbeatIntervalMs: heartbeat,
      coordinatorTimeoutMs: coordTimeout,
      electionTimeoutMs: num('ELECTION_TIMEOUT'),
      sanityCheckUrl: str('SANITY_CHECK_URL'),
      peerStatusUrl: str('PEER_STATUS_URL'),
      clusterStatusUrl: str('CLUSTER_STATUS_URL'),
      clusterStatusIntervalMs: num('CLUSTER_STATUS_INTERVAL'),
      webhookTimeoutMs: num('WEBHOOK_TIMEOUT'),
      webhookRetryForMs: num('WEBHOOK_RETRY_FOR'),
      webhookQueueSize: num('WEBHOOK_QUEUE_SIZE'),
      logLevel: (level === 'panic' ? 'fatal' : level) as LogLevel,
      dryRun: str('DRY_RUN') === 'true',
      maxMemoryMiB: num('MAX_MEMORY_USAGE') > 0 ? num('MAX_MEMORY_USAGE') : null,
      shutdownGraceMs: num('SHUTDOWN_GRACE_PERIOD'),
      slackWebhookUrl: str('SLACK_WEBHOOK_URL'),
      alertmanagerUrl: str('ALERTMANAGER_URL'),
      pagerDutyRoutingKey: str('PAGERDUTY_ROUTING_KEY'),
      pagerDutyUrl: str('PAGERDUTY_URL') ?? 'https://events.pagerduty.com/v2/enqueue',
      alertWebhookUrl: str('ALERT_WEBHOOK_URL'),
      alertWebhookAuthFile: str('ALERT_WEBHOOK_AUTH_FILE'),
      alertWebhookAuthHeader: str('ALERT_WEBHOOK_AUTH_HEADER') ?? 'Authorization',
      alertWebhookHeartbeatMs: num('ALERT_WEBHOOK_HEARTBEAT'),
      alertHoldDownMs: num('ALERT_HOLD_DOWN'),
      alertGroupWaitMs: num('ALERT_GROUP_WAIT'),
      clusterName: str('CLUSTER_NAME'),
    },
  };
}
