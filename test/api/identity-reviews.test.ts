// The identity endpoints over HTTPS: SelfSubjectReview (who the request is, after impersonation)
// at `authentication.orch.io` and, unlisted, at the `authentication.k8s.io` path kubectl
// hard-codes for `auth whoami`; TokenReview (whom a bearer token authenticates, through the token
// authenticators only, for the asked or the server's audiences). Both are create-only and store
// nothing; bad requests are Status errors.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testServer } from '../support/server.ts';
import { httpsRequest as https } from '../support/https.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { loadClientNode } from '../support/client-node.ts';
import type { Authorizer } from '../../src/auth/authz/authorizer.ts';

const dir = tempDir('identity-reviews');
const tokenFile = join(dir, 'tokens.csv');
writeFileSync(tokenFile, ['alice-token,alice,1001,"dev,ops"', 'bob-token,bob,1002'].join('\n') + '\n');
// Not the built-in allow-all authorizer, so anonymous requests stay on (as kube-apiserver does).
const allow: Authorizer = { authorize: async () => ({ decision: 'allow' }) };
const server = await testServer({ secureServing: {}, authentication: { tokenAuthFile: tokenFile }, authorizer: allow });
const ALICE = { Authorization: 'Bearer alice-token' };
const SSR = '/apis/authentication.orch.io/v1/selfsubjectreviews';
const KUBE_SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const TR = '/apis/authentication.orch.io/v1/tokenreviews';

const review = (apiVersion = 'authentication.orch.io/v1') => ({ apiVersion, kind: 'SelfSubjectReview' });
const tokenReview = (spec: Record<string, unknown>) => ({ apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec });

