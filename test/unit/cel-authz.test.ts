// The authorizer library of the expression language: its builders and decisions, the attributes a
// check sends (cases after Kubernetes' admission filter and cost tests), service accounts, the
// selector functions behind AuthorizeWithSelectors, the price of a check at run time and in the
// static estimate, and checks answered later (a real ABAC authorizer, whose answers are promises).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CelEnvironment } from '../../src/cel/environment.ts';
import { objectEnvironment } from '../../src/cel/uses.ts';
import { estimateCost } from '../../src/cel/estimate.ts';
import { CostBudget, DEFAULT_PER_CALL_LIMIT } from '../../src/cel/cost.ts';
import { CelCostError } from '../../src/cel/errors.ts';
import { authorizerLibrary, evaluateWithAuthorizer, withAuthorizer, type AuthorizationCheck, type CheckAuthorizer, type CheckDecision } from '../../src/cel/library/authz.ts';
import { abacAuthorizer, parsePolicies } from '../../src/auth/authz/abac.ts';
import { authorizerChain } from '../../src/auth/authz/modes.ts';

const env = new CelEnvironment({ variables: [], extensions: [authorizerLibrary()] });
const withSelectors = new CelEnvironment({ variables: [], extensions: [authorizerLibrary({ selectors: true })] });
const alice = { name: 'alice', uid: '1', groups: ['system:authenticated'] };

/** An authorizer that answers `decision` and records what it was asked. */
function scripted(answer: (c: AuthorizationCheck) => CheckDecision = () => ({ decision: 'allow' })): CheckAuthorizer & { asked: AuthorizationCheck[] } {
  const asked: AuthorizationCheck[] = [];
  return {
    asked,
    authorize(c) {
      asked.push(c);
      return answer(c);
    },
  };
}

const run = (e: CelEnvironment, expr: string, a: CheckAuthorizer, opts: { selectors?: boolean } = {}) => e.compile(expr).evaluate({ authorizer: withAuthorizer(a, alice, opts) }, { costLimit: DEFAULT_PER_CALL_LIMIT });

test('a resource check sends every attribute given, API version *, as the user of the variable', () => {
  const a = scripted();
  const r = run(env, "authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()", a);
  assert.equal(r.value, true);
  assert.equal(a.asked.length, 1);
  const { user, info } = a.asked[0]!;
  assert.deepEqual(user, alice);
  assert.deepEqual(
    { isResourceRequest: info.isResourceRequest, verb: info.verb, apiGroup: info.apiGroup, apiVersion: info.apiVersion, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name: info.name },
    { isResourceRequest: true, verb: 'create', apiGroup: 'apps', apiVersion: '*', resource: 'deployments', subresource: 'status', namespace: 'test', name: 'backend' },
  );
  // The core group is ''; unset parts are empty; the last call of a builder wins; an empty subresource or name is unset.
  const b = scripted();
  run(env, "authorizer.group('').resource('endpoints').name('x').name('').namespace('a').namespace('b').check('custom-verb').allowed()", b);
  assert.deepEqual([b.asked[0]!.info.apiGroup, b.asked[0]!.info.resource, b.asked[0]!.info.name, b.asked[0]!.info.namespace, b.asked[0]!.info.verb], ['', 'endpoints', '', 'b', 'custom-verb']);
});

test('a path check sends the path and the verb as written, no resource', () => {
  const a = scripted((c) => ({ decision: c.info.path === '/healthz' && c.info.verb === 'get' ? 'allow' : 'no-opinion' }));
  assert.equal(run(env, "authorizer.path('/healthz').check('get').allowed()", a).value, true);
  assert.equal(run(env, "authorizer.path('/healthz').check('GET').allowed()", a).value, false);
  assert.equal(run(env, "authorizer.path('healthz').check('get').allowed()", a).value, false);
  assert.equal(a.asked[0]!.info.isResourceRequest, false);
});

