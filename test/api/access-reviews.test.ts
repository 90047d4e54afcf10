// The access reviews of the authorization group over HTTP, with RBAC: SelfSubjectAccessReview,
// SubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview, asked by users from a
// static token file and from client certificates. Allowed, no opinion (allowed false, no denied),
// an authorizer's deny (denied true), Kubernetes' validation (422 with field paths), the namespace
// checks of the local review, the selectors of a review, the 403 of a user who may not review
// others, the Kubernetes spelling of the group in the orch profile, and protobuf.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testServer, waitFor } from '../support/server.ts';
import { withToken } from '../support/identity.ts';
import { issueCert, makeCa, type TestCert } from '../support/certs.ts';
import { decodeObject, encodeObject } from '../../src/wire/protobuf/index.ts';
import type { Authorizer } from '../../src/auth/authz/authorizer.ts';

const dir = mkdtempSync(join(tmpdir(), 'access-reviews-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,1,"team"', 'bob-token,bob,2', 'auditor-token,auditor,3'].join('\n') + '\n');
const ca = await makeCa('review-clients');
const caFile = join(dir, 'clients.crt');
writeFileSync(caFile, ca.cert);
const carol = await issueCert(ca, { subject: 'CN=carol, O=readers' });
// With a client CA file of its own the server trusts that CA alone: the administrator is one of its users.
const root = await issueCert(ca, { subject: 'CN=root, O=system:masters' });

const server = await testServer({ authentication: { tokenAuthFile: tokenFile, clientCaFile: caFile }, authorization: { modes: ['RBAC'] } });
const G = 'authorization.orch.io';
const AUTHZ = `/apis/${G}/v1`;
const RBAC = '/apis/rbac.authorization.orch.io/v1';
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.orch.io', name });

let n = 0;
async function namespace(): Promise<string> {
  const name = `reviews-${++n}`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
  return name;
}

const as = (token: string, method: string, path: string, body?: unknown) => withToken(server, method, path, token, body);

