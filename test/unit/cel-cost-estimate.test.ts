// The static cost estimator: worst-case costs Kubernetes' compilation tests give for rules on
// schemas with and without bounds, its library cost tests' estimates, and the refusal of an
// over-budget rule with Kubernetes' message.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../src/machinery/schema.ts';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { RuleEnvironment } from '../../src/cel/schema.ts';
import { checkEstimatedCost, costErrorMessage, estimateCost } from '../../src/cel/estimate.ts';
import { maxCardinality, schemaBounds } from '../../src/cel/sizes.ts';
import { STATIC_ESTIMATED_COST_LIMIT } from '../../src/cel/cost.ts';

type Gen = (max: number | undefined) => Schema;

function scalar(type: string): Schema {
  switch (type) {
    case 'int-or-string':
      return { 'x-kubernetes-int-or-string': true };
    case 'duration':
    case 'date':
    case 'date-time':
      return { type: 'string', format: type };
    default:
      return { type: type as Schema['type'] };
  }
}
const arrayOf = (type: string): Gen => (max) => ({ type: 'array', items: scalar(type), maxItems: max });
const arrayOfArrays = (type: string): Gen => (max) => ({ type: 'array', items: { type: 'array', items: scalar(type) }, maxItems: max });
const OBJECT: Schema = { type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] };
const arrayOfObjects: Gen = (max) => ({ type: 'array', items: OBJECT, maxItems: max });
const arrayOfMaps = (type: string): Gen => (max) => ({ type: 'array', items: { type: 'object', additionalProperties: scalar(type) }, maxItems: max });
const mapOf = (type: string): Gen => (max) => ({ type: 'object', additionalProperties: scalar(type), maxProperties: max });
const mapOfItems = (item: Schema): Gen => (max) => ({ type: 'object', additionalProperties: item, maxProperties: max });
const string: Gen = (max) => ({ type: 'string', maxLength: max });
const bytes: Gen = (max) => ({ type: 'string', format: 'byte', maxLength: max });
const nested: Gen = (max) => ({ type: 'object', additionalProperties: { type: 'string', maxLength: max }, maxProperties: max });
const stringsList: Gen = (max) => ({ type: 'array', items: { type: 'string', maxLength: max }, maxItems: max });
const enumString = (...values: string[]): Gen => (max) => ({ type: 'string', maxLength: max, enum: values });
const intOrString: Gen = (max) => ({ 'x-kubernetes-int-or-string': true, maxLength: max });

/**
 * [schema, rule, worst case without bounds, the bound, worst case with it] — Kubernetes'
 * compilation cost tests (0: the figure is not checked there).
 */
