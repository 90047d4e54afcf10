// OpenAPI schemas as expression types and JSON values as expression values, as the API contract's type table
// says (and Kubernetes' SchemaDeclType / UnstructuredToVal and escaping_test.go have them).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../src/machinery/schema.ts';
import { CelCompileError } from '../../src/cel/errors.ts';
import { escapeName, unescapeName } from '../../src/cel/escaping.ts';
import { RuleEnvironment, toJSON, parseDuration } from '../../src/cel/schema.ts';

const schema: Schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        big: { type: 'integer' },
        ratio: { type: 'number' },
        enabled: { type: 'boolean' },
        'x-dash': { type: 'string' },
        'a.b/c': { type: 'string' },
        'x__y': { type: 'string' },
        namespace: { type: 'string' },
        port: { 'x-kubernetes-int-or-string': true },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        plain: { type: 'array', items: { type: 'integer' } },
        env: { type: 'object', additionalProperties: { type: 'integer' } },
        data: { type: 'string', format: 'byte' },
        at: { type: 'string', format: 'date-time' },
        on: { type: 'string', format: 'date' },
        every: { type: 'string', format: 'duration' },
        raw: { 'x-kubernetes-preserve-unknown-fields': true },
        loose: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        nothing: { type: 'string', nullable: true },
      },
    },
  },
};

const object = {
  apiVersion: 'example.io/v1',
  kind: 'Widget',
  metadata: { name: 'abc', labels: { tier: 'web' } },
  spec: {
    replicas: 3,
    big: 9007199254740991,
    ratio: 2,
    enabled: true,
    'x-dash': 'dash',
    'a.b/c': 'abc',
    'x__y': 'under',
    namespace: 'ns',
    port: 'http',
    tags: ['a', 'b'],
    ports: [
      { name: 'http', port: 80 },
      { name: 'https', port: 443 },
    ],
    plain: [1, 2],
    env: { A: 1 },
    data: 'aGVsbG8=',
    at: '2024-01-02T03:04:05Z',
    on: '2024-01-02',
    every: '1h30m',
    raw: { anything: 1 },
    loose: { known: 'k', unknown: 'u' },
    template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'x' }, spec: { containers: [] } },
    nothing: null,
  },
};

const old = structuredClone(object);
old.spec.tags = ['b', 'a'];
old.spec.ports = [old.spec.ports[1]!, old.spec.ports[0]!];

const env = new RuleEnvironment(schema, { resourceRoot: true });
const vars = env.activation({ self: object, oldSelf: old });

function value(expr: string): unknown {
  return toJSON(env.env.compile(expr).evaluate(vars).value);
}

function refused(expr: string): string {
  try {
    env.env.compile(expr);
  } catch (e) {
    assert.ok(e instanceof CelCompileError);
    return e.message;
  }
  assert.fail(`${expr} compiled`);
}

test('scalars: integers are 64-bit ints, numbers doubles, booleans bools', () => {
  assert.equal(env.env.compile('self.spec.replicas').outputType, 'int');
  assert.equal(env.env.compile('self.spec.replicas').evaluate(vars).value, 3n);
  assert.equal(env.env.compile('self.spec.big + 1').evaluate(vars).value, 9007199254740992n);
  assert.equal(env.env.compile('self.spec.ratio').outputType, 'double');
  assert.equal(value('self.spec.ratio / 4.0'), 0.5);
  assert.equal(value('self.spec.enabled && self.spec.replicas * 2 == 6'), true);
});

test('objects: declared properties only; maps from additionalProperties; null is absent', () => {
  assert.match(refused('self.spec.missing'), /undefined field 'missing'/);
  assert.equal(value("self.metadata.labels['tier']"), 'web');
  assert.equal(value("'tier' in self.metadata.labels"), true);
  assert.equal(env.env.compile('self.spec.env').outputType, 'map<string, int>');
  assert.equal(value("self.spec.env['A'] + 1"), 2);
  assert.equal(value('has(self.spec.nothing)'), false);
  assert.equal(value('has(self.spec.replicas)'), true);
});

test('preserve-unknown-fields: unknown fields are not accessible; a field with no type is not declared', () => {
  assert.equal(value('self.spec.loose.known'), 'k');
  assert.match(refused('self.spec.loose.unknown'), /undefined field 'unknown'/);
  assert.match(refused('self.spec.raw'), /undefined field 'raw'/);
});

test('embedded resources and the root expose apiVersion, kind, metadata.name and generateName', () => {
  assert.equal(value("self.kind + '/' + self.metadata.name"), 'Widget/abc');
  assert.equal(value('self.spec.template.kind'), 'Pod');
  assert.equal(value('self.spec.template.metadata.name'), 'p');
  assert.equal(value('has(self.spec.template.metadata.generateName)'), false);
  assert.match(refused('self.spec.template.metadata.namespace'), /undefined field/);
  assert.match(refused('self.spec.template.spec'), /undefined field 'spec'/);
});

test('int-or-string: an int or a string at run time', () => {
  assert.equal(env.env.compile('self.spec.port').outputType, 'dyn');
  assert.equal(value("type(self.spec.port) == string && self.spec.port == 'http'"), true);
  const n = env.activation({ self: { ...object, spec: { ...object.spec, port: 8080 } } });
  assert.equal(env.env.compile('type(self.spec.port) == int && self.spec.port > 1024').evaluate(n).value, true);
});