/** A request with a client certificate made in the test (and no token); a Buffer body goes as is. */
function withCert(c: TestCert, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; text: string; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const type = data === undefined || Buffer.isBuffer(body) ? {} : { 'Content-Type': 'application/json' };
    const req = request(server.url + path, { method, agent: false, ca: server.ca, cert: c.cert, key: c.key, headers: { ...type, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const text = bytes.toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text, bytes });
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** As the administrator (system:masters). */
const api = (_server: unknown, method: string, path: string, body?: unknown) => withCert(root, method, path, body);

const ssar = (resourceAttributes: Record<string, unknown>) => ({ apiVersion: `${G}/v1`, kind: 'SelfSubjectAccessReview', spec: { resourceAttributes } });
const sar = (spec: Record<string, unknown>) => ({ apiVersion: `${G}/v1`, kind: 'SubjectAccessReview', spec });

/** Grants alice get/list of configmaps in `ns` and waits for the index to have it. */
async function aliceReadsConfigMaps(ns: string): Promise<void> {
  assert.equal((await api(server, 'POST', `${RBAC}/namespaces/${ns}/roles`, { metadata: { name: 'cm' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }] })).status, 201);
  assert.equal((await api(server, 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'alice-cm' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'cm' }, subjects: [user('alice')] })).status, 201);
  await waitFor('alice may list configmaps', async () => (await as('alice-token', 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status === 200, 5_000);
}

describe('SelfSubjectAccessReview', () => {
  test('allowed with the binding that allows; no opinion is allowed false without denied', async () => {
    const ns = await namespace();
    await aliceReadsConfigMaps(ns);
    const yes = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ namespace: ns, verb: 'list', resource: 'configmaps' }));
    assert.equal(yes.status, 201, JSON.stringify(yes.body));
    assert.equal(yes.body.kind, 'SelfSubjectAccessReview');
    assert.deepEqual(yes.body.spec, { resourceAttributes: { namespace: ns, verb: 'list', resource: 'configmaps' } });
    assert.deepEqual(yes.body.status, { allowed: true, reason: `RBAC: allowed by RoleBinding "alice-cm/${ns}" of Role "cm" to User "alice"` });
    const no = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ namespace: ns, verb: 'delete', resource: 'configmaps' }));
    assert.equal(no.status, 201);
    assert.deepEqual(no.body.status, { allowed: false });
    // A non-resource path.
    const path = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, { kind: 'SelfSubjectAccessReview', apiVersion: `${G}/v1`, spec: { nonResourceAttributes: { path: '/version', verb: 'get' } } });
    assert.equal(path.body.status.allowed, true);
    assert.match(path.body.status.reason, /ClusterRoleBinding "system:public-info-viewer"|ClusterRoleBinding "system:discovery"/);
  });

  test('a client-certificate user is allowed through a group binding', async () => {
    const ns = await namespace();
    const name = `readers-${ns}`;
    assert.equal((await api(server, 'POST', `${RBAC}/clusterrolebindings`, { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.orch.io', name: 'readers' }] })).status, 201);
    await waitFor('carol may list configmaps', async () => (await withCert(carol, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).status === 200, 5_000);
    const r = await withCert(carol, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ namespace: ns, verb: 'watch', resource: 'configmaps' }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.status, { allowed: true, reason: `RBAC: allowed by ClusterRoleBinding "${name}" of ClusterRole "view" to Group "readers"` });
    const secrets = await withCert(carol, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ namespace: ns, verb: 'get', resource: 'secrets' }));
    assert.deepEqual(secrets.body.status, { allowed: false });
  });

  test('validation: exactly one of resourceAttributes and nonResourceAttributes; metadata must be empty; nothing kept', async () => {
    const neither = await as('bob-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, { kind: 'SelfSubjectAccessReview', apiVersion: `${G}/v1`, spec: {} });
    assert.equal(neither.status, 422);
    assert.equal(neither.body.reason, 'Invalid');
    assert.equal(neither.body.message, `SelfSubjectAccessReview.${G} "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified`);
    const both = await as('bob-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: `${G}/v1`,
      metadata: { name: 'x' },
      spec: { resourceAttributes: { verb: 'get', resource: 'configmaps' }, nonResourceAttributes: { path: '/x', verb: 'get' } },
    });
    assert.equal(both.status, 422);
    assert.deepEqual(
      both.body.details.causes.map((c: { field: string }) => c.field),
      ['spec.nonResourceAttributes', 'metadata'],
    );
    assert.match(both.body.message, /spec\.nonResourceAttributes: Invalid value: \{"Path":"\/x","Verb":"get"\}: cannot be specified in combination with resourceAttributes/);
    assert.match(both.body.message, /metadata: Invalid value: .*: must be empty/);
    // Reviews are never stored: reading them back is not a thing.
    assert.equal((await api(server, 'GET', `${AUTHZ}/selfsubjectaccessreviews`)).status, 405);
  });

  test('selectors: accepted; both forms at once is invalid; an unreadable one goes into evaluationError', async () => {
    const ns = await namespace();
    await aliceReadsConfigMaps(ns);
    const ask = (extra: Record<string, unknown>) => as('alice-token', 'POST', `${AUTHZ}/selfsubjectaccessreviews`, ssar({ namespace: ns, verb: 'list', resource: 'configmaps', ...extra }));
    const ok = await ask({ fieldSelector: { rawSelector: 'metadata.name=a' }, labelSelector: { requirements: [{ key: 'app', operator: 'In', values: ['x'] }] } });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.status.allowed, true);
    assert.equal(ok.body.status.evaluationError, undefined);
    const bad = await ask({ fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'Exists' }] }, labelSelector: { rawSelector: 'a in (' } });
    assert.equal(bad.status, 201);
    assert.deepEqual(bad.body.status, {
      allowed: true,
      reason: `RBAC: allowed by RoleBinding "alice-cm/${ns}" of Role "cm" to User "alice"`,
      evaluationError: 'spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector ignored due to parse error',
    });
    const partly = await ask({ fieldSelector: { requirements: [{ key: 'metadata.name', operator: 'In', values: ['a'] }, { key: 'x', operator: 'Gt', values: ['1'] }] } });
    assert.equal(partly.body.status.evaluationError, 'spec.resourceAttributes.fieldSelector partially ignored due to parse error');
    const invalid = await ask({ fieldSelector: { rawSelector: 'a=b', requirements: [{ key: 'a', operator: 'In', values: ['b'] }] }, labelSelector: {} });
    assert.equal(invalid.status, 422);
    assert.deepEqual(
      invalid.body.details.causes.map((c: { message: string }) => c.message),
      [
        'Invalid value: "a=b": may not specified at the same time as requirements',
        'Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required',
      ],
    );
  });
});