const CASES: [Gen, string, number, number, number][] = [
  [arrayOf('number'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('string'), 'self.all(x, true)', 3145727, 20, 62],
  [arrayOf('boolean'), 'self.all(x, true)', 1887437, 5, 17],
  [arrayOfArrays('number'), 'self.all(x, true)', 3145727, 100, 302],
  [arrayOfObjects, 'self.all(x, true)', 555128, 50, 152],
  [mapOf('number'), 'self.all(x, true)', 1348169, 10, 32],
  [mapOf('string'), 'self.all(x, true)', 1179647, 3, 11],
  [mapOf('boolean'), 'self.all(x, true)', 943718, 100, 302],
  [string, "self.contains('test')", 314574, 10, 5],
  [string, "self.startsWith('test')", 2, 15, 2],
  [string, "self.endsWith('test')", 2, 30, 2],
  [string, 'size(self + "hello") > size("hello")', 314578, 4, 7],
  [arrayOf('number'), 'self[1] == 0.0', 2, 5000, 2],
  [arrayOf('string'), 'self[1] == self[1]', 314577, 8, 314577],
  [arrayOf('number'), 'self.all(x, self.all(y, true))', 0, 10, 352],
  [arrayOf('number'), 'self.all(x, self.all(y, self.all(z, true)))', 0, 10, 3552],
  [string, 'self.matches("x")', 314574, 50, 22],
  [string, '"".matches("(((((((((())))))))))[0-9]")', 7, 10, 7],
  [string, 'self.matches("")', 1, 100, 1],
  [nested, 'self.all(x, x.contains(self[x]))', 2752507, 10, 72],
  [arrayOf('number'), 'self[3] == 0.0', 2, 0, 2],
  [mapOf('number'), 'self["x"] == 0.0', 2, 0, 2],
  [string, 'self == "x"', 2, 0, 1],
  [bytes, 'self == b"x"', 2, 0, 1],
  [arrayOf('number'), 'self.all(x, x == 0.0)', 6291454, 3 * 1024 * 2048, 25165826],
  [arrayOf('int-or-string'), 'self.all(x, true)', 4718591, 10, 32],
  [arrayOf('int-or-string'), 'self[0] == 5', 3, 10, 3],
  [arrayOf('boolean'), 'self[0] == false', 2, 25, 2],
  [arrayOfArrays('number'), 'self[0][0] == -1.0', 3, 51, 3],
  [arrayOfMaps('number'), 'self.all(x, x.y == 25.2)', 6291452, 12, 74],
  [arrayOfMaps('number'), 'self[0].x > 2.0', 4, 3000, 4],
  [arrayOf('duration'), 'self.all(x, true)', 2359295, 5, 17],
  [arrayOf('duration'), 'self[0].getHours() == 2', 4, 525, 4],
  [arrayOf('date'), 'self.all(x, true)', 725936, 15, 47],
  [arrayOf('date'), 'self[2].getDayOfMonth() == 13', 4, 42, 4],
  [arrayOf('date-time'), 'self.all(x, true)', 428963, 25, 77],
  [arrayOf('date-time'), 'self[2].getMinutes() == 45', 4, 99, 4],
  [mapOf('int-or-string'), 'self.all(x, true)', 1348169, 15, 47],
  [mapOfItems(OBJECT), 'self.all(x, true)', 428963, 20, 62],
  [mapOfItems({ type: 'object', additionalProperties: { type: 'number' } }), 'self.all(x, true)', 1179647, 10, 32],
  [mapOfItems({ type: 'array', items: { type: 'number' } }), 'self.all(x, true)', 1179647, 25, 77],
  [mapOf('duration'), 'self.all(x, true)', 1048577, 5, 17],
  [mapOf('date'), 'self.all(x, true)', 524288, 10, 32],
  [mapOf('date-time'), 'self.all(x, true)', 349526, 25, 77],
  [string, "self.find('[0-9]+') == ''", 629147, 10, 11],
  [stringsList, "self.join(' ') == 'aa bb'", 329853068905, 10, 43],
  [stringsList, 'self.isSorted() == true', 329854432052, 10, 52],
  [(max) => ({ type: 'string', maxLength: max }), "self.lowerAscii() == 'lower!'", 314575, 10, 6],
  [mapOf('integer'), 'oldSelf.size() == self.size()', 5, 10, 5],
  [mapOf('date-time'), 'self["a"] == self["b"]', 8, 7, 8],
  [mapOf('duration'), 'self["c"] == self["d"]', 8, 42, 8],
  [enumString('A', 'B', 'C', 'LongValue'), "self.contains('A')", 2, 1000, 401],
  [intOrString, 'isQuantity(self)', 314574, 20, 9],
];

function worstCase(schema: Schema, rule: string): number {
  const env = new RuleEnvironment(schema);
  return estimateCost(env.env.compile(rule), env).max;
}

test("worst-case costs are the figures of Kubernetes' compilation tests, with and without bounds", () => {
  const wrong: string[] = [];
  for (const [gen, rule, unbounded, bound, bounded] of CASES) {
    if (unbounded !== 0) {
      const got = worstCase(gen(undefined), rule);
      if (got !== unbounded) wrong.push(`${rule} (no bounds): ${got}, Kubernetes ${unbounded}`);
    }
    const got = worstCase(gen(bound), rule);
    if (got !== bounded) wrong.push(`${rule} (bound ${bound}): ${got}, Kubernetes ${bounded}`);
  }
  assert.deepEqual(wrong, []);
});

// Kubernetes' library cost tests give lists of strings and bytes written as literals a fixed
// element size of 12 (a test estimator); in a real rule environment the elements of a literal list
// have no path, so their size is unknown. Those cases are checked below on schema lists instead.
test("estimates of Kubernetes' library cost tests (expressions over literals)", () => {
  const env = new CelEnvironment({ variables: [] });
  const LIST = { int: '[1, 2, 3, 4, 5]', uint: '[uint(1), uint(2), uint(3), uint(4), uint(5)]', string: "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']", bytes: "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]", duration: "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]" };
  const URL = "url('https:://kubernetes.io/')";
  const cases: [string, number, number][] = [
    [`${LIST.int}.sum()`, 15, 15], [`${LIST.uint}.sum()`, 20, 20], [`${LIST.duration}.sum()`, 20, 20],
    [`${LIST.int}.isSorted()`, 15, 15], [`${LIST.int}.indexOf(3)`, 15, 15], [`${LIST.uint}.lastIndexOf(uint(3))`, 21, 21],
    ["'01234567890123456789012345678901234567890123456789'.indexOf('123')", 5, 5],
    [`${URL}.getScheme()`, 4, 4], [`${URL}.getQuery()`, 4, 4], [`${URL} == url('https:://kubernetes.io/')`, 7, 9], [`${URL} == url('http://x.b')`, 5, 5],
    ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3], ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 7, 9],
    ["strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3], ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 7, 11],
    ["'abc 123 def 123'.replace('123', '456')", 3, 3], ["'abc 123 def 123'.replace('', 'x')", 3, 3], ["'abc 123 def 123'.split(' ', 1)", 3, 3],
    ["'abc 123 def 123'.substring(5, 8)", 2, 2], ["'  abc 123 def 123  '.trim()", 2, 2],
    ["'abc 123 def 123'.find('123')", 2, 2], ["'abc 123 def 123'.findAll('123', 1)", 2, 2],
    ['quantity("12Mi")', 1, 1], ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 3, 6],
    ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7, 7], ['quantity("50.703k").asApproximateFloat() > 0.0', 3, 3],
    ["ip('192.168.0.1')", 2, 2], ["ip('2001:db8:3333:4444:5555:6666:7777:8888').isGlobalUnicast()", 5, 5], ["ip('192.168.0.1') == ip('192.168.0.1')", 5, 5],
    ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8, 8], ["cidr('192.168.0.0/16').masked()", 3, 3],
    ["cidr('192.168.0.0/16').containsCIDR(cidr('192.0.0.0/30'))", 7, 11], ["cidr('192.168.0.0/16').containsCIDR('192.0.0.0/30')", 7, 11],
    ["cidr('192.168.0.0/16').containsIP(ip('192.0.0.1'))", 4, 7],
    ['sets.contains([1, 2, 3, 4], [2, 3])', 29, 29], ['!sets.equivalent([1], [1, 2])', 26, 26], ['sets.intersects([1], [1, 1])', 23, 23],
    ['format.named("dns1123subdomain")', 1, 1], ['format.named("dns1123Label").value().validate("my-name")', 34, 34], ["cidr('192.168.0.0/16').containsIP('192.169.0.1')", 5, 8],
  ];
  const wrong = cases.flatMap(([expr, min, max]) => {
    const got = estimateCost(env.compile(expr));
    return got.min === min && got.max === max ? [] : [`${expr}: ${got.min}..${got.max}, Kubernetes ${min}..${max}`];
  });
  assert.deepEqual(wrong, []);
  // Lists of strings and bytes with elements of at most 12 (maxLength 3, ×4), five of them.
  const lists = new RuleEnvironment({ type: 'object', properties: { s: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 3 } }, b: { type: 'array', maxItems: 5, items: { type: 'string', format: 'byte', maxLength: 12 } } } });
  const est = (e: string) => estimateCost(lists.env.compile(e), lists);
  // self 1 + .s 1, then 5 elements × (1 + ⌈12 × 0.1⌉) — Kubernetes' 5..15 on top of the literal's 10.
  assert.deepEqual(est('self.s.isSorted()'), { min: 2, max: 2 + 15 });
  assert.deepEqual(est("self.s.indexOf('x')"), { min: 2, max: 2 + 15 });
  assert.deepEqual(est('self.b.max()'), { min: 2, max: 2 + 15 });
  // join: 5 × 12 characters and 4 separators, a tenth of it.
  assert.deepEqual(est("self.s.join(' ')"), { min: 2, max: 2 + Math.ceil((5 * 12 + 4) * 0.1) });
});

