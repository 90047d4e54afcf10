// Validation rules of schema nodes: what is refused when a definition is written (src/cel/rules.ts)
// and the evaluation details HTTP tests do not reach (src/registry/validation-rules.ts): message
// expressions that cannot be used, runtime errors, the per-call limit and the per-object budget.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../src/machinery/schema.ts';
import { compileRules, normalizeFieldPath, referencesIdentifier, RuleDefinitionError } from '../../src/cel/rules.ts';
import { ruleValidator } from '../../src/registry/validation-rules.ts';
import { loadCel } from '../../src/cel/load.ts';

// Validation rules are compiled by the expression language, loaded on first need.
await loadCel();

test('transition rules are told by a reference to oldSelf outside literals, comments and selections', () => {
  assert.ok(referencesIdentifier('self == oldSelf', 'oldSelf'));
  assert.ok(referencesIdentifier('has(oldSelf.x)', 'oldSelf'));
  assert.ok(referencesIdentifier('oldSelf.hasValue()', 'oldSelf'));
  assert.ok(!referencesIdentifier("self == 'oldSelf'", 'oldSelf'));
  assert.ok(!referencesIdentifier('self == "a \\" oldSelf"', 'oldSelf'));
  assert.ok(!referencesIdentifier("self == r'oldSelf'", 'oldSelf'));
  assert.ok(!referencesIdentifier("self == '''\noldSelf'''", 'oldSelf'));
  assert.ok(!referencesIdentifier('self.oldSelf == 1', 'oldSelf'));
  assert.ok(!referencesIdentifier('self.oldSelfie == 1 // oldSelf', 'oldSelf'));
  assert.ok(referencesIdentifier("b'x' == b'y' || oldSelf == self", 'oldSelf'));
});

const node: Schema = {
  type: 'object',
  properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } }, labels: { type: 'object', properties: {}, additionalProperties: { type: 'string' } } },
};

test('fieldPath: properties and map keys, normalized as field errors print them', () => {
  assert.equal(normalizeFieldPath('.spec.replicas', node), 'spec.replicas');
  assert.equal(normalizeFieldPath(".labels['a.b/c']", node), 'labels[a.b/c]');
  assert.equal(normalizeFieldPath(".labels.plain", node), 'labels[plain]');
  assert.equal(normalizeFieldPath("['spec'].replicas", node), 'spec.replicas');
  assert.equal(normalizeFieldPath(".labels['it\\'s']", node), "labels[it's]");
  const refused: [string, string][] = [
    ['.nope', 'does not refer to a valid field'],
    ['.spec.replicas.x', 'does not refer to a valid field'],
    ['spec', 'expected [ or . but got: spec'],
    ['.spec[0]', 'expected single quoted string but got 0'],
    ['.spec.', 'unexpected end of JSON path'],
    [".labels['a'", 'unexpected end of JSON path'],
    [".labels['\\q']", 'invalid string literal: invalid escape char \\q'],
  ];
  for (const [path, why] of refused) assert.throws(() => normalizeFieldPath(path, node), { message: why }, path);
});

