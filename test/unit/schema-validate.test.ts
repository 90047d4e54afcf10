import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../src/machinery/schema.ts';
import type { FieldError } from '../../src/machinery/field-errors.ts';
import { MAX_SCHEMA_DEPTH, applyDefaults, pruneUnknownFields, validateAgainstSchema } from '../../src/machinery/schema-validate.ts';

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };

/** A schema with one field `f`, so each case reads as "field f with this schema, this value". */
function field(f: Schema, required = false): Schema {
  return { type: 'object', properties: { f }, ...(required ? { required: ['f'] } : {}) };
}

function messages(value: unknown, schema: Schema): string[] {
  return validateAgainstSchema(value, schema).errors.map((e) => e.message);
}

const cases: { name: string; schema: Schema; value: unknown; want: string[] }[] = [
  // types
  { name: 'string ok', schema: field(str), value: { f: 'x' }, want: [] },
  { name: 'string given integer', schema: field(str), value: { f: 1 }, want: ['f: Invalid value: "integer": f in body must be of type string: "integer"'] },
  { name: 'integer given number', schema: field(int), value: { f: 1.5 }, want: ['f: Invalid value: "number": f in body must be of type integer: "number"'] },
  { name: 'integer given string', schema: field(int), value: { f: '1' }, want: ['f: Invalid value: "string": f in body must be of type integer: "string"'] },
  { name: 'number accepts integer', schema: field({ type: 'number' }), value: { f: 3 }, want: [] },
  { name: 'number given boolean', schema: field({ type: 'number' }), value: { f: true }, want: ['f: Invalid value: "boolean": f in body must be of type number: "boolean"'] },
  { name: 'boolean given string', schema: field({ type: 'boolean' }), value: { f: 'true' }, want: ['f: Invalid value: "string": f in body must be of type boolean: "string"'] },
  { name: 'object given array', schema: field({ type: 'object' }), value: { f: [] }, want: ['f: Invalid value: "array": f in body must be of type object: "array"'] },
  { name: 'array given object', schema: field({ type: 'array', items: str }), value: { f: {} }, want: ['f: Invalid value: "object": f in body must be of type array: "object"'] },
  { name: 'untyped accepts anything', schema: field({}), value: { f: [1, { a: 2 }] }, want: [] },
  // int-or-string
  { name: 'int-or-string integer', schema: field({ 'x-kubernetes-int-or-string': true }), value: { f: 8080 }, want: [] },
  { name: 'int-or-string string', schema: field({ 'x-kubernetes-int-or-string': true }), value: { f: '50%' }, want: [] },
  {
    name: 'int-or-string boolean',
    schema: field({ 'x-kubernetes-int-or-string': true }),
    value: { f: false },
    want: ['f: Invalid value: "boolean": f in body must be of type integer,string: "boolean"'],
  },
  {
    name: 'int-or-string fraction',
    schema: field({ 'x-kubernetes-int-or-string': true }),
    value: { f: 1.5 },
    want: ['f: Invalid value: "number": f in body must be of type integer,string: "number"'],
  },
  // null
  { name: 'null optional field is absent', schema: field(str), value: { f: null }, want: [] },
  { name: 'null required field is missing', schema: field(str, true), value: { f: null }, want: ['f: Required value'] },
  { name: 'null nullable required field', schema: field({ type: 'string', nullable: true }, true), value: { f: null }, want: [] },
  { name: 'null map value is absent', schema: field({ type: 'object', additionalProperties: int }), value: { f: { a: null } }, want: [] },
  {
    name: 'null array item',
    schema: field({ type: 'array', items: str }),
    value: { f: ['a', null] },
    want: ['f[1]: Invalid value: "null": f[1] in body must be of type string: "null"'],
  },
  { name: 'null nullable array item', schema: field({ type: 'array', items: { type: 'string', nullable: true } }), value: { f: [null] }, want: [] },
  { name: 'null root', schema: { type: 'object' }, value: null, want: ['Invalid value: "null":  in body must be of type object: "null"'] },
  // required
  { name: 'required missing', schema: field(str, true), value: {}, want: ['f: Required value'] },
  {
    name: 'required nested',
    schema: { type: 'object', properties: { spec: { type: 'object', required: ['a', 'b'], properties: { a: str, b: str } } } },
    value: { spec: { b: 'x' } },
    want: ['spec.a: Required value'],
  },
  { name: 'required not inherited from prototype', schema: { type: 'object', required: ['constructor'], properties: { constructor: str } }, value: {}, want: ['constructor: Required value'] },
  // enum
  { name: 'enum ok', schema: field({ type: 'string', enum: ['Always', 'Never'] }), value: { f: 'Never' }, want: [] },
  {
    name: 'enum string',
    schema: field({ type: 'string', enum: ['Always', 'Never'] }),
    value: { f: 'Sometimes' },
    want: ['f: Unsupported value: "Sometimes": supported values: "Always", "Never"'],
  },
  { name: 'enum integer', schema: field({ type: 'integer', enum: [1, 2] }), value: { f: 3 }, want: ['f: Unsupported value: 3: supported values: "1", "2"'] },
  { name: 'enum strict equality', schema: field({ type: 'string', enum: ['1'] }), value: { f: '1' }, want: [] },
  // strings
  { name: 'maxLength', schema: field({ type: 'string', maxLength: 3 }), value: { f: 'abcd' }, want: ['f: Too long: may not be more than 3 bytes'] },
  { name: 'maxLength counts characters', schema: field({ type: 'string', maxLength: 3 }), value: { f: 'é😀ü' }, want: [] },
  { name: 'minLength', schema: field({ type: 'string', minLength: 2 }), value: { f: 'a' }, want: ['f: Invalid value: "a": must be at least 2 characters long'] },
  { name: 'minLength counts characters', schema: field({ type: 'string', minLength: 2 }), value: { f: '😀' }, want: ['f: Invalid value: "😀": must be at least 2 characters long'] },
  {
    name: 'pattern',
    schema: field({ type: 'string', pattern: '^[a-z]+$' }),
    value: { f: 'A1' },
    want: ['f: Invalid value: "A1": must match the pattern ^[a-z]+$'],
  },
  { name: 'pattern is a search, as in Go', schema: field({ type: 'string', pattern: '[0-9]' }), value: { f: 'abc1def' }, want: [] },
  { name: 'pattern with RE2 identity escape', schema: field({ type: 'string', pattern: '^[a-z\\-]+\\-x$' }), value: { f: 'a-b-x' }, want: [] },
  // Go's RE2 syntax (Prometheus operator's CRDs): flags inside the pattern.
  { name: 'pattern with RE2 (?i) flag', schema: field({ type: 'string', pattern: '^(?i)(abort|warn)?$' }), value: { f: 'WARN' }, want: [] },
  { name: 'pattern with RE2 (?i) flag, no match', schema: field({ type: 'string', pattern: '^(?i)(abort|warn)?$' }), value: { f: 'stop' }, want: ['f: Invalid value: "stop": must match the pattern ^(?i)(abort|warn)?$'] },
  { name: 'date-time ok', schema: field({ type: 'string', format: 'date-time' }), value: { f: '2024-02-29T23:59:59.123456Z' }, want: [] },
  { name: 'date-time with offset', schema: field({ type: 'string', format: 'date-time' }), value: { f: '2024-01-01t10:00:00+05:30' }, want: [] },
  {
    name: 'date-time without zone',
    schema: field({ type: 'string', format: 'date-time' }),
    value: { f: '2024-01-01T10:00:00' },
    want: ['f: Invalid value: "2024-01-01T10:00:00": f in body must be of type date-time: "2024-01-01T10:00:00"'],
  },
  {
    name: 'date-time impossible day',
    schema: field({ type: 'string', format: 'date-time' }),
    value: { f: '2023-02-29T00:00:00Z' },
    want: ['f: Invalid value: "2023-02-29T00:00:00Z": f in body must be of type date-time: "2023-02-29T00:00:00Z"'],
  },
  {
    name: 'date-time bad hour',
    schema: field({ type: 'string', format: 'date-time' }),
    value: { f: '2023-01-01T24:00:00Z' },
    want: ['f: Invalid value: "2023-01-01T24:00:00Z": f in body must be of type date-time: "2023-01-01T24:00:00Z"'],
  },
  // numbers
  { name: 'minimum', schema: field({ type: 'integer', minimum: 0 }), value: { f: -1 }, want: ['f: Invalid value: -1: must be greater than or equal to 0'] },
  { name: 'minimum inclusive', schema: field({ type: 'integer', minimum: 0 }), value: { f: 0 }, want: [] },
  { name: 'maximum', schema: field({ type: 'number', maximum: 1.5 }), value: { f: 2 }, want: ['f: Invalid value: 2: must be less than or equal to 1.5'] },
  { name: 'int32 max ok', schema: field({ type: 'integer', format: 'int32' }), value: { f: 2147483647 }, want: [] },
  {
    name: 'int32 overflow',
    schema: field({ type: 'integer', format: 'int32' }),
    value: { f: 2147483648 },
    want: ['f: Invalid value: 2147483648: must be a valid int32 (between -2147483648 and 2147483647)'],
  },
  {
    name: 'int32 underflow',
    schema: field({ type: 'integer', format: 'int32' }),
    value: { f: -2147483649 },
    want: ['f: Invalid value: -2147483649: must be a valid int32 (between -2147483648 and 2147483647)'],
  },
  { name: 'int64 large ok', schema: field({ type: 'integer', format: 'int64' }), value: { f: 9007199254740993 }, want: [] },
  {
    name: 'int64 overflow',
    schema: field({ type: 'integer', format: 'int64' }),
    value: { f: 1e19 },
    want: ['f: Invalid value: 10000000000000000000: must be a valid int64 (between -9223372036854775808 and 9223372036854775807)'],
  },
  // arrays
  { name: 'maxItems', schema: field({ type: 'array', items: int, maxItems: 2 }), value: { f: [1, 2, 3] }, want: ['f: Too many: 3: must have at most 2 items'] },
  { name: 'minItems', schema: field({ type: 'array', items: int, minItems: 2 }), value: { f: [1] }, want: ['f: Invalid value: []interface {}{1}: must have at least 2 items'] },
  {
    name: 'items validated',
    schema: field({ type: 'array', items: { type: 'object', properties: { name: str }, required: ['name'] } }),
    value: { f: [{ name: 'a' }, {}, { name: 3 }] },
    want: ['f[1].name: Required value', 'f[2].name: Invalid value: "integer": f[2].name in body must be of type string: "integer"'],
  },
  {
    name: 'set duplicates',
    schema: field({ type: 'array', items: str, 'x-kubernetes-list-type': 'set' }),
    value: { f: ['a', 'b', 'a', 'c', 'b', 'a'] },
    want: ['f[2]: Duplicate value: "a"', 'f[4]: Duplicate value: "b"', 'f[5]: Duplicate value: "a"'],
  },
  { name: 'set keeps types apart', schema: field({ type: 'array', 'x-kubernetes-list-type': 'set', items: { 'x-kubernetes-int-or-string': true } }), value: { f: [1, '1'] }, want: [] },
  {
    name: 'set of objects compares deeply',
    schema: field({ type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } }),
    value: { f: [{ a: 1, b: [1] }, { b: [1], a: 1 }, { a: 1, b: [2] }] },
    want: ['f[1]: Duplicate value: {"b":[1],"a":1}'],
  },
  { name: 'atomic list allows duplicates', schema: field({ type: 'array', items: str, 'x-kubernetes-list-type': 'atomic' }), value: { f: ['a', 'a'] }, want: [] },
  {
    name: 'map list duplicate key',
    schema: field({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: str, value: str } },
    }),
    value: { f: [{ name: 'a', value: '1' }, { name: 'b' }, { name: 'a', value: '2' }] },
    want: ['f[2]: Duplicate value: {"name":"a"}'],
  },
  {
    name: 'map list compound key',
    schema: field({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['port', 'protocol'],
      items: { type: 'object', properties: { port: int, protocol: str } },
    }),
    value: { f: [{ port: 80, protocol: 'TCP' }, { port: 80, protocol: 'UDP' }, { protocol: 'TCP', port: 80 }] },
    want: ['f[2]: Duplicate value: {"port":80,"protocol":"TCP"}'],
  },
  {
    name: 'map list missing key',
    schema: field({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: str, value: str } },
    }),
    value: { f: [{ value: '1' }, { name: null }, { name: 'x' }] },
    want: ['f[0].name: Required value', 'f[1].name: Required value'],
  },
  {
    name: 'map list missing key reported once when the item requires it',
    schema: field({
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', required: ['name'], properties: { name: str } },
    }),
    value: { f: [{}] },
    want: ['f[0].name: Required value'],
  },
  // maps and objects
  {
    name: 'additionalProperties validates values',
    schema: { type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 2 } } } } } },
    value: { metadata: { labels: { a: 'ok', b: 5, c: 'long' } } },
    want: ['metadata.labels.b: Invalid value: "integer": metadata.labels.b in body must be of type string: "integer"', 'metadata.labels.c: Too long: may not be more than 2 bytes'],
  },
  { name: 'maxProperties', schema: field({ type: 'object', additionalProperties: str, maxProperties: 1 }), value: { f: { a: 'x', b: 'y' } }, want: ['f: Too many: 2: must have at most 1 items'] },
  { name: 'preserve-unknown accepts anything', schema: field({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }), value: { f: { any: [{ thing: null }] } }, want: [] },
  {
    name: 'preserve-unknown still type-checks',
    schema: field({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }),
    value: { f: 'x' },
    want: ['f: Invalid value: "string": f in body must be of type object: "string"'],
  },
  {
    name: 'preserve-unknown with properties checks known ones',
    schema: field({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: int } }),
    value: { f: { a: 'x', b: 'anything' } },
    want: ['f.a: Invalid value: "string": f.a in body must be of type integer: "string"'],
  },
  {
    name: 'document order',
    schema: { type: 'object', required: ['z'], properties: { a: int, b: { type: 'array', items: int }, c: int, z: int } },
    value: { c: 'x', b: [1, 'y'], a: 'w' },
    want: [
      'z: Required value',
      'c: Invalid value: "string": c in body must be of type integer: "string"',
      'b[1]: Invalid value: "string": b[1] in body must be of type integer: "string"',
      'a: Invalid value: "string": a in body must be of type integer: "string"',
    ],
  },
];

