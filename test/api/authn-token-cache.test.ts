// The cache in front of the bearer token authenticators, seen from outside: a repeated token is
// authenticated once (kube-apiserver's authentication_token_cache_* metrics say so), concurrent
// requests with a new token share one authentication, a rejected token is never remembered, and,
// as in kube-apiserver, a token stays accepted for the 10 s of the cache after its service account
// is deleted. A TokenReview for other audiences is not answered from a request's entry. On one
// keep-alive connection each request is answered for its own credential, the connection's last
// token at once (a hit), a client certificate before any token.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningServer } from '../../src/server/server.ts';
import { api, testServer } from '../support/server.ts';
import { tempDir } from '../support/tmp.ts';
import { withToken } from '../support/identity.ts';
import { tlsFor } from '../support/tls-clients.ts';
import { Pool } from 'undici';

const dir = tempDir('authn-token-cache');
writeFileSync(join(dir, 'tokens.csv'), 'file-token,filer,2001,"dev"\nknown-a,knower-a,3001,"dev"\nknown-b,knower-b,3002\n');
// The default cache (10 s for a success), as kube-apiserver has it.
// What is tested is authentication: every authenticated user is allowed.
const server = await testServer({ authentication: { tokenAuthFile: join(dir, 'tokens.csv') }, authorization: { modes: ['AlwaysAllow'] } });
const NS = 'cached';
assert.equal((await api(server, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);

async function metric(s: RunningServer, name: string, status: string): Promise<number> {
  const line = (await api(s, 'GET', '/metrics')).text.split('\n').find((l) => l.startsWith(`${name}{status="${status}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
const counters = async () => ({
  hits: await metric(server, 'authentication_token_cache_request_total', 'hit'),
  misses: await metric(server, 'authentication_token_cache_request_total', 'miss'),
  ok: await metric(server, 'authentication_token_cache_fetch_total', 'ok'),
  errors: await metric(server, 'authentication_token_cache_fetch_total', 'error'),
});
const delta = (a: Awaited<ReturnType<typeof counters>>, b: Awaited<ReturnType<typeof counters>>) => ({ hits: b.hits - a.hits, misses: b.misses - a.misses, ok: b.ok - a.ok, errors: b.errors - a.errors });

async function account(name: string): Promise<string> {
  assert.equal((await api(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } })).status, 201);
  const r = await api(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} });
  assert.equal(r.status, 201, r.text);
  return r.body.status.token as string;
}
const get = async (token: string) => (await withToken(server, 'GET', `/api/v1/namespaces/${NS}`, token)).status;

test('a repeated token is authenticated once, a service-account token (one signature check) as a token-file token; concurrent requests with a new token share one', async () => {
  const sa = await account('repeat');
  let before = await counters();
  for (let i = 0; i < 5; i++) assert.equal(await get(sa), 200);
  for (let i = 0; i < 5; i++) assert.equal(await get('file-token'), 200);
  assert.deepEqual(delta(before, await counters()), { hits: 8, misses: 2, ok: 2, errors: 0 });

  const fresh = await account('concurrent');
  before = await counters();
  assert.deepEqual(await Promise.all(Array.from({ length: 8 }, () => get(fresh))), Array(8).fill(200));
  const d = delta(before, await counters());
  assert.equal(d.ok, 1, 'one authentication for eight concurrent requests');
  assert.equal(d.hits + d.misses, 8);
});

test('a rejected token is asked again every time (nothing remembered), and stays 401', async () => {
  const good = await account('forged');
  const forged = `${good.slice(0, good.lastIndexOf('.'))}.${Buffer.alloc(64, 7).toString('base64url')}`;
  let before = await counters();
  for (let i = 0; i < 3; i++) assert.equal(await get(forged), 401);
  assert.deepEqual(delta(before, await counters()), { hits: 0, misses: 3, ok: 0, errors: 3 });
  // A token nobody knows is no error of an authenticator (kube-apiserver counts it ok), but not remembered either.
  before = await counters();
  for (let i = 0; i < 2; i++) assert.equal(await get('not-a-token'), 401);
  assert.deepEqual(delta(before, await counters()), { hits: 0, misses: 2, ok: 2, errors: 0 });
});

test('as kube-apiserver: a token stays accepted while remembered after its account is deleted; a TokenReview for another audience is asked afresh', async () => {
  const sa = await account('short-lived');
  assert.equal(await get(sa), 200);
  assert.equal((await api(server, 'DELETE', `/api/v1/namespaces/${NS}/serviceaccounts/short-lived`)).status, 200);
  assert.equal(await get(sa), 200, 'remembered for 10 s, as kube-apiserver remembers it');
  // The same token reviewed for an audience it is not for is not the request's entry.
  const review = await api(server, 'POST', '/apis/authentication.orch.io/v1/tokenreviews', { apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: { token: sa, audiences: ['vault'] } });
  assert.equal(review.status, 201, review.text);
  assert.equal(review.body.status.authenticated ?? false, false, review.text);
  // A new token of the deleted account was never remembered: refused.
  assert.equal((await api(server, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/short-lived/token`, { apiVersion: 'authentication.orch.io/v1', kind: 'TokenRequest', spec: {} })).status, 404);
});

test("one keep-alive connection: each request is answered for its own token (the connection's last one at once, a hit), a certificate before any token", async () => {
  const tls = tlsFor(server.url)!;
  const tokens = new Pool(server.url, { connections: 1, connect: { ca: tls.ca } });
  const certified = new Pool(server.url, { connections: 1, connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
  const review = async (pool: Pool, token?: string) => {
    const r = await pool.request({
      method: 'POST',
      path: '/apis/authentication.orch.io/v1/selfsubjectreviews',
      headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify({ apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview' }),
    });
    const text = await r.body.text();
    if (r.statusCode !== 201) return r.statusCode;
    const u = (JSON.parse(text) as { status: { userInfo: { username: string; groups?: string[] } } }).status.userInfo;
    return `${u.username} [${(u.groups ?? []).join(' ')}]`;
  };
  try {
    const before = await counters();
    const seen = [];
    for (const token of ['known-a', 'known-a', 'known-b', 'known-a', 'known-a', 'known-x', 'known-a', undefined, 'known-b']) seen.push(await review(tokens, token));
    assert.deepEqual(seen, [
      'knower-a [dev system:authenticated]',
      'knower-a [dev system:authenticated]',
      'knower-b [system:authenticated]',
      'knower-a [dev system:authenticated]',
      'knower-a [dev system:authenticated]',
      401,
      'knower-a [dev system:authenticated]',
      401,
      'knower-b [system:authenticated]',
    ]);
    // Misses: the first a, the first b, x; every other a and the last b are hits (b still cached).
    assert.deepEqual(delta(before, await counters()), { hits: 5, misses: 3, ok: 3, errors: 0 });
    // A client certificate decides before the token the same connection's requests carry.
    const admin = await review(certified);
    assert.match(String(admin), /system:masters/);
    const mid = await counters();
    for (let i = 0; i < 3; i++) assert.equal(await review(certified, 'known-a'), admin);
    assert.deepEqual(delta(mid, await counters()), { hits: 0, misses: 0, ok: 0, errors: 0 }, 'the token is never looked at');
  } finally {
    await Promise.all([tokens.close(), certified.close()]);
  }
});
