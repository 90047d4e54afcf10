import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';

import {
  comparePathElements,
  decodeFieldsV1,
  encodeFieldsV1,
  fieldElement,
  FieldSet,
  FieldsV1Error,
  indexElement,
  keyElement,
  makePath,
  parsePathElement,
  pathString,
  valueElement,
  type Path,
  type PathElement,
} from '../../src/ssa/fieldpath.ts';
import { decodeManagedFields, encodeManagedFields, managerIdentifier, sortManagedFieldsEntries, type ManagedFieldsEntry } from '../../src/ssa/managers.ts';
import { goFloatString, type JsonValue } from '../../src/ssa/value.ts';
import { compareTyped, typeOf } from '../../src/ssa/typed.ts';
import type { Schema } from '../../src/machinery/schema.ts';

/** decode → encode must give back the very same text (key order included). */
function roundTrip(text: string): string {
  return JSON.stringify(encodeFieldsV1(decodeFieldsV1(JSON.parse(text))));
}

const p = (...parts: (string | number | ReturnType<typeof fieldElement>)[]): Path => makePath(...parts);

describe('path elements', () => {
  it('serializes each kind as the reference does', () => {
    assert.equal(fieldElement('spec').key, 'f:spec');
    assert.equal(keyElement([['protocol', 'TCP'], ['port', 443]]).key, 'k:{"port":443,"protocol":"TCP"}');
    assert.equal(valueElement('a').key, 'v:"a"');
    assert.equal(valueElement(3.1415).key, 'v:3.1415');
    assert.equal(valueElement(false).key, 'v:false');
    assert.equal(indexElement(5).key, 'i:5');
    // Go's encoding/json escapes HTML-sensitive characters.
    assert.equal(keyElement([['name', '<a&b>']]).key, 'k:{"name":"\\u003ca\\u0026b\\u003e"}');
  });

  it('orders fields < keys < values < indexes, values numbers < strings < booleans', () => {
    const sorted = [indexElement(1), valueElement(true), valueElement('aa'), valueElement(2), keyElement([['name', 'b']]), keyElement([['name', 'a']]), fieldElement('b'), fieldElement('a')].sort(
      comparePathElements,
    );
    assert.deepEqual(
      sorted.map((e) => e.key),
      ['f:a', 'f:b', 'k:{"name":"a"}', 'k:{"name":"b"}', 'v:2', 'v:"aa"', 'v:true', 'i:1'],
    );
    // Keys compare field by field; a shorter key list sorts first.
    assert.ok(comparePathElements(keyElement([['a', 1]]), keyElement([['a', 1], ['b', 1]])) < 0);
    assert.ok(comparePathElements(keyElement([['port', 80]]), keyElement([['port', 443]])) < 0);
    // Strings by code point (as Go compares UTF-8), not by UTF-16 unit: U+E000 before U+1F600,
    // whose first unit (a surrogate, D83D) is smaller; plain strings as they are.
    for (const make of [fieldElement, valueElement, (s: string) => parsePathElement(`v:${JSON.stringify(s)}`)]) {
      assert.ok(comparePathElements(make('\uE000'), make('\u{1F600}')) < 0);
      assert.ok(comparePathElements(make('a\u{1F600}'), make('a\uFFFF')) > 0);
      assert.ok(comparePathElements(make('example.com/a'), make('example.com/b')) < 0);
      assert.equal(comparePathElements(make('x'), make('x')), 0);
      // A string before every longer one it begins, whatever follows (a space and `!` sort before
      // the quote that closes a value's key).
      for (const next of [' ', '!', '#', '~']) {
        assert.ok(comparePathElements(make('ab'), make(`ab${next}`)) < 0, `ab < ab${next}`);
        assert.ok(comparePathElements(make(`ab${next}`), make('ab')) > 0, `ab${next} > ab`);
        assert.ok(comparePathElements(make(`ab${next}`), make('ac')) < 0, `ab${next} < ac`);
      }
    }
  });

  it('prints paths as conflicts show them', () => {
    assert.equal(pathString(p('spec', 'replicas')), '.spec.replicas');
    assert.equal(pathString(p('spec', 'containers', keyElement([['name', 'c']]), 'image')), '.spec.containers[name="c"].image');
    assert.equal(pathString(p('spec', 'ports', keyElement([['protocol', 'TCP'], ['port', 8080]]))), '.spec.ports[port=8080,protocol="TCP"]');
    assert.equal(pathString(p('metadata', 'finalizers', valueElement('a/b'))), '.metadata.finalizers[="a/b"]');
    assert.equal(pathString(p('spec', 'args', 0)), '.spec.args[0]');
    // Stored keys are decoded as floats by the reference: %v prints large ones in exponent form.
    assert.equal(goFloatString(1000000), '1e+06');
    assert.equal(goFloatString(123456), '123456');
    assert.equal(goFloatString(3.1415), '3.1415');
  });

  it('parses serialized elements and rejects malformed ones', () => {
    assert.deepEqual(parsePathElement('k:{"protocol":"TCP","port":443}').key, 'k:{"port":443,"protocol":"TCP"}');
    assert.equal(parsePathElement('i:+3').key, 'i:3');
    for (const bad of ['f', 'fx', 'k:[1]', 'k:{', 'v:{bad', 'i:abc']) assert.throws(() => parsePathElement(bad), FieldsV1Error, bad);
  });
});