test('compiled once per schema node; every problem of a definition is named', () => {
  const s: Schema = { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() > 1' }] };
  const first = compileRules(s);
  assert.equal(compileRules(s), first);
  assert.equal(first[0]!.usesOldSelf, false);
  assert.equal(compileRules({ type: 'string', 'x-kubernetes-validations': [{ rule: 'self != oldSelf' }] })[0]!.usesOldSelf, true);
  const bad: Schema = {
    type: 'string',
    'x-kubernetes-validations': [
      { rule: '' },
      { rule: 'true', reason: 'FieldValueBogus' as 'FieldValueInvalid' },
      { rule: 'self == "a"', optionalOldSelf: true },
      { rule: 'false', messageExpression: '1' },
      { rule: 'false', messageExpression: 'self +' },
      { rule: 'false', message: 'two\nlines' },
      { rule: 'self.size()' },
    ],
  };
  assert.throws(
    () => compileRules(bad, { at: 'spec' }),
    (e: unknown) => {
      assert.ok(e instanceof RuleDefinitionError);
      assert.deepEqual(
        e.problems.map((p) => p.split(':')[0]),
        ['spec.x-kubernetes-validations[0].rule', 'spec.x-kubernetes-validations[1].reason', 'spec.x-kubernetes-validations[2].optionalOldSelf', 'spec.x-kubernetes-validations[3].messageExpression', 'spec.x-kubernetes-validations[4].messageExpression', 'spec.x-kubernetes-validations[5].message', 'spec.x-kubernetes-validations[6].rule'],
      );
      assert.match(e.problems[1]!, /Unsupported value: "FieldValueBogus": supported values: "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"$/);
      assert.match(e.problems[3]!, /: must evaluate to a string$/);
      assert.match(e.problems[4]!, /messageExpression compilation failed: ERROR: <input>:1:/);
      assert.match(e.problems[6]!, /cel expression must evaluate to a bool$/);
      return true;
    },
  );
});

const wrap = (spec: Schema): Schema => ({ type: 'object', properties: { spec } });

test('a message expression that cannot be used falls back to the message', () => {
  const v = ruleValidator(
    wrap({
      type: 'object',
      properties: {
        long: { type: 'string', 'x-kubernetes-validations': [{ rule: 'false', message: 'm1', messageExpression: 'self' }] },
        lines: { type: 'string', 'x-kubernetes-validations': [{ rule: 'false', message: 'm2', messageExpression: 'self' }] },
        fails: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'false', messageExpression: 'string(10 / self)' }] },
        blank: { type: 'string', 'x-kubernetes-validations': [{ rule: 'false', message: 'm4', messageExpression: "'  '" }] },
        trimmed: { type: 'string', 'x-kubernetes-validations': [{ rule: 'false', message: 'm5', messageExpression: "'  spaced  '" }] },
      },
    }),
  )!;
  const errs = v.validate({ spec: { long: 'x'.repeat(5 * 1024 + 1), lines: 'a\nb', fails: 0, blank: 'x', trimmed: 'x' } });
  assert.deepEqual(
    errs.map((e) => e.message),
    [
      'spec.long: Invalid value: "string": m1',
      'spec.lines: Invalid value: "string": m2',
      'spec.fails: Invalid value: "integer": failed rule: false',
      'spec.blank: Invalid value: "string": m4',
      'spec.trimmed: Invalid value: "string": spaced',
    ],
  );
});

test('null values are not validated; runtime overload errors are reported as Kubernetes reports them', () => {
  const v = ruleValidator(wrap({ type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-validations': [{ rule: 'self > 0' }] } } }))!;
  assert.deepEqual(v.validate({ spec: { port: null } }), []);
  assert.deepEqual(v.validate({ spec: { port: 1 } }), []);
  assert.deepEqual(
    v.validate({ spec: { port: 'http' } }).map((e) => e.message),
    [`spec.port: Invalid value: "": 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: self > 0`],
  );
});

test('the per-object budget is shared by every rule of the object and stops the validation', () => {
  const schema = wrap({ type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.startsWith('a')" }] } });
  const spec = Array.from({ length: 50 }, () => 'b');
  const unbounded = ruleValidator(schema)!.validate({ spec });
  assert.equal(unbounded.length, 50);
  const errs = ruleValidator(schema, { perObject: 40 })!.validate({ spec });
  assert.ok(errs.length > 1 && errs.length < 50, `${errs.length} errors`);
  assert.equal(errs.at(-1)!.message.replace(/^spec\[\d+\]: /, ''), 'Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run');
  assert.ok(errs.slice(0, -1).every((e) => e.message.endsWith("failed rule: self.startsWith('a')")));
});

test('a message expression over the per-call limit stops the validation', () => {
  const v = ruleValidator(
    wrap({ type: 'array', maxItems: 30, items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'false', messageExpression: "self.all(x, self.all(y, x >= 0)) ? 'big' : 'small'" }, { rule: 'false', message: 'second' }] }),
    { perCall: 200 },
  )!;
  assert.deepEqual(
    v.validate({ spec: Array.from({ length: 30 }, (_, i) => i) }).map((e) => e.message),
    ['spec: Invalid value: "array": no further validation rules will be run due to call cost exceeds limit for messageExpression: "self.all(x, self.all(y, x >= 0)) ? \'big\' : \'small\'"'],
  );
});

test('ratcheting: on update, a false rule at an unchanged value is a warning; transition rules never ratchet', () => {
  const short = { 'x-kubernetes-validations': [{ rule: 'self.size() < 3', message: 'too long' }] };
  const v = ruleValidator(
    wrap({
      type: 'object',
      properties: {
        a: { type: 'string', ...short },
        b: { type: 'string' },
        fixed: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf && self.size() < 3', message: 'fixed' }] },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string', ...short } },
        ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'string', ...short } } } },
      },
    }),
  )!;
  const old = { spec: { a: 'long', b: 'x', fixed: 'long', tags: ['long'], ports: [{ name: 'p', v: 'long' }] } };
  const warnings: string[] = [];
  const errs = v.validate({ spec: { ...old.spec, b: 'y', ports: [{ name: 'q', v: 'new!' }, { name: 'p', v: 'long' }] } }, old, (w) => warnings.push(w));
  assert.deepEqual(
    errs.map((e) => e.message),
    ['spec.fixed: Invalid value: "string": fixed', 'spec.ports[0].v: Invalid value: "string": too long'],
  );
  assert.deepEqual(warnings, ['spec.a: Invalid value: "string": too long', 'spec.tags[0]: Invalid value: "string": too long', 'spec.ports[1].v: Invalid value: "string": too long']);
  // A changed value, or a changed set (its items have no old value of their own), is checked again.
  const again = v.validate({ spec: { ...old.spec, a: 'longer', tags: ['long', 'z'] } }, old, () => {});
  assert.deepEqual(
    again.map((e) => e.message),
    ['spec.a: Invalid value: "string": too long', 'spec.fixed: Invalid value: "string": fixed', 'spec.tags[0]: Invalid value: "string": too long'],
  );
  // No old object (create): nothing ratchets (and the transition rule does not run).
  assert.deepEqual(
    v.validate(old).map((e) => e.field),
    ['spec.a', 'spec.tags[0]', 'spec.ports[0].v'],
  );
});

