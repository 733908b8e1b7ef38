// Loads and validates every setting in one pass; all problems are reported together.
import { isIP } from 'node:net';
import { formatAddress, nodeId } from '../wire/node-ref.js';
import { checkHeaderName, readAuthHeader } from '../secrets/auth-file.js';
import { checkSecret, readSecretFile } from '../auth/peer-secret.js';
import { parseValue, quote, unreadableFile, type Value } from './parse-value.js';
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
  /** A listed peer never seen alive is left out of cluster statuses this long (still starting). */
  startGraceMs: number;
  webhookTimeoutMs: number;
  webhookRetryForMs: number;
  webhookQueueSize: number;
  /** POSTs in flight at once to the KNH webhooks' receivers. */
  webhookConcurrency: number;
  logLevel: LogLevel;
  /** Webhooks are logged, not sent. */
  dryRun: boolean;
  /** Resident memory limit of /healthz in MiB; null: no limit. */
  maxMemoryMiB: number | null;
  /** Per-peer metric series while the coordinator judges at most this many peers; 0: never. */
  metricsPerPeerLimit: number;
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
  /** The peer secrets in force (first signs); null: peer authentication is off. */
  peerSecrets: string[] | null;
  /** Where they came from, re-read as it rotates; null: PEER_SECRET, or off. */
  peerSecretFile: string | null;
  peerAuthMaxSkewMs: number;
}

export type LoadResult = { ok: true; config: Config } | { ok: false; errors: string[] };

/**
 * PEER_SECRET or PEER_SECRET_FILE (read now: a missing or weak secret stops start-up). Both set
 * is an error, and each is still checked, so that every problem is reported at once.
 */
function loadPeerSecrets(
  secret: string | null,
  file: string | null,
  errors: string[],
): string[] | null {
  if (secret !== null && file !== null) {
    errors.push('PEER_SECRET and PEER_SECRET_FILE are both set: set one of them');
  }
  let secrets: string[] | null = null;
  if (secret !== null) {
    const problem = checkSecret(secret, 'PEER_SECRET=<not shown: a secret>');
    if (problem) errors.push(problem);
    else secrets = [secret];
  }
  if (file !== null) {
    const read = readSecretFile(file);
    if (!read.ok) {
      errors.push(
        `PEER_SECRET_FILE=${quote(file)}: ${read.error}; expected a readable file of 1 to 4 peer secrets, one a line`,
      );
    } else secrets ??= read.secrets;
  }
  return secrets;
}

