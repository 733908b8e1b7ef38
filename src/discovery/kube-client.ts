// The parts of @kubernetes/client-node that knh uses, in one place. `npm run build` bundles just
// them and what they need into dist/kube-client.cjs (scripts/bundle.ts): the package as published
// is some 2,500 modules, every API group's client among them, and importing it whole costs a node
// several times the bundle's memory (docs/benchmarks.md, "Memory as deployed").
export { DiscoveryV1Api, KubeConfig, makeInformer } from '@kubernetes/client-node';
export type { V1EndpointSlice } from '@kubernetes/client-node';