for (const c of cases) {
  test(`validateAgainstSchema: ${c.name}`, () => {
    assert.deepEqual(messages(c.value, c.schema), c.want);
  });
}

test('validateAgainstSchema: error types and fields', () => {
  const schema: Schema = {
    type: 'object',
    required: ['r'],
    properties: {
      r: str,
      t: int,
      e: { type: 'string', enum: ['a'] },
      l: { type: 'string', maxLength: 1 },
      m: { type: 'array', items: int, maxItems: 0 },
      s: { type: 'array', items: int, 'x-kubernetes-list-type': 'set' },
      p: { type: 'string', pattern: '^a$' },
    },
  };
  const { errors } = validateAgainstSchema({ t: 'x', e: 'b', l: 'xx', m: [1], s: [1, 1], p: 'b' }, schema);
  assert.deepEqual(
    errors.map((e: FieldError) => [e.type, e.field]),
    [
      ['FieldValueRequired', 'r'],
      ['FieldValueTypeInvalid', 't'],
      ['FieldValueNotSupported', 'e'],
      ['FieldValueTooLong', 'l'],
      ['FieldValueTooMany', 'm'],
      ['FieldValueDuplicate', 's[1]'],
      ['FieldValueInvalid', 'p'],
    ],
  );
});

test('validateAgainstSchema: path option prefixes every path', () => {
  const schema: Schema = { type: 'object', required: ['a'], properties: { b: int } };
  const result = validateAgainstSchema({ b: 'x', c: 1 }, schema, { path: 'spec' });
  assert.deepEqual(
    result.errors.map((e) => e.message),
    ['spec.a: Required value', 'spec.b: Invalid value: "string": spec.b in body must be of type integer: "string"'],
  );
  assert.deepEqual(result.unknownFields, ['spec.c']);
});

