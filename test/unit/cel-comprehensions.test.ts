// Two-variable comprehensions (cel-go's ext.TwoVarComprehensions, in Kubernetes' environment since
// 1.33): all, exists, existsOne / exists_one over index and element or key and value;
// transformList, transformMap, transformMapEntry with and without a filter. Results, compile
// errors, run-time errors, and costs: the figures of cel-go's own tests (ext/comprehensions_test.go).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { CelCompileError, CelCostError, CelEvaluationError } from '../../src/cel/errors.ts';
import { checkEstimatedCost, estimateCost } from '../../src/cel/estimate.ts';
import { RuleEnvironment } from '../../src/cel/schema.ts';
import type { TypeBounds } from '../../src/cel/sizes.ts';
import type { Schema } from '../../src/machinery/schema.ts';

const env = new CelEnvironment({
  variables: [
    { name: 'm', type: 'map<int, int>' },
    { name: 'ms', type: 'map<string, string>' },
    { name: 'ml', type: 'map<string, list<int>>' },
    { name: 'mi', type: 'map<string, int>' },
    { name: 'xs', type: 'list<int>' },
    { name: 'd', type: 'dyn' },
  ],
});
const NONE = { m: {}, ms: {}, ml: {}, mi: {}, xs: [], d: null };
const run = (expr: string, activation: Record<string, unknown> = {}) => env.compile(expr).evaluate({ ...NONE, ...activation }, { costLimit: 1e9 });
const value = (expr: string, activation: Record<string, unknown> = {}) => run(expr, activation).value;

