// DISCOVERY=static: the fixed PEERS list, for running knh without Kubernetes.
import type { PeerSource } from './peer-source.js';

export function staticPeers(addresses: readonly string[]): PeerSource {
  let started = false;
  return {
    start: (onPeers) => {
      started = true;
      onPeers(addresses);
      return Promise.resolve();
    },
    stop: () => {
      started = false;
      return Promise.resolve();
    },
    // The list never changes: loaded means current.
    synced: () => started,
  };
}
