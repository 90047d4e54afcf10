// The environment builder: each use declares its variables with their types, expressions are
// type-checked when compiled (typed errors in cel-go's words), programs are cached, the runtime
// cost counter stops an expression at its budget, and extensions (the authorizer library later)
// slot in.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEnvironment, cachedPrograms, type CelExtension } from '../../src/cel/environment.ts';
import { CelCompileError, CelCostError, CelError, CelEvaluationError } from '../../src/cel/errors.ts';
import { authorizationRequestEnvironment, claimsEnvironment, jsonToValue, objectEnvironment, userEnvironment } from '../../src/cel/uses.ts';

function compileError(env: CelEnvironment, expr: string): string {
  try {
    env.compile(expr);
  } catch (e) {
    assert.ok(e instanceof CelCompileError, `${expr}: ${String(e)}`);
    return e.message;
  }
  assert.fail(`${expr} compiled`);
}

test('claims: map<string, dyn> of the token, numbers as doubles', () => {
  const env = claimsEnvironment();
  const claims = jsonToValue({ sub: 'alice', groups: ['a', 'b'], exp: 1700000000, nested: { email_verified: true } });
  assert.equal(env.compile("claims.sub + ':' + claims.groups.join(',')").evaluate({ claims }).value, 'alice:a,b');
  assert.equal(env.compile('claims.exp > 1.0').evaluate({ claims }).value, true);
  assert.equal(env.compile("has(claims.nested) && claims.nested.email_verified").evaluate({ claims }).value, true);
  assert.equal(env.compile("'email' in claims").evaluate({ claims }).value, false);
  assert.equal(env.compile("claims.?email.orValue('none')").evaluate({ claims }).value, 'none');
  assert.throws(() => env.compile('claims.email').evaluate({ claims }), (e: unknown) => e instanceof CelEvaluationError && e.message === 'no such key: email');
});

test('user: UserInfo with typed fields; unknown fields do not compile', () => {
  const env = userEnvironment();
  const act = env.activation({ user: { username: 'system:serviceaccount:ns:sa', uid: '1', groups: ['system:authenticated'], extra: { scopes: ['a'] } } });
  assert.equal(env.env.compile("user.username.startsWith('system:serviceaccount:')").evaluate(act).value, true);
  assert.equal(env.env.compile("'system:authenticated' in user.groups && user.extra['scopes'][0] == 'a'").evaluate(act).value, true);
  assert.match(compileError(env.env, 'user.name'), /undefined field 'name'/);
});

test('request: the SubjectAccessReviewSpec of authorization match conditions', () => {
  const env = authorizationRequestEnvironment();
  const act = env.activation({ request: { user: 'bob', groups: ['dev'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'kube-system', labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['x'] }] } } } });
  assert.equal(env.env.compile("has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'").evaluate(act).value, true);
  assert.equal(env.env.compile('has(request.nonResourceAttributes)').evaluate(act).value, false);
  assert.equal(env.env.compile("request.resourceAttributes.labelSelector.requirements[0].values == ['x']").evaluate(act).value, true);
  assert.match(compileError(env.env, 'request.resourceAttributes.verbs'), /undefined field 'verbs'/);
});

test('object: a resource without a schema is dynamically typed', () => {
  const env = objectEnvironment();
  const object = jsonToValue({ metadata: { name: 'a', labels: { x: 'y' } } });
  assert.equal(env.compile("object.metadata.labels.x == 'y' && oldObject == null").evaluate({ object, oldObject: null }).value, true);
});

test('compile errors are typed, positioned and in cel-go words', () => {
  const env = new CelEnvironment({ variables: [{ name: 'x', type: 'int' }] });
  assert.equal(compileError(env, 'y + 1'), "ERROR: <input>:1:1: undeclared reference to 'y' (in container '')\n | y + 1\n | ^");
  assert.match(compileError(env, "x + 'a'"), /found no matching overload for '_\+_' applied to '\(int, string\)'/);
  assert.match(compileError(env, "x.startsWith('a')"), /found no matching overload for 'startsWith' applied to 'int\.\(string\)'/);
  assert.match(compileError(env, 'x +'), /^ERROR: <input>:1:\d+: Syntax error: /);
  assert.match(compileError(env, '\n  x.matches("(?!a)")'), /^ERROR: <input>:2:13: invalid regex: /);
  assert.match(compileError(env, "duration('1 hour') > duration('0s')"), /duration validation failed/);
  // The probe that hands the evaluator to the cost counter is not a function expressions can call.
  assert.match(compileError(env, '__celEvaluatorProbe()'), /undeclared reference/);
  // A renamed built-in is reported under its own name.
  assert.doesNotMatch(compileError(env, "'a'.indexOf(1)"), /__k8s/);
});