const podish: Schema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata: {
      type: 'object',
      properties: { name: str, labels: { type: 'object', additionalProperties: str } },
    },
    spec: {
      type: 'object',
      properties: {
        taints: { type: 'array', items: { type: 'object', properties: { key: str, effect: str } } },
        template: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        opaque: { type: 'object' },
        embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } },
      },
    },
  },
};

const unknownCases: { name: string; value: unknown; want: string[] }[] = [
  { name: 'none', value: { apiVersion: 'v1', kind: 'X', metadata: { name: 'a', labels: { any: 'thing' } } }, want: [] },
  { name: 'top level', value: { kind: 'X', extra: 1 }, want: ['extra'] },
  { name: 'in metadata', value: { metadata: { name: 'a', labelz: {} } }, want: ['metadata.labelz'] },
  { name: 'in spec', value: { spec: { foo: { deep: { deeper: 1 } } } }, want: ['spec.foo'] },
  { name: 'in an array item', value: { spec: { taints: [{ key: 'a' }, { key: 'b', value: 'c' }] } }, want: ['spec.taints[1].value'] },
  { name: 'not under preserve-unknown', value: { spec: { template: { anything: { goes: [1] } } } }, want: [] },
  { name: 'not under a free-form object', value: { spec: { opaque: { anything: 1 } } }, want: [] },
  { name: 'embedded resource header is known', value: { spec: { embedded: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {}, status: {} } } }, want: ['spec.embedded.status'] },
  { name: 'prototype names are unknown', value: JSON.parse('{"constructor":1,"__proto__":{"x":1},"toString":2}'), want: ['constructor', '__proto__', 'toString'] },
  { name: 'null unknown field', value: { extra: null }, want: ['extra'] },
  { name: 'document order', value: { spec: { taints: [{ zz: 1 }], yy: 2 }, xx: 3 }, want: ['spec.taints[0].zz', 'spec.yy', 'xx'] },
  { name: 'not reported twice across type errors', value: { spec: 'x', other: 1 }, want: ['other'] },
];

