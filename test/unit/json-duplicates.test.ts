import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDuplicateKeys } from '../../src/machinery/json-duplicates.ts';

const cases: { name: string; text: string; want: string[] }[] = [
  { name: 'no duplicates', text: '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}}', want: [] },
  { name: 'top-level key', text: '{"kind":"Pod","kind":"Service"}', want: ['kind'] },
  { name: 'nested map key', text: '{"metadata":{"labels":{"a":"1","b":"2","a":"3"}}}', want: ['metadata.labels.a'] },
  { name: 'inside an array item', text: '{"spec":{"taints":[{"key":"x","key":"y"}]}}', want: ['spec.taints[0].key'] },
  { name: 'later array item', text: '{"spec":{"taints":[{"key":"x"},{"effect":"a","key":"y","effect":"b"}]}}', want: ['spec.taints[1].effect'] },
  { name: 'nested arrays', text: '{"a":[[1,{"k":1}],[{"k":1,"k":2}]]}', want: ['a[1][0].k'] },
  { name: 'top-level array', text: '[{"a":1},{"a":1,"a":2}]', want: ['[1].a'] },
  { name: 'unicode escape equals plain key', text: '{"a":1,"\\u0061":2}', want: ['a'] },
  { name: 'escape in both spellings', text: '{"\\u0041b":1,"A\\u0062":2}', want: ['Ab'] },
  { name: 'escaped quote in key', text: '{"a\\"b":1,"a\\"b":2}', want: ['a"b'] },
  { name: 'escaped backslash ending a key', text: '{"a\\\\":1,"a\\\\":2}', want: ['a\\'] },
  { name: 'surrogate pair escape vs literal', text: '{"\\ud83d\\ude00":1,"😀":2}', want: ['😀'] },
  { name: 'short escapes', text: '{"a\\nb":1,"a\\u000ab":2,"a\\/":3,"a/":4}', want: ['a\nb', 'a/'] },
  { name: 'a key repeated often is reported once', text: '{"a":1,"a":2,"a":3}', want: ['a'] },
  { name: 'one report per path, not per key', text: '{"m":{"a":1,"a":2},"n":{"a":1,"a":2,"a":3}}', want: ['m.a', 'n.a'] },
  { name: 'duplicate after a nested container', text: '{"a":{"b":{"c":1}},"a":2}', want: ['a'] },
  { name: 'same key in sibling objects', text: '{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":1}]}', want: [] },
  { name: 'value equal to a key', text: '{"a":"a","b":"a","c":["a","a"]}', want: [] },
  { name: 'structure inside strings is ignored', text: '{"x":"{\\"a\\":1,\\"a\\":2}","y":"[,:]","z":"\\\\"}', want: [] },
  { name: 'key order after string containing escaped quote', text: '{"x":"\\"","x":1}', want: ['x'] },
  {
    name: 'pretty-printed with whitespace',
    text: '{\n  "metadata" : {\n    "labels" : { "a" : "1" ,\n "a" : "2" }\n  } ,\n  "spec" : [ 1 , true , null , -2.5e3 ]\n}',
    want: ['metadata.labels.a'],
  },
  { name: 'empty containers', text: '{"a":{},"b":[],"c":[{},[]],"a":[]}', want: ['a'] },
  { name: 'dotted and empty keys', text: '{"m":{"a.b":1,"a.b":2,"":3,"":4}}', want: ['m.a.b', 'm.'] },
  { name: 'scalar document', text: '"just a string"', want: [] },
  { name: 'several in document order', text: '{"b":{"x":1,"x":2},"a":[{"y":1,"y":2}],"b":0}', want: ['b.x', 'a[0].y', 'b'] },
];

for (const c of cases) {
  test(`findDuplicateKeys: ${c.name}`, () => {
    JSON.parse(c.text); // the contract: only valid JSON is scanned
    assert.deepEqual(findDuplicateKeys(c.text), c.want);
  });
}

test('findDuplicateKeys: the scan stops at the limit', () => {
  assert.deepEqual(findDuplicateKeys('{"a":1,"a":2,"b":1,"b":2,"c":1,"c":2}', 2), ['a', 'b']);
});

test('findDuplicateKeys: 100 000 nested arrays do not overflow the stack', () => {
  const depth = 100_000;
  const text = `${'['.repeat(depth)}{"a":1,"a":2}${']'.repeat(depth)}`;
  JSON.parse(text);
  const found = findDuplicateKeys(text);
  assert.equal(found.length, 1);
  assert.equal(found[0], `${'[0]'.repeat(depth)}.a`);
});

test('findDuplicateKeys: deep nested objects each with a duplicate', () => {
  // Every level repeats "k", so every level contributes one path sharing the parent's prefix.
  const depth = 5_000;
  const text = `${'{"k":0,"k":'.repeat(depth)}1${'}'.repeat(depth)}`;
  JSON.parse(text);
  const found = findDuplicateKeys(text);
  assert.equal(found.length, depth);
  assert.equal(found[0], 'k');
  assert.equal(found[1], 'k.k');
  assert.equal(found[depth - 1], Array(depth).fill('k').join('.'));
});

test('findDuplicateKeys: a 1 MB document is scanned', () => {
  const items = [];
  // The length of JSON.stringify(items), kept as items are added (stringifying the whole list each
  // time took seconds): the brackets, each item, and a comma between two.
  let length = 2;
  for (let i = 0; items.length === 0 || length < 1_000_000; i++) {
    const item = {
      name: `item-${i}`,
      labels: { app: 'web', tier: 'front\u00e9nd', 'example.com/quote': 'say "hi" \\ bye' },
      ports: [{ port: 80, protocol: 'TCP' }, { port: 443, protocol: 'TCP' }],
      enabled: i % 2 === 0,
      ratio: i / 7,
    };
    length += JSON.stringify(item).length + (items.length > 0 ? 1 : 0);
    items.push(item);
  }
  assert.equal(JSON.stringify(items).length, length);
  const text = JSON.stringify({ kind: 'List', items });
  assert.ok(text.length >= 1_000_000);
  assert.deepEqual(findDuplicateKeys(text), []);

  // One duplicate near the end is still found with its exact path.
  const last = items.length - 1;
  const withDup = text.replace(`"name":"item-${last}"`, `"name":"item-${last}","name":"again"`);
  JSON.parse(withDup);
  assert.deepEqual(findDuplicateKeys(withDup), [`items[${last}].name`]);
});
