import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import type { Schema } from '../../src/machinery/schema.ts';
import { arr, bool, int32, obj, objectSchema, quantity, str, stringMap } from '../../src/registry/schemas.ts';
import { encodeFieldsV1, FieldSet, keyElement, makePath, pathString, valueElement } from '../../src/ssa/fieldpath.ts';
import { mergeValues, removeItems } from '../../src/ssa/merge.ts';
import { compareTyped, ensureNamedFieldsAreMembers, reconcileFieldSet, SsaTypeError, toFieldSet, typeOf, valueAt } from '../../src/ssa/typed.ts';
import type { JsonMap, JsonValue } from '../../src/ssa/value.ts';

const fieldsOf = (schema: Schema, v: JsonValue) => JSON.stringify(encodeFieldsV1(toFieldSet(typeOf(schema), v)));
const merge = (schema: Schema, l: JsonValue | undefined, r: JsonValue | undefined) => mergeValues(typeOf(schema), l, r);

const item = obj({ name: str(), value: str(), port: int32() });
const schema = objectSchema({
  spec: obj({
    replicas: int32(),
    paused: bool(),
    // listType map with keys.
    items: arr(item, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    // Two keys, one with a default.
    ports: arr(obj({ port: int32(), protocol: str({ default: 'TCP' }), name: str() }), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port', 'protocol'] }),
    // Strategic merge markers only: a map list keyed by the merge key.
    containers: arr(obj({ name: str(), image: str(), args: arr(str()) }), { 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'name' }),
    // patchStrategy merge on scalars without a key: a set.
    finalizers: arr(str(), { 'x-kubernetes-patch-strategy': 'merge' }),
    tags: arr(str(), { 'x-kubernetes-list-type': 'set' }),
    // No marker at all: atomic.
    args: arr(str()),
    atomicList: arr(item, { 'x-kubernetes-list-type': 'atomic' }),
    // An explicit list type wins over the strategic markers.
    addresses: arr(obj({ type: str(), address: str() }), { 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' }),
    data: stringMap(),
    atomicMap: obj({}, { additionalProperties: str(), 'x-kubernetes-map-type': 'atomic' }),
    selector: obj({ a: str(), nested: obj({ b: str(), list: arr(str(), { 'x-kubernetes-list-type': 'set' }) }) }, { 'x-kubernetes-map-type': 'atomic' }),
    granular: obj({ a: str(), b: str() }, { 'x-kubernetes-map-type': 'granular' }),
    resources: obj({}, { additionalProperties: quantity() }),
    port: { 'x-kubernetes-int-or-string': true },
    raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    templ: obj({ known: str() }, { 'x-kubernetes-preserve-unknown-fields': true }),
  }),
});

describe('field sets by schema markers', () => {
  it('owns struct leaves, not the structs holding them', () => {
    assert.equal(fieldsOf(schema, { spec: { replicas: 3, paused: false } }), '{"f:spec":{"f:paused":{},"f:replicas":{}}}');
  });

  it('owns map-list items by key, with their fields (listType=map)', () => {
    assert.equal(fieldsOf(schema, { spec: { items: [{ name: 'a', value: 'x' }] } }), '{"f:spec":{"f:items":{"k:{\\"name\\":\\"a\\"}":{".":{},"f:name":{},"f:value":{}}}}}');
  });

  it('owns an empty map as a leaf, also where the schema has a list, and a non-empty one by its keys', () => {
    assert.equal(fieldsOf(schema, { spec: { items: {}, templ: {} } }), '{"f:spec":{"f:items":{},"f:templ":{}}}');
    assert.equal(fieldsOf(schema, { spec: { templ: { known: 'k' } } }), '{"f:spec":{"f:templ":{"f:known":{}}}}');
  });

  it('fills a missing key field from its default, and sorts key fields by name', () => {
    assert.equal(fieldsOf(schema, { spec: { ports: [{ port: 80 }] } }), '{"f:spec":{"f:ports":{"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}}}}}');
    assert.throws(() => toFieldSet(typeOf(schema), { spec: { items: [{ value: 'x' }] } }), (e: unknown) => {
      assert.ok(e instanceof SsaTypeError);
      assert.equal(e.message, '.spec.items: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)');
      return true;
    });
  });

  it('reads patchStrategy=merge without a listType as a map list keyed by the merge key', () => {
    assert.equal(
      fieldsOf(schema, { spec: { containers: [{ name: 'c', image: 'i', args: ['x'] }] } }),
      '{"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{".":{},"f:args":{},"f:image":{},"f:name":{}}}}}',
    );
  });

  it('reads patchStrategy=merge on scalars without a key, and listType=set, as sets', () => {
    assert.equal(fieldsOf(schema, { spec: { finalizers: ['b', 'a'], tags: ['t'] } }), '{"f:spec":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"b\\"":{}},"f:tags":{"v:\\"t\\"":{}}}}');
    assert.throws(() => toFieldSet(typeOf(schema), { spec: { tags: [{}] } }), /associative list without keys has an element that's a map type/);
  });

  it('owns an atomic list whole (no marker, listType=atomic, listType beating patch markers)', () => {
    assert.equal(
      fieldsOf(schema, { spec: { args: ['a'], atomicList: [{ name: 'a' }], addresses: [{ type: 'IP', address: '1' }] } }),
      '{"f:spec":{"f:addresses":{},"f:args":{},"f:atomicList":{}}}',
    );
  });

  it('owns granular map keys one by one, atomic maps and structs whole (recursively)', () => {
    assert.equal(
      fieldsOf(schema, { spec: { data: { x: '1', y: '2' }, atomicMap: { x: '1' }, selector: { a: '1', nested: { b: '2', list: ['q'] } }, granular: { a: '1' } } }),
      '{"f:spec":{"f:atomicMap":{},"f:data":{"f:x":{},"f:y":{}},"f:granular":{"f:a":{}},"f:selector":{}}}',
    );
  });

  it('owns int-or-string and quantity values as scalars', () => {
    assert.equal(fieldsOf(schema, { spec: { port: 'http', resources: { cpu: '1', memory: 2 } } }), '{"f:spec":{"f:port":{},"f:resources":{"f:cpu":{},"f:memory":{}}}}');
  });

  it('treats unknown/preserved parts as unstructured: keys are owned members, lists atomic', () => {
    assert.equal(
      fieldsOf(schema, { spec: { raw: { a: { b: 1 }, l: [1, 2] }, templ: { known: 'k', extra: { c: 1 } } } }),
      '{"f:spec":{"f:raw":{"f:a":{".":{},"f:b":{}},"f:l":{}},"f:templ":{"f:extra":{".":{},"f:c":{}},"f:known":{}}}}',
    );
  });

  it('owns nulls and empty maps as members; empty lists own nothing', () => {
    assert.equal(fieldsOf(schema, { spec: { replicas: null, data: {}, tags: [] } }), '{"f:spec":{"f:data":{},"f:replicas":{}}}');
  });

  it('owns a duplicated item whole, without its fields', () => {
    assert.equal(fieldsOf(schema, { spec: { items: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }, { name: 'b' }] } }), '{"f:spec":{"f:items":{"k:{\\"name\\":\\"a\\"}":{},"k:{\\"name\\":\\"b\\"}":{".":{},"f:name":{}}}}}');
  });

  it('objectMeta: labels/annotations granular, finalizers a set, ownerReferences keyed by uid and atomic each', () => {
    const s = objectSchema({});
    assert.equal(
      fieldsOf(s, { metadata: { name: 'n', labels: { a: 'b' }, finalizers: ['f'], ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'o', uid: 'u1' }] } }),
      '{"f:metadata":{"f:finalizers":{"v:\\"f\\"":{}},"f:labels":{"f:a":{}},"f:name":{},"f:ownerReferences":{"k:{\\"uid\\":\\"u1\\"}":{}}}}',
    );
  });
});

describe('merge', () => {
  it('lets applied values win and keeps everything else', () => {
    assert.deepEqual(merge(schema, { spec: { replicas: 1, paused: true } }, { spec: { replicas: 2 } }), { spec: { replicas: 2, paused: true } });
  });

  it('merges map lists by key: live order, new items where the reference places them', () => {
    const live: JsonMap = { spec: { items: [{ name: 'a' }, { name: 'b', value: '1' }, { name: 'c' }] } };
    assert.deepEqual(merge(schema, live, { spec: { items: [{ name: 'd' }, { name: 'b', value: '2' }] } }), {
      spec: { items: [{ name: 'a' }, { name: 'd' }, { name: 'b', value: '2' }, { name: 'c' }] },
    });
    // Shared items follow the configuration's order.
    assert.deepEqual(merge(schema, { spec: { items: [{ name: 'a' }, { name: 'b' }] } }, { spec: { items: [{ name: 'b' }, { name: 'a' }] } }), {
      spec: { items: [{ name: 'b' }, { name: 'a' }] },
    });
    assert.deepEqual(merge(schema, { spec: { items: [{ name: 'a' }] } }, { spec: { items: [{ name: 'z' }] } }), { spec: { items: [{ name: 'a' }, { name: 'z' }] } });
  });

  it('unions sets; an empty applied set removes nothing', () => {
    // New items go before the shared item that follows them in the configuration.
    assert.deepEqual(merge(schema, { spec: { tags: ['a', 'b'] } }, { spec: { tags: ['c', 'a'] } }), { spec: { tags: ['c', 'a', 'b'] } });
    assert.deepEqual(merge(schema, { spec: { tags: ['a'] } }, { spec: { tags: [] } }), { spec: { tags: ['a'] } });
  });

  it('replaces atomic values whole', () => {
    assert.deepEqual(merge(schema, { spec: { selector: { a: '1', nested: { b: '2' } }, args: ['x', 'y'] } }, { spec: { selector: { a: '3' }, args: ['z'] } }), {
      spec: { selector: { a: '3' }, args: ['z'] },
    });
  });

  it('merges granular maps key by key', () => {
    assert.deepEqual(merge(schema, { spec: { data: { x: '1', y: '2' } } }, { spec: { data: { y: '3', z: '4' } } }), { spec: { data: { x: '1', y: '3', z: '4' } } });
  });

  it('keeps an applied null (ownership without a value)', () => {
    assert.deepEqual(merge(schema, { spec: { replicas: 1 } }, { spec: { replicas: null } }), { spec: { replicas: null } });
  });

  it('refuses duplicate keys in the configuration, tolerates them in the live object', () => {
    assert.throws(
      () => merge(schema, { spec: {} }, { spec: { items: [{ name: 'a' }, { name: 'a' }] } }),
      (e: unknown) => e instanceof SsaTypeError && e.message === '.spec.items: duplicate entries for key [name="a"]',
    );
    assert.deepEqual(merge(schema, { spec: { items: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }] } }, { spec: { items: [{ name: 'b' }] } }), {
      spec: { items: [{ name: 'a', value: '1' }, { name: 'a', value: '2' }, { name: 'b' }] },
    });
  });
});