for (const c of unknownCases) {
  test(`unknown fields: ${c.name}`, () => {
    assert.deepEqual(validateAgainstSchema(c.value, podish).unknownFields, c.want);
  });
}

test('pruneUnknownFields removes exactly the reported fields', () => {
  for (const c of unknownCases) {
    const value: unknown = structuredClone(c.value);
    pruneUnknownFields(value, podish);
    assert.deepEqual(validateAgainstSchema(value, podish).unknownFields, [], c.name);
  }
  const value = {
    kind: 'X',
    extra: 1,
    metadata: { name: 'a', labelz: {}, labels: { keep: 'me' } },
    spec: { taints: [{ key: 'a', value: 'drop' }], template: { keep: { all: 1 } }, foo: 2 },
  };
  pruneUnknownFields(value, podish);
  assert.deepEqual(value, {
    kind: 'X',
    metadata: { name: 'a', labels: { keep: 'me' } },
    spec: { taints: [{ key: 'a' }], template: { keep: { all: 1 } } },
  });
});

test('pruneUnknownFields leaves type-invalid values and scalars alone', () => {
  const value = { spec: ['not', 'an', 'object'], metadata: 'x' };
  pruneUnknownFields(value, podish);
  assert.deepEqual(value, { spec: ['not', 'an', 'object'], metadata: 'x' });
  pruneUnknownFields(null, podish);
  pruneUnknownFields(5, podish);
});

