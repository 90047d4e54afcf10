// Runtime cost as Kubernetes prices it: the figures of Kubernetes' own cost tests (the library's
// cost_test.go, cel-go's runtime cost tests), the per-expression limit and the per-object budget.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { CostBudget, DEFAULT_PER_CALL_LIMIT, DEFAULT_RUNTIME_BUDGET } from '../../src/cel/cost.ts';
import { CelBudgetError, CelCostError } from '../../src/cel/errors.ts';

const env = new CelEnvironment({ variables: [{ name: 'input', type: 'dyn' }, { name: 'arg1', type: 'string' }] });

const LISTS = {
  int: '[1, 2, 3, 4, 5]',
  uint: '[uint(1), uint(2), uint(3), uint(4), uint(5)]',
  double: '[1.0, 2.0, 3.0, 4.0, 5.0]',
  bool: '[false, true, false, true, false]',
  string: "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']",
  bytes: "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]",
  duration: "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]",
  timestamp: "[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')]",
};
const FIFTY = "'01234567890123456789012345678901234567890123456789'";
const URL = "url('https:://kubernetes.io/')";
const LETTERS = "['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j']";

/** [expression, runtime cost Kubernetes gives, activation]. */
const CASES: [string, number, Record<string, unknown>?][] = [
  // lists library: 10 for the literal, then one traversal of the list
  [`${LISTS.int}.sum()`, 15], [`${LISTS.uint}.sum()`, 20], [`${LISTS.double}.sum()`, 15], [`${LISTS.duration}.sum()`, 20],
  ...(['isSorted()', 'max()', 'min()'] as const).flatMap((f): [string, number][] => [
    [`${LISTS.int}.${f}`, 15], [`${LISTS.uint}.${f}`, 20], [`${LISTS.double}.${f}`, 15], [`${LISTS.bool}.${f}`, 15],
    [`${LISTS.string}.${f}`, 15], [`${LISTS.bytes}.${f}`, 25], [`${LISTS.duration}.${f}`, 20], [`${LISTS.timestamp}.${f}`, 20],
  ]),
  ...(['indexOf', 'lastIndexOf'] as const).flatMap((f): [string, number][] => [
    [`${LISTS.int}.${f}(3)`, 15], [`${LISTS.uint}.${f}(uint(3))`, 21], [`${LISTS.double}.${f}(3.0)`, 15], [`${LISTS.bool}.${f}(true)`, 15],
    [`${LISTS.string}.${f}('x')`, 15], [`${LISTS.bytes}.${f}(bytes('x'))`, 26], [`${LISTS.duration}.${f}(duration('3s'))`, 21],
    [`${LISTS.timestamp}.${f}(timestamp('2011-01-03T00:00:00.000+01:00'))`, 21], [`${FIFTY}.${f}('123')`, 5],
  ]),
  // URLs
  ...['getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery'].map((f): [string, number] => [`${URL}.${f}()`, 4]),
  [`${URL} == url('https:://kubernetes.io/')`, 7], [`${URL} == url('http://x.b')`, 5],
  // strings
  ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3], ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 9],
  ["'ABCDEFGHIJ abcdefghij'.upperAscii()", 3], ["'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 9],
  ["strings.quote('ABCDEFGHIJ abcdefghij')", 3], ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 9],
  ["'abc 123 def 123'.replace('123', '456')", 3], ["'abc 123 def 123'.replace('', 'x')", 3], ["'abc 123 def 123'.replace('123', '')", 3],
  ["'abc 123 def 123'.replace('123', '456', 1)", 3], ["'abc 123 def 123'.split(' ')", 3], ["'abc 123 def 123'.split(' ', 1)", 3],
  ["'abc 123 def 123'.substring(5)", 2], ["'abc 123 def 123'.substring(5, 8)", 2], ["'  abc 123 def 123  '.trim()", 2],
  [`${LETTERS}.join(' ')`, 15], [`${LETTERS}.join()`, 13],
  ["'abc 123 def 123'.find('123')", 2], ["'abc 123 def 123'.findAll('123')", 2], ["'abc 123 def 123'.findAll('123', 1)", 2],
  // quantities
  ['quantity("12Mi")', 1], ['isQuantity("20")', 1], ['isQuantity("20M")', 1], ['quantity("200M") == quantity("200M")', 3],
  ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 6],
  ['quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', 9],
  ['quantity("50M").isLessThan(quantity("50Mi"))', 3], ['quantity("50Mi").isGreaterThan(quantity("50M"))', 3],
  ['quantity("200M").compareTo(quantity("0.2G")) > 0', 4], ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 5],
  ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', 5], ['quantity("50k").sub(20) == quantity("49980")', 4],
  ['quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6], ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7],
  ['quantity("50k").asInteger() > 0', 3], ['quantity("50").isInteger()', 2], ['quantity("50.703k").asApproximateFloat() > 0.0', 3],
  // IP and CIDR (library cost_test.go: parsing a traversal of the string, accessors nominal)
  ["ip('192.168.0.1')", 2], ["ip('2001:db8:3333:4444:5555:6666:7777:8888')", 4],
  ...['family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast'].map((f): [string, number] => [`ip('192.168.0.1').${f}()`, 3]),
  ["ip('192.168.0.1') == ip('192.168.0.1')", 5],
  ["ip.isCanonical('192.168.0.1')", 3], ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8], ["ip.isCanonical('2001:db8::abcd')", 3],
  ["cidr('192.168.0.0/16')", 2], ["cidr('2001:db8::/32')", 2],
  ...['ip', 'prefixLength', 'masked'].map((f): [string, number] => [`cidr('192.168.0.0/16').${f}()`, 3]),
  ["cidr('2001:db8::/32') == cidr('2001:db8::/32')", 5],
  ["cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))", 7], ["cidr('192.168.0.0/16').containsCIDR('192.0.0.0/30')", 7],
  ["cidr('192.168.0.0/16').containsIP(ip('192.0.0.1'))", 4], ["cidr('192.168.0.0/16').containsIP(ip('192.169.169.250'))", 5],
  ["cidr('192.168.0.0/16').containsIP('192.0.0.1')", 4],
  ["cidr('2001:db8::/32').containsIP('2001:db8:3333:4444:5555:6666:7777:8888')", 7],
  // format (cost_test.go): a regex of the format's pattern size over the string
  ['format.named("dns1123subdomain")', 1], ['format.named("dns1123Subdomain").value().validate("my-name")', 17], ['format.named("dns1123Label").value().validate("my-name")', 10],
  ['format.named("dns1123Label").value() == format.named("dns1123Label").value()', 5],
  ["semver('1.2.3-alpha.1')", 2], ["semver('1.2.3').isLessThan(semver('1.2.4'))", 3],
  // cel-go's sets (sets_test.go): the literals, 1, and the product of the sizes (twice for equivalent)
  ['sets.contains([], [])', 21], ['sets.contains([1], [1])', 22], ['sets.contains([1, 2, 3, 4], [2, 3])', 29], ['!sets.contains([1], [1, 2])', 24],
  ['sets.equivalent([1], [1, 1])', 25], ['!sets.equivalent([1], [1, 2])', 26], ['sets.intersects([1], [1, 1])', 23], ['!sets.intersects([], [])', 22],
  // cel-go's runtime cost tests (presence tests free, as Kubernetes configures them)
  ['"Hello World!"', 0], ['input', 1, { input: [1n, 2n] }], ["input['key']", 2, { input: { key: 'v' } }], ['input[0]', 2, { input: ['v'] }],
  ["input['ke' + 'y']", 3, { input: { key: 'v' } }], ['input[3-3]', 3, { input: ['v'] }], ['input.single_int32', 2, { input: { single_int32: 1n } }],
  ['has(input.single_int32)', 1, { input: { single_int32: 1n } }], ['has(input.testAttr.nestedAttr)', 2, { input: { testAttr: { nestedAttr: 'a' } } }],
  ['[1, 2, 3]', 10], ['{"a": 1, "b": 2, "c": 3}', 30], ['input.all(x, true)', 2, { input: [] }], ['[1, 2, 3].all(x, true)', 20],
  ["input.matches('[0-9]')", 103, { input: 'y'.repeat(500) }], ["'123'.matches('[0-9]')", 2], ["input.matches('\\\\d+a\\\\d+b')", 103, { input: 'y'.repeat(500) }],
  ['false || false', 0], ['true || false', 0], ['true && false', 0], ['false && true', 0],
  ['1 < 2', 1], ['1 <= 2', 1], ['1 == 2', 1], ['2 > 1', 1], ['2 >= 1', 1], ['2 in [1, 2, 3]', 13],
  ['1 + 1', 1], ['1 - 1', 1], ['1 / 1', 1], ['1 * 1', 1], ['1 % 1', 1], ['true ? 1 : 2', 0], ['true ? false : 1 > 3', 0], ['false ? false : 1 > 3', 1],
  ['size("123")', 1], ["'12345678901234567890' == '123456789012345678901234567890'", 2],
  ['string(input)', 51, { input: new Uint8Array(500) }], ['bytes(input)', 51, { input: 'y'.repeat(500) }], ['string(1)', 1],
  ['input.contains(arg1)', 2502, { input: 'y'.repeat(500), arg1: 'x'.repeat(500) }],
  ['input.startsWith(arg1)', 3, { input: 'idc', arg1: 'x'.repeat(500) }], ['input.endsWith(arg1)', 3, { input: 'idc', arg1: 'x'.repeat(500) }],
  ['input.size()', 2, { input: '500' }], ['size(input)', 2, { input: '500' }],
  ['input.all(k, input[k].single_int32 > 3)', 9, { input: { val: { single_int32: 0n } } }],
  ['input.all(k, input[k].all(x, true))', 2, { input: {} }], ['input.all(k, k.contains(k))', 2, { input: {} }],
];

