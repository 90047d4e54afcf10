// Validation rules on kind schemas (x-kubernetes-validations) over HTTP, on a test-only kind
// (test/support/rule-test-kind.ts): each failed rule is one 422 cause with Kubernetes' reason,
// field path and wording; valid objects pass; nothing is stored when a rule fails; create,
// update, merge patch and apply all run the rules; transition rules see the old value where
// Kubernetes correlates one; the cost limit stops an expensive rule; OpenAPI publishes the rules.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTrusted, testServer } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { ITEMS_MAX_ITEMS, RULE_TEST_GROUP, ruleTestKind } from '../support/rule-test-kind.ts';
import { startServer } from '../../src/server/server.ts';
import { servedKinds } from '../../src/server/served-kinds.ts';
import { namingProfile } from '../../src/naming.ts';
import { parseFeatureGates } from '../../src/machinery/feature-gates.ts';
import { RuleDefinitionError } from '../../src/cel/rules.ts';
import type { KindDefinition } from '../../src/registry/definition.ts';

type Body = Record<string, unknown>;
interface Cause {
  reason: string;
  message: string;
  field: string;
}

const NS = 'rules';
const server = await testServer({ extraKinds: [ruleTestKind] });
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

const base = `/apis/${RULE_TEST_GROUP}/v1/namespaces/${NS}/ruletests`;
const MERGE = { 'Content-Type': 'application/merge-patch+json' };
const APPLY = { 'Content-Type': 'application/apply-patch+yaml' };

const object = (name: string, spec: Body | undefined): Body => ({ apiVersion: `${RULE_TEST_GROUP}/v1`, kind: 'RuleTest', metadata: { name }, ...(spec ? { spec } : {}) });

/** The causes of a 422, as [reason, field, message]. */
function causes(r: { status: number; body: any }): [string, string, string][] {
  assert.equal(r.status, 422, JSON.stringify(r.body));
  assert.equal(r.body.reason, 'Invalid');
  return (r.body.details.causes as Cause[]).map((c) => [c.reason, c.field, c.message]);
}

/** Causes in a fixed order: Kubernetes visits an object's fields in no particular order. */
const sorted = (cs: [string, string, string][]) => [...cs].sort((a, b) => a[1].localeCompare(b[1]) || a[2].localeCompare(b[2]));

async function create(name: string, spec: Body | undefined) {
  return api(server, 'POST', base, object(name, spec));
}

