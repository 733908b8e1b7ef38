// DISCOVERY=static: the fixed PEERS list, for running knh without Kubernetes.
import type { PeerSource } from './peer-source.js';

export function staticPeers(addresses: readonly string[]): PeerSource {
  return {
    start: (onPeers) => {
      onPeers(addresses);
      return Promise.resolve();
    },
    stop: () => Promise.resolve(),
  };
}