test('applyDefaults fills absent properties recursively', () => {
  const schema: Schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', default: 1 },
          strategy: { type: 'object', default: {}, properties: { type: { type: 'string', default: 'RollingUpdate' } } },
          ports: {
            type: 'array',
            items: { type: 'object', default: { port: 80 }, properties: { port: int, protocol: { type: 'string', default: 'TCP' } } },
          },
          nullable: { type: 'string', nullable: true, default: 'd' },
          labels: { type: 'object', additionalProperties: { type: 'object', properties: { v: { type: 'string', default: 'x' } } } },
        },
      },
      status: { type: 'object', properties: { phase: { type: 'string', default: 'Pending' } } },
    },
  };
  const value = { spec: { replicas: null, ports: [{ port: 443 }, null], nullable: null, labels: { a: {} } } };
  applyDefaults(value, schema);
  assert.deepEqual(value, {
    spec: {
      replicas: 1,
      strategy: { type: 'RollingUpdate' },
      ports: [
        { port: 443, protocol: 'TCP' },
        { port: 80, protocol: 'TCP' },
      ],
      nullable: null,
      labels: { a: { v: 'x' } },
    },
    // status is absent and has no default itself, so its fields are not defaulted.
  });
});

test('applyDefaults copies defaults instead of sharing them', () => {
  const schema: Schema = { type: 'object', properties: { m: { type: 'object', default: { a: [1] } } } };
  const one: { m?: { a: number[] } } = {};
  const two: { m?: { a: number[] } } = {};
  applyDefaults(one, schema);
  applyDefaults(two, schema);
  one.m?.a.push(2);
  assert.deepEqual(two, { m: { a: [1] } });
  assert.deepEqual(schema.properties?.m.default, { a: [1] });
});

