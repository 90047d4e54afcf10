// ABAC (--authorization-mode=ABAC with --authorization-policy-file): users from a static token
// file, a policy file in every form kube-apiserver reads (v1beta1 lines in the profile's group,
// the unversioned legacy form, comments and blank lines), and the matrix of what they allow:
// user and group subjects, `*` (authenticated users only), read-only policies, namespaces,
// resources and API groups, non-resource paths exact and by `/prefix*`. A refusal is a 403 Status
// and stores nothing. Start-up errors: the file without the mode, the mode without the file, and
// a bad line, reported with its number as kube-apiserver reports it.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, testServer } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { startServer, type ServerOptions } from '../../src/server/server.ts';
import { parseArgs } from '../../src/server/cli.ts';
import { abacAuthorizer, abacGroup, parsePolicies } from '../../src/auth/authz/abac.ts';
import { namingProfile } from '../../src/naming.ts';
import { resourceAttributes } from '../../src/auth/authz/authorizer.ts';

const dir = mkdtempSync(join(tmpdir(), 'abac-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,1', 'bob-token,bob,2', 'carol-token,carol,3,"readers"', 'dave-token,dave,4', 'nobody-token,nobody,5'].join('\n') + '\n');

const V1 = (spec: object) => JSON.stringify({ apiVersion: 'abac.authorization.orch.io/v1beta1', kind: 'Policy', spec });
const policyFile = join(dir, 'policy.jsonl');
writeFileSync(
  policyFile,
  [
    '# who may do what',
    '',
    V1({ user: 'alice', namespace: 'abac-a', resource: '*', apiGroup: '*' }),
    V1({ user: 'bob', namespace: '*', resource: 'configmaps', readonly: true }),
    V1({ group: 'readers', namespace: '*', resource: '*', apiGroup: '*', readonly: true }),
    V1({ group: 'readers', nonResourcePath: '/api*', readonly: true }),
    V1({ user: '*', nonResourcePath: '/version' }),
    '   # an indented comment',
    // The legacy form: no namespace restriction given means every namespace, any API group.
    JSON.stringify({ user: 'dave', namespace: 'abac-d' }),
  ].join('\n') + '\n',
);

const server = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorization: { modes: ['ABAC'], policyFile } });
for (const name of ['abac-a', 'abac-b', 'abac-d']) assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);

const as = (token: string | undefined, method: string, path: string, body?: unknown) => withToken(server, method, path, token, body);
const cm = (name: string) => ({ metadata: { name }, data: { a: 'b' } });
const statusOf = async (token: string | undefined, method: string, path: string, body?: unknown) => (await as(token, method, path, body)).status;