describe('FieldsV1', () => {
  // sigs.k8s.io/structured-merge-diff fieldpath/serialize_test.go, TestSerializeV1GoldenData.
  const golden = [
    `{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}`,
    `{"f:aaa":{"k:{\\"name\\":\\"second\\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},"k:{\\"name\\":\\"first\\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\\"name\\":\\"second\\"}":{}}},"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\\"name\\":\\"first\\"}":{"k:{\\"name\\":\\"first\\"}":{}}},"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},"i:3":{}},"k:{\\"name\\":\\"first\\"}":{"f:aad":{"f:aaf":{}}},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{"f:aaa":{"f:aad":{}}},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"f:aac":{},"k:{\\"name\\":\\"first\\"}":{"i:3":{}},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},"k:{\\"name\\":\\"first\\"}":{},"i:2":{}},"v:\\"aa\\"":{"f:aab":{"f:aaf":{}},"f:aae":{},"k:{\\"name\\":\\"first\\"}":{"f:aad":{}},"i:2":{}},"v:\\"ab\\"":{"f:aaf":{"i:4":{}},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"v:true":{"k:{\\"name\\":\\"second\\"}":{"f:aaa":{}},"i:2":{"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{"v:1":{}}},"i:3":{"f:aab":{"v:true":{"v:\\"aa\\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\\"aa\\"":{"f:aab":{"k:{\\"name\\":\\"second\\"}":{}}}}}`,
  ];
  for (const [i, text] of golden.entries()) it(`round-trips the reference's golden set ${i}`, () => assert.equal(roundTrip(text), text));

  // k8s.io/apimachinery managedfields/internal/managedfields_test.go, TestRoundTripManagedFields.
  const k8sExamples = [
    `{"v:3":{"f:alsoPi":{}},"v:3.1415":{"f:pi":{}},"v:false":{"f:notTrue":{}}}`,
    `{"i:5":{"f:i":{}}}`,
    `{"f:spec":{"f:containers":{"k:{\\"name\\":\\"c\\"}":{"f:image":{},"f:name":{}}}}}`,
    `{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:labels":{"f:app":{}},"f:name":{}},"f:spec":{"f:replicas":{},"f:selector":{"f:matchLabels":{"f:app":{}}},"f:template":{"f:medatada":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"i:0":{"f:containerPort":{}}}}}}}}}`,
    `{"f:allowVolumeExpansion":{},"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:name":{},"f:parameters":{"f:resturl":{},"f:restuser":{},"f:secretName":{},"f:secretNamespace":{}}},"f:provisioner":{}}`,
    `{"f:apiVersion":{},"f:kind":{},"f:metadata":{"f:name":{}},"f:spec":{"f:group":{},"f:names":{"f:kind":{},"f:plural":{},"f:shortNames":{"i:0":{}},"f:singular":{}},"f:scope":{},"f:versions":{"k:{\\"name\\":\\"v1\\"}":{"f:name":{},"f:served":{},"f:storage":{}}}}}`,
    `{"f:spec":{"f:replicas":{}}}`,
  ];
  for (const [i, text] of k8sExamples.entries()) it(`round-trips Kubernetes managedFields example ${i}`, () => assert.equal(roundTrip(text), text));

  it('round-trips whole managedFields entries (TestRoundTripManagedFields)', () => {
    const entries: ManagedFieldsEntry[] = [
      { manager: 'foo', operation: 'Update', apiVersion: 'v1', time: '2001-02-03T04:05:06Z', fieldsType: 'FieldsV1', fieldsV1: JSON.parse(k8sExamples[0]!) },
      { manager: 'foo', operation: 'Update', apiVersion: 'v1beta1', time: '2011-12-13T14:15:16Z', fieldsType: 'FieldsV1', fieldsV1: JSON.parse(k8sExamples[1]!) },
      { manager: 'foo', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: JSON.parse(k8sExamples[2]!) },
    ];
    const sorted = sortManagedFieldsEntries([...entries]);
    assert.deepEqual(encodeManagedFields(decodeManagedFields(entries)), sorted);
    assert.deepEqual(
      sorted.map((e) => `${e.operation}/${e.apiVersion}`),
      ['Apply/v1', 'Update/v1', 'Update/v1beta1'],
    );
    const scale = [{ manager: 'foo', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:replicas': {} } }, subresource: 'scale' }];
    assert.deepEqual(encodeManagedFields(decodeManagedFields(scale)), scale);
  });

  it('writes "." for an element that is both owned and a parent', () => {
    const s = FieldSet.of(p('metadata', 'labels'), p('metadata', 'labels', 'app'), p('spec', 'replicas'));
    assert.equal(JSON.stringify(encodeFieldsV1(s)), '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{}}}');
  });

  it('drops element types it does not know and rejects malformed content', () => {
    // fieldpath/serialize_test.go TestDropUnknown.
    assert.equal(roundTrip('{"f:aaa":{},"r:aab":{}}'), '{"f:aaa":{}}');
    assert.throws(() => decodeFieldsV1('x'), FieldsV1Error);
    assert.throws(() => decodeFieldsV1([]), /must be a JSON object/);
    assert.throws(() => decodeFieldsV1({ 'f:a': 1 }), /expected an object/);
    assert.throws(() => decodeFieldsV1({ 'f:a': { zz: {} } }), /missing colon/);
    assert.throws(() => decodeFieldsV1({ 'i:x': {} }), /not an integer/);
    // A null value is an empty map to the reference's reader: a member.
    assert.ok(decodeFieldsV1({ 'f:a': null }).has(p('a')));
  });

  it('reads a value element as one element however its JSON text spells it', () => {
    // A plain string is taken as written; escapes and characters Go writes escaped are rewritten.
    const s = decodeFieldsV1({ 'v:"a"': {}, 'v:"\\u0061"': {}, 'v:"a<b"': {}, 'v:"a\\u003cb"': {}, 'v:"x"': { 'f:y': {} } });
    assert.equal(JSON.stringify(encodeFieldsV1(s)), '{"v:\\"a\\"":{},"v:\\"a\\\\u003cb\\"":{},"v:\\"x\\"":{"f:y":{}}}');
    assert.ok(s.has([valueElement('a')]) && s.has([valueElement('a<b')]) && s.has([valueElement('x'), fieldElement('y')]));
  });

  it('decodes a large entry (past the size decodings are kept at) as a small one', () => {
    const values = Array.from({ length: 5000 }, (_, i) => `example.com/f-${i}`);
    const fieldsV1 = { 'f:metadata': { 'f:finalizers': { '.': {}, ...Object.fromEntries(values.map((v) => [`v:${JSON.stringify(v)}`, {}])) } } };
    const entry = { manager: 'm', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1 };
    const set = decodeManagedFields([entry]).fields.values().next().value!.set;
    assert.equal(set.size(), values.length + 1);
    assert.ok(set.has(p('metadata', 'finalizers')) && set.has([fieldElement('metadata'), fieldElement('finalizers'), valueElement(values[4999]!)]));
    assert.deepEqual(encodeManagedFields(decodeManagedFields([entry])), [entry]);
  });

  it('builds manager identities as the reference does (TestBuildManagerIdentifier)', () => {
    assert.equal(managerIdentifier({ manager: 'foo', operation: 'Update', apiVersion: 'v1' }), '{"manager":"foo","operation":"Update","apiVersion":"v1"}');
    assert.equal(managerIdentifier({ manager: 'foo', operation: 'Apply', apiVersion: 'v1' }), '{"manager":"foo","operation":"Apply"}');
    assert.equal(managerIdentifier({ manager: 'foo', operation: 'Apply', subresource: 'scale' }), '{"manager":"foo","operation":"Apply","subresource":"scale"}');
  });
});

describe('FieldSet', () => {
  const a = p('a');
  const ab = p('a', 'b');
  const ac = p('a', 'c');
  const d = p('d');

  it('inserts, tests membership and counts', () => {
    const s = FieldSet.of(ab, d);
    assert.ok(s.has(ab) && s.has(d));
    assert.ok(!s.has(a), 'a parent is not a member unless inserted');
    assert.equal(s.size(), 2);
    assert.ok(new FieldSet().isEmpty());
    assert.ok(!s.isEmpty());
    assert.deepEqual(s.withPrefix(fieldElement('a')).paths().map(pathString), ['.b']);
  });

  it('unions, intersects and subtracts', () => {
    const x = FieldSet.of(ab, d);
    const y = FieldSet.of(ac, d, a);
    assert.deepEqual(x.union(y).paths().map(pathString), ['.a', '.d', '.a.b', '.a.c']);
    assert.deepEqual(x.intersection(y).paths().map(pathString), ['.d']);
    assert.deepEqual(x.difference(y).paths().map(pathString), ['.a.b']);
    // A parent in the subtrahend does not remove its children; recursively it does.
    assert.deepEqual(FieldSet.of(ab).difference(FieldSet.of(a)).paths().map(pathString), ['.a.b']);
    assert.ok(FieldSet.of(ab).recursiveDifference(FieldSet.of(a)).isEmpty());
    assert.ok(x.union(y).equals(y.union(x)));
  });

  it('lists leaves only', () => {
    assert.deepEqual(FieldSet.of(a, ab, d).leaves().paths().map(pathString), ['.d', '.a.b']);
  });

  it('iterates members before children, each in element order', () => {
    const s = FieldSet.of(p('spec', 'x'), p('b'), p('a'), p('spec', keyElement([['name', 'z']])), p('spec', 'a'));
    assert.deepEqual(s.paths().map(pathString), ['.a', '.b', '.spec.a', '.spec.x', '.spec[name="z"]']);
  });
});

describe('FieldSet algebra, whatever a set was built by', () => {
  // Elements of every kind, and two pairs that compare equal under different keys (no element the
  // decoding makes is such a pair, as it writes every value's key one way; a set keeps them apart
  // all the same).
  const tie = (pe: PathElement, key: string): PathElement => ({ ...pe, key });
  const pool = [
    fieldElement('a'),
    fieldElement('b'),
    keyElement([['name', 'x']]),
    parsePathElement('k:{"name":1}'),
    tie(parsePathElement('k:{"name":1}'), 'k:{"name":1.0}'),
    valueElement('s'),
    valueElement('t'),
    valueElement(1),
    tie(valueElement(1), 'v:1.0'),
    indexElement(0),
    indexElement(2),
  ];
  const isTie = (pe: PathElement): boolean => pe.key.endsWith('1.0') || pe.key.endsWith('1.0}');
  const pathArb = fc.array(fc.nat(pool.length - 1), { minLength: 1, maxLength: 3 }).map((ix) => ix.map((i) => pool[i]!) as Path);
  const pathsArb = fc.array(pathArb, { maxLength: 40 });
  const id = (path: Path): string => path.map((pe) => pe.key).join('\u0000');
  const model = (paths: readonly Path[]): Set<string> => new Set(paths.map(id));
  const ids = (s: FieldSet): string[] => s.paths().map(id).sort();
  const sorted = (m: Set<string>): string[] => [...m].sort();
  /** Each node's members added at once (FieldSet.insertMembers: a sorted list, no map). */
  const bulk = (paths: readonly Path[]): FieldSet => {
    const groups = new Map<string, { prefix: Path; pes: PathElement[] }>();
    for (const path of paths) {
      const prefix = path.slice(0, -1);
      const g = groups.get(id(prefix)) ?? { prefix, pes: [] };
      g.pes.push(path[path.length - 1]!);
      groups.set(id(prefix), g);
    }
    const root = new FieldSet();
    for (const { prefix, pes } of groups.values()) {
      let node = root;
      for (const pe of prefix) node = node.descend(pe);
      node.insertMembers(pes);
    }
    return root;
  };
  /** The same set built every way: path by path (maps), at once, decoded, and as results of the algebra. */
  const builds = (paths: readonly Path[]): FieldSet[] => {
    const inserted = FieldSet.of(...paths);
    const atOnce = bulk(paths);
    const computed = atOnce.union(FieldSet.of(p('zz'))).difference(FieldSet.of(p('zz'))).intersection(inserted);
    const decoded = paths.some((path) => path.some(isTie)) ? [] : [decodeFieldsV1(encodeFieldsV1(inserted))];
    return [inserted, atOnce, computed, ...decoded];
  };
  const isPrefix = (a: string, b: string): boolean => b === a || b.startsWith(a + '\u0000');

  it('gives the answers of a model, and one encoding, for every build of its operands', () => {
    fc.assert(
      fc.property(pathsArb, pathsArb, (xs, ys) => {
        const mx = model(xs);
        const my = model(ys);
        const union = sorted(new Set([...mx, ...my]));
        const inter = sorted(new Set([...mx].filter((k) => my.has(k))));
        const diff = sorted(new Set([...mx].filter((k) => !my.has(k))));
        const rdiff = sorted(new Set([...mx].filter((k) => ![...my].some((b) => isPrefix(b, k)))));
        const leaves = sorted(new Set([...mx].filter((k) => ![...mx].some((o) => o !== k && isPrefix(k, o)))));
        const encodings = new Map<string, Set<string>>();
        const seen = (op: string, s: FieldSet): void => {
          const e = encodings.get(op) ?? new Set<string>();
          e.add(JSON.stringify(encodeFieldsV1(s)));
          encodings.set(op, e);
        };
        for (const x of builds(xs))
          for (const y of builds(ys)) {
            assert.deepEqual(ids(x), sorted(mx));
            assert.equal(x.size(), mx.size);
            assert.equal(x.isEmpty(), mx.size === 0);
            for (const path of ys) assert.equal(x.has(path), mx.has(id(path)));
            assert.deepEqual(ids(x.union(y)), union);
            assert.deepEqual(ids(x.intersection(y)), inter);
            assert.deepEqual(ids(x.difference(y)), diff);
            assert.deepEqual(ids(x.recursiveDifference(y)), rdiff);
            assert.deepEqual(ids(x.leaves()), leaves);
            assert.equal(x.equals(y), sorted(mx).join() === sorted(my).join());
            assert.deepEqual(ids(FieldSet.unionAll([x, y, x])), union);
            seen('union', x.union(y));
            seen('difference', x.difference(y));
            seen('intersection', x.intersection(y));
          }
        // Elements comparing equal may come in either order; anything else encodes the same.
        if (![...xs, ...ys].some((path) => path.some(isTie))) for (const [op, e] of encodings) assert.equal(e.size, 1, `${op} encodes one way`);
      }),
      { seed: 20261128, numRuns: 400 },
    );
  });

  it('finds the repeats of a list added at once, and keeps the first of each', () => {
    const s = new FieldSet();
    const items = [valueElement('b'), valueElement('a'), valueElement('b'), valueElement(1), { ...valueElement(1), key: 'v:1.0' }, valueElement(1)];
    const repeated = s.insertMembers(items);
    assert.deepEqual([...(repeated ?? [])].sort(), ['v:"b"', 'v:1']);
    assert.deepEqual(s.sortedMembers().map((pe) => pe.key), ['v:1', 'v:1.0', 'v:"a"', 'v:"b"']);
    assert.equal(s.sortedMembers()[3], items[0]);
    // A set that has members already adds one by one, with the same answer.
    assert.deepEqual([...(s.insertMembers([valueElement('a'), valueElement('c')]) ?? [])], ['v:"a"']);
    assert.equal(s.memberCount, 5);
  });
});

describe('comparison with one side missing', () => {
  const item: Schema = { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } };
  const t = typeOf({
    type: 'object',
    properties: { a: { type: 'string' }, spec: { type: 'object', properties: { list: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: item } } } },
  });
  const obj: JsonValue = { a: null, spec: { list: [{ name: 'x', v: 1 }, { name: 'x', v: 2 }, { name: 'y' }] } };
  const paths = (s: FieldSet) => s.paths().map(pathString);

  it('adds (or removes) every node, a null and a repeated list item whole', () => {
    const expected = ['.a', '.spec', '.spec.list', '.spec.list[name="x"]', '.spec.list[name="y"]', '.spec.list[name="y"].name'];
    const created = compareTyped(t, undefined, obj);
    assert.deepEqual(paths(created.added), expected);
    assert.ok(created.removed.isEmpty() && created.modified.isEmpty());
    const deleted = compareTyped(t, obj, undefined);
    assert.deepEqual(paths(deleted.removed), expected);
    assert.ok(deleted.added.isEmpty() && deleted.modified.isEmpty());
    // An item only one side has is walked the same way below a list both sides have.
    const grown = compareTyped(t, { spec: { list: [{ name: 'y' }] } }, { spec: { list: [{ name: 'y' }, { name: 'z', v: 3 }] } });
    assert.deepEqual(paths(grown.added), ['.spec.list[name="z"]', '.spec.list[name="z"].name', '.spec.list[name="z"].v']);
  });

  it('compares a list emptied (or filled) on one side as the item-by-item comparison does', () => {
    // Both sides have the list, one of them empty: each item of the other is removed (or added)
    // with what is below it, a repeated item whole, and the list itself is neither.
    const full: JsonValue = { spec: { list: [{ name: 'x', v: 1 }, { name: 'x', v: 2 }, { name: 'y', v: 3 }] } };
    const items = ['.spec.list[name="x"]', '.spec.list[name="y"]', '.spec.list[name="y"].name', '.spec.list[name="y"].v'];
    const emptied = compareTyped(t, full, { spec: { list: [] } });
    assert.deepEqual(paths(emptied.removed), items);
    assert.ok(emptied.added.isEmpty() && emptied.modified.isEmpty());
    const filled = compareTyped(t, { spec: { list: [] } }, full);
    assert.deepEqual(paths(filled.added), items);
    assert.ok(filled.removed.isEmpty() && filled.modified.isEmpty());
  });

  it('looks at nothing below a repeated item (its first occurrence included), as the reference', () => {
    const sub: Schema = { type: 'object', properties: { id: { type: 'string' } } };
    const nested = typeOf({
      type: 'object',
      properties: {
        list: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' }, sub: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'], items: sub } } },
        },
      },
    });
    // The first `x` has a sub-list item without its key: walked, it would fail the comparison.
    const value: JsonValue = { list: [{ name: 'x', sub: [{ other: 1 }] }, { name: 'x' }, { name: 'y' }] };
    assert.deepEqual(paths(compareTyped(nested, undefined, value).added), ['.list', '.list[name="x"]', '.list[name="y"]', '.list[name="y"].name']);
    assert.deepEqual(paths(compareTyped(nested, value, { list: [] }).removed), ['.list[name="x"]', '.list[name="y"]', '.list[name="y"].name']);
  });

  it('builds the set of a created list in one walk, not a descent from the root per field', () => {
    // The cost of comparing a created object of n list items is linear in n with a small
    // constant: one child set per item. Descending from the root for every field inserted (as the
    // comparison once did) created the same set with four descents per field.
    const n = 2000;
    const big: JsonValue = { spec: { list: Array.from({ length: n }, (_, i) => ({ name: `n${i}`, v: i })) } };
    const proto = FieldSet.prototype;
    const descend = proto.descend;
    let descents = 0;
    proto.descend = function (this: FieldSet, pe) {
      descents++;
      return descend.call(this, pe);
    };
    try {
      const c = compareTyped(t, undefined, big);
      assert.equal(c.added.size(), 2 + 3 * n);
    } finally {
      proto.descend = descend;
    }
    assert.ok(descents <= n + 2, `${descents} descents for ${n} items`);
  });
});
