// Service-account tokens as bearer tokens: signed here with the key the server is given
// (--service-account-signing-key-file) or with keys it only verifies (--service-account-key-file),
// checked for issuer, audience, time, signature and, with lookup on, the account and the object
// the token is bound to. Every refused token is 401 with a Status and changes nothing.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { api, testServer } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { kubectlFor } from '../support/kubectl.ts';
import { recordingAuthorizer, withToken } from '../support/identity.ts';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };



const dir = tempDir('authn-sa');
const pem = (k: KeyObject, type: 'pkcs8' | 'spki') => k.export({ type, format: 'pem' }).toString();
const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
writeFileSync(join(dir, 'sa.key'), pem(signing.privateKey, 'pkcs8'));
writeFileSync(join(dir, 'old.pub'), pem(rotated.publicKey, 'spki'));

const ISSUER = 'https://issuer.example';
const authz = recordingAuthorizer();
// An accepted token is remembered for a while (10 s in kube-apiserver): a token whose account or
// bound object is deleted stays accepted until then. Short here, so those tests wait little.
const CACHE_TTL_MS = 200;
const server = await testServer({
  authorizer: authz,
  authentication: {
    serviceAccounts: { signingKeyFile: join(dir, 'sa.key'), keyFiles: [join(dir, 'old.pub')], issuers: [ISSUER, 'https://old-issuer.example'] },
    apiAudiences: ['api', 'other-api'],
    tokenCacheTtlMs: CACHE_TTL_MS,
  },
});
/** Once the cache has forgotten the token: what the server answers it now. */
const statusAfterCache = async (token: string) => {
  await new Promise((r) => setTimeout(r, CACHE_TTL_MS + 50));
  return (await withToken(server, 'GET', '/api/v1/namespaces/default', token)).status;
};
const noLookup = await testServer({
  authorizer: recordingAuthorizer(),
  authentication: { serviceAccounts: { signingKeyFile: join(dir, 'sa.key'), issuers: [ISSUER], lookup: false }, apiAudiences: ['api'] },
});

