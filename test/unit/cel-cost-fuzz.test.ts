// Fuzz (fast-check, fixed seed) of the cost-bounded evaluator: random expressions over random data
// never throw anything but a typed CEL error, a successful evaluation never used more than its
// budget, and hostile expressions (nested comprehensions over big lists, doubling strings and
// lists, catastrophic regexes, growing replacements) end with CelCostError quickly.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CelEnvironment, type CelProgram } from '../../src/cel/environment.ts';
import { CelCompileError, CelCostError, CelError } from '../../src/cel/errors.ts';
import { CostBudget } from '../../src/cel/cost.ts';

const SEED = 20261126;

const env = new CelEnvironment({
  variables: [
    { name: 'x', type: 'dyn' },
    { name: 's', type: 'string' },
    { name: 'l', type: 'list<int>' },
    { name: 'm', type: 'map<string, dyn>' },
  ],
});

/** Expressions built from the grammar's pieces: most type-check, some do not (also fine). */
const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('x', 's', 'l', 'm', '1', '0', '-1', '2.5', "'a'", "''", 'true', 'null', '[1, 2, 3]', "{'k': 1}", "b'ab'", '1u', "m['k']", 'l[0]', 'm.k', "duration('1s')", "timestamp('2020-01-01T00:00:00Z')"),
    fc.tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '%', '==', '!=', '<', '<=', '>', '>=', '&&', '||', 'in'), tie('e')).map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(fc.constantFrom('size', 'string', 'int', 'double', 'type', 'dyn', 'bytes', 'quantity', 'url', 'isURL'), tie('e')).map(([f, a]) => `${f}(${a})`),
    fc.tuple(tie('e'), fc.constantFrom('contains', 'startsWith', 'endsWith', 'matches', 'indexOf', 'split', 'lastIndexOf', 'find', 'findAll'), tie('e')).map(([a, f, b]) => `${a}.${f}(${b})`),
    fc.tuple(tie('e'), fc.constantFrom('lowerAscii', 'upperAscii', 'trim', 'size', 'isSorted', 'sum', 'min', 'max', 'join')).map(([a, f]) => `${a}.${f}()`),
    fc.tuple(tie('e'), fc.constantFrom('replace'), tie('e'), tie('e')).map(([a, f, b, c]) => `${a}.${f}(${b}, ${c})`),
    fc.tuple(tie('e'), fc.constantFrom('all', 'exists', 'exists_one', 'map', 'filter'), tie('e')).map(([a, f, b]) => `${a}.${f}(v, ${b.replaceAll('x', 'v')})`),
    fc.tuple(tie('e'), tie('e')).map(([a, b]) => `cel.bind(y, ${a}, ${b.replaceAll('s', 'y')})`),
    fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    fc.tuple(tie('e')).map(([a]) => `!${a}`),
    fc.tuple(tie('e')).map(([a]) => `[${a}, ${a}]`),
    fc.tuple(tie('e'), fc.constantFrom('k', 'a', 'z')).map(([a, f]) => `has(${a}.${f})`),
    fc.tuple(tie('e')).map(([a]) => `${a}.?k.orValue(1)`),
  ),
})).e;

/** JSON-like values of every shape the variables can hold, some big. */
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }),
    fc.double(),
    fc.string({ maxLength: 20 }),
    fc.nat(5000).map((n) => 'a'.repeat(n)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 5 }),
    fc.nat(3000).map((n) => Array.from({ length: n }, (_, i) => BigInt(i))),
    fc.dictionary(fc.constantFrom('k', 'a', 'z', 'long'), tie('v'), { maxKeys: 3 }).map((o) => new Map(Object.entries(o))),
  ),
})).v;

const LIMIT = 20_000;

function run(program: CelProgram, activation: Record<string, unknown>): void {
  const start = performance.now();
  try {
    const { cost } = program.evaluate(activation, { costLimit: LIMIT });
    assert.ok(cost !== undefined && cost <= LIMIT, `${program.expression}: cost ${cost} over ${LIMIT}`);
  } catch (e) {
    assert.ok(e instanceof CelError, `${program.expression}: ${e instanceof Error ? e.stack : String(e)}`);
  }
  // A budget of 20,000 units is a few milliseconds of work; allow for a loaded machine.
  const ms = performance.now() - start;
  assert.ok(ms < 1500, `${program.expression}: ${ms.toFixed(0)} ms`);
}

