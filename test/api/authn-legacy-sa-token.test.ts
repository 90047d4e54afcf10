// Secret-based (legacy) service-account tokens: a Secret of type `orch.io/service-account-token`
// naming its account is filled in by the tokens controller (token, CA, namespace, the account's
// uid), and its token authenticates as the account while the Secret and the account exist. The
// Secret of a missing account is deleted, and so are an account's token secrets when it goes.
// Each use marks the Secret with the date; a Secret marked invalid no longer authenticates.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, createHash, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { api, testServer, waitFor } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { recordingAuthorizer, withToken } from '../support/identity.ts';
import { legacyTokenNames } from '../../src/auth/authn/legacy-service-account.ts';
import { namingProfile } from '../../src/naming.ts';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const TOKEN_TYPE = 'orch.io/service-account-token';
const NAME_ANNOTATION = 'orch.io/service-account.name';
const UID_ANNOTATION = 'orch.io/service-account.uid';
const LAST_USED = 'orch.io/legacy-token-last-used';
const INVALID_SINCE = 'orch.io/legacy-token-invalid-since';
const SSR = '/apis/authentication.orch.io/v1/selfsubjectreviews';

const dir = tempDir('authn-legacy-sa');
const pem = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }).toString();
const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
writeFileSync(join(dir, 'sa.key'), pem(signing.privateKey));

const authz = recordingAuthorizer();
// An accepted token is remembered for a while (10 s in kube-apiserver): a token whose secret or
// account is deleted stays accepted until then. Short here, so those tests wait little.
const CACHE_TTL_MS = 200;
const forgotten = () => new Promise((r) => setTimeout(r, CACHE_TTL_MS + 50));
const server = await testServer({ authorizer: authz, authentication: { serviceAccounts: { signingKeyFile: join(dir, 'sa.key') }, tokenCacheTtlMs: CACHE_TTL_MS } });
// The same key, without lookup: the signature alone decides.
const noLookup = await testServer({ authorizer: recordingAuthorizer(), authentication: { serviceAccounts: { signingKeyFile: join(dir, 'sa.key'), lookup: false } } });

type Obj = { metadata: { name: string; uid: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> };

let namespaces = 0;
/** A fresh namespace with an account `robot`. */
async function namespaceWithAccount(): Promise<{ ns: string; account: Obj }> {
  const ns = `legacy-${++namespaces}`;
  assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
  const r = await api(server, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });
  assert.equal(r.status, 201, r.text);
  return { ns, account: r.body as Obj };
}

const tokenSecret = (name: string, account: string, extra: { annotations?: Record<string, string>; labels?: Record<string, string> } = {}) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: TOKEN_TYPE,
  metadata: { name, annotations: { [NAME_ANNOTATION]: account, ...extra.annotations }, ...(extra.labels && { labels: extra.labels }) },
});

const getSecret = async (ns: string, name: string) => api(server, 'GET', `/api/v1/namespaces/${ns}/secrets/${name}`);

/** Creates a token secret for `account` and waits for the controller to fill it in. */
async function filledSecret(ns: string, name: string, account = 'robot', extra?: Parameters<typeof tokenSecret>[2]): Promise<{ secret: Obj; token: string }> {
  const r = await api(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, tokenSecret(name, account, extra));
  assert.equal(r.status, 201, r.text);
  let secret: Obj | undefined;
  await waitFor(`the token of ${ns}/${name}`, async () => {
    secret = (await getSecret(ns, name)).body as Obj;
    return !!secret?.data?.token;
  });
  return { secret: secret!, token: Buffer.from(secret!.data!.token!, 'base64').toString() };
}

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString()) as Record<string, unknown>;
const kidOf = (k: KeyObject) => createHash('sha256').update(k.export({ type: 'spki', format: 'der' })).digest('base64url');
const gone = async (ns: string, name: string) => (await getSecret(ns, name)).status === 404;

