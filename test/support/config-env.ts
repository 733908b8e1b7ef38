// Environments the settings tests start from: a valid static node, and a valid Kubernetes node.
export type Env = Record<string, string | undefined>;

export const HOST = { hostname: 'test-host' };
export const STATIC: Env = { DISCOVERY: 'static', PEERS: '10.0.0.1:8080,10.0.0.2:8080' };
export const KUBERNETES: Env = {
  NODE_NAME: 'worker-1',
  POD_IP: '10.244.1.7',
  SERVICE_NAME: 'knh',
  NAMESPACE: 'monitoring',
};