test('formats: byte is bytes, date and date-time are timestamps, duration is a duration', () => {
  assert.equal(env.env.compile('self.spec.data').outputType, 'bytes');
  assert.equal(value("self.spec.data == b'hello'"), true);
  assert.equal(value('self.spec.at.getHours()'), 3);
  assert.equal(value("self.spec.on == timestamp('2024-01-02T00:00:00Z')"), true);
  assert.equal(value("self.spec.every > duration('1h')"), true);
  assert.equal(value('self.spec.every'), '5400s');
  assert.equal(parseDuration('2d')?.seconds, 172800n);
  assert.equal(parseDuration('nope'), undefined);
});

test('list-type set and map: equality ignores order; concatenation is union and keyed merge', () => {
  assert.equal(value('self.spec.tags == oldSelf.spec.tags'), true);
  assert.equal(value('self.spec.ports == oldSelf.spec.ports'), true);
  assert.equal(value('self == oldSelf'), true);
  assert.equal(value('self.spec.plain == [2, 1]'), false);
  assert.deepEqual(value("self.spec.tags + ['c', 'a']"), ['a', 'b', 'c']);
  const other = env.activation({ self: object, oldSelf: { ...old, spec: { ...old.spec, ports: [{ name: 'https', port: 8443 }, { name: 'grpc', port: 9000 }] } } });
  assert.deepEqual(toJSON(env.env.compile('self.spec.ports + oldSelf.spec.ports').evaluate(other).value), [
    { name: 'http', port: 80 },
    { name: 'https', port: 8443 },
    { name: 'grpc', port: 9000 },
  ]);
  assert.equal(env.env.compile('(self.spec.ports + oldSelf.spec.ports).size()').evaluate(other).value, 3n);
  assert.deepEqual(value('self.spec.plain + [1]'), [1, 2, 1]);
  assert.equal(value("self.spec.ports.exists(p, p.name == 'https' && p.port == 443)"), true);
  const changed = env.activation({ self: object, oldSelf: { ...old, spec: { ...old.spec, tags: ['a', 'c'] } } });
  assert.equal(env.env.compile('self.spec.tags == oldSelf.spec.tags').evaluate(changed).value, false);
});

test('escaped property names: __dash__, __dot__, __slash__, __underscores__, reserved words', () => {
  assert.equal(value('self.spec.x__dash__dash'), 'dash');
  assert.equal(value('self.spec.a__dot__b__slash__c'), 'abc');
  assert.equal(value('self.spec.x__underscores__y'), 'under');
  assert.equal(value('self.spec.__namespace__'), 'ns');
  assert.deepEqual(Object.keys(toJSON(env.env.compile('self.spec').evaluate(vars).value) as object).filter((k) => /[-./_]|namespace/.test(k)).sort(), ['a.b/c', 'namespace', 'x-dash', 'x__y']);
  // Kubernetes' escaping_test.go.
  const cases: [string, string | undefined][] = [
    ['a', 'a'], ['a_b', 'a_b'], ['a__b', 'a__underscores__b'], ['a.b', 'a__dot__b'], ['a-b', 'a__dash__b'], ['a/b', 'a__slash__b'],
    ['true', '__true__'], ['namespace', '__namespace__'], ['in', '__in__'], ['__proto__', '__underscores__proto__underscores__'],
    ['a:b', undefined], ['1a', undefined], ['', undefined], ['a b', undefined], ['_a', '_a'], ['-a', '__dash__a'],
  ];
  for (const [name, escaped] of cases) {
    assert.equal(escapeName(name), escaped, name);
    if (escaped !== undefined) assert.equal(unescapeName(escaped), name, escaped);
  }
  assert.equal(unescapeName('a__unknown__b'), undefined);
  assert.equal(unescapeName('x__true__'), undefined);
});

test('optionalOldSelf: oldSelf is optional<T>, none on create', () => {
  const opt = new RuleEnvironment(schema.properties!.spec!, { optionalOldSelf: true });
  const created = opt.activation({ self: object.spec });
  assert.equal(opt.env.compile('oldSelf.hasValue()').evaluate(created).value, false);
  assert.equal(opt.env.compile('oldSelf.optMap(o, o.replicas <= self.replicas).orValue(true)').evaluate(created).value, true);
  const updated = opt.activation({ self: object.spec, oldSelf: { ...object.spec, replicas: 5 } });
  assert.equal(opt.env.compile('oldSelf.value().replicas').evaluate(updated).value, 5n);
});

test('values come back as JSON: 64-bit ints, timestamps, bytes, property names', () => {
  assert.deepEqual(toJSON(env.env.compile('self.spec.ports[0]').evaluate(vars).value), { name: 'http', port: 80 });
  assert.equal(toJSON(env.env.compile('self.spec.at').evaluate(vars).value), '2024-01-02T03:04:05Z');
  assert.equal(toJSON(env.env.compile('self.spec.data').evaluate(vars).value), 'aGVsbG8=');
  assert.equal(toJSON(env.env.compile('9223372036854775807').evaluate(vars).value), '9223372036854775807');
});
