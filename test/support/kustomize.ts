// `kubectl kustomize` for tests: renders a kustomization folder, or the base with some components
// (through an overlay of its own in a temporary folder). kubectl's kustomize needs no cluster.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parse, stringify } from 'yaml';

/** The patches (`patches:` of an overlay) docs/deploying.md shows in a section, in order. */
export function docPatches(heading: string): unknown[][] {
  const root = new URL('../../../', import.meta.url).pathname;
  const text = readFileSync(join(root, 'docs/deploying.md'), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start === -1) throw new Error(`docs/deploying.md: no section ${heading}`);
  const rest = text.slice(start + heading.length + 2);
  const end = rest.search(/\n#{1,3} /);
  const section = end === -1 ? rest : rest.slice(0, end);
  return [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map(
    (m) => (parse(dedent(m[1] ?? '')) as { patches: unknown[] }).patches,
  );
}

/** A block's lines without the indentation they share (a block inside a list item). */
function dedent(block: string): string {
  const lines = block.split('\n');
  const indents = lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)?.[0].length ?? 0);
  const shared = Math.min(...indents);
  return lines.map((l) => l.slice(shared)).join('\n');
}

/** Why `kubectl kustomize` cannot run here; null when it can. */
export function kustomizeUnavailable(): string | null {
  const r = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `kubectl is not installed (${r.error.message})`;
  if (r.status !== 0) return `kubectl version --client failed: ${r.stderr.trim()}`;
  return null;
}

/** The YAML `kubectl kustomize dir` prints; throws with kubectl's message. */
export function kustomize(dir: string): string {
  const r = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir}: ${r.stderr.trim()}`);
  return r.stdout;
}

/**
 * The YAML of `base` with `components` (folders), as an overlay that uses just those renders it;
 * `patches` are the overlay's own (its `patches:` entries, inline ones: no files beside it).
 * kustomize takes only relative paths to them, so the overlay names them from where it lies.
 */
export function kustomizeWith(
  base: string,
  components: readonly string[],
  { patches = [] }: { patches?: readonly unknown[] } = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'knh-kustomize-'));
  try {
    const relativeTo = (paths: readonly string[]) => paths.map((p) => relative(dir, p));
    const overlay = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: relativeTo([base]),
      ...(components.length > 0 ? { components: relativeTo(components) } : {}),
      ...(patches.length > 0 ? { patches } : {}),
    };
    writeFileSync(join(dir, 'kustomization.yaml'), stringify(overlay));
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The YAML of the overlay in `dir` without some of its components (`leaveOut`: their folders), from
 * a copy of it elsewhere: its files, and its paths to other folders made to lead there still;
 * `change` edits the copy's kustomization first (another namespace, say).
 */
export function kustomizeWithout(
  dir: string,
  leaveOut: readonly string[],
  change?: (kustomization: Record<string, unknown>) => void,
): string {
  const copy = mkdtempSync(join(tmpdir(), 'knh-kustomize-'));
  try {
    for (const f of readdirSync(dir, { withFileTypes: true })) {
      if (f.isFile()) copyFileSync(join(dir, f.name), join(copy, f.name));
    }
    const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8')) as Record<
      string,
      unknown
    >;
    const away = new Set(leaveOut.map((p) => resolve(p)));
    const moved = (paths: unknown) =>
      (paths as string[] | undefined)
        ?.map((p) => (p.startsWith('..') && !isAbsolute(p) ? resolve(dir, p) : p))
        .filter((p) => !away.has(p))
        .map((p) => (isAbsolute(p) ? relative(copy, p) : p));
    if (k.resources) k.resources = moved(k.resources);
    if (k.components) k.components = moved(k.components);
    change?.(k);
    writeFileSync(join(copy, 'kustomization.yaml'), stringify(k));
    return kustomize(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}