test('expressions cel-go evaluates to true', () => {
  const TRUE = [
    // list.all()
    '[1, 2, 3, 4].all(i, v, i < 5 && v > 0)',
    '[1, 2, 3, 4].all(i, v, i < v)',
    '[1, 2, 3, 4].all(i, v, i > v) == false',
    'cel.bind(listA, [1, 2, 3, 4], cel.bind(listB, [1, 2, 3, 4, 5], listA.all(i, v, listB[?i].hasValue() && listB[i] == v)))',
    'cel.bind(listA, [1, 2, 3, 4, 5, 6], cel.bind(listB, [1, 2, 3, 4, 5], listA.all(i, v, listB[?i].hasValue() && listB[i] == v))) == false',
    // list.exists(), existsOne(), exists_one()
    "cel.bind(l, ['hello', 'world', 'hello!', 'worlds'], l.exists(i, v, v.startsWith('hello') && l[?(i+1)].optMap(next, next.endsWith('world')).orValue(false)))",
    "cel.bind(l, ['hello', 'world', 'hello!', 'worlds'], l.existsOne(i, v, v.startsWith('hello') && l[?(i+1)].optMap(next, next.endsWith('world')).orValue(false)))",
    "cel.bind(l, ['hello', 'goodbye', 'hello!', 'goodbye'], l.exists_one(i, v, v.startsWith('hello') && l[?(i+1)].optMap(next, next == 'goodbye').orValue(false))) == false",
    '[1, 2, 1, 3, 1, 4].existsOne(i, v, i == 1 || v == 1) == false',
    '[1, 1, 2, 2, 3, 3].existsOne(i, v, i == 2 && v == 2)',
    '[1, 2, 4, 8, 16].exists(i, v, v == 1024 && i == 10) == false',
    // list.transformList()
    "['Hello', 'world'].transformList(i, v, '[%d]%s'.format([dyn(i), dyn(v.lowerAscii())])) == ['[0]hello', '[1]world']",
    "['hello', 'world'].transformList(i, v, v.startsWith('greeting'), '[%d]%s'.format([dyn(i), dyn(v)])) == []",
    '[1, 2, 3].transformList(indexVar, valueVar, (indexVar * valueVar) + valueVar) == [1, 4, 9]',
    '[1, 2, 3].transformList(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == [1, 9]',
    // list.transformMap()
    "['Hello', 'world'].transformMap(i, v, [v.lowerAscii()]) == {0: ['hello'], 1: ['world']}",
    '[1, 2, 3].transformMap(indexVar, valueVar, (indexVar * valueVar) + valueVar) == {0: 1, 1: 4, 2: 9}',
    '[1, 2, 3].transformMap(indexVar, valueVar, indexVar % 2 == 0, (indexVar * valueVar) + valueVar) == {0: 1, 2: 9}',
    // list.transformMapEntry()
    "'key1:value1 key2:value2 key3:value3'.split(' ').transformMapEntry(i, v, cel.bind(entry, v.split(':'), entry.size() == 2 ? {entry[0]: entry[1]} : {})) == {'key1': 'value1', 'key2': 'value2', 'key3': 'value3'}",
    "'key1:value1:extra key2:value2 key3'.split(' ').transformMapEntry(i, v, cel.bind(entry, v.split(':'), entry.size() >= 2 ? {entry[0]: entry[1]} : {})) == {'key1': 'value1', 'key2': 'value2'}",
    // map.all(), exists(), existsOne(), exists_one()
    "{'hello': 'world', 'hello!': 'world'}.all(k, v, k.startsWith('hello') && v == 'world')",
    "{'hello': 'world', 'hello!': 'worlds'}.all(k, v, k.startsWith('hello') && v.endsWith('world')) == false",
    "{'hello': 'world', 'taco': 'taco'}.all(k, v, k != v) == false",
    "{'h': ['hello', 'hi'], 'j': ['joke', 'jog']}.all(k, vals, vals.all(v, v.startsWith(k)))",
    "{'hello': 'world', 'hello!': 'worlds'}.exists(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.exists(k, v, k.startsWith('good') || v.endsWith('bye'))",
    "{'hello': 'world', 'hello!': 'worlds'}.existsOne(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'hello': 'world', 'hello!': 'worlds'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world'))",
    "{'hello': 'world', 'hello!': 'wow, world'}.exists_one(k, v, k.startsWith('hello') && v.endsWith('world')) == false",
    "{'i': 0, 'j': 1, 'k': 2}.existsOne(i, v, i == 'l' || v == 1)",
    // map.transformList()
    "{'Hello': 'world'}.transformList(k, v, '%s=%s'.format([k.lowerAscii(), v])) == ['hello=world']",
    "dyn({'Hello': 'world'}).transformList(k, v, k.lowerAscii() + '=' + v) == ['hello=world']",
    "{'hello': 'world'}.transformList(k, v, k.startsWith('greeting'), '%s=%s'.format([k, v])) == []",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(k, _, k) == ['greeting', 'farewell']",
    "{'greeting': 'hello', 'farewell': 'goodbye'}.transformList(_, v, v) == ['hello', 'goodbye']",
    // map.transformMap()
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, '%s, %s!'.format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    "dyn({'hello': 'world', 'goodbye': 'cruel world'}).transformMap(k, v, '%s, %s!'.format([k, v])) == {'hello': 'hello, world!', 'goodbye': 'goodbye, cruel world!'}",
    "{'hello': 'world', 'goodbye': 'cruel world'}.transformMap(k, v, v.startsWith('world'), '%s, %s!'.format([k, v])) == {'hello': 'hello, world!'}",
    "{'greeting': 'hello'}.transformMap(k, v, v + '!') == {'greeting': 'hello!'}",
    // map.transformMapEntry()
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {v: k}) == {'world': 'hello', 'tacocat': 'greetings'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, v == 'tacocat', {k + '!': v}) == {'greetings!': 'tacocat'}",
    "{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, {}) == {}",
    '[1, 2, 3].transformMapEntry(indexVar, valueVar, {valueVar: indexVar}) == {1: 0, 2: 1, 3: 2}',
    // keys keep their type: int keys of a map literal, indices as map keys, read back
    "{1: 'a', 2: 'b'}.all(k, v, type(k) == int && k > 0)",
    '[5, 6].transformMap(i, v, v).all(k, v, type(k) == int && k + 5 == v)',
    '[5, 6].transformMap(i, v, v).transformList(k, v, k) == [0, 1]',
    // empty ranges
    '[].all(i, v, false)',
    '![].exists(i, v, true)',
    '!{}.existsOne(k, v, true)',
    '[].transformList(i, v, v) == [] && {}.transformMap(k, v, v) == {} && [].transformMapEntry(i, v, {v: i}) == {}',
    // a variable of the enclosing scope is shadowed, the other remains
    '[1].all(i, v, [2].all(i, w, i == 0 && v == 1 && w == 2))',
    // one- and two-variable forms side by side
    '[1, 2].all(x, x > 0) && [1, 2].all(i, x, x > i)',
  ];
  const wrong = TRUE.filter((e) => {
    try {
      return value(e) !== true;
    } catch (err) {
      return `${e}: ${(err as Error).message}`;
    }
  });
  assert.deepEqual(wrong, []);
});

