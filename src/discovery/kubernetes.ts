// DISCOVERY=kubernetes: peers are the endpoints of the Service's EndpointSlices, listed and
// watched with @kubernetes/client-node's informer in one namespace.
//
// The 1.x informer relists by itself after 410 Gone and re-watches after a clean end of stream,
// but any other error (list refused, watch reset, 5xx) stops it for good. This adapter restarts
// it with backoff; the informer keeps its cache across restarts, so peers known before an API
// outage stay peers (not forgotten, not alerted) until the API says otherwise.
//
// Synced (readiness): the first list has arrived and the watch is up. A start of the informer that
// settles with no error has its watch open; any error means it is down until a restart succeeds.
// A cleanly ended stream is re-watched by the informer itself and counts as up unless that fails.
import {
  DiscoveryV1Api,
  KubeConfig,
  makeInformer,
  type V1EndpointSlice,
} from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { peersFromSlices } from './endpoint-slices.js';
import type { PeerSource } from './peer-source.js';

export interface KubernetesPeersOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  serviceName: string;
  /** CONTAINER_PORT, for slices that name no usable port. */
  port: number;
  clock: Clock;
  logger: Logger;
  /** Restart delays after an error: from `initialMs`, doubling, capped at `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
}

/** In-cluster config from the pod's service account, or the file named by KUBECONFIG. */
export function loadKubeConfig(kubeconfigPath: string | null): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromCluster();
  return kc;
}

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function kubernetesPeers(opts: KubernetesPeersOptions): PeerSource {
  const { kubeConfig, namespace, serviceName, port, clock } = opts;
  const logger = opts.logger.child({ component: 'discovery', namespace, service: serviceName });
  const { initialMs, maxMs } = opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
  const api = kubeConfig.makeApiClient(DiscoveryV1Api);
  const labelSelector = `${SERVICE_NAME_LABEL}=${serviceName}`;
  const path = `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/endpointslices`;

  let listed = false;
  let watching = false;
  /** Errors so far: a start that saw none while it ran has its watch open. */
  let failures = 0;
  let stopped = false;
  let delay = initialMs;
  let restart: TimerHandle | null = null;
  let published: string | null = null;
  let startedMs = 0;

  const informer = makeInformer<V1EndpointSlice>(
    kubeConfig,
    path,
    async () => {
      const list = await api.listNamespacedEndpointSlice({ namespace, labelSelector });
      // A list that succeeds means the API is back: restart quickly after the next error.
      if (!listed || delay !== initialMs) {
        logger.info(
          { event: 'discovery-synced', slices: list.items.length },
          `listed ${list.items.length} EndpointSlices of service ${serviceName}`,
        );
      }
      listed = true;
      delay = initialMs;
      // Publish after the informer has taken the list in, even when it is empty (a Service with
      // no endpoints yet, a misspelt SERVICE_NAME): the node says it is waiting rather than nothing.
      clock.setTimeout(publish, 0);
      return list;
    },
    labelSelector,
  );

  let onPeers: (addresses: readonly string[]) => void = () => undefined;
  const publish = () => {
    const { addresses, terminating, notReady } = peersFromSlices(informer.list(namespace), port);
    const key = addresses.join(',');
    if (key === published) return;
    published = key;
    logger.debug(
      { event: 'discovery-update', peers: addresses.length, terminating, notReady },
      'EndpointSlices changed',
    );
    onPeers(addresses);
  };

  /** Starts the informer: it lists if it has no resourceVersion to resume from, then watches. */
  const run = () => {
    startedMs = clock.now();
    const before = failures;
    informer.start().then(() => {
      if (!stopped && failures === before) watching = true;
    }, scheduleRestart);
  };

  const scheduleRestart = (err: unknown) => {
    watching = false;
    failures++;
    if (stopped || restart) return;
    // A watch that stayed up a while means the API had recovered: start the backoff afresh.
    if (clock.now() - startedMs > maxMs) delay = initialMs;
    const wait = Math.round(delay * (0.8 + Math.random() * 0.4));
    logger.warn(
      { event: 'discovery-error', err, retryInMs: wait },
      `EndpointSlice watch failed (${describe(err)}); keeping the ${published === null ? 0 : published.split(',').filter(Boolean).length} endpoints known so far, retrying in ${wait} ms`,
    );
    delay = Math.min(delay * 2, maxMs);
    restart = clock.setTimeout(() => {
      restart = null;
      if (stopped) return;
      run();
    }, wait);
  };

  informer.on('add', publish);
  informer.on('update', publish);
  informer.on('delete', publish);
  informer.on('error', scheduleRestart);

  return {
    start(callback) {
      onPeers = callback;
      logger.info(
        { event: 'discovery-start', labelSelector },
        `watching EndpointSlices of service ${serviceName} in namespace ${namespace}`,
      );
      // Not awaited: an API that hangs must not hold up start-up (the node says it is waiting).
      // Errors arrive through the 'error' callback; a rejection is handled the same way.
      run();
      return Promise.resolve();
    },
    synced: () => listed && watching && !stopped,
    async stop() {
      stopped = true;
      if (restart) clock.clearTimeout(restart);
      restart = null;
      await informer.stop();
    },
  };
}

function describe(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { statusCode?: number; code?: number | string; message?: string };
    if (e.statusCode) return `HTTP ${e.statusCode}`;
    if (typeof e.code === 'number') return `HTTP ${e.code}`;
    if (e.code) return String(e.code);
    if (e.message) return e.message;
  }
  return String(err);
}