export function loadConfig(
  env: Readonly<Record<string, string | undefined>>,
  { hostname }: { hostname: string },
): LoadResult {
  const errors: string[] = [];
  const values = new Map<SettingName, Value>();
  /** Set in the environment (not empty), valid or not. */
  const given = new Set<SettingName>();
  /** Set, but invalid: already reported. */
  const invalid = new Set<SettingName>();

  for (const setting of SETTINGS as readonly Setting[]) {
    const name = setting.env as SettingName;
    const source = [setting.env, ...(setting.aliases ?? [])].find(
      (n) => env[n] !== undefined && env[n] !== '',
    );
    const raw = source ? env[source] : setting.default;
    if (source) given.add(name);
    if (raw === undefined) {
      values.set(name, null);
      continue;
    }
    const parsed = parseValue(setting, raw);
    if ('error' in parsed) {
      const shown = setting.secret ? '<not shown: a secret>' : quote(raw);
      errors.push(`${source ?? setting.env}=${shown}: ${parsed.error}`);
      values.set(name, null);
      invalid.add(name);
    } else {
      values.set(name, parsed.value);
    }
  }

  const str = (n: SettingName) => values.get(n) as string | null;
  const num = (n: SettingName) => values.get(n) as number;
  const discovery = (str('DISCOVERY') ?? 'kubernetes') as Config['discovery'];
  const require = (n: SettingName, why: string) => {
    if (values.get(n) === null && !invalid.has(n)) errors.push(`${n} is required ${why}`);
  };

  if (discovery === 'kubernetes') {
    require('NODE_NAME', 'with DISCOVERY=kubernetes (set it from spec.nodeName; MY_NODE_NAME is accepted too)');
    require('POD_IP', 'with DISCOVERY=kubernetes (set it from status.podIP)');
    require('SERVICE_NAME', 'with DISCOVERY=kubernetes: the Service whose EndpointSlices list the knh pods');
    require('NAMESPACE', 'with DISCOVERY=kubernetes (set it from metadata.namespace)');
  } else {
    const peers = values.get('PEERS') as string[] | null;
    if ((peers === null || peers.length === 0) && !invalid.has('PEERS')) {
      errors.push('PEERS is required with DISCOVERY=static: a comma-separated list of ip:port');
    }
  }

  // Read now, so that a missing file stops start-up with the other problems.
  const kubeconfig = str('KUBECONFIG');
  if (discovery === 'kubernetes' && kubeconfig !== null) {
    const problem = unreadableFile(kubeconfig);
    if (problem) {
      errors.push(
        `KUBECONFIG=${quote(kubeconfig)}: ${problem}; expected the path of a readable kubeconfig file, or KUBECONFIG unset in a cluster`,
      );
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
  if (routingKey !== null && !/^[\x21-\x7e]{32}$/.test(routingKey)) {
    errors.push(
      `PAGERDUTY_ROUTING_KEY=<${routingKey.length} characters, not shown>: expected the 32-character integration key of a PagerDuty Events API v2 integration (printable ASCII, no spaces)`,
    );
  }
  const header = str('ALERT_WEBHOOK_AUTH_HEADER') ?? 'Authorization';
  const headerProblem = checkHeaderName(header);
  if (headerProblem) {
    errors.push(
      `ALERT_WEBHOOK_AUTH_HEADER=${quote(header)}: ${headerProblem}; expected a header name such as Authorization or X-Api-Key`,
    );
  }
  // A URL that is set but invalid is reported as such, not as missing.
  const authFile = str('ALERT_WEBHOOK_AUTH_FILE');
  if (authFile !== null && !given.has('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_AUTH_FILE is set but ALERT_WEBHOOK_URL is not: set both, or neither',
    );
  } else if (authFile !== null) {
    // Read now, so that a missing or invalid Secret stops start-up with the other problems.
    const read = readAuthHeader(authFile, headerProblem ? 'Authorization' : header);
    if (!read.ok) {
      errors.push(
        `ALERT_WEBHOOK_AUTH_FILE=${quote(authFile)}: ${read.error}; expected a readable file holding the ${headerProblem ? 'auth' : header} header's value, e.g. "Bearer <token>"`,
      );
    }
  }
  if (num('ALERT_WEBHOOK_HEARTBEAT') > 0 && !given.has('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_HEARTBEAT is set but ALERT_WEBHOOK_URL is not: the heartbeat goes there',
    );
  }
  if (num('MAX_MEMORY_USAGE') === 0) {
    errors.push('MAX_MEMORY_USAGE=0: expected -1 (off) or a limit in MiB from 1 to 1048576');
  }

  const peerSecrets = loadPeerSecrets(str('PEER_SECRET'), str('PEER_SECRET_FILE'), errors);

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
      startGraceMs: num('START_GRACE'),
      webhookTimeoutMs: num('WEBHOOK_TIMEOUT'),
      webhookRetryForMs: num('WEBHOOK_RETRY_FOR'),
      webhookQueueSize: num('WEBHOOK_QUEUE_SIZE'),
      webhookConcurrency: num('WEBHOOK_CONCURRENCY'),
      logLevel: (level === 'panic' ? 'fatal' : level) as LogLevel,
      dryRun: str('DRY_RUN') === 'true',
      maxMemoryMiB: num('MAX_MEMORY_USAGE') > 0 ? num('MAX_MEMORY_USAGE') : null,
      metricsPerPeerLimit: num('METRICS_PER_PEER_LIMIT'),
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
      peerSecrets,
      peerSecretFile: str('PEER_SECRET_FILE'),
      peerAuthMaxSkewMs: num('PEER_AUTH_MAX_SKEW'),
    },
  };
}