// cel-go's coster (checker/cost.go) knows the result size of only two conversions: string(bytes)
// and bytes(string), from their argument; Kubernetes' library estimator adds none. Every other
// conversion to string (int, uint, double, bool, timestamp, duration) costs 1 and gives a string of
// unknown size, so a concatenation with one, or a comparison of two, has an unbounded worst case
// (cel-go's own test: string(timestamp1) == string(timestamp2) is 5..1844674407370955268). A
// message expression such as 'replicas ' + string(self.replicas) is therefore refused when written,
// in Kubernetes as here.
test("comprehensions over literals: cel-go's estimates, the sizes of the lists map and filter build", () => {
  // checker/cost_test.go: a map or filter gives a list of at most its range's size, whose elements
  // are the size of what each step adds, so a comprehension over it is bounded too.
  const env = new CelEnvironment({ variables: [] });
  const cases: [string, number, number][] = [
    ['[1,2,3,4,5].filter(x, x % 2 == 0)', 41, 101],
    ['[1,2,3,4,5].map(x, x)', 86, 86],
    ['[1,2,3,4,5].map(x, x).filter(x, x % 2 == 0)', 117, 177],
    ['[1,2,3,4,5].map(x, x).exists(x, x == 5) == true', 108, 118],
    ['[1,2,3,4,5].map(x, x).map(x, x)', 162, 162],
    ['[1,2,3,4,5].map(x, x)[4]', 87, 87],
    ['[[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]].all(y, y.all(y, y == 1))', 76, 136],
    ['[1,2,3,4,5].map(x, [x, x]).all(y, y.all(y, y == 1))', 157, 217],
    ["[\"a\", \"ab\", \"abc\", \"abcd\", \"abcde\"].map(x, [x, x]).all(y, y.all(y, y.startsWith('a')))", 157, 217],
  ];
  for (const [e, min, max] of cases) assert.deepEqual(estimateCost(env.compile(e)), { min, max }, e);
});

