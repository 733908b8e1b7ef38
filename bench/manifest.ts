// What daemonset.yaml gives the knh container that shapes its footprint (NODE_OPTIONS: the heap's
// size), so that a benchmark measures a coordinator as deployed.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { imageNodeEnv, imageNodeFlags } from './image-node.js';

interface Container {
  name: string;
  env?: { name: string; value?: string }[];
}

/** The knh container's NODE_OPTIONS in daemonset.yaml ('' when it sets none). */
export function manifestNodeOptions(): string {
  const text = readFileSync(new URL('../../daemonset.yaml', import.meta.url), 'utf8');
  for (const doc of parseAllDocuments(text)) {
    const d = doc.toJS() as {
      kind?: string;
      spec?: { template?: { spec?: { containers?: Container[] } } };
    } | null;
    if (d?.kind !== 'DaemonSet') continue;
    const env = d.spec?.template?.spec?.containers?.[0]?.env ?? [];
    return env.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '';
  }
  throw new Error('daemonset.yaml has no DaemonSet');
}

/** How a pod runs node: what a benchmark gives the knh processes it spawns. */
export interface Deployed {
  /** The image's ENTRYPOINT flags, before the program. */
  nodeArgs: string[];
  /** The image's environment, and daemonset.yaml's NODE_OPTIONS over it, as a pod's env is. */
  env: Record<string, string>;
}

/** As deployed; with `nodeOptions` for daemonset.yaml's NODE_OPTIONS (to compare heap settings). */
export function asDeployed(nodeOptions = manifestNodeOptions()): Deployed {
  return { nodeArgs: imageNodeFlags(), env: { ...imageNodeEnv(), NODE_OPTIONS: nodeOptions } };
}

/** The flags and environment of `d`, for a benchmark's report. */
export function deployedText(d: Deployed): string {
  const env = Object.entries(d.env).map(([k, v]) => `${k}=${v}`);
  return `the ENTRYPOINT's flags '${d.nodeArgs.join(' ')}' and the environment '${env.join(' ')}'`;
}