test('values and types: a list of what the transform gives, a map keyed like the range', () => {
  assert.deepEqual(value('[3, 2, 1].transformList(i, v, v > i, v * 10)'), [30n, 20n]);
  assert.deepEqual(value("{'a': 1, 'b': 2}.transformMap(k, v, v * 2)"), { a: 2n, b: 4n });
  assert.deepEqual(value("{'a': 'x', 'b': 'y'}.transformMapEntry(k, v, {v: k})"), { x: 'a', y: 'b' });
  assert.deepEqual(value('xs.transformList(i, v, i)', { xs: [7n, 8n, 9n] }), [0n, 1n, 2n]);
  assert.equal(env.compile('[1, 2].transformList(i, v, v * 2)').outputType, 'list<int>');
  assert.equal(env.compile("{'a': 1}.transformMap(k, v, v > 0)").outputType, 'map<string, bool>');
  assert.equal(env.compile("[1, 2].transformMapEntry(i, v, {v: 'x'})").outputType, 'map<int, string>');
  assert.equal(env.compile('[1].existsOne(i, v, v == 1)').outputType, 'bool');
  // The variables have the range's types: an index is an int, a key the map's key type.
  assert.equal(env.compile('m.transformList(k, v, k)').outputType, 'list<int>');
  assert.equal(env.compile('ml.transformList(k, v, v)').outputType, 'list<list<int>>');
  assert.match(env.compile('d.transformList(k, v, v)').outputType, /^list(<dyn>)?$/);
});

test('compile errors: cel-go words', () => {
  const ERRORS: [string, string][] = [
    ['[].all(i, i, i < i)', 'duplicate variable name: i'],
    ['[].all(__result__, i, __result__ < i)', 'iteration variable overwrites accumulator variable'],
    ['[].all(j, __result__, __result__ < j)', 'iteration variable overwrites accumulator variable'],
    ['[].all(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].all(j, i.k, j < i.k)', 'argument must be a simple name'],
    ['1.all(j, k, j < k)', 'cannot be range'],
    ['[].exists(i.j, k, i.j < k)', 'argument must be a simple name'],
    ["''.exists(j, k, j < k)", 'cannot be range'],
    ['[].exists_one(i.j, k, i.j < k)', 'argument must be a simple name'],
    ['[].existsOne(j, i.k, j < i.k)', 'argument must be a simple name'],
    ["''.existsOne(j, k, j < k)", 'cannot be range'],
    ['[].transformList(i.j, k, i.j + k)', 'argument must be a simple name'],
    ['{}.transformMap(j, i.k, j + i.k)', 'argument must be a simple name'],
    ['{}.transformMapEntry(i.j, k, {k: i.j})', 'argument must be a simple name'],
    ["{}.transformMapEntry(j, k, 'bad filter', {k: j})", 'no matching overload'],
    ["{'hello': 'world', 'greetings': 'tacocat'}.transformMapEntry(k, v, []) == {}", 'no matching overload'],
    ['[1].all(i, v, v)', "found no matching overload for '_&&_' applied to '(bool, int)'"],
    ['[1].exists(i, v, v)', "found no matching overload for '_||_' applied to '(bool, int)'"],
    ['[1].existsOne(i, v, v)', 'no matching overload'],
    ['[1].transformList(i, v, v, v)', 'no matching overload'],
    ["{'a': 1}.all(k, v, k + 1 > 0)", 'no matching overload'],
    ['[1].all(i, v, nope)', "undeclared reference to 'nope'"],
    // The variables are not visible outside the macro.
    ['[1].all(i, v, true) && i == 0', "undeclared reference to 'i'"],
  ];
  for (const [expr, message] of ERRORS) {
    assert.throws(() => env.compile(expr), (e: unknown) => e instanceof CelCompileError && e.message.includes(message), `${expr}: ${message}`);
  }
  // The error points at the offending argument.
  assert.throws(() => env.compile('[].all(i, i, true)'), (e: unknown) => e instanceof CelCompileError && e.message.startsWith('ERROR: <input>:1:11: duplicate variable name: i'));
});

