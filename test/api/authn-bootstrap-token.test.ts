// Bootstrap tokens (--enable-bootstrap-token-auth): a token `<id>.<secret>` authenticates as
// system:bootstrap:<id> while its Secret in the system namespace is of the bootstrap type, holds
// that secret, is not being deleted, has not expired and allows authentication. Every other token
// is 401 with a Status and changes nothing. The token cleaner deletes a token Secret at its
// expiry; the bootstrap signer keeps cluster-info (made at start, with the server and its CA)
// signed with a detached HS256 JWS per signing token.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compactVerify } from 'jose';
import { api, testServer, waitFor } from '../support/server.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { recordingAuthorizer, withToken } from '../support/identity.ts';
import { tempDir } from '../support/tmp.ts';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const SYSTEM = 'orch-system';
const TYPE = 'bootstrap.orch.io/token';
const SECRETS = `/api/v1/namespaces/${SYSTEM}/secrets`;
const CLUSTER_INFO = '/api/v1/namespaces/orch-public/configmaps/cluster-info';

const authz = recordingAuthorizer();
// An accepted token is remembered for a while (10 s in kube-apiserver): a token whose secret is
// deleted stays accepted until then. Short here, so the revocation test waits little.
const CACHE_TTL_MS = 200;
const forgotten = () => new Promise((r) => setTimeout(r, CACHE_TTL_MS + 50));
const server = await testServer({ authorizer: authz, authentication: { enableBootstrapTokenAuth: true, tokenCacheTtlMs: CACHE_TTL_MS } });
const off = await testServer({ authorizer: recordingAuthorizer(), authentication: {} });

let counter = 0;
/** A fresh token id and secret, different in every test. */
function newToken(): { id: string; secret: string; token: string } {
  const n = (counter++).toString(36).padStart(2, '0');
  const id = `tok0${n}`.slice(-6);
  const secret = `s3cr3t${n}`.padEnd(16, 'x');
  return { id, secret, token: `${id}.${secret}` };
}

const rfc3339 = (ms: number) => new Date(ms).toISOString();