describe('SelfSubjectReview', () => {
  test('answers the requesting user (201), with a creation time, in the group asked', async () => {
    const r = await https(server, 'POST', SSR, ALICE, review());
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.apiVersion, 'authentication.orch.io/v1');
    assert.equal(r.body.kind, 'SelfSubjectReview');
    assert.match(r.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(r.body.status, { userInfo: { username: 'alice', uid: '1001', groups: ['dev', 'ops', 'system:authenticated'] } });
  });

  test('after impersonation it is the impersonated user, extras included', async () => {
    const r = await https(server, 'POST', SSR, { ...ALICE, 'Impersonate-User': 'jane', 'Impersonate-Group': ['g1', 'g2'], 'Impersonate-Extra-Scopes': ['a', 'b'], 'Impersonate-Uid': 'j-1' }, review());
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.status.userInfo, { username: 'jane', uid: 'j-1', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['a', 'b'] } });
  });

  test('anonymous requests are answered too', async () => {
    const r = await https(server, 'POST', SSR, {}, review());
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.status.userInfo, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  test('the authentication.k8s.io path answers in that spelling and is not in discovery (orch profile)', async () => {
    const r = await https(server, 'POST', KUBE_SSR, ALICE, review('authentication.k8s.io/v1'));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.equal(r.body.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(r.body.status.userInfo.username, 'alice');
    const groups = (await https(server, 'GET', '/apis', ALICE)).body.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes('authentication.orch.io'), groups.join());
    assert.ok(!groups.includes('authentication.k8s.io'), groups.join());
    assert.equal((await https(server, 'GET', '/apis/authentication.k8s.io/v1', ALICE)).status, 404);
    const index = (await https(server, 'GET', '/openapi/v3', ALICE)).body.paths;
    assert.ok(index['apis/authentication.orch.io/v1'] && !index['apis/authentication.k8s.io/v1']);
    // A body in the profile's own spelling does not match that path.
    const mismatch = await https(server, 'POST', KUBE_SSR, ALICE, review());
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.message, 'the API version in the data (authentication.orch.io/v1) does not match the expected API version (authentication.k8s.io/v1)');
  });

  test('discovery lists both reviews as create-only and cluster-scoped', async () => {
    const list = (await https(server, 'GET', '/apis/authentication.orch.io/v1', ALICE)).body;
    assert.deepEqual(
      list.resources.map((r: { name: string; kind: string; verbs: string[]; namespaced: boolean }) => [r.name, r.kind, r.verbs, r.namespaced]),
      [
        ['selfsubjectreviews', 'SelfSubjectReview', ['create'], false],
        ['tokenreviews', 'TokenReview', ['create'], false],
      ],
    );
  });

  test('other verbs, namespaced paths and bad bodies are Status errors', async () => {
    assert.equal((await https(server, 'GET', SSR, ALICE)).status, 405);
    assert.equal((await https(server, 'GET', `${SSR}/x`, ALICE)).status, 405);
    assert.equal((await https(server, 'DELETE', `${SSR}/x`, ALICE)).status, 405);
    assert.equal((await https(server, 'POST', '/apis/authentication.orch.io/v1/namespaces/default/selfsubjectreviews', ALICE, review())).status, 404);
    const kind = await https(server, 'POST', SSR, ALICE, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview' });
    assert.equal(kind.status, 400);
    assert.equal(kind.body.message, 'the kind in the data (TokenReview) does not match the expected kind (SelfSubjectReview)');
    const strict = await https(server, 'POST', `${SSR}?fieldValidation=Strict`, ALICE, { ...review(), spec: {} });
    assert.equal(strict.status, 400);
    assert.equal(strict.body.message, 'strict decoding error: unknown field "spec"');
    const warned = await https(server, 'POST', SSR, ALICE, { ...review(), spec: {} });
    assert.equal(warned.status, 201);
    assert.match(String(warned.headers.warning), /unknown field .*spec/);
    const broken = await https(server, 'POST', SSR, ALICE, '{"apiVersion":');
    assert.equal(broken.status, 400);
    assert.equal(broken.body.kind, 'Status');
  });

  test('the kubernetes profile serves it at authentication.k8s.io, listed (and at the orch spelling, unlisted)', async () => {
    const kube = await testServer({ naming: 'kubernetes', secureServing: {}, authentication: { tokenAuthFile: tokenFile }, authorizer: allow });
    const r = await https(kube, 'POST', KUBE_SSR, ALICE, review('authentication.k8s.io/v1'));
    assert.equal(r.status, 201);
    assert.equal(r.body.status.userInfo.username, 'alice');
    const groups = (await https(kube, 'GET', '/apis', ALICE)).body.groups.map((g: { name: string }) => g.name);
    assert.ok(groups.includes('authentication.k8s.io'));
    assert.ok(!groups.includes('authentication.orch.io'));
    const other = await https(kube, 'POST', SSR, ALICE, review());
    assert.equal(other.status, 201);
    assert.equal(other.body.apiVersion, 'authentication.orch.io/v1');
  });
});

const DEFAULT_AUDIENCE = 'https://orch.default.svc.cluster.local';