test('compiled programs are cached by environment and expression, failures included', () => {
  const env = new CelEnvironment({ variables: [{ name: 'x', type: 'int' }] });
  const before = cachedPrograms();
  const a = env.compile('x * 2 + 1');
  assert.equal(env.compile('x * 2 + 1'), a);
  assert.equal(cachedPrograms(), before + 1);
  const e1 = (() => {
    try {
      env.compile('x +* 2');
    } catch (e) {
      return e;
    }
  })();
  const e2 = (() => {
    try {
      env.compile('x +* 2');
    } catch (e) {
      return e;
    }
  })();
  assert.ok(e1 instanceof CelCompileError && e1 === e2);
  const other = new CelEnvironment({ variables: [{ name: 'x', type: 'string' }] });
  assert.equal(other.compile("x + 'a'").outputType, 'string');
  assert.notEqual(other.id, env.id);
});

test('the runtime cost counter: deterministic, and it stops an expression at its budget', () => {
  const env = new CelEnvironment({ variables: [{ name: 'xs', type: 'list<int>' }] });
  const xs = Array.from({ length: 1000 }, (_, i) => BigInt(i));
  const p = env.compile('xs.all(x, x >= 0)');
  const first = p.evaluate({ xs }, { costLimit: 1_000_000 });
  assert.equal(first.value, true);
  assert.equal(p.evaluate({ xs }, { costLimit: 1_000_000 }).cost, first.cost);
  assert.ok(first.cost! > 1000, `${first.cost} counts each iteration`);
  // Quadratic work over a big list is cut off long before it would end.
  const hostile = env.compile('xs.all(a, xs.all(b, xs.all(c, a + b + c >= 0)))');
  const start = performance.now();
  assert.throws(() => hostile.evaluate({ xs }, { costLimit: 100_000 }), (e: unknown) => e instanceof CelCostError && e.message === 'operation cancelled: actual cost limit exceeded');
  assert.ok(performance.now() - start < 1000);
  // Doubling a string or a list runs out of budget, not out of memory.
  const doubling = (v: string) => Array.from({ length: 40 }, (_, i) => `cel.bind(${v}${i + 1}, ${v}${i} + ${v}${i}, `).join('') + `size(${v}40) > 0` + ')'.repeat(40);
  const strings = new CelEnvironment({ variables: [{ name: 's0', type: 'string' }, { name: 'l0', type: 'list<int>' }] });
  for (const expr of [doubling('s'), doubling('l')]) {
    const begin = performance.now();
    assert.throws(() => strings.compile(expr).evaluate({ s0: 'abcdefgh', l0: [1n, 2n] }, { costLimit: 1_000_000 }), CelCostError);
    assert.ok(performance.now() - begin < 2000);
  }
  // Untracked evaluation is unaffected.
  assert.equal(p.evaluate({ xs }).cost, undefined);
  // String functions charge by length.
  const s = new CelEnvironment({ variables: [{ name: 's', type: 'string' }] }).compile("s.lowerAscii() == s");
  const short = s.evaluate({ s: 'a' }, { costLimit: 1e9 }).cost!;
  const long = s.evaluate({ s: 'a'.repeat(10_000) }, { costLimit: 1e9 }).cost!;
  assert.ok(long > short + 900, `${short} < ${long}`);
});

test('an extension brings its types, functions and variables (how the authorizer library slots in)', () => {
  class Authorizer {
    readonly allowed: boolean;
    constructor(allowed: boolean) {
      this.allowed = allowed;
    }
  }
  const authorizer: CelExtension = {
    name: 'authorizer',
    register: (r) => {
      r.env.registerType('kubernetes.authorization.Authorizer', Authorizer);
      r.fn('kubernetes.authorization.Authorizer.allowedFor(string): bool', (a: Authorizer, verb: string) => a.allowed && verb !== 'delete');
    },
    variables: [{ name: 'authorizer', type: 'kubernetes.authorization.Authorizer' }],
  };
  const env = objectEnvironment([authorizer]);
  const p = env.compile("authorizer.allowedFor('get') && !authorizer.allowedFor('delete')");
  assert.equal(p.evaluate({ object: null, oldObject: null, authorizer: new Authorizer(true) }).value, true);
  assert.ok(env.variables.some((v) => v.name === 'authorizer'));
});