test("runtime costs are the figures Kubernetes' cost tests give", () => {
  const wrong: string[] = [];
  for (const [expr, want, activation] of CASES) {
    const got = env.compile(expr).evaluate({ input: null, arg1: '', ...activation }, { costLimit: DEFAULT_PER_CALL_LIMIT }).cost;
    if (got !== want) wrong.push(`${expr}: ${got}, Kubernetes ${want}`);
  }
  assert.deepEqual(wrong, []);
  assert.ok(CASES.length > 120);
});

test('comprehensions cost their range, the body at each iteration and cel-go accumulator overhead', () => {
  const cost = (expr: string, input: unknown) => env.compile(expr).evaluate({ input, arg1: '' }, { costLimit: 1e9 }).cost;
  const xs = [1n, 2n, 3n];
  // all: per iteration the loop condition (2), __result__ (1), x (1), > (1); then __result__.
  assert.equal(cost('input.all(x, x > 0)', xs), 1 + 3 * 5 + 1);
  // exists stops at the first match: its condition, @not_strictly_false(!__result__) (3), is
  // still priced before the step it skips.
  assert.equal(cost('input.exists(x, x > 0)', xs), 1 + (3 + 1 + 2) + 3 + 1);
  // map: [] (10), per element __result__ + [f(x)] (12) with f(x); then __result__.
  assert.equal(cost('input.map(x, x * 2)', xs), 1 + 10 + 3 * (12 + 2) + 1);
  // filter: kept elements cost __result__ + [x] (13), dropped ones nothing more (cel-go reads the
  // untaken branch of `p ? __result__ + [x] : __result__` without counting it).
  assert.equal(cost('input.filter(x, x > 1)', xs), 1 + 10 + 3 * 2 + 2 * 13 + 1);
  // exists_one: __result__ + 1 (2) or nothing, and __result__ == 1 (2).
  assert.equal(cost('input.exists_one(x, x > 2)', xs), 1 + 3 * 2 + 2 + 2);
  // cel.bind: an empty range (a list literal, 10), the value and the body.
  assert.equal(cost('cel.bind(y, input, y.size())', xs), 10 + 1 + 2);
  // Nested: the inner comprehension's whole cost at each outer iteration.
  assert.equal(cost('input.all(a, input.all(b, true))', xs), 1 + 3 * (3 + (1 + 3 * 3 + 1)) + 1);
});