test('a rule whose estimated cost is over budget is refused when the schema is written; bounds make it acceptable; nested lists multiply', () => {
  const tail = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
  const rule = "self.all(x, x.contains('a'))";
  const refused = (schema: Schema): string[] => {
    try {
      ruleValidator(wrap(schema));
      return [];
    } catch (e) {
      assert.ok(e instanceof RuleDefinitionError);
      return e.problems;
    }
  };
  // Unbounded: a list of strings of unknown size, as many as a request can hold.
  assert.deepEqual(refused({ type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule }] }), [
    `<root>.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${tail}`,
    // Its cost alone is over the schema's total too, reported at the root as Kubernetes reports it.
    `<root>.x-kubernetes-validations: Forbidden: total CRD cost exceeds budget by factor of more than 100x ${tail}`,
  ]);
  // The same rule with bounds is accepted and runs.
  const bounded: Schema = { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 63 }, 'x-kubernetes-validations': [{ rule }] };
  assert.deepEqual(refused(bounded), []);
  assert.deepEqual(ruleValidator(wrap(bounded))!.validate({ spec: ['ab', 'b'] }).map((e) => e.message), [`spec: Invalid value: "array": failed rule: ${rule}`]);
  // A message expression is estimated too, and named as Kubernetes names it.
  assert.deepEqual(refused({ type: 'integer', 'x-kubernetes-validations': [{ rule: 'self > 0', messageExpression: "'got ' + string(self)" }] }), [
    `<root>.properties[spec].x-kubernetes-validations[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x ${tail}`,
  ]);
  // Under lists, a rule's cost is multiplied by how many times it can run: the product of the
  // maxItems above it. The item rule alone is estimated at 163 (self 1, the regex call 2 + the
  // string's and the pattern's costs); 100 × 100 runs make 1,630,000, 200 × 1000 make 32,600,000.
  const item = (outer: number, inner: number): Schema => ({
    type: 'array',
    maxItems: outer,
    items: { type: 'array', maxItems: inner, items: { type: 'string', maxLength: 200, 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')" }] } },
  });
  assert.deepEqual(refused(item(100, 100)), []);
  const problems = refused(item(200, 1000));
  assert.equal(problems.length, 1);
  assert.match(problems[0]!, /^<root>\.properties\[spec\]\.items\.items\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of 3\.3x /);
  // The limits can be set per validator: a generous one accepts what the default refuses.
  assert.ok(ruleValidator(wrap(item(200, 1000)), { estimated: Number.MAX_SAFE_INTEGER, estimatedTotal: Number.MAX_SAFE_INTEGER }));
  // The total of all rules is bounded as well: 24 rules of 100 × 300 × 163 = 4,890,000 each, each
  // under the per-rule limit, together 117,360,000, over the 100,000,000 of the schema.
  const many: Schema = { type: 'object', properties: Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`f${i}`, item(100, 300)])) };
  assert.deepEqual(refused(many), [`<root>.x-kubernetes-validations: Forbidden: total CRD cost exceeds budget by factor of 1.173600x ${tail}`]);
});