describe('removal of a field set', () => {
  const t = typeOf(schema);
  const live: JsonMap = { spec: { replicas: 1, items: [{ name: 'a', value: '1' }, { name: 'b' }], data: { x: '1', y: '2' }, tags: ['t'] } };

  it('removes members with their subtrees', () => {
    const set = FieldSet.of(makePath('spec', 'items', keyElement([['name', 'a']])), makePath('spec', 'data', 'x'), makePath('spec', 'replicas'));
    assert.deepEqual(removeItems(t, live, set), { spec: { items: [{ name: 'b' }], data: { y: '2' }, tags: ['t'] } });
  });

  it('leaves null where a container lost its last entry (dropped later, as typed objects omit it)', () => {
    assert.deepEqual(removeItems(t, live, FieldSet.of(makePath('spec', 'tags', valueElement('t')))), { ...live, spec: { ...(live.spec as JsonMap), tags: null } });
  });

  it('does not look inside atomic values', () => {
    const v = { spec: { selector: { a: '1' } } };
    assert.deepEqual(removeItems(t, v, FieldSet.of(makePath('spec', 'selector', 'a'))), { spec: { selector: null } });
  });
});

describe('comparison', () => {
  const t = typeOf(schema);
  it('reports added, modified and removed paths, containers included', () => {
    const c = compareTyped(t, { spec: { replicas: 1, data: { x: '1' } } }, { spec: { replicas: 2, items: [{ name: 'a' }] } });
    assert.deepEqual(c.modified.paths().map(pathString), ['.spec.replicas']);
    assert.deepEqual(c.added.paths().map(pathString), ['.spec.items', '.spec.items[name="a"]', '.spec.items[name="a"].name']);
    assert.deepEqual(c.removed.paths().map(pathString), ['.spec.data', '.spec.data.x']);
  });

  it('ignores the order of set and map-list items, not of atomic lists', () => {
    assert.ok(compareTyped(t, { spec: { tags: ['a', 'b'] } }, { spec: { tags: ['b', 'a'] } }).modified.isEmpty());
    assert.deepEqual(compareTyped(t, { spec: { args: ['a', 'b'] } }, { spec: { args: ['b', 'a'] } }).modified.paths().map(pathString), ['.spec.args']);
  });
});

