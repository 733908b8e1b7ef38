// Loads every JSON Schema in schemas/ into one ajv instance: the only source of wire shapes.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { canonicalAddress } from '../core/node-ref.js';

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
  | 'cluster-status';

/** schemas/ beside dist/ (the build) — the same layout in the repo and in the image. */
export const SCHEMA_DIR = new URL('../../../schemas/', import.meta.url);

export type Check = { ok: true } | { ok: false; errors: string[] };

export interface SchemaRegistry {
  check(name: SchemaName, value: unknown): Check;
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`);
}

export function loadSchemas(dir: URL = SCHEMA_DIR): SchemaRegistry {
  const ajv = new Ajv({ allErrors: true, strict: true });
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
  // Compile all at load, so a broken schema stops start-up rather than the first message.
  const compiled = new Map<string, ValidateFunction>();
  for (const id of ids) {
    const v = ajv.getSchema(id);
    if (v) compiled.set(id.replace('urn:knh:schema:', ''), v);
  }
  const validator = (name: SchemaName): ValidateFunction => {
    const v = compiled.get(name);
    if (!v) throw new Error(`schema ${name} is missing from ${dir.pathname}`);
    return v;
  };
  return {
    check(name, value) {
      const v = validator(name);
      return v(value) ? { ok: true } : { ok: false, errors: formatErrors(v.errors) };
    },
  };
}