describe('create', () => {
  test('a valid object passes every rule', async () => {
    const spec = { name: 'web', replicas: 2, maxReplicas: 3, port: 'http', ports: [{ name: 'a', port: 80 }], tags: ['x', 'y'], steps: ['a', 'b'], labels: { 'x-app': 'web' }, stage: 'alpha', note: 'fine', items: ['a', 'b'] };
    const r = await create('valid', spec);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.spec, spec);
  });

  test('a large body of a kind the embedder added is prepared inline, not sent to workers that do not know the kind', async () => {
    const spec = { name: 'web', replicas: 2, maxReplicas: 3, port: 'http', ports: [{ name: 'a', port: 80 }], tags: ['x'], steps: ['a'], labels: { 'x-app': 'web' }, stage: 'alpha', note: 'fine', items: ['a'] };
    const body = { ...object('large', spec), metadata: { name: 'large', annotations: { pad: 'x'.repeat(200_000) } } };
    const r = await api(server, 'POST', base, body);
    assert.equal(r.status, 201, r.text);
    const patched = await api(server, 'PATCH', `${base}/large`, { spec: { replicas: 9 } }, MERGE);
    assert.equal(patched.status, 422, patched.text);
    assert.match(patched.text, /replicas 9 exceeds 3/);
  });

  test('a rule at the resource root, reported at its fieldPath with reason Required', async () => {
    const r = await create('nospec', undefined);
    assert.deepEqual(causes(r), [['FieldValueRequired', 'spec', 'Required value: spec is required']]);
    assert.equal(r.body.message, `RuleTest.${RULE_TEST_GROUP} "nospec" is invalid: spec: Required value: spec is required`);
    assert.equal((await api(server, 'GET', `${base}/nospec`)).status, 404);
  });

  test('a rule at the root itself: the field is <nil>, as Kubernetes prints its root path', async () => {
    const r = await create('forbidden', { name: 'ok' });
    assert.deepEqual(causes(r), [['FieldValueInvalid', '<nil>', 'Invalid value: "object": this name is not allowed']]);
    assert.equal(r.body.message, `RuleTest.${RULE_TEST_GROUP} "forbidden" is invalid: <nil>: Invalid value: "object": this name is not allowed`);
  });

  test('every failed rule is one cause, at its node, in Kubernetes’ words; nothing is stored', async () => {
    const r = await create('bad', {
      name: 'ABCDEFGHIJKLMNOP',
      replicas: 5,
      maxReplicas: 3,
      divisor: 0,
      port: -1,
      ports: [{ name: 'a', port: 0 }, { name: 'b', port: 1 }, { name: 'c', port: 1 }, { name: 'd', port: 1 }],
      tags: ['reserved'],
      steps: ['a', 'a'],
      labels: { y: '' },
      stage: 'beta',
      note: 'bad',
    });
    assert.deepEqual(causes(r), [
      // A rule on spec, reported at its fieldPath, its message from messageExpression.
      ['FieldValueInvalid', 'spec.replicas', 'Invalid value: "object": replicas 5 exceeds 3'],
      // Strings: the rule's message, else `failed rule: <rule>`.
      ['FieldValueInvalid', 'spec.name', 'Invalid value: "string": must be at most 10 characters'],
      ['FieldValueInvalid', 'spec.name', `Invalid value: "string": failed rule: self.matches('^[a-z]+$')`],
      // A rule that fails to evaluate.
      ['FieldValueInvalid', 'spec.divisor', 'Invalid value: "integer": division by zero evaluating rule: 10 / self >= 1'],
      // Int-or-string has no schema type: the value shown is empty.
      ['FieldValueInvalid', 'spec.port', 'Invalid value: "": must be a positive number or a name'],
      // A map-type list and its items (the item rule with a fieldPath).
      ['FieldValueForbidden', 'spec.ports', 'Forbidden: at most 3 ports'],
      ['FieldValueInvalid', 'spec.ports[0].port', 'Invalid value: "object": port out of range'],
      // A set-type list's items.
      ['FieldValueForbidden', 'spec.tags[0]', 'Forbidden: tag is reserved'],
      // reason Duplicate shows the schema type, not a message.
      ['FieldValueDuplicate', 'spec.steps', 'Duplicate value: "array"'],
      // A map and its values (keys in brackets).
      ['FieldValueInvalid', 'spec.labels', 'Invalid value: "object": keys must start with x-, found y'],
      ['FieldValueInvalid', 'spec.labels[y]', 'Invalid value: "string": must not be empty'],
      // optionalOldSelf: the transition rule runs on create with oldSelf none.
      ['FieldValueInvalid', 'spec.stage', 'Invalid value: "string": stage must start at alpha'],
      // An empty messageExpression result falls back to the message.
      ['FieldValueInvalid', 'spec.note', 'Invalid value: "string": note must not be bad'],
    ]);
    assert.match(r.body.message, /^RuleTest\.rules\.example\.com "bad" is invalid: \[spec\.replicas: Invalid value: "object": replicas 5 exceeds 3, spec\.name: /);
    assert.equal((await api(server, 'GET', `${base}/bad`)).status, 404);
  });

  test('when other validation finds the object malformed, the rules do not run and one error says so', async () => {
    const body = object('x', { name: 'BAD' });
    delete (body.metadata as Body).name;
    const r = await api(server, 'POST', base, body);
    const cs = causes(r);
    assert.equal(cs[0]![0], 'FieldValueRequired');
    assert.equal(cs[0]![1], 'metadata.name');
    assert.deepEqual(cs.slice(1), [['FieldValueInvalid', '<nil>', 'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation']]);
  });

  test('errors of other validation that do not block (an invalid name) let the rules run, in the same 422', async () => {
    const r = await api(server, 'POST', base, object('BAD_NAME', { name: 'ABC' }));
    assert.deepEqual(
      causes(r).map(([reason, field]) => [reason, field]),
      [
        ['FieldValueInvalid', 'metadata.name'],
        ['FieldValueInvalid', 'spec.name'],
      ],
    );
  });

  test('allOf: the rules of each entry run at the node, those of its properties at theirs', async () => {
    assert.equal((await create('window-ok', { window: { start: 2, end: 10 } })).status, 201);
    assert.deepEqual(sorted(causes(await create('window-bad', { window: { start: 7, end: 4 } }))), [
      ['FieldValueInvalid', 'spec.window', 'Invalid value: "object": start must not be after end'],
      ['FieldValueInvalid', 'spec.window.start', 'Invalid value: "integer": start must be even'],
    ]);
  });

  test('allOf: value validations of an entry are checked like the node’s own', async () => {
    assert.deepEqual(causes(await create('window-range', { window: { start: -2, end: 200 } })), [
      ['FieldValueInvalid', 'spec.window.start', 'Invalid value: -2: must be greater than or equal to 0'],
      ['FieldValueInvalid', 'spec.window.end', 'Invalid value: 200: must be less than or equal to 100'],
    ]);
  });

  test('int-or-string: numbers and names', async () => {
    assert.equal((await create('port-int', { port: 8080 })).status, 201);
    assert.equal((await create('port-name', { port: 'http' })).status, 201);
    assert.deepEqual(causes(await create('port-upper', { port: 'HTTP' })), [['FieldValueInvalid', 'spec.port', 'Invalid value: "": must be a positive number or a name']]);
  });

  test('transition rules without optionalOldSelf do not run on create', async () => {
    const r = await create('fresh', { mode: 'a', frozen: { k: 'v' }, ports: [{ name: 'a', port: 1 }] });
    assert.equal(r.status, 201, r.text);
  });

  test('a rule over its cost limit stops validation with Kubernetes’ error', async () => {
    const r = await create('costly', { items: Array.from({ length: ITEMS_MAX_ITEMS }, (_, i) => `s${i}`) });
    assert.deepEqual(causes(r), [
      [
        'FieldValueInvalid',
        'spec.items',
        "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, self.all(z, x != y || y == z || true)))",
      ],
    ]);
    assert.equal((await api(server, 'GET', `${base}/costly`)).status, 404);
  });
});

