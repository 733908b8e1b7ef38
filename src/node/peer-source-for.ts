// The peer source the settings choose: PEERS as given, or a Service's EndpointSlices.
import type { Config } from '../config/load.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { PeerSource } from '../discovery/peer-source.js';
import { staticPeers } from '../discovery/static.js';

export async function peerSourceFor(
  config: Config,
  clock: Clock,
  logger: Logger,
  /** What the API server's requests name as their User-Agent. */
  userAgent: string,
): Promise<PeerSource> {
  if (config.discovery === 'static') return staticPeers(config.peers);
  // Loaded only when used: the client library takes about half a second to load.
  const { kubernetesPeers, loadKubeConfig } = await import('../discovery/kubernetes.js');
  return kubernetesPeers({
    kubeConfig: loadKubeConfig(config.kubeconfig, userAgent),
    // loadConfig guarantees both with DISCOVERY=kubernetes.
    namespace: config.namespace ?? '',
    serviceName: config.serviceName ?? '',
    port: config.port,
    clock,
    logger,
  });
}
