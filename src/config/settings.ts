// Every setting knh reads, declared once: env name, the Config field it fills, kind, default, unit
// and meaning. Config's type is derived from this list (load.ts), and docs/settings.md's table is
// generated from it (npm run docs), which a test checks.
import { parseDuration } from './duration.js';

export type SettingKind =
  /** Any non-empty text; the loader checks these further (secrets, header names). */
  | { kind: 'string' }
  /** Printable text without control characters or line breaks. */
  | { kind: 'text'; maxLength: number }
  /** A Kubernetes object name such as a node's: a DNS-1123 subdomain. */
  | { kind: 'dns-subdomain' }
  /** A Kubernetes namespace: a DNS-1123 label. */
  | { kind: 'dns-label' }
  /** A Kubernetes Service name: a DNS-1035 label (starts with a letter). */
  | { kind: 'dns-1035-label' }
  /** A file path; whether the file can be read is checked where it is used. */
  | { kind: 'path' }
  /** A unicast address; `wildcard`: 0.0.0.0 and :: (every interface) too. */
  | { kind: 'ip'; wildcard?: boolean }
  | { kind: 'port' }
  /** A port alone, or `ip:port` (`[ip]:port` for IPv6; `localhost:port` is 127.0.0.1's). */
  | { kind: 'listen' }
  /** `off`: the value that turns the setting off, read as null. */
  | { kind: 'int'; min: number; max: number; off?: number }
  /** A decimal number above `min` (exclusive) and at most `max`. */
  | { kind: 'ratio'; min: number; max: number }
  /** Read in milliseconds, so the fields of durations end in `Ms`. */
  | { kind: 'duration'; minMs: number; maxMs: number }
  /** `synonyms`: values accepted and read as another one; the field never holds them. */
  | { kind: 'enum'; values: readonly string[]; synonyms?: Readonly<Record<string, string>> }
  /** `true` or `false`. */
  | { kind: 'boolean' }
  | { kind: 'url' }
  /** A list of `ip:port`; unset, it is empty rather than null. */
  | { kind: 'peers' };

export interface Setting {
  env: string;
  /** The Config field the setting fills; unique. */
  key: string;
  /** Other names accepted for the same setting (KNH's spellings). */
  aliases?: readonly string[];
  type: SettingKind;
  /** The default as text (parsed like a value from the environment); undefined: no default. */
  default?: string;
  /** Shown in docs/settings.md when the default is not a plain value. */
  defaultText?: string;
  unit?: string;
  description: string;
  /** Where it came from: KNH, or new in knh. */
  origin: 'KNH' | 'knh';
  /** Holds a secret: error messages and the settings logged at start do not repeat its value. */
  secret?: boolean;
  /**
   * Also read from the file `<env>_FILE` names (a mounted Secret), re-read as it rotates; setting
   * both is an error.
   */
  file?: boolean;
  /**
   * Set but empty is an error rather than unset: the variable comes from the downward API, and
   * an empty one means the manifest is wrong, not that the default is wanted.
   */
  emptyIsError?: boolean;
}

// The precise type (literal, not SettingKind) keeps a duration's field a number in SettingValues.
const duration = (minMs: number, maxMs: number) => ({ kind: 'duration', minMs, maxMs }) as const;

