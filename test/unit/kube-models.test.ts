// The Kubernetes client bundle keeps the models an EndpointSlice list and a Status are made of, and
// drops the rest of the serializer's typeMap (scripts/kube-models.ts), on the installed client.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { modelsKept, modelsNamedIn, trimObjectSerializer } from '../../scripts/kube-models.js';

const require = createRequire(import.meta.url);
const MODELS = join(
  dirname(require.resolve('@kubernetes/client-node/package.json')),
  'dist/gen/models',
);
const SERIALIZER = readFileSync(join(MODELS, 'ObjectSerializer.js'), 'utf8');

describe('the Kubernetes client models bundled (scripts/kube-models.ts)', () => {
  it('names the models an attribute type refers to, inside arrays and maps', () => {
    const source = `{ "type": "Array<V1Endpoint>" }, { "type": "{ [key: string]: V1Foo; }" }, { "type": "string" }`;
    expect(modelsNamedIn(source)).to.deep.equal(['Array', 'V1Endpoint', 'V1Foo']);
  });

  it('keeps what an EndpointSlice list and a Status are made of, and not the other APIs', () => {
    const kept = modelsKept(MODELS);
    for (const name of [
      'V1EndpointSliceList',
      'V1EndpointSlice',
      'V1Endpoint',
      'V1EndpointConditions',
      'DiscoveryV1EndpointPort',
      'V1ObjectMeta',
      'V1ListMeta',
      'V1Status',
      'V1StatusDetails',
    ]) {
      expect(kept.has(name), name).to.equal(true);
    }
    for (const name of ['V1Pod', 'V1Deployment', 'V1Node'])
      expect(kept.has(name), name).to.equal(false);
    expect(kept.size).to.be.below(40);
  });

  it("trims the serializer's re-exports, imports and typeMap to the models kept", () => {
    const kept = modelsKept(MODELS);
    const trimmed = trimObjectSerializer(SERIALIZER, kept);
    expect(trimmed).to.include(`    "V1EndpointSlice": V1EndpointSlice,`);
    expect(trimmed).to.include(`import { V1ObjectMeta } from '../models/V1ObjectMeta.js';`);
    expect(trimmed).to.include(`export * from '../models/V1Status.js';`);
    expect(trimmed).not.to.include('V1Pod');
    expect(trimmed).to.include('export class ObjectSerializer');
    expect(trimmed.length).to.be.below(SERIALIZER.length / 5);
  });

  it('fails the build rather than ship a serializer it could not trim', () => {
    const kept = modelsKept(MODELS);
    expect(() =>
      trimObjectSerializer(SERIALIZER.replace('let typeMap = {', 'const types = {'), kept),
    ).to.throw(/typeMap/);
    expect(() => modelsKept(MODELS, ['V1NoSuchModel'])).to.throw(/no model V1NoSuchModel/);
  });
});
