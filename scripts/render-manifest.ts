// `npm run manifest`: rewrites daemonset.yaml from the kustomize base (scripts/manifest.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MANIFEST_FILE, singleFileManifest } from './manifest.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
writeFileSync(join(root, MANIFEST_FILE), singleFileManifest(root));
process.stdout.write(`${MANIFEST_FILE} updated\n`);
