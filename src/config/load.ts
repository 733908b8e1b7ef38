// Loads and validates every setting in one pass; all problems are reported together. Config is
// derived from the declaration in settings.ts: each setting fills the field its key names.
import { isIP } from 'node:net';
import { formatAddress, nodeId } from '../wire/node-ref.js';
import { checkSecret, readSecretFile } from '../auth/peer-secret.js';
import { crossFieldErrors } from './cross-field-rules.js';
import { listenAddress, type ListenAddress } from './listen-address.js';
import { lookalikes, lookalikeWarning } from './lookalikes.js';
import { quote } from './parse-value.js';
import { readSettings, type ReadSettings } from './read-settings.js';
import type { SettingName, SettingValues } from './settings.js';

/**
 * The fields that are not one setting as read: formed from several settings, or defaulted from
 * something outside the setting. Each replaces the field of the same name in SettingValues, or
 * (address, id) adds one.
 */
interface Derived {
  /** NODE_NAME; with static discovery, by default the host name. */
  nodeName: string;
  /** POD_IP; with static discovery, by default 127.0.0.1. */
  podIp: string;
  /** LISTEN_HOST; by default every interface of POD_IP's family (0.0.0.0, or :: for IPv6). */
  listenHost: string;
  /**
   * Where the operator views are served, from OPERATOR_LISTEN (a port alone: on listenHost); null:
   * on CONTAINER_PORT with the peer messages.
   */
  operatorListener: ListenAddress | null;
  /** `POD_IP:CONTAINER_PORT`, what peers dial and what ranks this node. */
  address: string;
  /** `NODE_NAME@POD_IP`. */
  id: string;
  /**
   * The peer secrets in force (first signs): PEER_SECRET, or PEER_SECRET_FILE's (re-read from
   * peerSecretFile as it rotates); null: peer authentication is off.
   */
  peerSecrets: string[] | null;
  /** The settings read from a file (`<env>_FILE`): the file's path, to re-read as it rotates. */
  files: Readonly<Partial<Record<SettingName, string>>>;
}

export type Config = Omit<SettingValues, keyof Derived> & Derived;

export type LogLevel = Config['logLevel'];

/** `warnings`: what is allowed but likely a mistake, to log at start-up (either way). */
export type LoadResult =
  | { ok: true; config: Config; warnings: string[] }
  | { ok: false; errors: string[]; warnings: string[] };

/** The settings that send alerts somewhere; with none of them, knh only shows what it finds. */
const RECEIVERS: readonly SettingName[] = [
  'PEER_STATUS_URL',
  'CLUSTER_STATUS_URL',
  'SLACK_WEBHOOK_URL',
  'ALERTMANAGER_URL',
  'PAGERDUTY_ROUTING_KEY',
  'ALERT_WEBHOOK_URL',
];

function warningsOf(env: Readonly<Record<string, string | undefined>>, read: ReadSettings) {
  const warnings = lookalikes(env).map(lookalikeWarning);
  if (!RECEIVERS.some((name) => read.given.has(name))) {
    warnings.push(
      `no receiver is set (${RECEIVERS.join(', ')}): knh shows what it finds on its status page and metrics, but sends no alert`,
    );
  }
  return warnings;
}

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
  const read = readSettings(env);
  const v = read.values;
  const errors = [...read.errors, ...crossFieldErrors(read)];
  // Under its key, PEER_SECRET as read: one secret, or null.
  const peerSecrets = loadPeerSecrets(v.peerSecrets, v.peerSecretFile, errors);
  const warnings = warningsOf(env, read);
  if (errors.length > 0) return { ok: false, errors, warnings };

  // With DISCOVERY=kubernetes the rules have required NODE_NAME and POD_IP.
  const podIp = v.podIp ?? '127.0.0.1';
  const nodeName = v.nodeName ?? hostname;
  const listenHost = v.listenHost ?? (isIP(podIp) === 6 ? '::' : '0.0.0.0');
  return {
    ok: true,
    warnings,
    config: {
      ...v,
      nodeName,
      podIp,
      listenHost,
      operatorListener:
        v.operatorListen === null ? null : listenAddress(v.operatorListen, listenHost),
      address: formatAddress(podIp, v.port),
      id: nodeId(nodeName, podIp),
      peerSecrets,
      files: read.files,
    },
  };
}