test('run-time errors: a key inserted twice; all and exists absorb an error another element decides', () => {
  const fails = (expr: string, message: string, activation: Record<string, unknown> = {}) =>
    assert.throws(() => run(expr, activation), (e: unknown) => e instanceof CelEvaluationError && !(e instanceof CelCostError) && e.message === message, `${expr}: ${message}`);
  fails('[1, 1].transformMapEntry(i, v, {v: i})', 'insert failed: key 1 already exists');
  fails('[dyn(0), dyn(0u)].transformMapEntry(i, v, {v: i})', 'insert failed: key 0 already exists');
  fails("{'a': 'x', 'b': 'x'}.transformMapEntry(k, v, {v: k})", 'insert failed: key x already exists');
  // all: a false element decides, whatever error came before; without one, the error.
  assert.equal(value('[0, 1, 2].all(i, v, 2 / v > 1)'), false);
  fails('[0, 1].all(i, v, 2 / v > 1)', 'division by zero');
  // exists: a true element decides; without one, the error.
  assert.equal(value('[0, 2].exists(i, v, 2 / v == 1)'), true);
  fails('[0, 1].exists(i, v, 2 / v == 1)', 'division by zero');
  // existsOne and the transforms end in an error whatever follows: the accumulator carries it
  // (a later step's own error does not replace it), except that a later predicate or filter that
  // fails gives its error instead (cel-go's conditional gives its condition's error).
  fails('[0, 1].existsOne(i, v, 2 / v == 2)', 'division by zero');
  fails('[1, 0].transformList(i, v, 2 / v)', 'division by zero');
  fails('[0, 1].transformList(i, v, 2 / v > 0, v)', 'division by zero');
  fails("{'a': 0}.transformMap(k, v, 2 / v)", 'division by zero');
  fails('d.transformList(i, v, v == 0 ? 2 / v : v.x)', 'division by zero', { d: [0n, { y: 1n }] });
  fails('d.existsOne(i, v, v == 0 ? 2 / v == 1 : v)', 'no such overload', { d: [0n, 1n] });
  fails('d.transformList(i, v, v == 0 ? 2 / v > 0 : v, v)', 'no such overload', { d: [0n, 1n] });
  fails("d.transformMapEntry(i, v, {'k': v})", 'insert failed: key k already exists', { d: [1n, 1n, 2n] });
  fails("d.transformMapEntry(i, v, v == 2 ? 2 / (v - 2) > 0 : true, {'k': v})", 'division by zero', { d: [1n, 1n, 2n] });
  // A predicate that is not a bool at run time (dyn).
  fails('d.all(i, v, v)', 'no such overload', { d: [1n] });
  fails('d.transformList(i, v, v, v)', 'no such overload', { d: [1n] });
  fails('d.transformMapEntry(i, v, v)', 'no such overload', { d: [1n] });
  // A range that is neither a list nor a map (dyn).
  fails('d.all(i, v, true)', 'unsupported comprehension range type: types.Int', { d: 1n });
  fails('d.transformList(i, v, v)', 'unsupported comprehension range type: types.String', { d: 'abc' });
  // The cost limit is not absorbed as an error of one element.
  const p = env.compile('xs.all(i, v, xs.all(j, w, i == j || v != w))');
  const xs = Array.from({ length: 2000 }, (_, i) => BigInt(i));
  assert.throws(() => p.evaluate({ ...NONE, xs }, { costLimit: 1_000_000 }), CelCostError);
});