test("comprehensions over literals: cel-go's runtime cost figures", () => {
  // interpreter/runtimecost_test.go; list concatenation is charged by what it builds here (see README).
  const cases: [string, number][] = [
    ['[1,2,3,4,5].filter(x, x % 2 == 0)', 62],
    ['[1,2,3,4,5].map(x, x)', 86],
    ['[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)', 138],
    ['[1,2,3,4,5].map(x, x).exists(x, x == 5) == true', 118],
    ['[1,2,3,4,5].map(x, x).map(x, x)', 162],
    ['[1,2,3,4,5].map(x, [x, x]).filter(z, z.size() == 2)', 232],
    ['[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))', 171],
    ['[1,2,3].all(i, i in [1,2,3].map(j, j + j))', 86],
  ];
  const wrong = cases.filter(([e, want]) => env.compile(e).evaluate({ input: null, arg1: '' }, { costLimit: 1e9 }).cost !== want);
  assert.deepEqual(wrong, []);
});

test('defaults are Kubernetes’: 1,000,000 per expression, 10,000,000 per object', () => {
  assert.equal(DEFAULT_PER_CALL_LIMIT, 1_000_000);
  assert.equal(DEFAULT_RUNTIME_BUDGET, 10_000_000);
  const budget = new CostBudget();
  assert.equal(budget.nextLimit(), 1_000_000);
});