describe('update, patch and apply run the rules', () => {
  const spec = { mode: 'a', stage: 'alpha', frozen: { a: '1' }, ports: [{ name: 'a', port: 1 }], tags: ['p'] };

  test('update (PUT): transition rules see the old value where it is correlated', async () => {
    const created = await create('upd', spec);
    assert.equal(created.status, 201, created.text);
    const put = (s: Body, rv: string) => api(server, 'PUT', `${base}/upd`, { ...object('upd', s), metadata: { name: 'upd', resourceVersion: rv } });
    // Forward stage, a new frozen key, a new port name, a changed set item: all allowed.
    const ok = await put({ ...spec, stage: 'beta', frozen: { a: '1', b: '2' }, ports: [{ name: 'a', port: 1 }, { name: 'b', port: 9 }], tags: ['q'] }, created.body.metadata.resourceVersion);
    assert.equal(ok.status, 200, ok.text);
    const rv = ok.body.metadata.resourceVersion as string;
    const r = await put({ ...spec, mode: 'b', stage: 'alpha', frozen: { a: '2', b: '2' }, ports: [{ name: 'b', port: 9 }, { name: 'a', port: 2 }] }, rv);
    assert.deepEqual(sorted(causes(r)), sorted([
      ['FieldValueInvalid', 'spec.mode', 'Invalid value: "string": mode is immutable'],
      // Map-list items are matched by key, not position.
      ['FieldValueInvalid', 'spec.ports[1]', 'Invalid value: "object": port is immutable'],
      ['FieldValueInvalid', 'spec.frozen[a]', 'Invalid value: "string": values are immutable'],
      ['FieldValueInvalid', 'spec.stage', 'Invalid value: "string": stage may not go back from beta'],
    ]));
    const stored = await api(server, 'GET', `${base}/upd`);
    assert.equal(stored.body.metadata.resourceVersion, rv);
    assert.equal(stored.body.spec.mode, 'a');
  });

  test('merge patch', async () => {
    assert.equal((await create('patched', spec)).status, 201);
    const r = await api(server, 'PATCH', `${base}/patched`, { spec: { name: 'UPPER', mode: 'b' } }, MERGE);
    assert.deepEqual(sorted(causes(r)), [
      ['FieldValueInvalid', 'spec.mode', 'Invalid value: "string": mode is immutable'],
      ['FieldValueInvalid', 'spec.name', `Invalid value: "string": failed rule: self.matches('^[a-z]+$')`],
    ]);
    assert.equal((await api(server, 'GET', `${base}/patched`)).body.spec.name, undefined);
    const ok = await api(server, 'PATCH', `${base}/patched`, { spec: { name: 'lower' } }, MERGE);
    assert.equal(ok.status, 200, ok.text);
  });

  test('server-side apply, on create and on update', async () => {
    const apply = (s: Body) => api(server, 'PATCH', `${base}/applied?fieldManager=tester`, object('applied', s), APPLY);
    assert.deepEqual(causes(await apply({ tags: ['reserved'] })), [['FieldValueForbidden', 'spec.tags[0]', 'Forbidden: tag is reserved']]);
    assert.equal((await api(server, 'GET', `${base}/applied`)).status, 404);
    const created = await apply(spec);
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(causes(await apply({ ...spec, mode: 'z' })), [['FieldValueInvalid', 'spec.mode', 'Invalid value: "string": mode is immutable']]);
    assert.equal((await api(server, 'GET', `${base}/applied`)).body.spec.mode, 'a');
  });

  test('dry run runs the rules too', async () => {
    const r = await api(server, 'POST', `${base}?dryRun=All`, object('dry', { name: 'NO' }));
    assert.deepEqual(causes(r), [['FieldValueInvalid', 'spec.name', `Invalid value: "string": failed rule: self.matches('^[a-z]+$')`]]);
  });
});

