// Which EndpointSlice endpoints are knh peers; pure, over the fields of discovery.k8s.io/v1.
import { canonicalIp, formatAddress } from '../wire/node-ref.js';

/** The fields knh reads of a discovery.k8s.io/v1 EndpointSlice. */
export interface SliceLike {
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    deletionTimestamp?: unknown;
  };
  addressType?: string;
  ports?: { name?: string; port?: number; protocol?: string }[] | null;
  endpoints?:
    | {
        addresses?: string[];
        nodeName?: string;
        targetRef?: { kind?: string; name?: string };
        conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
      }[]
    | null;
}

export interface SlicePeers {
  /** Canonical `ip:port`, sorted, without duplicates. */
  addresses: string[];
  /** Endpoints left out because Kubernetes is removing their pod (terminating). */
  terminating: number;
  /** Endpoints listed but not ready: kept, so a pod that was alive and stops answering is reported. */
  notReady: number;
  /** The Kubernetes node each address runs on, where the slice names it (endpoint.nodeName). */
  nodeNames: Map<string, string>;
  /** The pod behind each address, where the slice names it (endpoint.targetRef of kind Pod). */
  podNames: Map<string, string>;
}

/**
 * The peers one slice lists:
 * - Only IPv4/IPv6 slices (FQDN slices name no pod); none from a slice being deleted.
 * - The port: the slice's port named `http`, else its only port, else `fallbackPort`
 *   (CONTAINER_PORT; every knh pod listens on the same one).
 * - A terminating endpoint is a pod Kubernetes is removing on purpose: not a peer, so its going
 *   away never pages. A not-ready one is still a peer: knh's own readiness must not hide a node
 *   whose network broke (the verdict rules keep a never-seen-alive pod from paging).
 */
export function peersFromSlice(slice: SliceLike, fallbackPort: number): SlicePeers {
  const none: SlicePeers = {
    addresses: [],
    terminating: 0,
    notReady: 0,
    nodeNames: new Map(),
    podNames: new Map(),
  };
  if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') return none;
  if (slice.metadata?.deletionTimestamp) return none;
  const ports = (slice.ports ?? []).filter((p) => typeof p.port === 'number');
  const port =
    (ports.find((p) => p.name === 'http') ?? (ports.length === 1 ? ports[0] : undefined))?.port ??
    fallbackPort;
  const found = new Set<string>();
  const nodeNames = new Map<string, string>();
  const podNames = new Map<string, string>();
  let terminating = 0;
  let notReady = 0;
  for (const endpoint of slice.endpoints ?? []) {
    const c = endpoint.conditions ?? {};
    if (c.terminating === true) {
      terminating++;
      continue;
    }
    // Per the API, an unset `ready` means ready.
    if (c.ready === false) notReady++;
    for (const ip of endpoint.addresses ?? []) {
      const canonical = canonicalIp(ip);
      if (!canonical) continue;
      const address = formatAddress(canonical, port);
      found.add(address);
      if (endpoint.nodeName) nodeNames.set(address, endpoint.nodeName);
      const pod = endpoint.targetRef;
      if (pod?.kind === 'Pod' && pod.name) podNames.set(address, pod.name);
    }
  }
  return { addresses: [...found].sort(), terminating, notReady, nodeNames, podNames };
}

/** The peers all `slices` list together, by the rules of `peersFromSlice`. */
export function peersFromSlices(slices: readonly SliceLike[], fallbackPort: number): SlicePeers {
  const found = new Set<string>();
  const nodeNames = new Map<string, string>();
  const podNames = new Map<string, string>();
  let terminating = 0;
  let notReady = 0;
  for (const slice of slices) {
    const one = peersFromSlice(slice, fallbackPort);
    for (const address of one.addresses) found.add(address);
    for (const [address, name] of one.nodeNames) nodeNames.set(address, name);
    for (const [address, name] of one.podNames) podNames.set(address, name);
    terminating += one.terminating;
    notReady += one.notReady;
  }
  return { addresses: [...found].sort(), terminating, notReady, nodeNames, podNames };
}