test('conversions to string and concatenation: the sizes cel-go estimates', () => {
  const est = (schema: Schema, expr: string) => {
    const env = new RuleEnvironment(schema);
    return estimateCost(env.env.compile(expr), env);
  };
  const INT: Schema = { type: 'integer' };
  assert.deepEqual(est(INT, 'string(1)'), { min: 1, max: 1 });
  assert.deepEqual(est(INT, 'string(self)'), { min: 2, max: 2 });
  // A string of unknown size compared with a literal: the smaller maximum (the literal's) counts.
  assert.deepEqual(est({ type: 'number' }, "string(self) == 'x'"), { min: 3, max: 3 });
  assert.deepEqual(est({ type: 'boolean' }, "string(self) == 'x'"), { min: 3, max: 3 });
  // Unknown sizes: the concatenation, and the comparison of two converted values, saturate.
  const concat = est(INT, "'replicas ' + string(self)");
  assert.equal(concat.min, 3);
  assert.ok(concat.max > 1e18, `${concat.max}`);
  for (const [schema, expr] of [
    [{ type: 'string', format: 'date-time' }, 'string(self) == string(self)'],
    [{ type: 'string', format: 'duration' }, "'took ' + string(self)"],
    [{ type: 'number' }, "'ratio ' + string(self)"],
    [{ type: 'boolean' }, "'flag ' + string(self)"],
  ] as [Schema, string][]) {
    const e = est(schema, expr);
    assert.ok(e.max > 1e18, `${expr}: ${e.max}`);
    assert.ok(check(schema, expr) !== undefined, expr);
  }
  assert.equal(est({ type: 'string', format: 'date-time' }, 'string(self) == string(self)').min, 5);
  // string(bytes): a tenth of the bytes' size, the result as long as the bytes (cel-go: 1..51 for 500).
  assert.deepEqual(est({ type: 'string', format: 'byte', maxLength: 500 }, 'string(self)'), { min: 1, max: 51 });
  // Concatenation of strings of known size: a tenth of the result's size, the result's size the sum
  // (maxLength 10 is 40 by the ×4 rule; + 'x' is 41, then + 'b' 42, compared with a 2-character literal).
  assert.deepEqual(est({ type: 'string', maxLength: 10 }, "self + 'x'"), { min: 2, max: 1 + 5 });
  assert.deepEqual(est({ type: 'string', maxLength: 10 }, "'a' + self + 'b' == 'ab'"), { min: 4, max: 1 + 5 + 5 + 1 });
  // So a message expression built from bounded strings is accepted, one built from string(int) is not.
  assert.equal(check({ type: 'string', maxLength: 63 }, "'bad value ' + self"), undefined);
  assert.match(check(INT, "'replicas ' + string(self)")!.message, /^estimated rule cost exceeds budget by factor of more than 100x/);
});

