// The JSONPath dialect of Kubernetes' clients (src/machinery/jsonpath.ts): evaluation as
// client-go's util/jsonpath with missing keys allowed, its parse errors, and how values print.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goNumber, parseFieldPath, parseJsonPath, printJsonPathValue } from '../../src/machinery/jsonpath.ts';

const data = {
  metadata: { name: 'x', labels: { 'app.kubernetes.io/name': 'web' } },
  spec: {
    list: [{ name: 'a', n: 1 }, { name: 'b', n: 2 }, { name: 'c', n: 3, ok: true }],
    nested: { deep: { name: 'd' } },
  },
  status: { conditions: [{ type: 'Synced', status: 'False' }, { type: 'Ready', status: 'True' }] },
};

const find = (path: string) => parseFieldPath(path).find(data)[0];

test('fields, escaped dots, wildcards, recursion', () => {
  assert.deepEqual(find('.metadata.name'), ['x']);
  assert.deepEqual(find('.metadata.labels.app\\.kubernetes\\.io/name'), ['web']);
  assert.deepEqual(find('.spec.list[*].name'), ['a', 'b', 'c']);
  assert.deepEqual(find('.spec.nested.*.name'), ['d']);
  assert.deepEqual(find('..name'), ['x', 'a', 'b', 'c', 'd']);
  assert.deepEqual(find('.spec.missing.name'), []);
  assert.deepEqual(find('.'), [data]);
});

test('indexes, slices, unions', () => {
  assert.deepEqual(find('.spec.list[0].name'), ['a']);
  assert.deepEqual(find('.spec.list[-1].name'), ['c']);
  assert.deepEqual(find('.spec.list[0:2].name'), ['a', 'b']);
  assert.deepEqual(find('.spec.list[::2].name'), ['a', 'c']);
  assert.deepEqual(find('.spec.list[0,2].name'), ['a', 'c']);
  assert.deepEqual(find(".spec.list[0]['name','n']"), ['a', 1]);
  assert.throws(() => find('.spec.list[5]'), /array index out of bounds: index 5, length 3/);
  assert.throws(() => find('.metadata[0]'), /is not array or slice/);
});

test('filters: comparisons, presence, kinds must agree', () => {
  assert.deepEqual(find('.status.conditions[?(@.type=="Ready")].status'), ['True']);
  assert.deepEqual(find('.spec.list[?(@.n > 1)].name'), ['b', 'c']);
  assert.deepEqual(find('.spec.list[?(@.n <= 2)].name'), ['a', 'b']);
  assert.deepEqual(find('.spec.list[?(@.ok)].name'), ['c']);
  assert.deepEqual(find(".spec.list[?(@.name != 'b')].n"), [1, 3]);
  assert.throws(() => find('.spec.list[?(@.n == "1")].name'), /incompatible types for comparison/);
});

test('templates with text and several actions', () => {
  assert.deepEqual(parseJsonPath('name={.metadata.name} first={.spec.list[0].name}').find(data), [['name='], ['x'], [' first='], ['a']]);
});

/** What kubectl prints for a template: each result set's values joined by spaces, the sets one after another. */
const execute = (template: string, value: unknown) =>
  parseJsonPath(template)
    .find(value)
    .map((set) => set.map(printJsonPathValue).join(' '))
    .join('');

const pods = {
  kind: 'List',
  items: [
    { metadata: { name: 'a' }, spec: { containers: [{ name: 'c1', image: 'i1' }, { name: 'c2', image: 'i2' }] }, status: { conditions: [{ type: 'Ready', status: 'True' }] } },
    { metadata: { name: 'b' }, spec: { containers: [{ name: 'c3', image: 'i3' }] }, status: { conditions: [{ type: 'Ready', status: 'False' }] } },
    { metadata: { name: 'c' }, spec: { containers: [] } },
  ],
};

test('range / end: the actions between them once per value, relative to it', () => {
  assert.equal(execute('{range .items[*]}{.metadata.name}{"\\n"}{end}', pods), 'a\nb\nc\n');
  assert.deepEqual(parseJsonPath('{range .items[*]}{.metadata.name}{end}').find(pods), [['a'], ['b'], ['c']]);
  // Text outside actions repeats too; what follows the end is evaluated once, on the whole value.
  assert.equal(execute('{range .items[*]}[{.metadata.name}]{end} of {.kind}', pods), '[a][b][c] of List');
  assert.equal(execute('{.kind}:{range .items[*]} {.metadata.name}{end}.', pods), 'List: a b c.');
  // Several values in one action inside a range print space-separated.
  assert.equal(execute('{range .items[*]}{.metadata.name}={.spec.containers[*].name};{end}', pods), 'a=c1 c2;b=c3;c=;');
});

test('range / end: nested, with filters, over maps, empty ranges', () => {
  assert.equal(
    execute('{range .items[*]}{.metadata.name}:{range .spec.containers[*]} {.name}({.image}){end}{"\\n"}{end}', pods),
    'a: c1(i1) c2(i2)\nb: c3(i3)\nc:\n',
  );
  assert.equal(execute('{range .items[?(@.status.conditions[0].status=="True")]}{.metadata.name}{end}', pods), 'a');
  assert.equal(execute('{range .items[*].status.conditions[?(@.type=="Ready")]}{.status},{end}', pods), 'True,False,');
  // An empty range gives nothing, and evaluation resumes after its end.
  assert.equal(execute('{range .items[*].missing[*]}{.x}{"!"}{end}done', pods), 'done');
  assert.equal(execute('{range .items[2].spec.containers[*]}{.name}{end}|{range .items[0].spec.containers[*]}{.name},{end}', pods), '|c1,c2,');
  // A map's values, as `.*` finds them.
  assert.equal(execute('{range .labels.*}<{@}>{end}', { labels: { x: '1', y: '2' } }), '<1><2>');
  // Ranges side by side at the top level.
  assert.equal(execute('{range .a[*]}{@}{end}-{range .b[*]}{@}{end}', { a: [1, 2], b: [3] }), '12-3');
});

test('range / end: an end outside any range fails as in client-go', () => {
  assert.throws(() => parseJsonPath('{.kind}{end}').find(pods), /^Error: not in range, nothing to end$/);
  assert.throws(() => parseJsonPath('{range .items[*]}{.metadata.name}{end}{end}').find(pods), /not in range, nothing to end/);
});

test('parse errors in client-go\'s words', () => {
  assert.throws(() => parseJsonPath('{.a'), /^Error: unclosed action$/);
  assert.throws(() => parseFieldPath('.a[?(@.b=="c"].d'), /^Error: unterminated filter$/);
  assert.throws(() => parseFieldPath('.a[x]'), /^Error: invalid array index x$/);
  assert.throws(() => parseFieldPath('.a[0'), /^Error: unterminated array$/);
  assert.throws(() => parseFieldPath('spec.a'), /^Error: unrecognized identifier spec$/);
  assert.throws(() => parseFieldPath('.a (b)'), /^Error: unrecognized character in action: U\+0028 '\('$/);
});

test('printing as client-go prints a result', () => {
  assert.equal(printJsonPathValue({ b: [1, 2], a: '<&>' }), '{"a":"\\u003c\\u0026\\u003e","b":[1,2]}');
  assert.equal(printJsonPathValue(null), '<no value>');
  assert.equal(printJsonPathValue(true), 'true');
  assert.equal(goNumber(3), '3');
  assert.equal(goNumber(1.5), '1.5');
  assert.equal(goNumber(1234567.5), '1.2345675e+06');
  assert.equal(goNumber(0.00001), '1e-05');
});