test("runtime cost and estimate: the figures of cel-go's tests", () => {
  const b = (n: number, more: Partial<TypeBounds> = {}): TypeBounds => ({ maxElements: n, minSerializedSize: 1, ...more });
  const bounds: Record<string, TypeBounds> = {
    m: b(3),
    ms: b(3, { keys: b(16), values: b(128) }),
    ml: b(5, { keys: b(16), values: b(10, { items: b(2) }) }),
    mi: b(5, { keys: b(16), values: b(10) }),
  };
  /** [expression, runtime cost, estimate min, estimate max, activation]. */
  const CASES: [string, number, number, number, Record<string, unknown>?][] = [
    ['[1, 2, 3, 4].all(i, v, i < 5 && v > 0)', 39, 23, 39],
    ['{1: 1, 2: 2, 3: 3}.all(i, v, i < 5 && v > 0)', 52, 40, 52],
    ['!{0: 0}.all(i, v, i < 5 && v > 0)', 39, 35, 39],
    ['m.all(i, v, i < 5 && v > 0)', 16, 2, 23, { m: { 1: 1n, 2: 2n } }],
    ['ms.all(k, v, k < v)', 14, 2, 23, { ms: { he: 'hello', go: 'goodbye' } }],
    ['[].transformList(i, v, v) == []', 31, 31, 31],
    ['[1].transformList(i, v, i) == [0]', 45, 45, 45],
    ['[3, 2, 1].transformList(i, v, v > i, v) == [3, 2]', 67, 44, 80],
    ['[].transformMap(k, v, v + 1) == {}', 71, 71, 71],
    ['{}.transformMap(k, v, v + 1) == {}', 91, 91, 91],
    ['{1: 2}.transformMap(k, v, v + 1) == {1: 3}', 97, 97, 97],
    ['cel.bind(m2, {"hello": "hello"}, m2.transformMap(k, v, v + "world")) == {"hello": "helloworld"}', 108, 108, 108],
    ['{1: 2, 3: 4, 5: 6}.transformMap(k, v, k % 3 == 0, v + 1) == {3: 5}', 106, 104, 116],
    // cel-go counts 100: `v + [2]` is charged by the list it builds here (2), where cel-go charges 1.
    ["ml.transformMap(k, v, k.startsWith('legacy') && v.size() == 1, v + [2]) == {'legacy-solo': [1, 2]}", 101, 73, 173, { ml: { 'legacy-solo': [1n], 'legacy-pair': [3n, 2n] } }],
    ['{1: 2}.transformMapEntry(k, v, {v: k}) == {2: 1}', 126, 126, 126],
    ['mi.transformMapEntry(k, v, {v: k}) == mi.transformMapEntry(k, v, {v: k})', 201, 65, 405, { mi: { 'legacy-solo': 1n, 'legacy-pair': 2n } }],
    // exists: the loop condition @not_strictly_false(!__result__) costs 3; it is read again before stopping.
    ['[1, 2, 3].exists(i, v, v == 1)', 10 + (3 + 1 + 2) + 3 + 1, 10 + 1 + 3 * 4, 10 + 1 + 3 * 6],
    // existsOne: p ? __result__ + 1 : __result__, then __result__ == 1.
    ['[1, 2, 3].existsOne(i, v, v > 1)', 10 + 3 * 2 + 2 * 2 + 2, 10 + 2 + 3 * 3, 10 + 2 + 3 * 4],
  ];
  const wrong: string[] = [];
  for (const [expr, cost, min, max, activation] of CASES) {
    const p = env.compile(expr);
    const r = p.evaluate({ ...NONE, ...activation }, { costLimit: 1e9 });
    const est = estimateCost(p, (name) => bounds[name]);
    if (r.value !== true && typeof r.value === 'boolean' && !expr.startsWith('[1, 2, 3].exists')) wrong.push(`${expr}: ${r.value}`);
    if (r.cost !== cost || est.min !== min || est.max !== max) wrong.push(`${expr}: ${r.cost} ${est.min}..${est.max}, want ${cost} ${min}..${max}`);
  }
  assert.deepEqual(wrong, []);
});

test('in a rule environment: keys and values by path; an unbounded nested comprehension is refused', () => {
  const ports: Schema = { type: 'object', maxProperties: 10, additionalProperties: { type: 'integer' } };
  const envP = new RuleEnvironment(ports);
  const rule = envP.env.compile("self.all(name, port, port > 0 && name != '')");
  assert.equal(rule.evaluate(envP.activation({ self: { http: 80, https: 443 } })).value, true);
  assert.equal(rule.evaluate(envP.activation({ self: { http: 0 } })).value, false);
  // 1 (self) + 1 (result) + 10 × (condition 2 + __result__ 1 + port > 0 (2) + name != '' (1: no
  // character of '' to compare)).
  assert.deepEqual(estimateCost(rule, envP), { min: 2, max: 2 + 10 * 6 });
  const steps: Schema = { type: 'array', items: { type: 'string' } };
  const envS = new RuleEnvironment(steps);
  const pairwise = 'self.all(i, a, self.all(j, b, i == j || a != b))';
  assert.equal(envS.env.compile(pairwise).evaluate(envS.activation({ self: ['a', 'b'] })).value, true);
  assert.equal(envS.env.compile(pairwise).evaluate(envS.activation({ self: ['a', 'b', 'a'] })).value, false);
  const refused = checkEstimatedCost(envS.env.compile(pairwise), envS, 'rule');
  assert.ok(refused);
  assert.match(refused.message, /^estimated rule cost exceeds budget by factor of more than 100x/);
  const bounded = new RuleEnvironment({ ...steps, maxItems: 20, items: { type: 'string', maxLength: 16 } });
  assert.equal(checkEstimatedCost(bounded.env.compile(pairwise), bounded, 'rule'), undefined);
  // A list a transform builds is as long as its range: comprehensions over it stay bounded.
  const built = 'self.transformList(i, s, s.size()).all(n, n < 64)';
  assert.equal(checkEstimatedCost(bounded.env.compile(built), bounded, 'rule'), undefined);
  assert.equal(bounded.env.compile(built).evaluate(bounded.activation({ self: ['abc'] })).value, true);
});
