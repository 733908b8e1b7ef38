// The parts of @kubernetes/client-node that knh uses, in one place. `npm run build` bundles just
// them and what they need into dist/kube-client.cjs (scripts/bundle.ts): the package as published
// is some 2,500 modules, every API group's client among them, and importing it whole costs a node
// several times the bundle's memory (docs/benchmarks.md, "Memory as deployed"). Taken from the
// package's own modules rather than its index, whose every re-export the bundle would keep: exec,
// attach and port-forward's WebSocket client, cp's tar streams.
export { KubeConfig } from '@kubernetes/client-node/dist/config.js';
export { makeInformer } from '@kubernetes/client-node/dist/informer.js';
export { DiscoveryV1Api } from '@kubernetes/client-node/dist/gen/index.js';
export type { V1EndpointSlice } from '@kubernetes/client-node';
