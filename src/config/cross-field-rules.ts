// The rules across settings, checked once each setting is read on its own: what DISCOVERY
// requires, what needs ALERT_WEBHOOK_URL, and the files read now so that a missing one stops
// start-up together with the other problems.
import { checkHeaderName, readAuthHeader } from '../secrets/auth-file.js';
import { RESOLVED_BY } from '../wire/webhooks.js';
import { listenAddress } from './listen-address.js';
import { linkHref, MAX_LINK_CHARS, quote, unreadableFile } from './parse-value.js';
import type { ReadSettings } from './read-settings.js';
import type { SettingName } from './settings.js';

const KUBERNETES_NEEDS: readonly [SettingName, string][] = [
  ['NODE_NAME', ' (set it from spec.nodeName; MY_NODE_NAME is accepted too)'],
  ['POD_IP', ' (set it from status.podIP)'],
  ['SERVICE_NAME', ': the Service whose EndpointSlices list the knh pods'],
  ['NAMESPACE', ' (set it from metadata.namespace)'],
];

function discoveryErrors({ values: v, given, invalid }: ReadSettings): string[] {
  const errors: string[] = [];
  // Which discovery is meant is unknown, and so are its requirements: DISCOVERY's own error says
  // it all (a misspelled `static` must not also ask for NODE_NAME, SERVICE_NAME …).
  if (invalid.has('DISCOVERY')) return errors;
  if (v.discovery === 'kubernetes') {
    // A setting that is set but invalid is reported as such, not as missing.
    for (const [name, why] of KUBERNETES_NEEDS) {
      if (!given.has(name)) errors.push(`${name} is required with DISCOVERY=kubernetes${why}`);
    }
    if (v.kubeconfig !== null) {
      const problem = unreadableFile(v.kubeconfig);
      if (problem) {
        errors.push(
          `KUBECONFIG=${quote(v.kubeconfig)}: ${problem}; expected the path of a readable kubeconfig file, or KUBECONFIG unset in a cluster`,
        );
      }
    }
  } else if (v.peers.length === 0 && !invalid.has('PEERS')) {
    errors.push('PEERS is required with DISCOVERY=static: a comma-separated list of ip:port');
  }
  return errors;
}

function alertWebhookErrors({ values: v, given }: ReadSettings): string[] {
  const errors: string[] = [];
  const header = v.alertWebhookAuthHeader;
  const headerProblem = checkHeaderName(header);
  if (headerProblem) {
    errors.push(
      `ALERT_WEBHOOK_AUTH_HEADER=${quote(header)}: ${headerProblem}; expected a header name such as Authorization or X-Api-Key`,
    );
  }
  // A URL that is set but invalid is reported as such, not as missing.
  const authFile = v.alertWebhookAuthFile;
  if (authFile !== null && !given.has('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_AUTH_FILE is set but ALERT_WEBHOOK_URL is not: set both, or neither',
    );
  } else if (authFile !== null) {
    // Under a bad header name, the file is still checked, as for readAuthHeader's default name.
    const read = readAuthHeader(authFile, headerProblem ? undefined : header);
    if (!read.ok) {
      errors.push(
        `ALERT_WEBHOOK_AUTH_FILE=${quote(authFile)}: ${read.error}; expected a readable file holding the ${headerProblem ? 'auth' : header} header's value, e.g. "Bearer <token>"`,
      );
    }
  }
  if (v.alertWebhookHeartbeatMs > 0 && !given.has('ALERT_WEBHOOK_URL')) {
    errors.push(
      'ALERT_WEBHOOK_HEARTBEAT is set but ALERT_WEBHOOK_URL is not: the heartbeat goes there',
    );
  }
  return errors;
}

/** What is wrong with a PagerDuty routing key (never repeating it), or null. */
export function routingKeyProblem(key: string): string | null {
  if (/^[\x21-\x7e]{32}$/.test(key)) return null;
  return `has ${key.length} characters (not shown): expected the 32-character integration key of a PagerDuty Events API v2 integration (printable ASCII, no spaces)`;
}

/** The longest alert kind: what `{kind}` in RUNBOOK_URL may become. */
const LONGEST_KIND = Object.keys(RESOLVED_BY).reduce((a, b) => (b.length > a.length ? b : a));

/** STATUS_PAGE_URL and RUNBOOK_URL fit every receiver's link field once written as a URI. */
function linkErrors({ values: v }: ReadSettings): string[] {
  const links = [
    ['STATUS_PAGE_URL', v.statusPageUrl],
    ['RUNBOOK_URL', v.runbookUrl],
  ] as const;
  return links
    .filter(([, url]) => url !== null && linkHref(url, LONGEST_KIND).length > MAX_LINK_CHARS)
    .map(
      ([name, url]) =>
        `${name}=${quote(url ?? '')}: expected a link of at most ${MAX_LINK_CHARS} characters once escaped as a URI (Alertmanager's generatorURL, PagerDuty's links)`,
    );
}

/** The operator views move off the peer port: onto the same port, they would not move at all. */
function operatorListenErrors({ values: v, invalid }: ReadSettings): string[] {
  const listen = v.operatorListen;
  if (listen === null || invalid.has('CONTAINER_PORT')) return [];
  // The host does not matter here: only the port is compared.
  if (listenAddress(listen, '0.0.0.0').port !== v.port) return [];
  return [
    `OPERATOR_LISTEN=${quote(listen)}: port ${v.port} is CONTAINER_PORT, the peers' port; expected another port for the operator views, or OPERATOR_LISTEN unset to keep them on CONTAINER_PORT`,
  ];
}

/** Every problem across settings; a setting that is invalid was reported already. */
export function crossFieldErrors(read: ReadSettings): string[] {
  const { values: v, invalid } = read;
  const errors = discoveryErrors(read);

  const heartbeat = v.heartbeatIntervalMs;
  const coordTimeout = v.coordinatorTimeoutMs;
  if (
    !invalid.has('HEARTBEAT_INTERVAL') &&
    !invalid.has('COORDINATOR_TIMEOUT') &&
    coordTimeout <= heartbeat
  ) {
    errors.push(
      `COORDINATOR_TIMEOUT (${coordTimeout} ms) must exceed HEARTBEAT_INTERVAL (${heartbeat} ms), or followers would hold elections between heartbeats`,
    );
  }

  const routingKey = v.pagerDutyRoutingKey;
  const keyProblem = routingKey === null ? null : routingKeyProblem(routingKey);
  const keyFile = read.files.PAGERDUTY_ROUTING_KEY;
  if (keyProblem) {
    const named = keyFile
      ? `PAGERDUTY_ROUTING_KEY_FILE=${quote(keyFile)}: its content`
      : 'PAGERDUTY_ROUTING_KEY';
    errors.push(`${named} ${keyProblem}`);
  }
  errors.push(...alertWebhookErrors(read), ...linkErrors(read), ...operatorListenErrors(read));
  if (v.maxMemoryMiB === 0) {
    errors.push('MAX_MEMORY_USAGE=0: expected -1 (off) or a limit in MiB from 1 to 1048576');
  }
  return errors;
}