describe('legacy service-account tokens', () => {
  test('the controller fills a token secret in: token, CA, namespace and the account uid; the token is the account in kubectl --token and SelfSubjectReview', async () => {
    const { ns, account } = await namespaceWithAccount();
    const { secret, token } = await filledSecret(ns, 'robot-token');
    assert.equal(Buffer.from(secret.data!.namespace!, 'base64').toString(), ns);
    assert.equal(Buffer.from(secret.data!['ca.crt']!, 'base64').toString(), server.ca);
    assert.equal(secret.metadata.annotations?.[UID_ANNOTATION], account.metadata.uid);
    const [header, payload] = token.split('.') as [string, string];
    assert.deepEqual(decode(header), { alg: 'ES256', kid: kidOf(signing.publicKey) });
    assert.deepEqual(decode(payload), {
      iss: 'orch/serviceaccount',
      sub: `system:serviceaccount:${ns}:robot`,
      'orch.io/serviceaccount/namespace': ns,
      'orch.io/serviceaccount/service-account.name': 'robot',
      'orch.io/serviceaccount/service-account.uid': account.metadata.uid,
      'orch.io/serviceaccount/secret.name': 'robot-token',
    });

    const asRobot = kubectlFor(server, { label: 'legacy-token', anonymous: true });
    assert.equal((await asRobot.ok(['--token', token, 'get', 'serviceaccount', 'robot', '-n', ns, '-o', 'name'])).trim(), 'serviceaccount/robot');
    const review = await withToken(server, 'POST', SSR, token, { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(review.status, 201, JSON.stringify(review.body));
    assert.deepEqual(review.body.status.userInfo, {
      username: `system:serviceaccount:${ns}:robot`,
      uid: account.metadata.uid,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
    });
  });

  test('deleting the secret revokes its token; deleting the account deletes its token secrets and revokes them', async () => {
    const { ns } = await namespaceWithAccount();
    const first = await filledSecret(ns, 'first');
    const second = await filledSecret(ns, 'second');
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, first.token)).status, 200);
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${ns}/secrets/first`)).status, 200);
    await forgotten();
    const revoked = await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, first.token);
    assert.deepEqual([revoked.status, revoked.body], [401, UNAUTHORIZED]);

    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, second.token)).status, 200);
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/robot`)).status, 200);
    await forgotten();
    assert.deepEqual((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, second.token)).status, 401);
    await waitFor('the token secret of the deleted account to be deleted', () => gone(ns, 'second'));
    // An account of the same name made again is another account: the old token stays refused.
    assert.equal((await api(server, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } })).status, 201);
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, second.token)).status, 401);
  });

  test('a token secret of an account that does not exist, or of another uid, is deleted; one without the account name is refused (422)', async () => {
    const { ns } = await namespaceWithAccount();
    assert.equal((await api(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, tokenSecret('orphan', 'nobody'))).status, 201);
    assert.equal((await api(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, tokenSecret('stale', 'robot', { annotations: { [UID_ANNOTATION]: 'not-the-uid' } }))).status, 201);
    await waitFor('the secret of a missing account to be deleted', () => gone(ns, 'orphan'));
    await waitFor('the secret of another uid to be deleted', () => gone(ns, 'stale'));
    const unnamed = await api(server, 'POST', `/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', type: TOKEN_TYPE, metadata: { name: 'unnamed' } });
    assert.equal(unnamed.status, 422, unnamed.text);
    assert.equal(unnamed.body.details.causes[0].field, `metadata.annotations[${NAME_ANNOTATION}]`);
    assert.equal(unnamed.body.details.causes[0].reason, 'FieldValueRequired');
  });

  test('refused with 401 and nothing created: another key, a changed claim, a token the secret no longer holds, a review for other audiences', async () => {
    const { ns, account } = await namespaceWithAccount();
    const { token } = await filledSecret(ns, 'robot-token');
    const claims = decode(token.split('.')[1]!);
    const forged = (key: KeyObject, kid: string | undefined, c: Record<string, unknown> = claims) => new SignJWT(c).setProtectedHeader({ alg: 'ES256', ...(kid && { kid }) }).sign(key);
    const cases: [string, string][] = [
      ['signed by another key', await forged(stranger.privateKey, undefined)],
      ["another key, with the server key's id", await forged(stranger.privateKey, kidOf(signing.publicKey))],
      ['the subject of another account', await forged(signing.privateKey, kidOf(signing.publicKey), { ...claims, sub: `system:serviceaccount:${ns}:admin` })],
      ['no secret name', await forged(signing.privateKey, kidOf(signing.publicKey), { ...claims, 'orch.io/serviceaccount/secret.name': undefined })],
      // Signed by the server's key but not the token the secret holds.
      ['not the secret copy', await forged(signing.privateKey, kidOf(signing.publicKey), { ...claims, extra: 1 })],
    ];
    for (const [i, [what, t]] of cases.entries()) {
      const name = `${ns}-refused-${i}`;
      const r = await withToken(server, 'POST', '/api/v1/namespaces', t, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], what);
      assert.equal((await api(server, 'GET', `/api/v1/namespaces/${name}`)).status, 404, `${what}: nothing created`);
    }
    // A legacy token is for the server's own audiences only.
    const review = (audiences?: string[]) => api(server, 'POST', '/apis/authentication.orch.io/v1/tokenreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token, ...(audiences && { audiences }) } });
    const own = await review();
    assert.equal(own.body.status.authenticated, true, own.text);
    assert.equal(own.body.status.user.uid, account.metadata.uid);
    assert.equal((await review(['vault'])).body.status.authenticated, undefined);
  });

  test('each use marks the secret with the date, written at most once a day', async () => {
    const { ns } = await namespaceWithAccount();
    const { secret, token } = await filledSecret(ns, 'robot-token');
    assert.equal(secret.metadata.labels?.[LAST_USED], undefined);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, token)).status, 200);
    const marked = (await getSecret(ns, 'robot-token')).body as Obj;
    assert.equal(marked.metadata.labels?.[LAST_USED], today);
    // Used again the same day: no write.
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, token)).status, 200);
    assert.equal(((await getSecret(ns, 'robot-token')).body as Obj).metadata.resourceVersion, marked.metadata.resourceVersion);
    // An older date is brought up to today.
    const patched = await api(server, 'PATCH', `/api/v1/namespaces/${ns}/secrets/robot-token`, { metadata: { labels: { [LAST_USED]: '2020-01-01' } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    await forgotten();
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, token)).status, 200);
    assert.equal(((await getSecret(ns, 'robot-token')).body as Obj).metadata.labels?.[LAST_USED], today);
  });

  test('a secret labelled invalid-since no longer authenticates, until the label is removed', async () => {
    const { ns } = await namespaceWithAccount();
    const { token } = await filledSecret(ns, 'robot-token', 'robot', { labels: { [INVALID_SINCE]: '2024-01-01' } });
    const r = await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, token);
    assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED]);
    const patched = await api(server, 'PATCH', `/api/v1/namespaces/${ns}/secrets/robot-token`, { metadata: { labels: { [INVALID_SINCE]: null } } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await withToken(server, 'GET', `/api/v1/namespaces/${ns}`, token)).status, 200);
  });

  test('with --service-account-lookup=false the signature decides: the token of a deleted secret is accepted', async () => {
    const { ns } = await namespaceWithAccount();
    const { token } = await filledSecret(ns, 'robot-token');
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${ns}/secrets/robot-token`)).status, 200);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', token)).status, 401);
    assert.equal((await withToken(noLookup, 'GET', '/api/v1/namespaces/default', token)).status, 200);
  });

  test('the kubernetes profile spells the issuer, claims and labels as Kubernetes does', () => {
    const k = legacyTokenNames(namingProfile('kubernetes'));
    assert.equal(k.issuer, 'kubernetes/serviceaccount');
    assert.equal(k.claims.secretName, 'kubernetes.io/serviceaccount/secret.name');
    assert.equal(k.lastUsedLabel, 'kubernetes.io/legacy-token-last-used');
    assert.equal(k.invalidSinceLabel, 'kubernetes.io/legacy-token-invalid-since');
  });
});