/** Creates the Secret of a token (bootstrap type, system namespace, authentication allowed unless overridden). */
async function createTokenSecret(s: { url: string }, t: { id: string; secret: string }, data: Record<string, string> = {}, extra: { namespace?: string; type?: string; finalizers?: string[] } = {}) {
  const namespace = extra.namespace ?? SYSTEM;
  const body = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${t.id}`, namespace, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}) },
    type: extra.type ?? TYPE,
    stringData: { 'token-id': t.id, 'token-secret': t.secret, 'usage-bootstrap-authentication': 'true', ...data },
  };
  return api(s, 'POST', `/api/v1/namespaces/${namespace}/secrets`, body);
}

async function mustCreate(s: { url: string }, t: { id: string; secret: string }, data: Record<string, string> = {}, extra: { namespace?: string; type?: string; finalizers?: string[] } = {}) {
  const r = await createTokenSecret(s, t, data, extra);
  assert.equal(r.status, 201, r.text);
  return r.body as { metadata: { uid: string; resourceVersion: string } };
}

/** The token is refused: 401 with the Unauthorized Status, and the namespace it asked for is not created. */
async function refused(s: { url: string; ca?: string }, token: string, what: string) {
  const name = `refused-${counter++}`;
  const r = await withToken(s, 'POST', '/api/v1/namespaces', token, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], what);
  assert.equal((await api(s, 'GET', `/api/v1/namespaces/${name}`)).status, 404, `${what}: nothing created`);
}

const clusterInfo = async () => {
  const r = await api(server, 'GET', CLUSTER_INFO);
  assert.equal(r.status, 200, r.text);
  return r.body as { data: Record<string, string>; metadata: { resourceVersion: string } };
};

/** Verifies a detached JWS over `content` with `key` as jose verifies HS256 (only HS256 accepted). */
async function verifies(detached: string, content: string, key: string): Promise<boolean> {
  const [header, empty, signature] = detached.split('.');
  assert.equal(empty, '', 'the payload is detached');
  try {
    const r = await compactVerify(`${header}.${Buffer.from(content).toString('base64url')}.${signature}`, new TextEncoder().encode(key), { algorithms: ['HS256'] });
    return new TextDecoder().decode(r.payload) === content;
  } catch {
    return false;
  }
}

describe('bootstrap token authentication', () => {
  test('a valid token is system:bootstrap:<id> in system:bootstrappers and its extra groups', async () => {
    const t = newToken();
    await mustCreate(server, t, { 'auth-extra-groups': 'system:bootstrappers:worker,system:bootstrappers:ingress', expiration: rfc3339(Date.now() + 3_600_000) });
    const r = await withToken(server, 'GET', '/api/v1/namespaces/default', t.token);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const user = authz.seen.get('/api/v1/namespaces/default')!;
    assert.equal(user.name, `system:bootstrap:${t.id}`);
    assert.deepEqual(user.groups, ['system:bootstrappers', 'system:bootstrappers:ingress', 'system:bootstrappers:worker', 'system:authenticated']);

    const review = await withToken(server, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', t.token, { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(review.status, 201, JSON.stringify(review.body));
    assert.deepEqual((review.body as { status: { userInfo: unknown } }).status.userInfo, {
      username: `system:bootstrap:${t.id}`,
      groups: ['system:bootstrappers', 'system:bootstrappers:ingress', 'system:bootstrappers:worker', 'system:authenticated'],
    });
  });

  test('kubectl --token uses a bootstrap token; a wrong one is Unauthorized', async () => {
    const t = newToken();
    await mustCreate(server, t);
    const k = kubectlFor(server, { anonymous: true, label: 'bootstrap-kubectl' });
    assert.equal((await k.ok(['--token', t.token, 'get', 'ns', 'default', '-o', 'name'])).trim(), 'namespace/default');
    const whoami = await k.ok(['--token', t.token, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(whoami, `system:bootstrap:${t.id}`);
    const bad = await k.fails(['--token', `${t.id}.${'0'.repeat(16)}`, 'get', 'ns', 'default']);
    assert.match(bad.stderr, /Unauthorized|must be logged in/);
  });

  test('refused: expired, wrong secret, no authentication usage, wrong type, wrong namespace, unknown id, not a bootstrap token', async () => {
    const expired = newToken();
    await mustCreate(server, expired, { expiration: rfc3339(Date.now() - 60_000) });
    await refused(server, expired.token, 'expired');

    const t = newToken();
    await mustCreate(server, t);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', t.token)).status, 200, 'the right token authenticates');
    await refused(server, `${t.id}.${'a'.repeat(16)}`, 'wrong secret');

    const signingOnly = newToken();
    await mustCreate(server, signingOnly, { 'usage-bootstrap-authentication': 'false', 'usage-bootstrap-signing': 'true' });
    await refused(server, signingOnly.token, 'authentication usage false');
    const noUsage = newToken();
    const created = await api(server, 'POST', SECRETS, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${noUsage.id}` }, type: TYPE, stringData: { 'token-id': noUsage.id, 'token-secret': noUsage.secret } });
    assert.equal(created.status, 201, created.text);
    await refused(server, noUsage.token, 'no authentication usage');

    const opaque = newToken();
    await mustCreate(server, opaque, {}, { type: 'Opaque' });
    await refused(server, opaque.token, 'an Opaque secret of the right name');

    // A bootstrap token secret cannot be made outside the system namespace; an Opaque one there is no token.
    const elsewhere = newToken();
    assert.equal((await createTokenSecret(server, elsewhere, {}, { namespace: 'default' })).status, 422);
    await mustCreate(server, elsewhere, {}, { namespace: 'default', type: 'Opaque' });
    await refused(server, elsewhere.token, 'a secret in another namespace');

    await refused(server, newToken().token, 'no secret for the id');
    await refused(server, `${t.id}.${t.secret}x`, 'not of the bootstrap token form');
    await refused(server, t.token.toUpperCase(), 'upper case');
  });

  test('a token whose secret is being deleted, or is deleted, is refused', async () => {
    const t = newToken();
    await mustCreate(server, t, {}, { finalizers: ['example.com/hold'] });
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', t.token)).status, 200);
    const del = await api(server, 'DELETE', `${SECRETS}/bootstrap-token-${t.id}`);
    assert.equal(del.status, 200, del.text);
    assert.ok((del.body as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp, 'held by its finalizer');
    await forgotten();
    await refused(server, t.token, 'being deleted');
    const patched = await api(server, 'PATCH', `${SECRETS}/bootstrap-token-${t.id}`, { metadata: { finalizers: null } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await api(server, 'GET', `${SECRETS}/bootstrap-token-${t.id}`)).status, 404);
    await refused(server, t.token, 'deleted');
  });

  test('without --enable-bootstrap-token-auth a bootstrap token is 401, and no cluster-info is made', async () => {
    const t = newToken();
    await mustCreate(off, t);
    await mustCreate(server, t);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', t.token)).status, 200, 'authenticates with the flag');
    await refused(off, t.token, 'flag off');
    assert.equal((await api(off, 'GET', CLUSTER_INFO)).status, 404);
  });
});