describe('schema changes (topology)', () => {
  const granular = objectSchema({ spec: obj({ sel: obj({ a: str(), b: str() }), list: arr(str(), { 'x-kubernetes-list-type': 'set' }) }) });
  const atomic = objectSchema({
    spec: obj({ sel: obj({ a: str(), b: str() }, { 'x-kubernetes-map-type': 'atomic' }), list: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }),
  });

  it('granular → atomic: an owner of something inside owns the whole, as one member', () => {
    const owned = FieldSet.of(makePath('spec', 'sel', 'a'), makePath('spec', 'list', valueElement('x')));
    const r = reconcileFieldSet(owned, typeOf(atomic));
    assert.ok(r);
    assert.deepEqual(r.paths().map(pathString), ['.spec.list', '.spec.sel']);
    assert.equal(reconcileFieldSet(owned, typeOf(granular)), undefined);
  });

  it('atomic → granular: the single member stays, and changes inside conflict with nobody', () => {
    const owned = FieldSet.of(makePath('spec', 'sel'));
    assert.equal(reconcileFieldSet(owned, typeOf(granular)), undefined);
    const c = compareTyped(typeOf(granular), { spec: { sel: { a: '1' } } }, { spec: { sel: { a: '2' } } });
    assert.ok(owned.intersection(c.modified.union(c.added)).isEmpty());
  });
});

describe('schema helpers', () => {
  const t = typeOf(schema);
  it('adds named parent fields as members, not map keys or items', () => {
    const s = ensureNamedFieldsAreMembers(FieldSet.of(makePath('spec', 'data', 'x'), makePath('spec', 'items', keyElement([['name', 'a']]), 'value')), t);
    assert.deepEqual(s.paths().map(pathString), ['.spec', '.spec.data', '.spec.items', '.spec.data.x', '.spec.items[name="a"].value']);
  });

  it('finds values by path', () => {
    const v = { spec: { items: [{ name: 'a', value: '1' }], ports: [{ port: 80 }], tags: ['x'] } };
    assert.equal(valueAt(t, v, makePath('spec', 'items', keyElement([['name', 'a']]), 'value')), '1');
    assert.deepEqual(valueAt(t, v, makePath('spec', 'ports', keyElement([['port', 80], ['protocol', 'TCP']]))), { port: 80 });
    assert.equal(valueAt(t, v, makePath('spec', 'tags', valueElement('x'))), 'x');
    assert.equal(valueAt(t, v, makePath('spec', 'replicas')), undefined);
  });
});
