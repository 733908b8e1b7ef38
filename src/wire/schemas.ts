// Loads every JSON Schema in schemas/ into one ajv instance: the only source of wire shapes.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { canonicalAddress } from './node-ref.js';

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext resolution.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type SchemaName =
  | 'node-ref'
  | 'election-request'
  | 'election-answer'
  | 'announcement'
  | 'announcement-reply'
  | 'peer-view'
  | 'ping-response'
  | 'error-response'
  | 'peer'
  | 'peer-status'
  | 'cluster-status'
  | 'probe-request'
  | 'probe-result'
  | 'status'
  | 'alert'
  | 'leave'
  | 'maintenance-window'
  | 'maintenance-request'
  | 'slack-message'
  | 'pagerduty-event'
  | 'alert-webhook'
  | 'alertmanager-alerts'
  | 'path-echo'
  | 'path-report'
  | 'path-report-reply'
  | 'path-pull';

/** schemas/ beside dist/ (the build) — the same layout in the repo and in the image. */
export const SCHEMA_DIR = new URL('../../../schemas/', import.meta.url);

export type Check = { ok: true } | { ok: false; errors: string[] };

export interface SchemaRegistry {
  check(name: SchemaName, value: unknown): Check;
  /** Every schema name found in the directory. */
  readonly names: readonly string[];
}

/** At most this many errors are told: a hostile body fails everywhere, its answer stays small. */
const MAX_ERRORS_SHOWN = 10;

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  const all = errors ?? [];
  const shown = all
    .slice(0, MAX_ERRORS_SHOWN)
    .map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
  if (all.length > MAX_ERRORS_SHOWN) shown.push(`… and ${all.length - MAX_ERRORS_SHOWN} more`);
  return shown;
}

/**
 * `validateSchemas`: check each schema against the JSON Schema meta-schema as it is added. That
 * costs every node ~50 ms of start-up (the meta-schema compiles), so nodes skip it;
 * test/unit/schemas.test.ts does it, so a malformed schema fails CI, not a node.
 */
export function loadSchemas(
  dir: URL = SCHEMA_DIR,
  { validateSchemas = false }: { validateSchemas?: boolean } = {},
): SchemaRegistry {
  const ajv = new Ajv({ allErrors: true, strict: true, validateSchema: validateSchemas });
  addFormats(ajv);
  // An address a peer can dial, spelled the one way knh spells it (so equal nodes are equal strings).
  ajv.addFormat('peer-address', {
    type: 'string',
    validate: (s: string) => canonicalAddress(s) === s,
  });
  const ids: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json'))) {
    const schema = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as { $id: string };
    ajv.addSchema(schema);
    ids.push(schema.$id);
  }
  // Each schema compiles on first use: compiling all of them costs every node ~0.1 s of start-up.
  // test/unit/schemas.test.ts compiles every one, so a broken schema fails CI, not a node.
  const compiled = new Map<SchemaName, ValidateFunction>();
  const validator = (name: SchemaName): ValidateFunction => {
    let v = compiled.get(name);
    if (!v) {
      if (!ids.includes(`urn:knh:schema:${name}`)) {
        throw new Error(`schema ${name} is missing from ${dir.pathname}`);
      }
      v = ajv.getSchema(`urn:knh:schema:${name}`);
      if (!v) throw new Error(`schema ${name} did not compile`);
      compiled.set(name, v);
    }
    return v;
  };
  return {
    names: ids.map((id) => id.replace('urn:knh:schema:', '')),
    check(name, value) {
      const v = validator(name);
      return v(value) ? { ok: true } : { ok: false, errors: formatErrors(v.errors) };
    },
  };
}