describe('SubjectAccessReview', () => {
  test('asks for another user or group; the answer is the authorizer chain’s', async () => {
    const ns = await namespace();
    await aliceReadsConfigMaps(ns);
    const ask = async (spec: Record<string, unknown>) => {
      const r = await api(server, 'POST', `${AUTHZ}/subjectaccessreviews`, sar(spec));
      assert.equal(r.status, 201, r.text);
      return r.body;
    };
    const yes = await ask({ user: 'alice', resourceAttributes: { namespace: ns, verb: 'get', resource: 'configmaps', name: 'x' } });
    assert.deepEqual(yes.spec, { user: 'alice', resourceAttributes: { namespace: ns, verb: 'get', resource: 'configmaps', name: 'x' } });
    assert.equal(yes.status.allowed, true);
    assert.deepEqual((await ask({ user: 'bob', resourceAttributes: { namespace: ns, verb: 'get', resource: 'configmaps' } })).status, { allowed: false });
    // By group alone, and a system:masters member is always allowed.
    assert.equal((await ask({ groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'namespaces' } })).status.allowed, true);
    assert.equal((await ask({ user: 'x', groups: ['system:authenticated'], nonResourceAttributes: { path: '/healthz', verb: 'get' } })).status.allowed, true);
    assert.deepEqual((await ask({ user: 'x', nonResourceAttributes: { path: '/metrics', verb: 'get' } })).status, { allowed: false });
  });

  test('a user or a group is required (422); a user who may not create reviews gets 403 and learns nothing', async () => {
    const none = await api(server, 'POST', `${AUTHZ}/subjectaccessreviews`, sar({ resourceAttributes: { verb: 'get', resource: 'pods' } }));
    assert.equal(none.status, 422);
    assert.equal(none.body.message, `SubjectAccessReview.${G} "" is invalid: spec.user: Invalid value: "": at least one of user or group must be specified`);
    assert.deepEqual(none.body.details, { group: G, kind: 'SubjectAccessReview', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified', field: 'spec.user' }] });
    const forbidden = await as('bob-token', 'POST', `${AUTHZ}/subjectaccessreviews`, sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }));
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.message, `subjectaccessreviews.${G} is forbidden: User "bob" cannot create resource "subjectaccessreviews" in API group "${G}" at the cluster scope`);
    const cert = await withCert(carol, 'POST', `${AUTHZ}/subjectaccessreviews`, sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }));
    assert.equal(cert.status, 403);
  });

  test('a user granted create of subjectaccessreviews may ask', async () => {
    assert.equal((await api(server, 'POST', `${RBAC}/clusterroles`, { metadata: { name: 'reviewer' }, rules: [{ apiGroups: [G], resources: ['subjectaccessreviews'], verbs: ['create'] }] })).status, 201);
    assert.equal((await api(server, 'POST', `${RBAC}/clusterrolebindings`, { metadata: { name: 'auditor-reviews' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'ClusterRole', name: 'reviewer' }, subjects: [user('auditor')] })).status, 201);
    const body = sar({ user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } });
    await waitFor('auditor may review', async () => (await as('auditor-token', 'POST', `${AUTHZ}/subjectaccessreviews`, body)).status === 201, 5_000);
    assert.deepEqual((await as('auditor-token', 'POST', `${AUTHZ}/subjectaccessreviews`, body)).body.status, { allowed: false });
  });
});

