// What daemonset.yaml gives the knh container that shapes its footprint (NODE_OPTIONS: the heap's
// size), so that a benchmark measures a coordinator as deployed.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

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
