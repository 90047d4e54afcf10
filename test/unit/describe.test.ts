// describe(): a kind's docs applied to its schema.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { arr, describe, obj, objectMeta, objectSchema, str } from '../../src/registry/schemas.ts';

const schema = objectSchema({
  spec: obj({ holder: str(), items: arr(obj({ name: str() })) }),
});

test('field, type and item texts land where OpenAPI publication reads them', () => {
  const described = describe(schema, {
    about: 'A kind.',
    fields: {
      spec: { about: 'The spec field.', typeAbout: 'The spec type.', fields: { holder: 'Who holds it.', items: { about: 'The list.', typeAbout: 'One item.', fields: { name: 'Its name.' } } } },
    },
  });
  const spec = described.properties!.spec!;
  assert.equal(described.description, 'A kind.');
  assert.equal(spec.description, 'The spec field.');
  assert.equal(spec.typeDescription, 'The spec type.');
  assert.equal(spec.properties!.holder!.description, 'Who holds it.');
  const items = spec.properties!.items!;
  assert.equal(items.description, 'The list.');
  assert.equal(items.items!.description, 'One item.');
  assert.equal(items.items!.properties!.name!.description, 'Its name.');
});

test('shared schemas are copied, never changed', () => {
  const before = JSON.stringify(objectMeta);
  describe(schema, { about: 'A kind.', fields: { metadata: { about: 'Other metadata text.', fields: { name: 'Another name text.' } } } });
  assert.equal(JSON.stringify(objectMeta), before);
  assert.equal(JSON.stringify(schema.properties!.spec), JSON.stringify(obj({ holder: str(), items: arr(obj({ name: str() })) })));
});

test('docs for a field the schema lacks are a mistake: they throw', () => {
  assert.throws(() => describe(schema, { about: 'A kind.', fields: { spec: { about: 'x', fields: { holdr: 'typo' } } } }), /<root>\.spec has no field holdr/);
});