export const SETTINGS = [
  {
    env: 'NODE_NAME',
    key: 'nodeName',
    aliases: ['MY_NODE_NAME'],
    type: { kind: 'dns-subdomain' },
    defaultText: 'the host name (static discovery); required with kubernetes',
    description:
      'Name of the Kubernetes node the pod runs on; with POD_IP it forms the node id `NODE_NAME@POD_IP`.',
    origin: 'KNH',
    emptyIsError: true,
  },
  {
    env: 'POD_IP',
    key: 'podIp',
    type: { kind: 'ip' },
    defaultText: '127.0.0.1 (static discovery); required with kubernetes',
    description: 'IP address of this pod; peers reach the node at `POD_IP:CONTAINER_PORT`.',
    origin: 'KNH',
    emptyIsError: true,
  },
  {
    env: 'POD_NAME',
    key: 'podName',
    type: { kind: 'dns-subdomain' },
    description:
      "Name of this pod (from metadata.name): alerts name the coordinator that sent them by its node and pod. The dead peer's pod name comes from its EndpointSlice.",
    origin: 'knh',
    emptyIsError: true,
  },
  {
    env: 'CONTAINER_PORT',
    key: 'port',
    type: { kind: 'port' },
    default: '8080',
    description: 'Port of the HTTP API (ping, election messages).',
    origin: 'knh',
  },
  {
    env: 'LISTEN_HOST',
    key: 'listenHost',
    type: { kind: 'ip', wildcard: true },
    defaultText: '0.0.0.0 (:: when POD_IP is IPv6)',
    description:
      "Address the HTTP server binds to (and OPERATOR_LISTEN's listener, when that gives a port alone).",
    origin: 'knh',
  },
  {
    env: 'OPERATOR_LISTEN',
    key: 'operatorListen',
    type: { kind: 'listen' },
    defaultText: 'unset: on CONTAINER_PORT',
    description:
      'Serves the operator views (`/`, `/status`, `/metrics`, `/maintenance`, `/test-alert`) on a listener of their own rather than CONTAINER_PORT, which keeps the peer messages, `/readyz` and `/healthz`: a port (`9090`, bound on LISTEN_HOST) that a NetworkPolicy can open to Prometheus alone, or an address and a port (`127.0.0.1:9090`, `[::1]:9090`; `localhost` is 127.0.0.1) bound there only, where on loopback no other pod reads them but no Prometheus scrapes them either (`kubectl port-forward` and `exec` do reach them).',
    origin: 'knh',
  },
  {
    env: 'DISCOVERY',
    key: 'discovery',
    type: { kind: 'enum', values: ['kubernetes', 'static'] },
    default: 'kubernetes',
    description:
      'Where peers come from: the EndpointSlices of SERVICE_NAME in NAMESPACE, or the fixed PEERS list.',
    origin: 'knh',
  },
  {
    env: 'PEERS',
    key: 'peers',
    type: { kind: 'peers' },
    defaultText: 'none; required with static discovery',
    description:
      'Static discovery: comma-separated `ip:port` of every node (may include this node itself).',
    origin: 'knh',
  },
  {
    env: 'SERVICE_NAME',
    key: 'serviceName',
    type: { kind: 'dns-1035-label' },
    defaultText: 'none; required with kubernetes',
    description: 'Service whose EndpointSlices list the knh pods.',
    origin: 'KNH',
  },
  {
    env: 'NAMESPACE',
    key: 'namespace',
    type: { kind: 'dns-label' },
    defaultText: 'none; required with kubernetes',
    description: 'Namespace of that Service (and of the DaemonSet).',
    origin: 'KNH',
  },
  {
    env: 'KUBECONFIG',
    key: 'kubeconfig',
    type: { kind: 'path' },
    defaultText: "unset: the pod's service account (in-cluster)",
    description: 'Kubernetes discovery outside a cluster: path of the kubeconfig file to use.',
    origin: 'knh',
  },
  {
    env: 'CONNECT_MAX_RETRIES',
    key: 'connectMaxRetries',
    type: { kind: 'int', min: 0, max: 20 },
    default: '2',
    unit: 'retries',
    description:
      'Retries of a probe whose connection could not be made (refused, unreachable, connect timeout) before the peer is dead.',
    origin: 'KNH',
  },
  {
    env: 'CONNECT_COOLDOWN_PERIOD',
    key: 'connectCooldownMs',
    type: duration(0, 60_000),
    default: '0.2',
    unit: 'seconds',
    description: 'Wait between connection retries.',
    origin: 'KNH',
  },
  {
    env: 'SEND_MAX_RETRIES',
    key: 'sendMaxRetries',
    type: { kind: 'int', min: 0, max: 20 },
    default: '2',
    unit: 'retries',
    description:
      'Retries of a probe that connected but got no valid answer (timeout, reset, 5xx) before the peer is dead.',
    origin: 'KNH',
  },
  {
    env: 'SEND_COOLDOWN_PERIOD',
    key: 'sendCooldownMs',
    type: duration(0, 60_000),
    default: '0.2',
    unit: 'seconds',
    description: 'Wait between send retries.',
    origin: 'KNH',
  },
  {
    env: 'ELECTION_COOLDOWN_PERIOD',
    key: 'roundIntervalMs',
    type: duration(100, 600_000),
    default: '1',
    unit: 'seconds',
    description:
      "Interval between the coordinator's probe rounds (KNH: the sleep after each election and round).",
    origin: 'KNH',
  },
  {
    env: 'PROBE_TIMEOUT',
    key: 'probeTimeoutMs',
    type: duration(10, 60_000),
    default: '1',
    unit: 'seconds',
    description:
      'Timeout of each request to a peer (probe, election, announcement), connection and answer together.',
    origin: 'knh',
  },
  {
    env: 'UNHEALTHY_DURATION',
    key: 'unhealthyMs',
    type: duration(0, 600_000),
    default: '1',
    unit: 'seconds',
    description:
      'How long a peer must stay unreachable (no answer to probes, retries, relays or any other request since its first failed probe) before it is declared dead. A failed probe only makes it suspect.',
    origin: 'knh',
  },
  {
    env: 'INDIRECT_PROBES',
    key: 'indirectProbes',
    type: { kind: 'int', min: 0, max: 16 },
    default: '3',
    unit: 'peers',
    description:
      'How many other live peers the coordinator asks to probe a suspect peer (indirect probes). If any reaches it, the peer is alive and the path from the coordinator to it is reported broken instead; 0 turns them off.',
    origin: 'knh',
  },
  {
    env: 'HEARTBEAT_INTERVAL',
    key: 'heartbeatIntervalMs',
    type: duration(10, 60_000),
    default: '0.5',
    unit: 'seconds',
    description: 'How often the coordinator announces itself to every peer.',
    origin: 'knh',
  },
  {
    env: 'COORDINATOR_TIMEOUT',
    key: 'coordinatorTimeoutMs',
    type: duration(20, 600_000),
    default: '1.5',
    unit: 'seconds',
    description:
      'A follower that has not heard the coordinator for this long holds an election. Must exceed HEARTBEAT_INTERVAL.',
    origin: 'knh',
  },
  {
    env: 'ELECTION_TIMEOUT',
    key: 'electionTimeoutMs',
    type: duration(10, 600_000),
    default: '1',
    unit: 'seconds',
    description:
      'How long a candidate that got an answer waits for the winner to announce itself before holding the election again.',
    origin: 'knh',
  },
  {
    env: 'PAIR_PROBES',
    key: 'pairProbes',
    type: { kind: 'int', min: 0, max: 1_000 },
    default: '20',
    unit: 'peers',
    description:
      'Every node probes this many other nodes each round (ELECTION_COOLDOWN_PERIOD), walking the ring of all nodes, so that every pair of nodes is tested: within ceil((N − 1) / PAIR_PROBES) rounds, and at a constant load per node whatever N. Each node reports what changes to the coordinator, which localizes broken paths, degraded nodes and paths, MTU black holes, cut egress and partitions. 0 turns pair probing off (the coordinator still probes every peer).',
    origin: 'knh',
  },
  {
    env: 'PATH_WINDOW',
    key: 'pathWindowMs',
    type: duration(1_000, 3_600_000),
    default: '10',
    unit: 'seconds',
    description:
      "How far back a path's probes count for its loss ratio and latency percentiles (pair probing). In a mesh whose paths come round too seldom to put 5 probes in it (above 41 nodes with the defaults), it widens to 5 of them, and DEGRADED_FOR by as much.",
    origin: 'knh',
  },
  {
    env: 'DEGRADED_LOSS_RATIO',
    key: 'degradedLossRatio',
    type: { kind: 'ratio', min: 0, max: 1 },
    default: '0.1',
    description:
      'A path losing at least this share of its probes over PATH_WINDOW, for DEGRADED_FOR, is degraded (a node, when most of its paths are): a warning, never a dead-peer alert.',
    origin: 'knh',
  },
  {
    env: 'DEGRADED_LATENCY',
    key: 'degradedLatencyMs',
    type: duration(1, 60_000),
    default: '0.4',
    unit: 'seconds',
    description:
      'A path whose p99 latency over PATH_WINDOW stays at least this for DEGRADED_FOR is degraded.',
    origin: 'knh',
  },
  {
    env: 'DEGRADED_FOR',
    key: 'degradedForMs',
    type: duration(0, 3_600_000),
    default: '10',
    unit: 'seconds',
    description:
      'How long a path must stay past DEGRADED_LOSS_RATIO or DEGRADED_LATENCY before it is degraded, and below half of both before it is healthy again.',
    origin: 'knh',
  },
  {
    env: 'MTU_PROBE_SIZE',
    key: 'mtuProbeSize',
    type: { kind: 'int', min: 0, max: 9_000, off: 0 },
    default: '1400',
    unit: 'bytes',
    description:
      'Bytes of payload each way of the full-size probes that go with small ones in pair probing (on a path, one in about 5 rounds; each round while they fail): a path that passes small probes and fails these drops full-size packets (an overlay MTU mismatch). Near the pod network MTU less headers; 0 turns them off.',
    origin: 'knh',
  },
  {
    env: 'SANITY_CHECK_URL',
    key: 'sanityCheckUrl',
    type: { kind: 'url' },
    description:
      'If set, the coordinator GETs it before declaring peers dead; when it cannot, it is the one in trouble and sends no dead-peer alerts.',
    origin: 'KNH',
  },
  {
    env: 'PEER_STATUS_URL',
    key: 'peerStatusUrl',
    type: { kind: 'url' },
    description: 'Receives a POST when a peer goes from alive to dead, and when it recovers.',
    origin: 'KNH',
    file: true,
  },
  {
    env: 'CLUSTER_STATUS_URL',
    key: 'clusterStatusUrl',
    type: { kind: 'url' },
    description:
      'Receives the full peer map after every election, after every round that changed a peer or the peer list, and every CLUSTER_STATUS_INTERVAL.',
    origin: 'KNH',
    file: true,
  },
  {
    env: 'CLUSTER_STATUS_INTERVAL',
    key: 'clusterStatusIntervalMs',
    type: duration(0, 86_400_000),
    default: '60',
    unit: 'seconds',
    description: 'Periodic resend of the cluster status by the coordinator; 0 turns it off.',
    origin: 'knh',
  },
  {
    env: 'START_GRACE',
    key: 'startGraceMs',
    type: duration(0, 86_400_000),
    default: '60',
    unit: 'seconds',
    description:
      'A listed peer that has never answered is taken as still starting for this long: cluster statuses leave it out (counting it in `unseen_peers`) rather than list it `alive: false`. After it, it is listed dead; only a peer once seen alive is ever reported by a peer_dead.',
    origin: 'knh',
  },
  {
    env: 'RECOVERY_HOLD',
    key: 'recoveryHoldMs',
    type: duration(0, 3_600_000),
    default: '10',
    unit: 'seconds',
    description:
      'A peer reported dead that answers again is resolved (peer_recovered, to every receiver) only once it has stayed up this long; down again within it, the same incident goes on, with no second peer_dead. A path from the coordinator that heals (path_restored) waits the same. A link going down and up pages once, at the cost of each recovery arriving this much later. 0 sends each recovery at once.',
    origin: 'knh',
  },
  {
    env: 'FLAP_WINDOW',
    key: 'flapWindowMs',
    type: duration(1_000, 3_600_000),
    default: '60',
    unit: 'seconds',
    description: 'The window FLAP_CHANGES are counted in.',
    origin: 'knh',
  },
  {
    env: 'FLAP_CHANGES',
    key: 'flapChanges',
    type: { kind: 'int', min: 0, max: 100 },
    default: '4',
    unit: 'changes',
    description:
      'A peer reported dead whose verdict changes (down, up) this many times within FLAP_WINDOW is flapping: every receiver gets one peer_flapping, then nothing about it until it has not changed for FLAP_STABLE, then its final state. The same for a path from the coordinator (broken, restored). Fewer tells of flapping sooner; a peer restarted twice in a row counts too. 0 turns the event off (RECOVERY_HOLD still damps).',
    origin: 'knh',
  },
  {
    env: 'FLAP_STABLE',
    key: 'flapStableMs',
    type: duration(1_000, 3_600_000),
    default: '30',
    unit: 'seconds',
    description:
      'How long a flapping peer must stay in one state before its final state (peer_recovered, or a peer_dead keyed `dead-stable`; for a path, path_restored or a path_broken keyed `path-broken-stable`) goes out: longer is quieter, and later.',
    origin: 'knh',
  },
  {
    env: 'WEBHOOK_TIMEOUT',
    key: 'webhookTimeoutMs',
    type: duration(10, 120_000),
    default: '5',
    unit: 'seconds',
    description: 'Timeout of one webhook POST.',
    origin: 'knh',
  },
  {
    env: 'WEBHOOK_RETRY_FOR',
    key: 'webhookRetryForMs',
    type: duration(0, 86_400_000),
    default: '600',
    unit: 'seconds',
    description:
      'A webhook that fails (network error, timeout, 429, 5xx; not other 4xx) is retried with backoff (0.5 s doubling to 30 s) for this long, then given up with an error log.',
    origin: 'knh',
  },
  {
    env: 'WEBHOOK_QUEUE_SIZE',
    key: 'webhookQueueSize',
    type: { kind: 'int', min: 1, max: 1_000_000 },
    default: '10000',
    unit: 'events',
    description:
      'Events waiting per receiver (besides those being sent); past it the oldest waiting one is dropped with an error log. The default holds a peer-status event for every node of a 10,000-node cluster (about 1 KB each while waiting).',
    origin: 'knh',
  },
  {
    env: 'WEBHOOK_CONCURRENCY',
    key: 'webhookConcurrency',
    type: { kind: 'int', min: 1, max: 256 },
    default: '32',
    unit: 'requests',
    description:
      'POSTs in flight at once to PEER_STATUS_URL and CLUSTER_STATUS_URL. Events about one peer still go one after another, in order, and a cluster status goes alone, after every event before it; while the receiver fails, one POST at a time. 1: strictly one after another.',
    origin: 'knh',
  },
  {
    env: 'SLACK_WEBHOOK_URL',
    key: 'slackWebhookUrl',
    type: { kind: 'url' },
    secret: true,
    file: true,
    description:
      'Slack incoming webhook: a readable message when nodes fail (grouped), and when they recover.',
    origin: 'knh',
  },
  {
    env: 'ALERTMANAGER_URL',
    key: 'alertmanagerUrl',
    type: { kind: 'url' },
    description:
      'Base URL of a Prometheus Alertmanager (e.g. `http://alertmanager:9093`): alerts posted to its API v2, re-posted every 30 s while firing, resolved with `endsAt`; plus an always-firing `KnhWatchdog` alert (dead man’s switch).',
    origin: 'knh',
    file: true,
  },
  {
    env: 'PAGERDUTY_ROUTING_KEY',
    key: 'pagerDutyRoutingKey',
    type: { kind: 'string' },
    secret: true,
    file: true,
    description:
      'PagerDuty Events API v2 integration key: trigger and resolve with a stable `dedup_key`; failures at once are one incident.',
    origin: 'knh',
  },
  {
    env: 'PAGERDUTY_URL',
    key: 'pagerDutyUrl',
    type: { kind: 'url' },
    default: 'https://events.pagerduty.com/v2/enqueue',
    description: 'Where PagerDuty events go (override for tests or a proxy).',
    origin: 'knh',
  },
  {
    env: 'ALERT_WEBHOOK_URL',
    key: 'alertWebhookUrl',
    type: { kind: 'url' },
    description:
      'A generic receiver: alert groups as JSON (`schemas/alert-webhook.schema.json`), for in-house tools.',
    origin: 'knh',
    file: true,
  },
  {
    env: 'ALERT_WEBHOOK_AUTH_FILE',
    key: 'alertWebhookAuthFile',
    type: { kind: 'path' },
    description:
      'File holding the value of ALERT_WEBHOOK_AUTH_HEADER sent with every ALERT_WEBHOOK_URL request (mount a Secret); re-read when it changes.',
    origin: 'knh',
  },
  {
    env: 'ALERT_WEBHOOK_AUTH_HEADER',
    key: 'alertWebhookAuthHeader',
    type: { kind: 'string' },
    default: 'Authorization',
    description: 'Name of the header that carries ALERT_WEBHOOK_AUTH_FILE’s content.',
    origin: 'knh',
  },
  {
    env: 'ALERT_WEBHOOK_HEARTBEAT',
    key: 'alertWebhookHeartbeatMs',
    type: duration(0, 86_400_000),
    default: '0',
    unit: 'seconds',
    description:
      'If not 0, the coordinator POSTs a heartbeat to ALERT_WEBHOOK_URL this often (a dead man’s switch: the receiver pages when they stop).',
    origin: 'knh',
  },
  {
    env: 'ALERT_HOLD_DOWN',
    key: 'alertHoldDownMs',
    type: duration(0, 3_600_000),
    default: '30',
    unit: 'seconds',
    description:
      'Slack, Alertmanager, PagerDuty, ALERT_WEBHOOK_URL: a recovered node is resolved only after staying up this long; failing again within it continues the same alert (a flapping node pages once).',
    origin: 'knh',
  },
  {
    env: 'ALERT_GROUP_WAIT',
    key: 'alertGroupWaitMs',
    type: duration(0, 600_000),
    default: '2',
    unit: 'seconds',
    description:
      'Slack, Alertmanager, PagerDuty, ALERT_WEBHOOK_URL: alert changes within this window of the first one go out as one message listing every node.',
    origin: 'knh',
  },
  {
    env: 'CLUSTER_NAME',
    key: 'clusterName',
    type: { kind: 'text', maxLength: 253 },
    description: 'Names the cluster in alert messages and as the `cluster` label in Alertmanager.',
    origin: 'knh',
  },
  {
    env: 'STATUS_PAGE_URL',
    key: 'statusPageUrl',
    type: { kind: 'url' },
    description:
      "Where people open knh's status page (an Ingress or a Service in front of the pods' `GET /`): the link of every alert (PagerDuty `client_url` and `links`, Alertmanager `generatorURL`, a Slack button, the generic webhook's `status_page_url`).",
    origin: 'knh',
  },
  {
    env: 'RUNBOOK_URL',
    key: 'runbookUrl',
    type: { kind: 'url' },
    description:
      "Your runbook for knh's alerts, linked from every alert (PagerDuty `links`, Alertmanager's `runbook_url` annotation, a Slack button, the generic webhook's `runbook_url`). `{kind}` in it is replaced by the alert's kind (`peer_dead`, `path_broken`, `cannot_judge`, `peer_degraded` …), for a page or an anchor per kind: docs/runbooks.md has a section for each, so `https://<where you publish knh's docs>/runbooks.md#{kind}` links each alert to its own.",
    origin: 'knh',
  },
  {
    env: 'PEER_SECRET',
    // The field holds the secrets in force: this one, or PEER_SECRET_FILE's (load.ts).
    key: 'peerSecrets',
    type: { kind: 'string' },
    secret: true,
    description:
      'Shared secret (32 to 1024 printable characters, e.g. `openssl rand -hex 32`) with which nodes sign and check election messages, announcements, leaves and relayed probes (HMAC-SHA256 over the receiving node, the path, a timestamp, a nonce and the body), and their answers; unsigned, altered or replayed messages get 401. Unset, with no PEER_SECRET_FILE: a peer message is taken only from the IP it names, announcements only from discovered peers, and knh warns at start-up.',
    origin: 'knh',
  },
  {
    env: 'PEER_SECRET_FILE',
    key: 'peerSecretFile',
    type: { kind: 'path' },
    description:
      'File holding the peer secret instead (a mounted Kubernetes Secret), re-read every 30 s. Up to 4 secrets, one a line, for rotation: the first signs, any of them is accepted.',
    origin: 'knh',
  },
  {
    env: 'PEER_AUTH_MAX_SKEW',
    key: 'peerAuthMaxSkewMs',
    type: duration(1_000, 600_000),
    default: '30',
    unit: 'seconds',
    description:
      'A signed message is refused when its timestamp is further than this from the receiving node’s clock; nonces are remembered twice as long, so no message is taken twice. Clocks need not agree within it: a sender refused as expired stamps its messages in the receiver’s time (read from its answers’ Date), so it bounds how long a captured message could be replayed.',
    origin: 'knh',
  },
  {
    env: 'DRY_RUN',
    key: 'dryRun',
    type: { kind: 'boolean' },
    default: 'false',
    description:
      'true: everything runs (probes, elections, verdicts, status page) but webhooks are logged with their payloads instead of sent.',
    origin: 'knh',
  },
  {
    env: 'MAX_MEMORY_USAGE',
    key: 'maxMemoryMiB',
    type: { kind: 'int', min: -1, max: 1_048_576, off: -1 },
    default: '-1',
    unit: 'MiB',
    description:
      'Resident memory above which `/healthz` fails, so Kubernetes restarts the pod; -1 turns the check off.',
    origin: 'knh',
  },
  {
    env: 'METRICS_PER_PEER_LIMIT',
    key: 'metricsPerPeerLimit',
    type: { kind: 'int', min: 0, max: 100_000 },
    default: '1000',
    unit: 'peers',
    description:
      'The coordinator exports per-peer series (`knh_peer_up`, `knh_probe_failures_total`, `knh_peer_probe_latency_seconds`: 3 series a peer) while it judges at most this many peers; above it, only the aggregates (`knh_peers{health}`, `knh_unreachable_peers`, `knh_probe_duration_seconds`…) and `knh_per_peer_metrics_enabled` 0, so a scrape stays bounded. 0 turns per-peer series off.',
    origin: 'knh',
  },
  {
    env: 'METRICS_PER_PATH_LIMIT',
    key: 'metricsPerPathLimit',
    type: { kind: 'int', min: 0, max: 100_000 },
    default: '100',
    unit: 'peers',
    description:
      'Every node exports series for each of its own paths (`knh_path_loss_ratio`, `knh_path_p50_latency_seconds`, `knh_path_p99_latency_seconds`: 3 series a path) while the mesh has at most this many other nodes; above it, only the aggregates (`knh_paths{state}`, `knh_paths_loss_ratio`, `knh_paths_max_p99_latency_seconds`…) and `knh_per_path_metrics_enabled` 0. Every pod exports them, so a mesh of N nodes exports 3·N·(N − 1) in all: keep it small. 0 turns per-path series off.',
    origin: 'knh',
  },
  {
    env: 'SHUTDOWN_GRACE_PERIOD',
    key: 'shutdownGraceMs',
    type: duration(0, 600_000),
    default: '5',
    unit: 'seconds',
    description:
      "On SIGTERM, how long webhooks still in flight or queued may take before the process exits; keep it below the pod's terminationGracePeriodSeconds.",
    origin: 'knh',
  },
  {
    env: 'LOG_RECEIVER_URLS',
    key: 'logReceiverUrls',
    type: { kind: 'enum', values: ['origin', 'path'] },
    default: 'origin',
    description:
      'How much of a receiver URL (`PEER_STATUS_URL`, `SLACK_WEBHOOK_URL`, every URL setting) the logs show: `origin`, its scheme, host and port only (`https://hooks.slack.com/…`); `path`, its path too, which tells two receivers on one host apart but shows the secret Slack, Discord and many webhook receivers carry there. A query string and `user:password@` are never shown.',
    origin: 'knh',
  },
  {
    env: 'LOG_LEVEL',
    key: 'logLevel',
    type: {
      kind: 'enum',
      values: ['panic', 'fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      synonyms: { panic: 'fatal' },
    },
    default: 'info',
    description: 'Log level of the JSON logs on stdout (`panic` is read as `fatal`).',
    origin: 'KNH',
  },
] as const satisfies readonly Setting[];

type Declared = (typeof SETTINGS)[number];
export type SettingName = Declared['env'];

/** What each kind reads as, when the setting is set or has a default. */
interface KindTypes {
  string: string;
  text: string;
  'dns-subdomain': string;
  'dns-label': string;
  'dns-1035-label': string;
  path: string;
  ip: string;
  port: number;
  listen: string;
  int: number;
  ratio: number;
  duration: number;
  enum: string;
  boolean: boolean;
  url: string;
  peers: string[];
}

/** Narrower than KindTypes: an enum is the union of its values but synonyms, `off` is null. */
type KindValue<K extends SettingKind> = K extends { kind: 'enum'; values: readonly (infer V)[] }
  ? Exclude<V, keyof (K extends { synonyms: infer S } ? S : object)>
  : K extends { kind: 'int'; off: number }
    ? number | null
    : KindTypes[K['kind']];

/** A setting's value: null when it is unset and has no default, except lists (then empty). */
type ValueOf<S extends Setting> = S extends { default: string }
  ? KindValue<S['type']>
  : S['type'] extends { kind: 'peers' }
    ? string[]
    : KindValue<S['type']> | null;

/** Every setting's value under its key, as the loader reads them (parse-value.ts). */
export type SettingValues = { [S in Declared as S['key']]: ValueOf<S> };

/** A duration setting's default in ms: what the demo and the tests, which run with defaults, wait. */
export function defaultMs(name: SettingName): number {
  const s = (SETTINGS as readonly Setting[]).find((x) => x.env === name);
  const ms = s?.default === undefined ? null : parseDuration(s.default);
  if (ms === null) throw new Error(`BUG: ${name} has no duration default`);
  return ms;
}
