// The bootstrap token authenticator on its own, with a Secret it is handed and a clock the test
// moves: the cases kube-apiserver's tests go through, including those the API refuses to store
// (a bad extra group, a token-id that disagrees with the name) and the exact moment of expiry.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject } from '../../src/machinery/meta.ts';
import { bootstrapTokenAuthenticator } from '../../src/auth/authn/bootstrap-token.ts';

const TYPE = 'bootstrap.orch.io/token';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const b64 = (s: string) => Buffer.from(s).toString('base64');

function secret(data: Record<string, string> | null, over: { type?: string; name?: string; deletionTimestamp?: string } = {}): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: over.name ?? 'bootstrap-token-abcdef', namespace: 'orch-system', ...(over.deletionTimestamp ? { deletionTimestamp: over.deletionTimestamp } : {}) },
    type: over.type ?? TYPE,
    data: data === null ? null : Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  } as KObject;
}

const GOOD = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };
const TOKEN = 'abcdef.0123456789abcdef';

function authenticatorWith(s: KObject | undefined | Error, now = NOW) {
  const asked: string[] = [];
  const a = bootstrapTokenAuthenticator({
    secretType: TYPE,
    now: () => now,
    async secret(name) {
      asked.push(name);
      if (s instanceof Error) throw s;
      return s;
    },
  });
  return { a, asked };
}

test('a valid token: its user, and groups sorted without repeats', async () => {
  const { a, asked } = authenticatorWith(secret({ ...GOOD, 'auth-extra-groups': 'system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b' }));
  assert.deepEqual(await a.authenticateToken(TOKEN), {
    kind: 'authenticated',
    user: { name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:b'] },
  });
  assert.deepEqual(asked, ['bootstrap-token-abcdef']);
});

test('not a bootstrap token: not looked up, not this authenticator\'s', async () => {
  const { a, asked } = authenticatorWith(secret(GOOD));
  for (const t of ['abcdef.0123456789abcde', 'ABCDEF.0123456789abcdef', 'abcdef0123456789abcdef', 'abcdef.0123456789abcdef.x', ' abcdef.0123456789abcdef', ''])
    assert.deepEqual(await a.authenticateToken(t), { kind: 'no-credential' }, t);
  assert.deepEqual(asked, []);
});

test('expiry: valid up to the instant before, refused at it; an expiration that does not parse is expired', async () => {
  const at = { ...GOOD, expiration: '2030-01-01T00:00:00Z' };
  assert.equal((await authenticatorWith(secret(at), NOW - 1).a.authenticateToken(TOKEN)).kind, 'authenticated');
  assert.equal((await authenticatorWith(secret(at), NOW).a.authenticateToken(TOKEN)).kind, 'no-credential');
  assert.equal((await authenticatorWith(secret({ ...GOOD, expiration: '2030-01-01T01:00:00+02:00' })).a.authenticateToken(TOKEN)).kind, 'no-credential', 'an offset counts');
  assert.equal((await authenticatorWith(secret({ ...GOOD, expiration: '2030-01-01T00:00:00.5Z' })).a.authenticateToken(TOKEN)).kind, 'authenticated', 'fractions count');
  assert.equal((await authenticatorWith(secret({ ...GOOD, expiration: 'tomorrow' })).a.authenticateToken(TOKEN)).kind, 'no-credential');
});

test("every mismatch is not this authenticator's: the bearer union makes it a 401", async () => {
  const cases: [string, KObject | undefined][] = [
    ['no secret', undefined],
    ['being deleted', secret(GOOD, { deletionTimestamp: '2029-12-31T00:00:00Z' })],
    ['Opaque', secret(GOOD, { type: 'Opaque' })],
    ['no data', secret(null)],
    ['wrong secret', secret({ ...GOOD, 'token-secret': '0123456789abcdee' })],
    ['secret of another length', secret({ ...GOOD, 'token-secret': '0123456789abcdef0' })],
    ['token-id not the one of the name', secret({ ...GOOD, 'token-id': 'zzzzzz' })],
    ['no authentication usage', secret({ 'token-id': 'abcdef', 'token-secret': '0123456789abcdef' })],
    ['authentication usage not "true"', secret({ ...GOOD, 'usage-bootstrap-authentication': 'yes' })],
    ['an extra group outside system:bootstrappers:', secret({ ...GOOD, 'auth-extra-groups': 'system:bootstrappers:ok,system:masters' })],
    ['an empty extra group', secret({ ...GOOD, 'auth-extra-groups': 'system:bootstrappers:ok,' })],
  ];
  for (const [what, s] of cases) assert.deepEqual(await authenticatorWith(s).a.authenticateToken(TOKEN), { kind: 'no-credential' }, what);
});

test('storage failing is a rejection that names the token id, never its secret', async () => {
  const r = await authenticatorWith(new Error('storage unavailable')).a.authenticateToken(TOKEN);
  assert.equal(r.kind, 'rejected');
  assert.match(r.kind === 'rejected' ? r.message : '', /abcdef: storage unavailable/);
  assert.ok(!JSON.stringify(r).includes('0123456789abcdef'));
});
