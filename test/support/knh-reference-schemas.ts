// The original KNH's webhook schemas (JSON Schema draft-04, test/fixtures/knh-reference/): what an
// existing KNH receiver accepts, checked with a draft-04 validator.
import { readFileSync } from 'node:fs';
import Ajv04, { type ValidateFunction } from 'ajv-draft-04';

const FIXTURES = new URL('../../../test/fixtures/knh-reference/', import.meta.url);

export type ReferenceSchema = 'knh-peer-status' | 'knh-cluster-status';

// ajv-draft-04 is CommonJS: under NodeNext its class is the default import's `default` property.
// KNH's cluster schema gives `items` as a one-element tuple (so only peer_map[0] is checked, as by
// a KNH receiver); strictTuples would warn about that on every compile.
const ajv = new Ajv04.default({ allErrors: true, strictTuples: false });
const compiled = new Map<ReferenceSchema, ValidateFunction>();

function validator(name: ReferenceSchema): ValidateFunction {
  let validate = compiled.get(name);
  if (!validate) {
    const text = readFileSync(new URL(`${name}.schema.json`, FIXTURES), 'utf8');
    validate = ajv.compile(JSON.parse(text) as object);
    compiled.set(name, validate);
  }
  return validate;
}

/** The validation errors of `value` against KNH's schema `name`; empty when it is valid. */
export function referenceErrors(name: ReferenceSchema, value: unknown): string[] {
  const validate = validator(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`);
}
