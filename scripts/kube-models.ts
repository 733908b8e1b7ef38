// @kubernetes/client-node's ObjectSerializer knows every model of every Kubernetes API (its
// typeMap, some 700 classes), and its index of models (all.js) re-exports them all: the bundle
// would hold and build them all at load for knh, which reads EndpointSlices only. Its build keeps
// the models an EndpointSlice list and an error Status are made of (what a model's attributes
// name, recursively); the serializer passes any type it does not know through as the plain object
// it is, which is all knh reads of the others.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The models knh's API calls return: a list of EndpointSlices, and a Status when they fail. */
export const KUBE_MODEL_ROOTS = ['V1EndpointSliceList', 'V1EndpointSlice', 'V1Status'];

/** The model names a model's attributes refer to (`"type": "Array<V1Endpoint>"` names V1Endpoint). */
export function modelsNamedIn(modelSource: string): string[] {
  const names: string[] = [];
  for (const m of modelSource.matchAll(/"type": "([^"]+)"/g)) {
    for (const n of m[1]!.matchAll(/[A-Z]\w*/g)) names.push(n[0]);
  }
  return names;
}

/** The roots and every model they refer to, recursively, read from the models' directory. */
export function modelsKept(
  modelsDir: string,
  roots: readonly string[] = KUBE_MODEL_ROOTS,
): Set<string> {
  const kept = new Set<string>();
  const todo = [...roots];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (kept.has(name)) continue;
    let source: string;
    try {
      source = readFileSync(join(modelsDir, `${name}.js`), 'utf8');
    } catch {
      continue; // not a model: a primitive or a type parameter (Array, Date...)
    }
    kept.add(name);
    todo.push(...modelsNamedIn(source));
  }
  for (const root of roots) {
    if (!kept.has(root)) throw new Error(`no model ${root} in ${modelsDir}`);
  }
  return kept;
}

/** A file's lines without the re-exports of models not kept; throws if it has too few of them. */
function modelReexportsKept(source: string, kept: ReadonlySet<string>, file: string): string[] {
  let reexports = 0;
  const lines = source.split('\n').filter((line) => {
    const reexport = /^export \* from '\.\.\/models\/(\w+)\.js';$/.exec(line);
    if (!reexport) return true;
    reexports++;
    return kept.has(reexport[1]!);
  });
  if (reexports < kept.size) {
    throw new Error(
      `${file} is not as scripts/kube-models.ts expects: its models' re-exports were not found`,
    );
  }
  return lines;
}

/** all.js, the index of every model, with only the models kept (the others unreferenced). */
export function trimModelIndex(source: string, kept: ReadonlySet<string>): string {
  return modelReexportsKept(source, kept, 'all.js').join('\n');
}

/**
 * ObjectSerializer.js with only the models kept: their re-exports, imports and typeMap entries;
 * every other line as it is. Throws if the file no longer has the shape this relies on.
 */
export function trimObjectSerializer(source: string, kept: ReadonlySet<string>): string {
  let typeMapEntries = 0;
  const lines = modelReexportsKept(source, kept, 'ObjectSerializer.js').filter((line) => {
    const imported = /^import \{ (\w+) \} from '\.\.\/models\/(\w+)\.js';$/.exec(line);
    if (imported) return kept.has(imported[1]!);
    const entry = /^ {4}"(\w+)": (\w+),?$/.exec(line);
    if (entry && entry[1] === entry[2]) {
      typeMapEntries++;
      return kept.has(entry[1]!);
    }
    return true;
  });
  if (typeMapEntries < kept.size || !source.includes('let typeMap = {')) {
    throw new Error(
      "ObjectSerializer.js is not as scripts/kube-models.ts expects: its typeMap's entries were not found",
    );
  }
  return lines.join('\n');
}