describe('ratcheting', () => {
  test('a value stored before its rule existed does not block other changes; changing it does', async () => {
    const dataDir = tempDir('rules-ratchet');
    // The same kind without the rules on spec.name: an upper-case name is stored.
    const specSchema = (ruleTestKind.schema.properties!.spec)!;
    const lax: KindDefinition = {
      ...ruleTestKind,
      schema: { ...ruleTestKind.schema, properties: { ...ruleTestKind.schema.properties, spec: { ...specSchema, properties: { ...specSchema.properties, name: { type: 'string' } } } } },
    };
    const before = await startTrusted({ dataDir, extraKinds: [lax], log: () => {} });
    try {
      assert.equal((await api(before, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
      assert.equal((await api(before, 'POST', `${base}`, object('old', { name: 'UPPER' }))).status, 201);
    } finally {
      await before.close();
    }
    const after = await startTrusted({ dataDir, extraKinds: [ruleTestKind], log: () => {} });
    try {
      const ok = await api(after, 'PATCH', `${base}/old`, { spec: { replicas: 1 } }, MERGE);
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.headers.get('warning'), `299 - "spec.name: Invalid value: \\"string\\": failed rule: self.matches('^[a-z]+$')"`);
      const changed = await api(after, 'PATCH', `${base}/old`, { spec: { name: 'OTHER' } }, MERGE);
      assert.deepEqual(causes(changed), [['FieldValueInvalid', 'spec.name', `Invalid value: "string": failed rule: self.matches('^[a-z]+$')`]]);
    } finally {
      await after.close();
    }
  });
});

describe('definition', () => {
  test('OpenAPI v3 and v2 publish the rules', async () => {
    const index = (await api(server, 'GET', '/openapi/v3')).body as { paths: Record<string, { serverRelativeURL: string }> };
    const doc = (await api(server, 'GET', index.paths[`apis/${RULE_TEST_GROUP}/v1`]!.serverRelativeURL)).body;
    const text = JSON.stringify(doc);
    assert.ok(text.includes('"x-kubernetes-validations":[{"rule":"has(self.spec)"'), 'root rule in v3');
    assert.ok(text.includes('"optionalOldSelf":true'), 'optionalOldSelf in v3');
    const v2 = await api(server, 'GET', '/openapi/v2', undefined, { Accept: 'application/json' });
    assert.ok(v2.text.includes('"rule":"self.size() <= 3"'), 'list rule in v2');
  });

  test('the test kind is not served by default', () => {
    const naming = namingProfile('orch');
    const defs = servedKinds({ naming, featureGates: parseFeatureGates(undefined), runtimeConfig: undefined, storageComponent: 'etcd-0', storage: () => undefined });
    assert.ok(!defs.some((d) => d.group === RULE_TEST_GROUP));
    const extra = servedKinds({ naming, featureGates: parseFeatureGates(undefined), runtimeConfig: undefined, storageComponent: 'etcd-0', storage: () => undefined, extraKinds: [ruleTestKind] });
    assert.ok(extra.some((d) => d.group === RULE_TEST_GROUP));
  });

  test('a definition with a bad rule stops the server at start-up', async () => {
    const bad: KindDefinition = {
      ...ruleTestKind,
      group: 'bad.example.com',
      schema: { ...ruleTestKind.schema, 'x-kubernetes-validations': [{ rule: 'self.nope == 1' }, { rule: '1 + 1' }, { rule: 'true', fieldPath: '.missing' }] },
    };
    await assert.rejects(
      startServer({ extraKinds: [bad], log: () => {} }),
      (e: unknown) => {
        assert.ok(e instanceof RuleDefinitionError);
        assert.equal(e.problems.length, 3);
        assert.match(e.problems[0]!, /^<root>\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.nope == 1": compilation failed: ERROR: <input>:1:\d+: undefined field 'nope'/);
        assert.equal(e.problems[1], '<root>.x-kubernetes-validations[1].rule: Invalid value: "1 + 1": cel expression must evaluate to a bool');
        assert.equal(e.problems[2], '<root>.x-kubernetes-validations[2].fieldPath: Invalid value: ".missing": fieldPath must be a valid path: does not refer to a valid field');
        return true;
      },
    );
  });
});