const NS = 'sa-tokens';
const create = async (s: { url: string }, path: string, body: object) => {
  const r = await api(s, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  return r.body as { metadata: { uid: string; name: string } };
};
for (const s of [server, noLookup]) await create(s, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
const robot = await create(server, `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } });

interface Claims {
  iss?: string;
  sub?: string;
  aud?: string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  claim?: Record<string, unknown>;
  alg?: string;
  key?: KeyObject;
  kid?: string;
}

/** A token as kube-apiserver's TokenRequest makes them, with any claim overridden. */
async function token(name: string, uid: string, c: Claims = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    'orch.io': c.claim ?? { namespace: NS, serviceaccount: { name, uid } },
    iss: c.iss ?? ISSUER,
    sub: c.sub ?? `system:serviceaccount:${NS}:${name}`,
    aud: c.aud ?? ['api'],
    exp: c.exp ?? now + 600,
    nbf: c.nbf ?? now,
    iat: c.iat ?? now,
    jti: randomUUID(),
  };
  return new SignJWT(payload).setProtectedHeader({ alg: c.alg ?? 'ES256', ...(c.kid ? { kid: c.kid } : {}) }).sign(c.key ?? signing.privateKey);
}

const now = () => Math.floor(Date.now() / 1000);

describe('service-account tokens', () => {
  test('a token of the account is system:serviceaccount:<ns>:<name> with its uid, groups and credential id', async () => {
    const t = await token('robot', robot.metadata.uid);
    const r = await withToken(server, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/robot`, t);
    assert.equal(r.status, 200);
    const user = authz.seen.get(`/api/v1/namespaces/${NS}/serviceaccounts/robot`)!;
    assert.equal(user.name, `system:serviceaccount:${NS}:robot`);
    assert.equal(user.uid, robot.metadata.uid);
    assert.deepEqual(user.groups, ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated']);
    assert.match(user.extra?.['authentication.orch.io/credential-id']?.[0] ?? '', /^JTI=[0-9a-f-]{36}$/);
  });

  test('every issuer given is accepted, and so is a key the server only verifies with (rotation)', async () => {
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', await token('robot', robot.metadata.uid, { iss: 'https://old-issuer.example' }))).status, 200);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', await token('robot', robot.metadata.uid, { aud: ['nobody', 'other-api'] }))).status, 200);
    const old = await token('robot', robot.metadata.uid, { alg: 'RS256', key: rotated.privateKey });
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', old)).status, 200);
  });

  test('refused: expired, not yet valid, wrong audience, unknown issuer, bad signature, unknown key, wrong subject, missing claims: 401, nothing created', async () => {
    const uid = robot.metadata.uid;
    const cases: [string, Promise<string>][] = [
      ['expired', token('robot', uid, { exp: now() - 1, iat: now() - 700, nbf: now() - 700 })],
      ['not yet valid (past the leeway)', token('robot', uid, { nbf: now() + 300, iat: now() })],
      ['issued in the future', token('robot', uid, { iat: now() + 300 })],
      ['wrong audience', token('robot', uid, { aud: ['someone-else'] })],
      ['unknown issuer', token('robot', uid, { iss: 'https://elsewhere.example' })],
      ['signed by a stranger', token('robot', uid, { key: stranger.privateKey })],
      ['a kid the server does not know', token('robot', uid, { key: stranger.privateKey, kid: 'nope' })],
      ['subject of another account', token('robot', uid, { sub: `system:serviceaccount:${NS}:other` })],
      ['no private claim', token('robot', uid, { claim: {} })],
    ];
    const tampered = (await token('robot', uid)).split('.');
    tampered[1] = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(tampered[1]!, 'base64url').toString()), sub: `system:serviceaccount:${NS}:admin` })).toString('base64url');
    cases.push(['a payload changed after signing', Promise.resolve(tampered.join('.'))]);
    for (const [what, t] of cases) {
      const name = `refused-${cases.findIndex((c) => c[0] === what)}`;
      const r = await withToken(server, 'POST', '/api/v1/namespaces', await t, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      assert.deepEqual([r.status, r.body], [401, UNAUTHORIZED], what);
      assert.equal((await api(server, 'GET', `/api/v1/namespaces/${name}`)).status, 404, `${what}: nothing created`);
    }
  });

  test('with lookup on, a token of a deleted account or with another uid is refused; a token bound to a deleted Secret too', async () => {
    const temp = await create(server, `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'temp' } });
    const t = await token('temp', temp.metadata.uid);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', t)).status, 200);
    assert.deepEqual((await withToken(server, 'GET', '/api/v1/namespaces/default', await token('temp', randomUUID()))).status, 401, 'another uid');
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/temp`)).status, 200);
    assert.equal(await statusAfterCache(t), 401, 'the account is gone');
    // Made again with the same name: a new uid, so the old token stays refused.
    await create(server, `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'temp' } });
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', t)).status, 401, 'a new account of the same name');

    const secret = await create(server, `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bound' } });
    const bound = await token('robot', robot.metadata.uid, { claim: { namespace: NS, serviceaccount: { name: 'robot', uid: robot.metadata.uid }, secret: { name: 'bound', uid: secret.metadata.uid } } });
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', bound)).status, 200);
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${NS}/secrets/bound`)).status, 200);
    assert.equal(await statusAfterCache(bound), 401, 'the secret it was bound to is gone');
  });

  test('with --service-account-lookup=false a token of an account that does not exist is accepted', async () => {
    const t = await token('ghost', randomUUID());
    assert.equal((await withToken(noLookup, 'GET', '/api/v1/namespaces/default', t)).status, 200);
  });
});

describe('TokenRequest (serviceaccounts/<name>/token) and kubectl create token', () => {
  const tokenPath = (name: string) => `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`;
  const tokenRequest = (spec: object, group = 'authentication.orch.io') => ({ apiVersion: `${group}/v1`, kind: 'TokenRequest', spec });

  test('a token for the account: an hour and the API audiences by default, and it authenticates as the account', async () => {
    const before = Date.now();
    const r = await api(server, 'POST', tokenPath('robot'), tokenRequest({}));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.apiVersion, 'authentication.orch.io/v1');
    assert.equal(r.body.kind, 'TokenRequest');
    assert.deepEqual(r.body.spec, { audiences: ['api', 'other-api'], expirationSeconds: 3600 });
    const expires = Date.parse(r.body.status.expirationTimestamp);
    assert.ok(Math.abs(expires - (before + 3600_000)) < 5_000, r.body.status.expirationTimestamp);
    const got = await withToken(server, 'GET', `/api/v1/namespaces/${NS}/serviceaccounts/robot`, r.body.status.token);
    assert.equal(got.status, 200);
    assert.equal(authz.seen.get(`/api/v1/namespaces/${NS}/serviceaccounts/robot`)?.name, `system:serviceaccount:${NS}:robot`);
    // The group clients hard-code is taken too, and answered in that spelling.
    const k8s = await api(server, 'POST', tokenPath('robot'), tokenRequest({ expirationSeconds: 600 }, 'authentication.k8s.io'));
    assert.equal(k8s.status, 201, k8s.text);
    assert.equal(k8s.body.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(k8s.body.spec.expirationSeconds, 600);
  });

  test('a token for another audience is not accepted by the API; durations out of range are 422; a missing account is 404; GET is 405', async () => {
    const vault = await api(server, 'POST', tokenPath('robot'), tokenRequest({ audiences: ['vault'] }));
    assert.equal(vault.status, 201);
    assert.deepEqual(vault.body.spec.audiences, ['vault']);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', vault.body.status.token)).status, 401);
    for (const [seconds, message] of [[599, 'may not specify a duration less than 10 minutes'], [2 ** 32 + 1, 'may not specify a duration larger than 2^32 seconds']] as const) {
      const r = await api(server, 'POST', tokenPath('robot'), tokenRequest({ expirationSeconds: seconds }));
      assert.equal(r.status, 422, r.text);
      assert.equal(r.body.reason, 'Invalid');
      assert.equal(r.body.details.causes[0].field, 'spec.expirationSeconds');
      assert.match(r.body.message, new RegExp(message.replace(/\^/g, '\\^')));
    }
    const missing = await api(server, 'POST', tokenPath('nobody'), tokenRequest({}));
    assert.deepEqual([missing.status, missing.body.message], [404, 'serviceaccounts "nobody" not found']);
    assert.equal((await api(server, 'GET', tokenPath('robot'))).status, 405);
    const wrongKind = await api(server, 'POST', tokenPath('robot'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } });
    assert.equal(wrongKind.status, 400, wrongKind.text);
  });

  test('a TokenRequest or a review of 64 KiB or more is 413 (they are decoded on the event loop), nothing issued', async () => {
    const padded = { ...tokenRequest({}), metadata: { annotations: { pad: 'x'.repeat(64 * 1024) } } };
    const r = await api(server, 'POST', tokenPath('robot'), padded);
    assert.equal(r.status, 413, r.text);
    assert.equal(r.body.reason, 'RequestEntityTooLarge');
    const review = await api(server, 'POST', '/apis/authentication.orch.io/v1/selfsubjectreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview', metadata: { annotations: { pad: 'x'.repeat(64 * 1024) } } });
    assert.equal(review.status, 413, review.text);
    const small = await api(server, 'POST', tokenPath('robot'), { ...tokenRequest({}), metadata: { annotations: { pad: 'x'.repeat(1024) } } });
    assert.equal(small.status, 201, small.text);
  });

  test('a token bound to a Secret: refused once the Secret is gone; a missing object is 404, another uid 409', async () => {
    const secret = await create(server, `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'holder' } });
    const r = await api(server, 'POST', tokenPath('robot'), tokenRequest({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'holder', uid: secret.metadata.uid } }));
    assert.equal(r.status, 201, r.text);
    assert.equal((await withToken(server, 'GET', '/api/v1/namespaces/default', r.body.status.token)).status, 200);
    assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${NS}/secrets/holder`)).status, 200);
    assert.equal(await statusAfterCache(r.body.status.token), 401);
    const gone = await api(server, 'POST', tokenPath('robot'), tokenRequest({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'holder' } }));
    assert.equal(gone.status, 404, gone.text);
    await create(server, `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'holder' } });
    const stale = await api(server, 'POST', tokenPath('robot'), tokenRequest({ boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'holder', uid: secret.metadata.uid } }));
    assert.equal(stale.status, 409, stale.text);
    const odd = await api(server, 'POST', tokenPath('robot'), tokenRequest({ boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } }));
    assert.equal(odd.status, 400, odd.text);
  });

  test('kubectl create token prints a token kubectl --token then uses as the account; --duration and --audience are sent', async () => {
    const admin = kubectlFor(server, { label: 'sa-create-token' });
    const printed = (await admin.ok(['create', 'token', 'robot', '-n', NS, '--duration=20m'])).trim();
    assert.match(printed, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(Buffer.from(printed.split('.')[1]!, 'base64url').toString()) as { exp: number; iat: number; aud: string[]; sub: string };
    assert.equal(claims.exp - claims.iat, 1200);
    assert.deepEqual(claims.aud, ['api', 'other-api']);
    assert.equal(claims.sub, `system:serviceaccount:${NS}:robot`);
    const asRobot = kubectlFor(server, { label: 'sa-use-token', anonymous: true });
    assert.equal((await asRobot.ok(['--token', printed, 'get', 'serviceaccount', 'robot', '-n', NS, '-o', 'name'])).trim(), 'serviceaccount/robot');
    const other = (await admin.ok(['create', 'token', 'robot', '-n', NS, '--audience=vault'])).trim();
    assert.deepEqual((JSON.parse(Buffer.from(other.split('.')[1]!, 'base64url').toString()) as { aud: string[] }).aud, ['vault']);
    const missing = await admin.fails(['create', 'token', 'nobody', '-n', NS]);
    assert.match(missing.stderr, /serviceaccounts "nobody" not found/);
  });
});
