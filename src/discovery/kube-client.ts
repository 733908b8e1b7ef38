// The parts of @kubernetes/client-node that knh uses, in one place. `npm run build` replaces this
// module's output with a bundle of just them and what they need (scripts/bundle-kube-client.ts):
// the package as published is some 2,500 modules, every API group's client among them. Measured
// alone on Node 20 (2026-11-23), importing the package added 71 MB of RSS and 27 MB of heap to a
// node; the bundle adds 18 MB and 7 MB.
export { DiscoveryV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
export type { V1EndpointSlice } from '@kubernetes/client-node';