test('the per-expression limit stops an evaluation with cel-go’s message', () => {
  const p = env.compile('input.all(x, input.all(y, x + y >= 0))');
  const input = Array.from({ length: 2000 }, (_, i) => BigInt(i));
  assert.throws(() => p.evaluate({ input, arg1: '' }, { costLimit: DEFAULT_PER_CALL_LIMIT }), (e: unknown) => e instanceof CelCostError && !(e instanceof CelBudgetError) && e.message === 'operation cancelled: actual cost limit exceeded');
  // The same limit through a budget: the per-call limit is hit first, not the total.
  const budget = new CostBudget(DEFAULT_RUNTIME_BUDGET, 1000);
  assert.throws(() => p.evaluate({ input, arg1: '' }, { budget }), (e: unknown) => e instanceof CelCostError && !(e instanceof CelBudgetError));
  // As in Kubernetes, no further rule of the object runs after one was stopped by cost.
  assert.ok(budget.exhausted);
  assert.throws(() => env.compile('true').evaluate({ input, arg1: '' }, { budget }), CelBudgetError);
});

test('the per-object budget: each evaluation takes what it used; running out ends with Kubernetes’ message', () => {
  const p = env.compile('input.all(x, x >= 0)');
  const input = Array.from({ length: 100 }, (_, i) => BigInt(i));
  const one = p.evaluate({ input, arg1: '' }, { costLimit: 1e9 }).cost!;
  const budget = new CostBudget(one * 3 + one / 2, 1e9);
  for (let i = 0; i < 3; i++) assert.equal(p.evaluate({ input, arg1: '' }, { budget }).value, true);
  assert.equal(budget.remaining, one / 2);
  assert.throws(() => p.evaluate({ input, arg1: '' }, { budget }), (e: unknown) => e instanceof CelBudgetError && e.message === 'validation failed due to running out of cost budget, no further validation rules will be run');
  assert.ok(budget.exhausted);
  // Nothing more runs once it is spent, however cheap.
  assert.throws(() => env.compile('true').evaluate({ input, arg1: '' }, { budget }), CelBudgetError);
  // A configurable per-call limit inside a budget.
  const small = new CostBudget(1e9, 10);
  assert.throws(() => p.evaluate({ input, arg1: '' }, { budget: small }), (e: unknown) => e instanceof CelCostError && !(e instanceof CelBudgetError));
  assert.ok(small.exhausted);
  assert.equal(p.evaluate({ input: [], arg1: '' }, { budget: new CostBudget(1e9, 10), costLimit: 100 }).cost, 2);
});