// The conversion functions take their price and result size from the overload the checker picks:
// only string(bytes) and bytes(string) are priced by size. An identity conversion (string(string),
// bytes(bytes)) costs 1 with a result of unknown size; a dyn argument (int-or-string) may be bytes,
// so the estimate spans both overloads: 1 to a tenth of its size, the result as long as it.
test('conversions: identity costs 1 with no size, a dyn argument spans the bytes overload', () => {
  const est = (schema: Schema, expr: string) => {
    const env = new RuleEnvironment(schema);
    return estimateCost(env.env.compile(expr), env);
  };
  const BOUNDED: Schema = { type: 'string', maxLength: 10 };
  assert.deepEqual(est(BOUNDED, 'string(self)'), { min: 2, max: 2 });
  assert.deepEqual(est({ type: 'string', format: 'byte', maxLength: 10 }, 'bytes(self)'), { min: 2, max: 2 });
  // string(string) has no size, so a concatenation with it is unbounded although self is bounded.
  assert.ok(est(BOUNDED, "string(self) + 'x'").max > 1e18);
  assert.ok(check(BOUNDED, "string(self) + 'x'") !== undefined);
  // int-or-string: self 1, then string() 0..⌈0.1 × 3,145,726⌉ (the bytes overload), then a
  // comparison with a 4-character literal 1.
  const INT_OR_STRING: Schema = { 'x-kubernetes-int-or-string': true };
  assert.deepEqual(est(INT_OR_STRING, "string(self) == 'http'"), { min: 2, max: 1 + 314_573 + 1 });
  // The result keeps the argument's size: compared with itself, a tenth of it again.
  assert.deepEqual(est(INT_OR_STRING, 'string(self) == string(self)'), { min: 3, max: 2 * (1 + 314_573) + 314_573 });
});

test('Kubernetes’ message: factor with six decimals under 1.5, one decimal to 100, then more than 100x', () => {
  const tail = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
  assert.equal(costErrorMessage('estimated rule cost', 12_000_000, 10_000_000), `estimated rule cost exceeds budget by factor of 1.200000x ${tail}`);
  assert.equal(costErrorMessage('estimated rule cost', 25_000_000, 10_000_000), `estimated rule cost exceeds budget by factor of 2.5x ${tail}`);
  assert.equal(costErrorMessage('estimated rule cost', 2_000_000_000, 10_000_000), `estimated rule cost exceeds budget by factor of more than 100x ${tail}`);
});

const FIELD = 'spec.validation.openAPIV3Schema.properties[f].x-kubernetes-validations[0].rule';

function check(schema: Schema, rule: string, options: { cardinality?: number; resourceRoot?: boolean } = {}) {
  const env = new RuleEnvironment(schema, { resourceRoot: options.resourceRoot });
  return checkEstimatedCost(env.env.compile(rule), env, FIELD, { cardinality: options.cardinality });
}