describe('LocalSubjectAccessReview', () => {
  test('the namespace of the path, of metadata and of the attributes must agree', async () => {
    const ns = await namespace();
    await aliceReadsConfigMaps(ns);
    const path = `${AUTHZ}/namespaces/${ns}/localsubjectaccessreviews`;
    const body = (attrNs: string, metaNs?: string) => ({
      apiVersion: `${G}/v1`,
      kind: 'LocalSubjectAccessReview',
      ...(metaNs ? { metadata: { namespace: metaNs } } : {}),
      spec: { user: 'alice', resourceAttributes: { namespace: attrNs, verb: 'list', resource: 'configmaps' } },
    });
    const ok = await api(server, 'POST', path, body(ns));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.metadata.namespace, ns);
    assert.equal(ok.body.status.allowed, true);
    const mismatch = await api(server, 'POST', path, body('default'));
    assert.equal(mismatch.status, 422);
    assert.equal(mismatch.body.message, `LocalSubjectAccessReview.${G} "" is invalid: spec.resourceAttributes.namespace: Invalid value: "default": must match metadata.namespace`);
    const other = await api(server, 'POST', path, body('default', 'default'));
    assert.equal(other.status, 400);
    assert.equal(other.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
    const nonResource = await api(server, 'POST', path, { apiVersion: `${G}/v1`, kind: 'LocalSubjectAccessReview', spec: { user: 'alice', nonResourceAttributes: { path: '/x', verb: 'get' } } });
    assert.equal(nonResource.status, 422);
    assert.match(nonResource.body.message, /spec\.nonResourceAttributes: Invalid value: \{"Path":"\/x","Verb":"get"\}: disallowed on this kind of request/);
    // Local reviews are for namespace administrators, not every user.
    const alice = await as('alice-token', 'POST', path, body(ns));
    assert.equal(alice.status, 403);
    assert.equal(alice.body.message, `localsubjectaccessreviews.${G} is forbidden: User "alice" cannot create resource "localsubjectaccessreviews" in API group "${G}" in the namespace "${ns}"`);
  });
});

describe('SelfSubjectRulesReview', () => {
  test('the rules of the user’s bindings in the namespace, complete under RBAC', async () => {
    const ns = await namespace();
    await aliceReadsConfigMaps(ns);
    const r = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: ns } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.status.incomplete, false);
    assert.equal(r.body.status.evaluationError, undefined);
    assert.ok(r.body.status.resourceRules.some((x: { resources?: string[] }) => x.resources?.includes('configmaps')), JSON.stringify(r.body.status));
    assert.ok(r.body.status.resourceRules.some((x: { resources?: string[] }) => x.resources?.includes('selfsubjectrulesreviews')));
    assert.ok(r.body.status.nonResourceRules.some((x: { nonResourceURLs?: string[] }) => x.nonResourceURLs?.includes('/version')));
    // Another namespace has only the cluster-wide rules.
    const elsewhere = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } });
    assert.ok(!elsewhere.body.status.resourceRules.some((x: { resources?: string[] }) => x.resources?.includes('configmaps')));
    const missing = await as('alice-token', 'POST', `${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: {} });
    assert.deepEqual([missing.status, missing.body.reason, missing.body.message], [400, 'BadRequest', 'no namespace on request']);
  });

  test('a binding to a missing role is an evaluation error', async () => {
    const ns = await namespace();
    assert.equal((await api(server, 'POST', `${RBAC}/namespaces/${ns}/rolebindings`, { metadata: { name: 'dangling' }, roleRef: { apiGroup: 'rbac.authorization.orch.io', kind: 'Role', name: 'gone' }, subjects: [user('bob')] })).status, 201);
    const ask = () => as('bob-token', 'POST', `${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: ns } });
    await waitFor('the binding is indexed', async () => (await ask()).body.status?.evaluationError !== undefined, 5_000);
    const r = await ask();
    assert.equal(r.body.status.evaluationError, 'role.rbac.authorization.orch.io "gone" not found');
    assert.equal(r.body.status.incomplete, false);
  });
});

