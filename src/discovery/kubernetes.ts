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
//
// Peers: each add/update/delete event changes one slice in a SliceIndex (O(that slice), not of the
// ~50 slices a 5,000-node Service has). Changes are published at most once per `coalesceMs`, with
// their net effect: a rolling update touching many slices is one update, and an endpoint moved
// from one slice to another never leaves the list (added to the second first: both slices count
// for it; removed from the first first: the second update lands in the same window). After every
// list the index is checked against the informer's cache, whatever events the relist produced.
import { DiscoveryV1Api, KubeConfig, makeInformer, type V1EndpointSlice } from './kube-client.js';
import type { Clock, TimerHandle } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerSource } from './peer-source.js';
import { SliceIndex } from './slice-index.js';

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
  /**
   * Slice changes within this many ms of the first are published together (default 100): fewer
   * peer-list updates in a rolling update, at the cost of that much delay.
   */
  coalesceMs?: number;
}

/**
 * In-cluster config from the pod's service account, or the file named by KUBECONFIG; every request
 * it makes (the list, through the generated client, and the watch) names knh as `userAgent`, so an
 * API server's audit log and its priority and fairness rules can tell knh's requests from others.
 */
export function loadKubeConfig(kubeconfigPath: string | null, userAgent?: string): KubeConfig {
  const kc = userAgent === undefined ? new KubeConfig() : new NamedKubeConfig(userAgent);
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromCluster();
  return kc;
}

/** The client's two ways of building a request, each given knh's User-Agent. */
class NamedKubeConfig extends KubeConfig {
  constructor(private readonly userAgent: string) {
    super();
  }

  override async applyToFetchOptions(
    opts: Parameters<KubeConfig['applyToFetchOptions']>[0],
  ): ReturnType<KubeConfig['applyToFetchOptions']> {
    const init = await super.applyToFetchOptions(opts);
    // Always a Headers the client made (its config.js); the discovery test sees the watch's.
    (init.headers as unknown as { set(name: string, value: string): void }).set(
      'User-Agent',
      this.userAgent,
    );
    return init;
  }

  override async applySecurityAuthentication(
    context: Parameters<KubeConfig['applySecurityAuthentication']>[0],
  ): Promise<void> {
    await super.applySecurityAuthentication(context);
    context.setHeaderParam('User-Agent', this.userAgent);
  }
}

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function kubernetesPeers(opts: KubernetesPeersOptions): PeerSource {
  const { kubeConfig, namespace, serviceName, port, clock } = opts;
  const logger = opts.logger.child({ component: 'discovery', namespace, service: serviceName });
  const { initialMs, maxMs } = opts.backoff ?? { initialMs: 500, maxMs: 30_000 };
  const coalesceMs = opts.coalesceMs ?? 100;
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
  /** The list last given to onPeers: the index returns the same array until membership changes. */
  let published: readonly string[] | null = null;
  let startedMs = 0;
  const index = new SliceIndex(port);
  /** Check the index against the informer's cache at the next publish (a list came in). */
  let resync = false;
  let pending: TimerHandle | null = null;
  let pendingDueMs = 0;

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
      resync = true;
      schedulePublish(0);
      return list;
    },
    labelSelector,
  );

  let onPeers: (addresses: readonly string[]) => void = () => undefined;
  const publish = () => {
    pending = null;
    if (stopped) return;
    if (resync) {
      resync = false;
      // The informer has taken the list in by now (it does so as soon as the list returns).
      index.replaceAll(informer.list(namespace));
    }
    const addresses = index.addresses();
    if (addresses === published) return;
    published = addresses;
    const { terminating, notReady } = index.totals();
    logger.debug(
      { event: 'discovery-update', peers: addresses.length, terminating, notReady },
      'EndpointSlices changed',
    );
    onPeers(addresses);
  };

  /** Publishes in `ms`, unless a publish is already due by then (one per window, not per event). */
  const schedulePublish = (ms: number) => {
    const due = clock.now() + ms;
    if (pending) {
      if (pendingDueMs <= due) return;
      clock.clearTimeout(pending);
    }
    pendingDueMs = due;
    pending = clock.setTimeout(publish, ms);
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
      `EndpointSlice watch failed (${describe(err)}); keeping the ${published?.length ?? 0} endpoints known so far, retrying in ${wait} ms`,
    );
    delay = Math.min(delay * 2, maxMs);
    restart = clock.setTimeout(() => {
      restart = null;
      if (stopped) return;
      run();
    }, wait);
  };

  // The informer calls these with the slice as it now is (as it was, for a delete).
  const upsert = (slice: V1EndpointSlice) => {
    if (index.upsert(slice)) schedulePublish(coalesceMs);
  };
  informer.on('add', upsert);
  informer.on('update', upsert);
  informer.on('delete', (slice: V1EndpointSlice) => {
    if (index.remove(slice)) schedulePublish(coalesceMs);
  });
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
    nodeName: (address) => index.nodeName(address),
    podName: (address) => index.podName(address),
    async stop() {
      stopped = true;
      if (restart) clock.clearTimeout(restart);
      restart = null;
      if (pending) clock.clearTimeout(pending);
      pending = null;
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