test('applyDefaults keeps present values and skips type-invalid parents', () => {
  const schema: Schema = { type: 'object', properties: { a: { type: 'string', default: 'x' }, o: { type: 'object', properties: { b: { type: 'integer', default: 2 } } } } };
  const value = { a: '', o: 'not an object' };
  applyDefaults(value, schema);
  assert.deepEqual(value, { a: '', o: 'not an object' });
});

// A self-referencing schema (like JSONSchemaProps) is the only way known schema gets deep.
function recursiveSchema(): Schema {
  const node: Schema = { type: 'object', properties: {} };
  (node.properties as Record<string, Schema>).child = node;
  (node.properties as Record<string, Schema>).name = str;
  return node;
}

function nested(levels: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cur = root;
  for (let i = 0; i < levels; i++) {
    const next: Record<string, unknown> = {};
    cur.child = next;
    cur = next;
  }
  cur.name = 'leaf';
  return root;
}

test('deep nesting inside a recursive schema is capped', () => {
  const schema = recursiveSchema();
  // MAX_SCHEMA_DEPTH - 1 child levels: the deepest object sits at depth 99 and may be walked.
  assert.deepEqual(validateAgainstSchema(nested(MAX_SCHEMA_DEPTH - 1), schema).errors, []);
  const { errors } = validateAgainstSchema(nested(MAX_SCHEMA_DEPTH), schema);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].type, 'FieldValueInvalid');
  assert.equal(errors[0].field, Array(MAX_SCHEMA_DEPTH).fill('child').join('.'));
  assert.match(errors[0].message, /: Invalid value: "…": nesting too deep$/);
});

test('100 000 nested objects in a recursive schema do not overflow', () => {
  const schema = recursiveSchema();
  const value = nested(100_000);
  const { errors } = validateAgainstSchema(value, schema);
  assert.equal(errors.length, 1);
  assert.match(errors[0].message, /nesting too deep$/);
  pruneUnknownFields(value, schema);
  applyDefaults(value, schema);
});

function nestedArrays(levels: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

test('100 000 nested arrays under preserve-unknown are accepted without walking', () => {
  const schema: Schema = { type: 'object', properties: { raw: { 'x-kubernetes-preserve-unknown-fields': true } } };
  const value = { raw: nestedArrays(100_000) };
  assert.deepEqual(validateAgainstSchema(value, schema), { errors: [], unknownFields: [] });
  pruneUnknownFields(value, schema);
  applyDefaults(value, schema);
});

test('100 000 nested arrays in typed or set positions do not overflow', () => {
  const deep = nestedArrays(100_000);
  // A type error names the type, so the value itself is never rendered.
  assert.deepEqual(messages({ f: deep }, field(str)), ['f: Invalid value: "array": f in body must be of type string: "array"']);
  // Set items are compared without recursion and a deep duplicate is not echoed.
  const set = field({ type: 'array', 'x-kubernetes-list-type': 'set', items: { 'x-kubernetes-preserve-unknown-fields': true } });
  assert.deepEqual(messages({ f: [deep, nestedArrays(100_000)] }, set), ['f[1]: Duplicate value: "…"']);
  // A self-nesting array schema hits the depth cap.
  const arr: Schema = { type: 'array' };
  arr.items = arr;
  const errors = validateAgainstSchema(nestedArrays(100_000), arr).errors;
  assert.equal(errors.length, 1);
  assert.equal(errors[0].field, '[0]'.repeat(MAX_SCHEMA_DEPTH));
});

test('validateAgainstSchema: a large document validates', () => {
  const items = Array.from({ length: 5_000 }, (_, i) => ({ key: `k${i}`, effect: 'NoSchedule' }));
  const { errors, unknownFields } = validateAgainstSchema({ apiVersion: 'v1', kind: 'X', spec: { taints: items } }, podish);
  assert.deepEqual(errors, []);
  assert.deepEqual(unknownFields, []);
});

test('patterns match in linear time: a pattern that backtracks exponentially in a backtracking engine answers at once', () => {
  const schema = field({ type: 'string', pattern: '^(a+)+$' });
  const start = performance.now();
  assert.deepEqual(messages({ f: `${'a'.repeat(30)}b` }, schema), [`f: Invalid value: "${'a'.repeat(30)}b": must match the pattern ^(a+)+$`]);
  // A backtracking engine takes minutes on this input; RE2 a fraction of a millisecond (a generous bound).
  assert.ok(performance.now() - start < 2000);
});