// allOf, as Kubernetes' validator (apiextensions' schema/cel/validation.go) walks it: an entry's
// rules run at the node with `self` of the node's type, after the node's own rules and before its
// children; an entry's properties, items and map values reach only what the node declares; errors
// inside an entry ratchet by the node's nearest correlated ancestor, never by the node itself.
test('allOf: entries run at the node, in order, typed by the node; properties off the node are ignored', () => {
  const v = ruleValidator(
    wrap({
      type: 'object',
      properties: { a: { type: 'integer' }, list: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': [{ rule: 'self.a > 0', message: 'own' }],
      allOf: [
        { 'x-kubernetes-validations': [{ rule: 'self.a > 1', message: 'first' }] },
        {
          'x-kubernetes-validations': [{ rule: 'self.a > 2', message: 'second' }],
          properties: { a: { 'x-kubernetes-validations': [{ rule: 'self > 3', message: 'property' }] }, ghost: { 'x-kubernetes-validations': [{ rule: 'false' }] } },
          allOf: [{ properties: { list: { items: { 'x-kubernetes-validations': [{ rule: "self != 'x'", message: 'item' }] } } } }],
        },
      ],
    }),
  )!;
  assert.deepEqual(
    v.validate({ spec: { a: 0, list: ['x'], ghost: 1 } }).map((e) => e.message),
    // The second entry's own rule, then its nested allOf (the list's items), then its properties.
    ['spec: Invalid value: "object": own', 'spec: Invalid value: "object": first', 'spec: Invalid value: "object": second', 'spec.list[0]: Invalid value: "string": item', 'spec.a: Invalid value: "integer": property'],
  );
  assert.deepEqual(v.validate({ spec: { a: 4, list: ['y'] } }), []);
});

test('allOf: a rule of an entry that does not compile is refused at the entry’s path', () => {
  assert.throws(
    () => ruleValidator(wrap({ type: 'object', properties: { a: { type: 'integer' } }, allOf: [{}, { 'x-kubernetes-validations': [{ rule: 'self.b == 1' }] }] })),
    (e: unknown) => e instanceof RuleDefinitionError && /^<root>\.properties\[spec\]\.allOf\[1\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.b == 1": compilation failed: .*undefined field 'b'/.test(e.problems[0]!),
  );
});

test('allOf: errors inside an entry ratchet by the nearest correlated ancestor, not by the node', () => {
  const schema = wrap({
    type: 'object',
    properties: { inner: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, allOf: [{ 'x-kubernetes-validations': [{ rule: 'self.a > 0', message: 'a' }] }] } },
  });
  const v = ruleValidator(schema)!;
  const warnings: string[] = [];
  // inner is unchanged but spec is not (b elsewhere changed): the entry's error is an error.
  const old = { spec: { inner: { a: 0 }, other: 1 } };
  assert.deepEqual(
    v.validate({ spec: { inner: { a: 0 }, other: 2 } }, old, (w) => warnings.push(w)).map((e) => e.message),
    ['spec.inner: Invalid value: "object": a'],
  );
  // spec unchanged as a whole: the error ratchets to a warning.
  assert.deepEqual(v.validate({ spec: { inner: { a: 0 }, other: 1 } }, old, (w) => warnings.push(w)), []);
  assert.equal(warnings.length, 1);
});

test('custom resources: rules under allOf are refused as Kubernetes refuses them in a structural schema', () => {
  const schema = wrap({
    type: 'object',
    properties: { a: { type: 'integer' } },
    allOf: [{ 'x-kubernetes-validations': [{ rule: 'self.a > 0' }] }, { properties: { a: { 'x-kubernetes-validations': [{ rule: 'self > 0' }] } } }, { properties: { a: { minimum: 1 } } }],
  });
  assert.ok(ruleValidator(schema));
  assert.throws(
    () => ruleValidator(schema, { nestedRules: false }),
    (e: unknown) => {
      assert.ok(e instanceof RuleDefinitionError);
      assert.deepEqual(e.problems, [
        '<root>.properties[spec].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural',
        '<root>.properties[spec].allOf[1].properties[a].x-kubernetes-validations: Forbidden: must be empty to be structural',
      ]);
      return true;
    },
  );
  // Value validations alone under allOf are structural.
  assert.equal(ruleValidator(wrap({ type: 'object', properties: { a: { type: 'integer' } }, allOf: [{ properties: { a: { minimum: 1 } } }] }), { nestedRules: false }), undefined);
});

test("rules real CRDs write: has() of an indexed element, isIP, durations compared on unbounded strings (Gateway API's shapes)", () => {
  const schema = wrap({
    type: 'object',
    properties: {
      hostnames: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 253 }, 'x-kubernetes-validations': [{ rule: 'self.all(h, !isIP(h))', message: 'hostnames must not be IP addresses' }] },
      rules: {
        type: 'array',
        maxItems: 16,
        items: {
          type: 'object',
          properties: {
            matches: { type: 'array', maxItems: 8, items: { type: 'object', properties: { path: { type: 'object', properties: { type: { type: 'string', maxLength: 16 } } } } } },
            timeouts: {
              type: 'object',
              properties: { request: { type: 'string' }, backendRequest: { type: 'string' } },
              'x-kubernetes-validations': [{ rule: "!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))", message: 'backendRequest longer than request' }],
            },
          },
          'x-kubernetes-validations': [{ rule: "size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type == 'PathPrefix'", message: 'one match must be a prefix' }],
        },
      },
    },
  });
  const v = ruleValidator(schema)!;
  assert.deepEqual(v.validate({ spec: { hostnames: ['example.com'], rules: [{ matches: [{ path: { type: 'PathPrefix' } }], timeouts: { request: '10s', backendRequest: '5s' } }, { matches: [{}] }] } }), []);
  assert.deepEqual(
    v.validate({ spec: { hostnames: ['10.0.0.1'], rules: [{ matches: [{ path: { type: 'Exact' } }], timeouts: { request: '1s', backendRequest: '5s' } }] } }).map((e) => e.message),
    ['spec.hostnames: Invalid value: "array": hostnames must not be IP addresses', 'spec.rules[0]: Invalid value: "object": one match must be a prefix', 'spec.rules[0].timeouts: Invalid value: "object": backendRequest longer than request'],
  );
});