test('decisions: allowed only for allow; reason; errored and error when the authorizer fails', () => {
  const deny = scripted(() => ({ decision: 'deny', reason: 'fake reason' }));
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').allowed()", deny).value, false);
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').reason()", deny).value, 'fake reason');
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').errored()", deny).value, false);
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').error()", deny).value, '');
  const noOpinion = scripted(() => ({ decision: 'no-opinion' }));
  assert.equal(run(env, "authorizer.path('/x').check('get').allowed() == false && authorizer.path('/x').check('get').reason() == ''", noOpinion).value, true);
  const failing: CheckAuthorizer = {
    authorize() {
      throw new Error('fake authz error');
    },
  };
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').errored()", failing).value, true);
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').error()", failing).value, 'fake authz error');
  assert.equal(run(env, "authorizer.group('').resource('endpoints').check('create').allowed()", failing).value, false);
});

test('empty paths and resources, bad service account names fail the evaluation', () => {
  const a = scripted();
  const fails = (expr: string, message: string) => assert.throws(() => run(env, expr, a), { message }, expr);
  fails("authorizer.path('').check('get').allowed()", 'path must not be empty');
  fails("authorizer.path('  ').check('get').allowed()", 'path must not be empty');
  fails("authorizer.group('apps').resource('').check('get').allowed()", 'resource must not be empty');
  fails("authorizer.group('apps').resource(' ').check('get').allowed()", 'resource must not be empty');
  fails("authorizer.serviceAccount('not@a#valid!namespace', 'validname').group('').resource('pods').check('get').allowed()", 'Invalid service account namespace');
  fails("authorizer.serviceAccount('valid', 'invalid@*name').group('').resource('pods').check('get').allowed()", 'Invalid service account name');
  assert.equal(a.asked.length, 0);
});

test('serviceAccount: the checks are made as that service account', () => {
  const a = scripted();
  run(env, "authorizer.serviceAccount('default', 'test-serviceaccount').group('').resource('endpoints').namespace('default').name('endpoints1').check('custom-verb').allowed()", a);
  assert.deepEqual(a.asked[0]!.user, { name: 'system:serviceaccount:default:test-serviceaccount', groups: ['system:serviceaccounts', 'system:serviceaccounts:default'] });
});

test('fieldSelector and labelSelector exist with AuthorizeWithSelectors only; a selector that does not parse sends its error', () => {
  assert.throws(() => env.compile("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=mynode').check('list').allowed()"), /found no matching overload for 'fieldSelector'/);
  assert.throws(() => env.compile("authorizer.group('').resource('pods').labelSelector('app=example').check('list').allowed()"), /found no matching overload for 'labelSelector'/);
  const a = scripted();
  run(withSelectors, "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=mynode').labelSelector('app=example,tier in (a,b)').check('list').allowed()", a, { selectors: true });
  const sent = a.asked[0]!;
  assert.deepEqual(sent.fieldSelector, [{ field: 'spec.nodeName', op: '=', value: 'mynode' }]);
  assert.ok(sent.labelSelector);
  assert.deepEqual(
    sent.labelSelector.map((r) => [r.key, r.operator, [...r.values]]),
    [
      ['app', '=', ['example']],
      ['tier', 'in', ['a', 'b']],
    ],
  );
  const b = scripted();
  run(withSelectors, "authorizer.group('').resource('pods').fieldSelector('a==b==c').labelSelector('!!').check('list').allowed()", b, { selectors: true });
  assert.ok(b.asked[0]!.fieldSelectorError && !b.asked[0]!.fieldSelector);
  assert.ok(b.asked[0]!.labelSelectorError && !b.asked[0]!.labelSelector);
  // An empty selector is none.
  const c = scripted();
  run(withSelectors, "authorizer.group('').resource('pods').fieldSelector('').check('list').allowed()", c, { selectors: true });
  assert.equal(c.asked[0]!.fieldSelector, undefined);
});