test('random expressions over random data: only typed CEL errors, never over budget', () => {
  let compiled = 0;
  let evaluated = 0;
  fc.assert(
    fc.property(expression, fc.string({ maxLength: 30 }), fc.array(fc.bigInt({ min: -5n, max: 5000n }), { maxLength: 50 }), value, value, (expr, s, l, x, mv) => {
      let program: CelProgram;
      try {
        program = env.compile(expr);
      } catch (e) {
        assert.ok(e instanceof CelCompileError, `${expr}: ${String(e)}`);
        return;
      }
      compiled++;
      const m = mv instanceof Map ? mv : new Map([['k', mv]]);
      for (const act of [{ x, s, l, m }, { x: l, s: 'a'.repeat(4000), l: Array.from({ length: 2000 }, (_, i) => BigInt(i)), m }]) {
        evaluated++;
        run(program, act);
      }
    }),
    { seed: SEED, numRuns: 1500 },
  );
  assert.ok(compiled > 200, `${compiled} of the generated expressions compiled`);
  assert.ok(evaluated > 400);
});

const big = Array.from({ length: 10_000 }, (_, i) => BigInt(i));
const HOSTILE: [string, Record<string, unknown>][] = [
  ['l.all(a, l.all(b, l.all(c, a + b + c >= 0)))', { l: big }],
  ['l.map(a, l.map(b, l.map(c, a * b * c))).size() > 0', { l: big }],
  ['l.exists(a, l.exists(b, a == b + 20000))', { l: big }],
  ['l.filter(a, l.filter(b, b > a).size() > 0).size() > 0', { l: big }],
  [Array.from({ length: 40 }, (_, i) => `cel.bind(s${i + 1}, s${i} + s${i}, `).join('') + 'size(s40) > 0' + ')'.repeat(40), { s0: 'abcdefgh' }],
  [Array.from({ length: 40 }, (_, i) => `cel.bind(l${i + 1}, l${i} + l${i}, `).join('') + 'size(l40) > 0' + ')'.repeat(40), { l0: [1n, 2n] }],
  [Array.from({ length: 10 }, (_, i) => `cel.bind(s${i + 1}, s${i}.replace('', s${i}), `).join('') + 'size(s10) > 0' + ')'.repeat(10), { s0: 'abcdefgh' }],
  ["s.matches('(a+)+$')", { s: 'a'.repeat(6_000_000) + '!' }],
  ["s.matches('(a|aa|aaa)*(b|c)*(a*)*$')", { s: 'a'.repeat(2_000_000) }],
  ["s.findAll('a*').size() > 0", { s: 'a'.repeat(11_000_000) }],
  ["s.split('').size() > 0", { s: 'a'.repeat(10_000_000) }],
  ['s.contains(s)', { s: 'a'.repeat(100_000) }],
  ["l.map(a, s + s).size() > 0", { l: big, s: 'a'.repeat(1000) }],
  ["l.all(a, string(a) in l.map(b, string(b)))", { l: big }],
];

test('hostile expressions stop with CelCostError within their budget, quickly', () => {
  const hostileEnv = new CelEnvironment({
    variables: [
      { name: 'l', type: 'list<int>' }, { name: 's', type: 'string' }, { name: 's0', type: 'string' }, { name: 'l0', type: 'list<int>' },
    ],
  });
  for (const [expr, activation] of HOSTILE) {
    const program = hostileEnv.compile(expr);
    const start = performance.now();
    assert.throws(() => program.evaluate({ l: [], s: '', s0: '', l0: [], ...activation }, { costLimit: 1_000_000 }), (e: unknown) => e instanceof CelCostError && e.message === 'operation cancelled: actual cost limit exceeded', expr.slice(0, 80));
    const ms = performance.now() - start;
    assert.ok(ms < 3000, `${expr.slice(0, 60)}: ${ms.toFixed(0)} ms`);
  }
});

test('a catastrophic pattern within budget runs in linear time (RE2), not exponential', () => {
  const program = env.compile("s.matches('(a+)+$') || s.matches('(a|aa)*c')");
  const start = performance.now();
  const { value, cost } = program.evaluate({ x: null, s: 'a'.repeat(200_000) + '!', l: [], m: new Map() }, { costLimit: 1_000_000 });
  assert.equal(value, false);
  assert.ok(cost! <= 1_000_000);
  assert.ok(performance.now() - start < 3000);
});

test('a per-object budget shared by many rules stops the object, not the process', () => {
  const program = env.compile('l.all(a, l.exists(b, b == a))');
  const budget = new CostBudget(10_000_000, 1_000_000);
  const l = Array.from({ length: 300 }, (_, i) => BigInt(i));
  let runs = 0;
  const start = performance.now();
  assert.throws(() => {
    for (;;) {
      program.evaluate({ x: null, s: '', l, m: new Map() }, { budget });
      runs++;
    }
  }, CelCostError);
  assert.ok(budget.exhausted);
  assert.ok(runs >= 1 && runs < 100, `${runs} evaluations before the budget ran out`);
  assert.ok(performance.now() - start < 10_000);
});