describe('token cleaner', () => {
  test('deletes a token secret at its expiry; a secret whose expiry was moved later stays', async () => {
    const expiring = newToken();
    const moved = newToken();
    const soon = rfc3339(Date.now() + 1_500);
    await mustCreate(server, expiring, { expiration: soon });
    await mustCreate(server, moved, { expiration: soon });
    const later = Buffer.from(rfc3339(Date.now() + 3_600_000)).toString('base64');
    const r = await api(server, 'PATCH', `${SECRETS}/bootstrap-token-${moved.id}`, { data: { expiration: later } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', expiring.token)).status, 200, 'valid until it expires');
    await waitFor('the expired secret to be deleted', async () => (await api(server, 'GET', `${SECRETS}/bootstrap-token-${expiring.id}`)).status === 404, 10_000);
    // The moved secret's first timer fired with the other one's: it was looked at again and kept.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await api(server, 'GET', `${SECRETS}/bootstrap-token-${moved.id}`)).status, 200);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', moved.token)).status, 200);
  });

  test('an already expired token secret is deleted at once; other secrets are left alone', async () => {
    const t = newToken();
    await mustCreate(server, t, { expiration: rfc3339(Date.now() - 1_000) });
    const opaque = newToken();
    await mustCreate(server, opaque, { expiration: rfc3339(Date.now() - 1_000) }, { type: 'Opaque' });
    await waitFor('the expired secret to be deleted', async () => (await api(server, 'GET', `${SECRETS}/bootstrap-token-${t.id}`)).status === 404, 10_000);
    assert.equal((await api(server, 'GET', `${SECRETS}/bootstrap-token-${opaque.id}`)).status, 200);
  });
});

describe('bootstrap signer', () => {
  test('cluster-info is made at start with the server and its CA, as kubeadm writes it', async () => {
    const { data } = await clusterInfo();
    const kubeconfig = data.kubeconfig!;
    assert.match(kubeconfig, new RegExp(`server: ${server.url.replace(/[.]/g, '\\.')}\n`));
    const ca = /certificate-authority-data: (\S+)/.exec(kubeconfig)?.[1];
    assert.equal(Buffer.from(ca ?? '', 'base64').toString(), server.ca);
    // kubectl can use it as it is (a joining client's first step, once the signature checks out).
    const dir = tempDir('cluster-info');
    writeFileSync(join(dir, 'kubeconfig'), kubeconfig);
    const t = newToken();
    await mustCreate(server, t);
    const k = kubectlFor(server, { anonymous: true, label: 'cluster-info' });
    assert.equal((await k.ok(['--kubeconfig', join(dir, 'kubeconfig'), '--token', t.token, 'get', 'ns', 'default', '-o', 'name'])).trim(), 'namespace/default');
  });

  test('a signing token signs cluster-info (detached HS256 JWS, the full token as key); a non-signing one never does', async () => {
    const signer = newToken();
    const authOnly = newToken();
    await mustCreate(server, authOnly);
    await mustCreate(server, signer, { 'usage-bootstrap-signing': 'true' });
    await waitFor('the signature', async () => (await clusterInfo()).data[`jws-kubeconfig-${signer.id}`] !== undefined);
    const { data } = await clusterInfo();
    const sig = data[`jws-kubeconfig-${signer.id}`]!;
    assert.equal(data[`jws-kubeconfig-${authOnly.id}`], undefined);
    assert.deepEqual(JSON.parse(Buffer.from(sig.split('.')[0]!, 'base64url').toString()), { alg: 'HS256', kid: signer.id });
    assert.ok(await verifies(sig, data.kubeconfig!, signer.token), 'verifies with the token');
    assert.ok(!(await verifies(sig, data.kubeconfig!, `${authOnly.id}.${signer.secret}`)), 'not with another key');
    assert.ok(!(await verifies(sig, `${data.kubeconfig!}\n`, signer.token)), 'not over other content');

    // Nothing changed for the signer: nothing is written.
    const before = (await clusterInfo()).metadata.resourceVersion;
    await mustCreate(server, newToken());
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await clusterInfo()).metadata.resourceVersion, before);

    // The kubeconfig changes: signed again over the new content.
    const changed = `${data.kubeconfig!}# changed\n`;
    const r = await api(server, 'PATCH', CLUSTER_INFO, { data: { kubeconfig: changed } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    await waitFor('the new signature', async () => (await clusterInfo()).data[`jws-kubeconfig-${signer.id}`] !== sig);
    assert.ok(await verifies((await clusterInfo()).data[`jws-kubeconfig-${signer.id}`]!, changed, signer.token));
    const restored = await api(server, 'PATCH', CLUSTER_INFO, { data: { kubeconfig: data.kubeconfig } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(restored.status, 200, restored.text);

    // The token is deleted: its signature goes.
    assert.equal((await api(server, 'DELETE', `${SECRETS}/bootstrap-token-${signer.id}`)).status, 200);
    await waitFor('the signature to go', async () => (await clusterInfo()).data[`jws-kubeconfig-${signer.id}`] === undefined);
  });

  test('a signing token loses its signature when it expires; an expired one never signs; stale signatures are removed', async () => {
    const expiring = newToken();
    const expired = newToken();
    await mustCreate(server, expired, { 'usage-bootstrap-signing': 'true', expiration: rfc3339(Date.now() - 1_000) });
    await mustCreate(server, expiring, { 'usage-bootstrap-signing': 'true', expiration: rfc3339(Date.now() + 1_500) });
    await waitFor('the signature', async () => (await clusterInfo()).data[`jws-kubeconfig-${expiring.id}`] !== undefined);
    assert.equal((await clusterInfo()).data[`jws-kubeconfig-${expired.id}`], undefined);
    await waitFor('the signature to go at expiry', async () => (await clusterInfo()).data[`jws-kubeconfig-${expiring.id}`] === undefined, 10_000);

    // A signature no token stands behind is removed.
    const r = await api(server, 'PATCH', CLUSTER_INFO, { data: { 'jws-kubeconfig-nobody': 'forged..sig' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
    await waitFor('the forged signature to go', async () => (await clusterInfo()).data['jws-kubeconfig-nobody'] === undefined);
  });
});