test("a check costs 350 000, the library's other functions 1: at run time and estimated (Kubernetes' figures)", () => {
  const cases: [string, number][] = [
    ["authorizer.path('/healthz')", 2],
    ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')", 6],
    ["authorizer.path('/healthz').check('get').allowed()", 350_003],
    ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()", 350_007],
    ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').errored()", 350_007],
    ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').error()", 350_007],
  ];
  for (const [expr, cost] of cases) {
    const program = env.compile(expr);
    assert.deepEqual(estimateCost(program), { min: cost, max: cost }, expr);
    assert.equal(program.evaluate({ authorizer: withAuthorizer(scripted(), alice) }, { costLimit: DEFAULT_PER_CALL_LIMIT }).cost, cost, expr);
  }
  // A third check is over the per-call limit.
  const three = env.compile("authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()");
  const never = scripted(() => ({ decision: 'no-opinion' }));
  assert.throws(() => three.evaluate({ authorizer: withAuthorizer(never, alice) }, { costLimit: DEFAULT_PER_CALL_LIMIT }), CelCostError);
  assert.equal(never.asked.length, 2);
});

// A real authorizer: ABAC policies behind the mode chain (system:masters first), answering with promises.
const policies = parsePolicies(
  [
    JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: { user: 'alice', namespace: 'team', resource: 'configmaps', readonly: true } }),
    JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: { user: 'system:serviceaccount:team:builder', namespace: 'team', resource: '*', apiGroup: '*' } }),
    JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec: { group: 'system:authenticated', nonResourcePath: '/healthz', readonly: true } }),
  ].join('\n'),
  'policy',
  'abac.authorization.orch.io',
);
const chain = authorizerChain([abacAuthorizer(policies)]);

test('with a real authorizer: checks answered later are awaited, and the result is that of one evaluation', async () => {
  const objects = objectEnvironment([authorizerLibrary()]);
  const evaluate = (expr: string, options = { costLimit: DEFAULT_PER_CALL_LIMIT }) => evaluateWithAuthorizer(objects.compile(expr), { object: null, oldObject: null, authorizer: withAuthorizer(chain, alice) }, options);
  assert.deepEqual(await evaluate("authorizer.group('').resource('configmaps').namespace('team').check('list').allowed()"), { value: true, cost: 350_005 });
  assert.equal((await evaluate("authorizer.group('').resource('configmaps').namespace('team').check('delete').allowed()")).value, false);
  assert.equal((await evaluate("authorizer.group('').resource('configmaps').namespace('team').check('delete').reason()")).value, 'No policy matched.');
  assert.equal((await evaluate("authorizer.path('/healthz').check('get').allowed() && !authorizer.path('/livez').check('get').allowed()")).value, true);
  assert.equal((await evaluate("authorizer.serviceAccount('team', 'builder').group('apps').resource('deployments').namespace('team').check('delete').allowed()")).value, true);
  // Two checks whose answers come later, one after the other: 350 000 each, charged once.
  assert.deepEqual(await evaluate("authorizer.path('/healthz').check('get').allowed() && authorizer.group('').resource('configmaps').namespace('team').check('get').allowed()"), { value: true, cost: 700_008 });
  // The third is over the limit, as it would be in one evaluation.
  await assert.rejects(evaluate("authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()"), CelCostError);
  // Under a shared budget only the evaluation that gives the result is charged.
  const budget = new CostBudget(1_000_000);
  const result = await evaluateWithAuthorizer(objects.compile("authorizer.path('/healthz').check('get').allowed()"), { object: null, oldObject: null, authorizer: withAuthorizer(chain, alice) }, { budget });
  assert.deepEqual(result, { value: true, cost: 350_003 });
  assert.equal(budget.remaining, 1_000_000 - 350_003);
  // A rejected answer is an errored decision.
  const broken = withAuthorizer({ authorize: () => Promise.reject(new Error('webhook unreachable')) }, alice);
  assert.equal((await evaluateWithAuthorizer(objects.compile("authorizer.path('/x').check('get').error()"), { object: null, oldObject: null, authorizer: broken })).value, 'webhook unreachable');
});

test('the variable is not there unless an environment opts in', () => {
  assert.throws(() => objectEnvironment().compile("authorizer.path('/healthz').check('get').allowed()"), /undeclared reference to 'authorizer'/);
});