describe('wire', () => {
  test('the Kubernetes spelling answers too, unlisted in discovery; basic-user may use it', async () => {
    const r = await as('bob-token', 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.apiVersion, 'authorization.k8s.io/v1');
    assert.deepEqual(r.body.status, { allowed: false });
    const groups = (await api(server, 'GET', '/apis')).body.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes(G));
    assert.ok(!groups.includes('authorization.k8s.io'));
    const resources = (await api(server, 'GET', AUTHZ)).body.resources.map((x: { name: string; namespaced: boolean; verbs: string[] }) => [x.name, x.namespaced, x.verbs]);
    assert.deepEqual(resources, [
      ['localsubjectaccessreviews', true, ['create']],
      ['selfsubjectaccessreviews', false, ['create']],
      ['selfsubjectrulesreviews', false, ['create']],
      ['subjectaccessreviews', false, ['create']],
    ]);
  });

  test('protobuf in and out', async () => {
    const PB = 'application/vnd.orch.protobuf';
    const review = { apiVersion: `${G}/v1`, kind: 'SubjectAccessReview', metadata: {}, spec: { user: 'x', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', fieldSelector: { requirements: [{ key: 'a', operator: 'In', values: ['b'] }] } } } };
    const res = await withCert(root, 'POST', `${AUTHZ}/subjectaccessreviews`, Buffer.from(encodeObject(review as never)), { 'Content-Type': PB, Accept: PB });
    assert.equal(res.status, 201);
    const answer = decodeObject(res.bytes) as unknown as { spec: unknown; status: unknown };
    assert.deepEqual(answer.spec, review.spec);
    assert.deepEqual(answer.status, { allowed: true });
    const rules = await withCert(root, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } }, { Accept: PB });
    const decoded = decodeObject(rules.bytes) as unknown as { status: { incomplete: boolean; resourceRules: unknown[] } };
    assert.equal(decoded.status.incomplete, false);
    assert.ok(decoded.status.resourceRules.length > 0);
  });
});

describe('other authorizers', () => {
  test('a deny sets denied; an authorizer that cannot list rules makes the rules review incomplete', async () => {
    const denying: Authorizer = {
      async authorize({ user, info }) {
        if (info.resource === 'secrets') return { decision: 'deny', reason: 'secrets are off limits' };
        return user.name === 'alice' || user.groups.includes('system:masters') ? { decision: 'allow' } : { decision: 'no-opinion' };
      },
    };
    const s = await testServer({ authentication: { tokenAuthFile: tokenFile }, authorizer: denying });
    const ask = (resource: string) => withToken(s, 'POST', `${AUTHZ}/selfsubjectaccessreviews`, 'alice-token', ssar({ verb: 'get', resource }));
    assert.deepEqual((await ask('secrets')).body.status, { allowed: false, denied: true, reason: 'secrets are off limits' });
    assert.deepEqual((await ask('configmaps')).body.status, { allowed: true });
    const rules = await withToken(s, 'POST', `${AUTHZ}/selfsubjectrulesreviews`, 'alice-token', { apiVersion: `${G}/v1`, kind: 'SelfSubjectRulesReview', spec: { namespace: 'default' } });
    assert.deepEqual(rules.body.status, { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'the authorizer does not support user rule resolution' });
  });
});