describe('TokenReview', () => {
  test('a valid token: authenticated, its user with system:authenticated; the spec comes back', async () => {
    const r = await https(server, 'POST', TR, {}, tokenReview({ token: 'alice-token' }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body.spec, { token: 'alice-token' });
    // The token file's tokens are for the server's own audiences (by default its service-account issuer).
    assert.deepEqual(r.body.status, { authenticated: true, user: { username: 'alice', uid: '1001', groups: ['dev', 'ops', 'system:authenticated'] }, audiences: [DEFAULT_AUDIENCE] });
  });

  test('an unknown token: not authenticated, with kube-apiserver error text and an empty user', async () => {
    const r = await https(server, 'POST', TR, ALICE, tokenReview({ token: 'nope' }));
    assert.equal(r.status, 201);
    assert.deepEqual(r.body.status, { user: {}, error: 'invalid bearer token' });
  });

  test('a token review never uses the caller\'s own credentials', async () => {
    // The caller is alice (by her token); the reviewed token is bob's.
    const r = await https(server, 'POST', TR, ALICE, tokenReview({ token: 'bob-token' }));
    assert.equal(r.body.status.user.username, 'bob');
    // A token after a space is no bearer token at all: unauthenticated, never anonymous.
    const spaced = await https(server, 'POST', TR, ALICE, tokenReview({ token: ' alice-token' }));
    assert.deepEqual(spaced.body.status, { user: {} });
  });

  test('a missing token is 400, as kube-apiserver words it', async () => {
    for (const spec of [{}, { token: '' }]) {
      const r = await https(server, 'POST', TR, ALICE, tokenReview(spec));
      assert.equal(r.status, 400);
      assert.equal(r.body.message, 'token is required for TokenReview in authentication');
    }
    const typed = await https(server, 'POST', TR, ALICE, tokenReview({ token: 5 }));
    assert.equal(typed.status, 400);
    assert.match(typed.body.message, /^TokenReview in version "v1" cannot be handled as a TokenReview: /);
  });

  test('audiences: a token file token is for the server\'s audiences only', async () => {
    const aud = await testServer({ secureServing: {}, authentication: { tokenAuthFile: tokenFile, apiAudiences: ['api', 'also'] }, authorizer: allow });
    const ask = (audiences?: string[]) => https(aud, 'POST', TR, {}, tokenReview({ token: 'alice-token', ...(audiences ? { audiences } : {}) }));
    // None asked: the server's.
    assert.deepEqual((await ask()).body.status.audiences, ['api', 'also']);
    assert.deepEqual((await ask(['other', 'api'])).body.status, {
      authenticated: true,
      user: { username: 'alice', uid: '1001', groups: ['dev', 'ops', 'system:authenticated'] },
      audiences: ['api'],
    });
    assert.deepEqual((await ask(['other'])).body.status, { user: {}, error: 'invalid bearer token' });
    // Requests with the token still authenticate on that server.
    const r = await https(aud, 'POST', SSR, ALICE, review());
    assert.equal(r.body.status.userInfo.username, 'alice');
  });
});

describe('clients', () => {
  test('kubectl auth whoami, in both naming profiles (protobuf), with --as too', async () => {
    for (const naming of ['orch', 'kubernetes'] as const) {
      // Who each is, not what it may do: every request is allowed.
      const s = await testServer({ naming, secureServing: {}, authorization: { modes: ['AlwaysAllow'] } });
      const k = kubectlFor(s, { label: `kubectl-whoami-${naming}` });
      const out = await k.ok(['--kubeconfig', s.kubeconfigPath!, 'auth', 'whoami', '-o', 'json']);
      const answer = JSON.parse(out);
      assert.equal(answer.apiVersion, 'authentication.k8s.io/v1');
      assert.equal(answer.status.userInfo.username, 'system:admin');
      assert.deepEqual(answer.status.userInfo.groups, ['system:masters', 'system:authenticated']);
      const as = await k.ok(['--kubeconfig', s.kubeconfigPath!, 'auth', 'whoami', '--as=jane', '--as-group=g']);
      assert.match(as, /Username\s+jane/);
      assert.match(as, /Groups\s+\[g system:authenticated\]/);
    }
  });

  test('kubectl create of a TokenReview prints its status', async () => {
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, server.ca!);
    const k = kubectlFor(server, { label: 'kubectl-tokenreview', anonymous: true });
    const file = k.file('review.json', JSON.stringify(tokenReview({ token: 'bob-token' })));
    // Client-side validation is off: kubectl validates kinds without a PATCH operation itself.
    const out = await k.ok(['--certificate-authority', caFile, '--token', 'alice-token', 'create', '--validate=false', '-f', file, '-o', 'json']);
    assert.deepEqual(JSON.parse(out).status, { authenticated: true, user: { username: 'bob', uid: '1002', groups: ['system:authenticated'] }, audiences: [DEFAULT_AUDIENCE] });
  });

  test('client-node createSelfSubjectReview reaches the authentication.k8s.io path in the orch profile', async () => {
    const k8s = await loadClientNode();
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, caData: Buffer.from(server.ca!).toString('base64') }],
      users: [{ name: 'u', token: 'alice-token' }],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const r = await kc.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
    assert.equal(r.status?.userInfo?.username, 'alice');
    const t = await kc.makeApiClient(k8s.AuthenticationV1Api).createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'bob-token' } } }).catch((e: Error) => e);
    // TokenReview is the profile's own group only: the Kubernetes spelling is 404 here.
    assert.ok(t instanceof Error && /404/.test(t.message), String(t));
  });
});