test('whatever the expression and the data, only typed errors come out', () => {
  const env = new CelEnvironment({
    variables: [
      { name: 'x', type: 'dyn' },
      { name: 's', type: 'string' },
      { name: 'l', type: 'list<int>' },
    ],
  });
  const expressions = [
    '('.repeat(300) + '1' + ')'.repeat(300),
    '['.repeat(200) + ']'.repeat(200),
    'a'.repeat(10_000),
    'x.foo.bar', 'x[0]', 'x + 1', "x.startsWith('a')", 's.charAt(x)', "'%s %d'.format([x, x])", 'size(x)', "x.matches('a')",
    'url(s).getHost()', 'quantity(s).add(x)', 'x.min()', 'x.sum()', 'x.isSorted()', 'x.indexOf(1)', "x.split(',')", "x.join(',')",
    "x.getHours('UTC')", 'int(x)', 'string(x)', 'double(x)', 'x.optMap(y, y)', 'x == x', 'x in x', 'x.all(y, y)', 'dyn(l) + x',
    's.findAll(x)', 'matches(s, x)', 'strings.quote(x)', "x.replace('a', 'b', x)", 's.substring(x)', 's.indexOf(s, x)', '-x', '!x',
    'x ? 1 : 2', 'x / 0', 'x % 0', 'has(x.a)', 'x.?a.orValue(1)', 'x[?0]', 'cel.bind(v, x, v + v)', 'l.map(a, l.map(b, l.map(c, a + b + c)))',
  ];
  const values = [null, 0n, -1n, 1.5, NaN, 'abc', '', true, [1n, 2n], [], new Map([['a', 1n]]), {}, new Uint8Array([1]), new Date(0), [new Map()], 9223372036854775807n];
  let evaluations = 0;
  for (const expr of expressions) {
    let program;
    try {
      program = env.compile(expr);
    } catch (e) {
      assert.ok(e instanceof CelError, `${expr.slice(0, 40)}: ${String(e)}`);
      continue;
    }
    for (const x of values) {
      for (const s of ['', 'a,b', '1Gi', 'http://a', '(']) {
        evaluations++;
        try {
          program.evaluate({ x, s, l: [1n, 2n, 3n] }, { costLimit: 10_000 });
        } catch (e) {
          assert.ok(e instanceof CelError, `${expr} with ${String(x)}, '${s}': ${String(e)}`);
        }
      }
    }
  }
  assert.ok(evaluations > 1000);
});

// Where cel-js departs from cel-go at run time and the compiler's rewrite (rewrite.ts) restores
// cel-go's answer: each is a case of the conformance suite too.
test('cel-go semantics restored after the type-check: uint list index, repeated map keys, selections on an optional’s scalar, invalid UTF-8', () => {
  const env = claimsEnvironment();
  const claims = jsonToValue({ groups: ['a', 'b'], n: null, k: 'x' });
  const run = (expr: string) => env.compile(expr).evaluate({ claims }).value;
  const fails = (expr: string, message: string) =>
    assert.throws(() => run(expr), (e: unknown) => e instanceof CelEvaluationError && e.message.includes(message), expr);
  assert.equal(run('claims.groups[dyn(1u)]'), 'b');
  assert.equal(run('[7, 8, 9][dyn(0u)]'), 7n);
  fails("{'a': 1, 'a': 2}['a']", 'Failed with repeated key');
  fails("{string(claims.k): 1, 'x': 2}.size()", 'Failed with repeated key');
  assert.equal(run("{'a': 1, 'b': 2}['b']"), 2n);
  fails('claims.?n.invalid.hasValue()', 'no such key');
  fails('claims.?k.invalid.hasValue()', 'no such key');
  assert.equal(run('claims.?missing.invalid.hasValue()'), false);
  assert.equal(run("claims.?groups[0].orValue('none')"), 'a');
  fails("string(b'\\xff')", 'invalid UTF-8');
  assert.equal(run("string(b'\\xc3\\xa9')"), 'é');
});