describe('the authorizer', () => {
  test('a user policy for one namespace: every verb and group there, nothing elsewhere; the 403 is a Status and nothing is stored', async () => {
    assert.equal(await statusOf('alice-token', 'POST', '/api/v1/namespaces/abac-a/configmaps', cm('one')), 201);
    assert.equal(await statusOf('alice-token', 'GET', '/api/v1/namespaces/abac-a/configmaps/one'), 200);
    assert.equal(await statusOf('alice-token', 'DELETE', '/api/v1/namespaces/abac-a/configmaps/one'), 200);
    assert.equal(await statusOf('alice-token', 'GET', '/apis/coordination.orch.io/v1/namespaces/abac-a/leases'), 200);
    const r = await as('alice-token', 'POST', '/api/v1/namespaces/abac-b/configmaps', cm('two'));
    assert.equal(r.status, 403);
    const body = r.body;
    assert.equal(body.kind, 'Status');
    assert.equal(body.reason, 'Forbidden');
    assert.equal(body.code, 403);
    assert.equal(body.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "abac-b": No policy matched.');
    assert.equal((await api(server, 'GET', '/api/v1/namespaces/abac-b/configmaps/two')).status, 404);
    // Cluster-scoped requests have no namespace: a policy for one namespace does not reach them.
    assert.equal(await statusOf('alice-token', 'GET', '/api/v1/namespaces'), 403);
  });

  test('readonly: get, list and watch only; the resource must match; an empty API group is the core group only', async () => {
    assert.equal((await api(server, 'POST', '/api/v1/namespaces/abac-b/configmaps', cm('bobs'))).status, 201);
    assert.equal(await statusOf('bob-token', 'GET', '/api/v1/namespaces/abac-b/configmaps/bobs'), 200);
    assert.equal(await statusOf('bob-token', 'GET', '/api/v1/configmaps'), 200);
    assert.equal(await statusOf('bob-token', 'GET', '/api/v1/namespaces/abac-a/configmaps?watch=true&timeoutSeconds=1'), 200);
    assert.equal(await statusOf('bob-token', 'PUT', '/api/v1/namespaces/abac-b/configmaps/bobs', { ...cm('bobs'), data: { changed: 'yes' } }), 403);
    assert.equal(await statusOf('bob-token', 'DELETE', '/api/v1/namespaces/abac-b/configmaps/bobs'), 403);
    assert.equal(await statusOf('bob-token', 'POST', '/api/v1/namespaces/abac-b/configmaps', cm('new')), 403);
    assert.equal(await statusOf('bob-token', 'GET', '/api/v1/namespaces/abac-b/secrets'), 403);
    const kept = await api(server, 'GET', '/api/v1/namespaces/abac-b/configmaps/bobs');
    assert.deepEqual(kept.body.data, { a: 'b' });
    assert.equal((await api(server, 'GET', '/api/v1/namespaces/abac-b/configmaps/new')).status, 404);
  });

  test('a group subject, with wildcard namespace, resource and API group', async () => {
    assert.equal(await statusOf('carol-token', 'GET', '/api/v1/configmaps'), 200);
    assert.equal(await statusOf('carol-token', 'GET', '/apis/coordination.orch.io/v1/namespaces/abac-d/leases'), 200);
    assert.equal(await statusOf('carol-token', 'GET', '/api/v1/namespaces'), 200);
    assert.equal(await statusOf('carol-token', 'DELETE', '/api/v1/namespaces/abac-b/configmaps/bobs'), 403);
    assert.equal((await api(server, 'GET', '/api/v1/namespaces/abac-b/configmaps/bobs')).status, 200);
  });

  test('non-resource paths: exact, and a trailing * for every path with that prefix; readonly refuses other verbs', async () => {
    assert.equal(await statusOf('carol-token', 'GET', '/api'), 200);
    assert.equal(await statusOf('carol-token', 'GET', '/apis'), 200);
    assert.equal(await statusOf('carol-token', 'GET', '/openapi/v2'), 403);
    const r = await as('carol-token', 'POST', '/apis', {});
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'forbidden: User "carol" cannot post path "/apis": No policy matched.');
    // `*` is every authenticated user: /version for nobody and bob, any verb.
    assert.equal(await statusOf('nobody-token', 'GET', '/version'), 200);
    assert.equal(await statusOf('nobody-token', 'GET', '/version/'), 403);
    assert.equal(await statusOf('nobody-token', 'GET', '/api'), 403);
    assert.equal(await statusOf('nobody-token', 'GET', '/api/v1/namespaces/abac-a/configmaps'), 403);
  });

  test('`*` never matches an anonymous request', async () => {
    const r = await as(undefined, 'GET', '/version');
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'forbidden: User "system:anonymous" cannot get path "/version": No policy matched.');
  });

  test('the legacy form: any resource and API group in its namespace', async () => {
    assert.equal(await statusOf('dave-token', 'POST', '/api/v1/namespaces/abac-d/configmaps', cm('daves')), 201);
    assert.equal(await statusOf('dave-token', 'GET', '/apis/coordination.orch.io/v1/namespaces/abac-d/leases'), 200);
    assert.equal(await statusOf('dave-token', 'GET', '/api/v1/namespaces/abac-a/configmaps'), 403);
    assert.equal(await statusOf('dave-token', 'GET', '/api'), 403);
  });
});