test('an over-budget rule is refused when written, with the field path; bounds make it acceptable', () => {
  // Quadratic over an unbounded list of strings: refused, as Kubernetes refuses it.
  const unbounded: Schema = { type: 'array', items: { type: 'string' } };
  const rule = 'self.all(x, self.exists_one(y, x.lowerAscii() == y.lowerAscii()))';
  const refused = check(unbounded, rule);
  assert.ok(refused);
  assert.equal(refused.field, FIELD);
  assert.match(refused.message, /^estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/);
  // With maxItems 5 and maxLength 5 (Kubernetes' own acceptance case) it is accepted.
  assert.equal(check({ type: 'array', maxItems: 5, items: { type: 'string', maxLength: 5 } }, rule), undefined);
  // A nested all over an unbounded list of numbers; accepted with maxItems.
  assert.ok(check({ type: 'array', items: { type: 'number' } }, 'self.all(x, self.all(y, true))'));
  assert.equal(check({ type: 'array', items: { type: 'number' }, maxItems: 10 }, 'self.all(x, self.all(y, true))'), undefined);
  // contains over two unbounded strings is refused; metadata.name is capped at 253 characters.
  assert.ok(check({ type: 'object', properties: { a: { type: 'string' } } }, 'self.a.contains(self.a)'));
  assert.equal(check({ type: 'object' }, 'self.metadata.name.contains(self.metadata.name) && self.metadata.generateName.contains(self.metadata.generateName)', { resourceRoot: true }), undefined);
  // Linear rules are accepted without bounds.
  assert.equal(check(unbounded, 'self.all(x, x.size() < 10)'), undefined);
  assert.equal(check({ type: 'string' }, "self.startsWith('a')"), undefined);
});

test('a rule under unbounded lists runs once per element: its cost is multiplied by the cardinality', () => {
  // A rule on the items of an unbounded list of objects runs up to maxCardinality times.
  const item: Schema = { type: 'object', properties: { name: { type: 'string', maxLength: 1000 } }, required: ['name'] };
  const bounds = schemaBounds(item)!;
  assert.equal(bounds.minSerializedSize, 2 + 'name'.length + 2 + 4);
  const cardinality = maxCardinality(bounds.minSerializedSize);
  assert.equal(cardinality, Math.floor(3 * 1024 * 1024 / 13));
  assert.equal(check(item, "self.name.contains('abc')"), undefined);
  const refused = check(item, "self.name.contains('abc')", { cardinality });
  assert.ok(refused);
  assert.ok(refused.cost > STATIC_ESTIMATED_COST_LIMIT);
});

test('sizes from schema bounds: maxLength ×4, maxItems, maxProperties, enums; request-size estimates without', () => {
  assert.equal(schemaBounds({ type: 'string', maxLength: 10 })!.maxElements, 40);
  assert.equal(schemaBounds({ type: 'string' })!.maxElements, 3 * 1024 * 1024 - 2);
  assert.equal(schemaBounds({ type: 'string', enum: ['a', 'bcd'] })!.maxElements, 3);
  assert.equal(schemaBounds({ type: 'string', format: 'byte', maxLength: 10 })!.maxElements, 10);
  assert.equal(schemaBounds({ type: 'array', items: { type: 'boolean' } })!.maxElements, Math.floor((3 * 1024 * 1024 - 2) / 5));
  assert.equal(schemaBounds({ type: 'object', additionalProperties: { type: 'integer' } })!.maxElements, Math.floor((3 * 1024 * 1024 - 2) / 7));
  assert.equal(schemaBounds({ type: 'object', additionalProperties: { type: 'integer' }, maxProperties: 3 })!.maxElements, 3);
  // The estimate with and without bounds through a compiled rule.
  const env = new RuleEnvironment({ type: 'object', properties: { tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 4 } } });
  // exists: per element @not_strictly_false(!__result__) (3), __result__ (1), t (1), == (1).
  assert.deepEqual(estimateCost(env.env.compile("self.tags.exists(t, t == 'x')"), env), { min: 3, max: 3 + 4 * (3 + 1 + 1 + 1) });
});

test('durations and timestamps are scalars of size 1: comparing them costs 1, whatever their strings', () => {
  // Gateway API's HTTPRoute timeouts rule, on strings without maxLength: cel-go estimates 1 per comparison.
  const timeouts = new RuleEnvironment({ type: 'object', properties: { request: { type: 'string' }, backendRequest: { type: 'string' } } });
  const got = estimateCost(timeouts.env.compile("!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))"), timeouts);
  assert.ok(got.max < 100, `estimated ${got.min}..${got.max}`);
  const env = new CelEnvironment({ variables: [] });
  assert.deepEqual(estimateCost(env.compile("timestamp('2024-01-01T00:00:00Z') == timestamp('2024-01-01T00:00:00Z')")), { min: 3, max: 3 });
});