test('under a list without maxItems the cardinality is unbounded: a rule runs as often as its smallest value fits in a request, not the product of the estimates above it', () => {
  // The Prometheus operator's AlertmanagerConfig: a cheap rule three unbounded lists down.
  const sigv4: Schema = { type: 'object', properties: { externalId: { type: 'string' }, roleArn: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: '!has(self.externalId) || has(self.roleArn)' }] };
  const schema = wrap({ type: 'object', properties: { receivers: { type: 'array', items: { type: 'object', properties: { snsConfigs: { type: 'array', items: { type: 'object', properties: { sigv4 } } } } } } } });
  const v = ruleValidator(schema)!;
  assert.equal(v.validate({ spec: { receivers: [{ snsConfigs: [{ sigv4: { externalId: 'x' } }] }] } }).length, 1);
  // Bounded lists still multiply: 100 × 1000 evaluations of a rule that costs more than 100 is over the limit.
  const bounded = wrap({ type: 'array', maxItems: 100, items: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 1000, 'x-kubernetes-validations': [{ rule: "self.contains('a') && self.contains('b')" }] } } });
  assert.throws(() => ruleValidator(bounded), (e: unknown) => e instanceof RuleDefinitionError && e.problems.some((p) => /estimated rule cost exceeds budget/.test(p)));
});