describe('the policy file', () => {
  test('legacy lines as kube converts them: no subject is every authenticated user, no namespace and resource also every path', () => {
    const group = 'abac.authorization.orch.io';
    const warnings: string[] = [];
    const [all, sched] = parsePolicies('{"readonly": true}\n{"user":"scheduler","resource":"pods"}\n', 'p', group, (m) => warnings.push(m));
    assert.deepEqual(warnings, ['Policy file p contained unversioned rules. See docs/abac.md for ABAC file format details.']);
    assert.deepEqual(all, { user: '', group: 'system:authenticated', readonly: true, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' });
    assert.deepEqual(sched, { user: 'scheduler', group: '', readonly: false, apiGroup: '*', resource: 'pods', namespace: '*', nonResourcePath: '' });
    const a = abacAuthorizer([all!, sched!]);
    const u = { name: 'scheduler', groups: ['system:authenticated'] };
    assert.deepEqual(a.rulesFor(u, 'ns1'), {
      resourceRules: [
        { verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] },
        { verbs: ['*'], apiGroups: ['*'], resources: ['pods'] },
      ],
      nonResourceRules: [{ verbs: ['get', 'list', 'watch'], nonResourceURLs: ['*'] }],
    });
  });

  test('a v1beta1 policy with no subject matches nobody; the version and kind must be known', async () => {
    const group = abacGroup(namingProfile('kubernetes'));
    assert.equal(group, 'abac.authorization.kubernetes.io');
    assert.equal(abacGroup(namingProfile('orch')), 'abac.authorization.orch.io');
    const [p] = parsePolicies(`{"apiVersion":"${group}/v1beta1","kind":"Policy","spec":{"resource":"*","namespace":"*"}}`, 'p', group);
    const a = abacAuthorizer([p!]);
    const d = await a.authorize({ user: { name: 'x', groups: ['system:authenticated'] }, info: resourceAttributes({ verb: 'get', apiGroup: '', resource: 'pods', namespace: 'n' }) });
    assert.deepEqual(d, { decision: 'no-opinion', reason: 'No policy matched.' });
    assert.throws(
      () => parsePolicies(`\n{"apiVersion":"abac.authorization.orch.io/v1beta1","kind":"Policy","spec":{}}`, '/etc/p.jsonl', group),
      { message: `error reading policy file /etc/p.jsonl, line 2: {"apiVersion":"abac.authorization.orch.io/v1beta1","kind":"Policy","spec":{}}: no kind "Policy" is registered for version "abac.authorization.orch.io/v1beta1" in scheme "abac"` },
    );
    assert.throws(() => parsePolicies(`{"user":"a"}\n{"user": 7}`, 'f', group), { message: 'error reading policy file f, line 2: {"user": 7}: json: cannot unmarshal number into Go struct field Policy.user of type string' });
    assert.throws(() => parsePolicies(`${'x'.repeat(70_000)}\n`, 'f', group), { message: 'error reading policy file f: bufio.Scanner: token too long' });
  });

  test('start-up: the mode without the file, the file without the mode, a missing file, a bad line', async () => {
    await assert.rejects(startServer({ authorization: { modes: ['RBAC', 'ABAC'] } }), { message: "authorization-mode ABAC's authorization policy file not passed" });
    const withoutMode = parseArgs(['--authorization-mode=RBAC', `--authorization-policy-file=${policyFile}`]);
    assert.notEqual(withoutMode, 'help');
    await assert.rejects(startServer(withoutMode as ServerOptions), { message: 'cannot specify --authorization-policy-file without mode ABAC' });
    const missing = join(dir, 'missing.jsonl');
    await assert.rejects(startServer(parseArgs(['--authorization-mode=ABAC', `--authorization-policy-file=${missing}`]) as ServerOptions), { message: `open ${missing}: no such file or directory` });
    const bad = join(dir, 'bad.jsonl');
    const line = V1({ user: 'x', readonly: 'yes' });
    writeFileSync(bad, `${V1({ user: 'x' })}\n# fine so far\n${line}\n`);
    await assert.rejects(startServer(parseArgs(['--authorization-mode=ABAC', `--authorization-policy-file=${bad}`]) as ServerOptions), {
      message: `error reading policy file ${bad}, line 3: ${line}: json: cannot unmarshal string into Go struct field PolicySpec.spec.readonly of type bool`,
    });
    const broken = join(dir, 'broken.jsonl');
    writeFileSync(broken, '{bad json}\n');
    await assert.rejects(startServer(parseArgs(['--authorization-mode=ABAC', `--authorization-policy-file=${broken}`]) as ServerOptions), /^Error: error reading policy file .*broken\.jsonl, line 1: \{bad json\}: couldn't get version\/kind; json parse error: /);
  });
});
