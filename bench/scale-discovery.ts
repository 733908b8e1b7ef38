// How the scale bench's coordinator finds its peers. As deployed (daemonset.yaml), by default:
// DISCOVERY=kubernetes, the real @kubernetes/client-node informer listing and watching the
// EndpointSlices of a Service, here served by the in-repo API server (test/support/fake-kube-api.ts)
// on loopback. The library and its cache are part of the coordinator's memory (the bundle the
// build makes adds 18 MB of RSS once loaded, src/discovery/kube-client.ts), which a bench with
// static peers leaves out.
//
// The simulated peers share one IP, each on its own port; a slice's endpoints share its ports, so
// each peer is a slice of its own. A real DaemonSet's Service of 5,000 pods has about 50 slices of
// 100 endpoints: measured alone, the informer's cache of 5,001 one-endpoint slices took 9 MB of
// heap, of 50 slices of 100, 3 MB. BENCH_SCALE_DISCOVERY=static gives the coordinator the peers in
// PEERS instead.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeKubeApi } from '../test/support/fake-kube-api.js';

export type ScaleDiscovery = 'kubernetes' | 'static';

const NAMESPACE = 'knh';
const SERVICE = 'knh';
/** Linux's limit on one environment string (MAX_ARG_STRLEN), `PEERS=` and the final NUL included. */
const MAX_ENV_STRING = 128 * 1024;

export function scaleDiscovery(): ScaleDiscovery {
  const value = process.env.BENCH_SCALE_DISCOVERY ?? 'kubernetes';
  if (value !== 'kubernetes' && value !== 'static') {
    throw new Error(`BENCH_SCALE_DISCOVERY must be kubernetes or static, not ${value}`);
  }
  return value;
}

export interface PeerListing {
  /** The coordinator's environment for it. */
  env: Record<string, string>;
  /** Stops the API server (if any) and removes its kubeconfig. */
  close(): Promise<void>;
}

/**
 * Lists `addresses` (ip:port, the coordinator's own among them, named `names[i]`) to a coordinator
 * the way `how` says.
 */
export async function listPeers(
  how: ScaleDiscovery,
  addresses: readonly string[],
  names: readonly string[],
): Promise<PeerListing> {
  if (how === 'static') {
    const peers = addresses.join(',');
    if (`PEERS=${peers}`.length + 1 > MAX_ENV_STRING) {
      throw new Error(
        `PEERS for ${addresses.length} addresses is ${peers.length} bytes: over Linux's 128 KiB limit on one environment string`,
      );
    }
    return { env: { DISCOVERY: 'static', PEERS: peers }, close: () => Promise.resolve() };
  }
  const api = await new FakeKubeApi().start();
  const dir = mkdtempSync(join(tmpdir(), 'knh-scale-'));
  try {
    addresses.forEach((address, i) => {
      const at = address.lastIndexOf(':');
      const ip = address.slice(0, at);
      const port = Number(address.slice(at + 1));
      api.upsert(NAMESPACE, SERVICE, `${SERVICE}-${i}`, port, [{ ip, nodeName: names[i]! }]);
    });
    const kubeconfig = api.writeKubeconfig(join(dir, 'kubeconfig'));
    return {
      env: {
        DISCOVERY: 'kubernetes',
        KUBECONFIG: kubeconfig,
        NAMESPACE,
        SERVICE_NAME: SERVICE,
        PEERS: '',
      },
      close: async () => {
        await api.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
