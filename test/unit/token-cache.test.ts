// The cache in front of the bearer token authenticators: what it remembers, for how long, for
// which audiences, and that concurrent lookups of one token share one authentication.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AuthenticationResult } from '../../src/auth/authn/authenticator.ts';
import type { TokenAuthenticator } from '../../src/auth/authn/bearer-token.ts';
import { cachedTokenAuthenticator, type TokenCacheStats } from '../../src/auth/authn/token-cache.ts';

/** Authenticates `good-*` tokens as the user of that name, rejects `bad-*`, throws on `boom`; counts its calls. */
function counting(delayMs = 0): TokenAuthenticator & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async authenticateToken(token, audiences): Promise<AuthenticationResult> {
      calls.push(`${token}|${(audiences ?? []).join(',')}`);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      if (token === 'boom') throw new Error('authenticator crashed');
      if (token.startsWith('bad-')) return { kind: 'rejected', message: 'no' };
      if (!token.startsWith('good-')) return { kind: 'no-credential' };
      return { kind: 'authenticated', user: { name: token.slice(5), groups: ['g'], extra: { k: ['v'] } }, ...(audiences && { audiences: [...audiences] }) };
    },
  };
}

function stats(): TokenCacheStats & { hits: number; misses: number; ok: number; errors: number } {
  const s = { hits: 0, misses: 0, ok: 0, errors: 0, request: (hit: boolean) => void (hit ? s.hits++ : s.misses++), fetch: (ok: boolean) => void (ok ? s.ok++ : s.errors++) };
  return s;
}

test('a token that authenticated is remembered for the success TTL, then asked again', async () => {
  const inner = counting();
  const st = stats();
  const cache = cachedTokenAuthenticator(inner, { successTtlMs: 60, stats: st });
  for (let i = 0; i < 3; i++) assert.equal((await cache.authenticateToken('good-ann')).kind, 'authenticated');
  assert.equal(inner.calls.length, 1);
  assert.deepEqual([st.hits, st.misses, st.ok, st.errors], [2, 1, 1, 0]);
  await new Promise((r) => setTimeout(r, 80));
  await cache.authenticateToken('good-ann');
  assert.equal(inner.calls.length, 2, 'asked again once the entry expired');
});

test('a rejected, unknown or failing token is never remembered (failure TTL 0), and an error is not an answer', async () => {
  const inner = counting();
  const st = stats();
  const cache = cachedTokenAuthenticator(inner, { stats: st });
  for (let i = 0; i < 2; i++) {
    assert.equal((await cache.authenticateToken('bad-x')).kind, 'rejected');
    assert.equal((await cache.authenticateToken('other')).kind, 'no-credential');
    await assert.rejects(cache.authenticateToken('boom'), /crashed/);
  }
  assert.equal(inner.calls.length, 6);
  assert.deepEqual([st.hits, st.ok, st.errors], [0, 2, 4]);
  // With a failure TTL, a rejection is remembered too.
  const remembering = cachedTokenAuthenticator(inner, { failureTtlMs: 10_000 });
  await remembering.authenticateToken('bad-y');
  await remembering.authenticateToken('bad-y');
  assert.equal(inner.calls.filter((c) => c.startsWith('bad-y')).length, 1);
});

test('concurrent lookups of one token share one authentication; other tokens do not wait for it', async () => {
  const inner = counting(30);
  const st = stats();
  const cache = cachedTokenAuthenticator(inner, { stats: st });
  const results = await Promise.all([...Array.from({ length: 10 }, () => cache.authenticateToken('good-bo')), cache.authenticateToken('good-cy')]);
  assert.deepEqual(
    results.map((r) => (r.kind === 'authenticated' ? r.user.name : r.kind)),
    [...Array.from({ length: 10 }, () => 'bo'), 'cy'],
  );
  assert.deepEqual(inner.calls, ['good-bo|', 'good-cy|']);
  assert.deepEqual([st.misses, st.ok], [11, 2]);
  // A failure is shared as well, and forgotten at once.
  const shared = await Promise.allSettled([cache.authenticateToken('boom'), cache.authenticateToken('boom')]);
  assert.deepEqual(shared.map((s) => s.status), ['rejected', 'rejected']);
  assert.equal(inner.calls.filter((c) => c === 'boom|').length, 1);
  await assert.rejects(cache.authenticateToken('boom'));
  assert.equal(inner.calls.filter((c) => c === 'boom|').length, 2);
});

test('a synchronous throw of the inner authenticator is forgotten too', async () => {
  let calls = 0;
  const cache = cachedTokenAuthenticator({
    authenticateToken() {
      calls++;
      throw new Error('sync');
    },
  });
  await assert.rejects(cache.authenticateToken('t'), /sync/);
  await assert.rejects(cache.authenticateToken('t'), /sync/);
  assert.equal(calls, 2);
});

test('the audiences asked for are part of the entry: a token remembered for the API is asked again for another audience', async () => {
  const inner = counting();
  const cache = cachedTokenAuthenticator(inner);
  await cache.authenticateToken('good-di', ['api']);
  await cache.authenticateToken('good-di', ['api']);
  const other = await cache.authenticateToken('good-di', ['vault']);
  assert.deepEqual(other.kind === 'authenticated' && other.audiences, ['vault']);
  // No audiences and an empty list are the same request; a length prefix keeps ["ab"] apart from ["a", "b"].
  await cache.authenticateToken('good-di');
  await cache.authenticateToken('good-di', []);
  await cache.authenticateToken('good-di', ['a', 'b']);
  await cache.authenticateToken('good-di', ['ab']);
  assert.deepEqual(inner.calls, ['good-di|api', 'good-di|vault', 'good-di|', 'good-di|a,b', 'good-di|ab']);
});

test('bounded: when full, the oldest entry goes', async () => {
  const inner = counting();
  const cache = cachedTokenAuthenticator(inner, { maxEntries: 2 });
  for (const t of ['good-1', 'good-2', 'good-3', 'good-3', 'good-2', 'good-1']) await cache.authenticateToken(t);
  assert.deepEqual(inner.calls, ['good-1|', 'good-2|', 'good-3|', 'good-1|']);
});

test('every caller gets the one frozen answer: changing it throws, and changes neither the cache nor the others', async () => {
  const cache = cachedTokenAuthenticator(counting());
  const a = await cache.authenticateToken('good-ed');
  assert.equal(a.kind, 'authenticated');
  if (a.kind !== 'authenticated') return;
  assert.throws(() => a.user.groups.push('system:masters'), TypeError);
  assert.throws(() => a.user.extra!.k!.push('w'), TypeError);
  assert.throws(() => Object.assign(a.user, { name: 'root' }), TypeError);
  const b = await cache.authenticateToken('good-ed');
  assert.deepEqual(b.kind === 'authenticated' && b.user, { name: 'ed', groups: ['g'], extra: { k: ['v'] } });
  assert.equal(b, a, 'shared, not copied');
});

test("a connection's repeated token is answered from its memo, a hit, as long as the entry is the cache's", async () => {
  const inner = counting();
  const st = stats();
  const cache = cachedTokenAuthenticator(inner, { successTtlMs: 60, maxEntries: 1, stats: st });
  const conn = {};
  const first = await cache.authenticateToken('good-gu', ['api'], conn);
  // The same text in another string, as the next request's header carries it.
  const again = await cache.authenticateToken(['good', 'gu'].join('-'), ['api'], conn);
  assert.equal(again, first);
  assert.deepEqual([st.hits, st.misses, inner.calls.length], [1, 1, 1]);
  // Another token or other audiences on the connection are not the memo's.
  assert.equal((await cache.authenticateToken('bad-gu', ['api'], conn)).kind, 'rejected');
  assert.notEqual(await cache.authenticateToken('good-gu', ['vault'], conn), first);
  // Another connection's token pushes the entry out (one entry at most): the memo lapses with it.
  const vault = await cache.authenticateToken('good-gu', ['vault'], {});
  assert.deepEqual(vault.kind === 'authenticated' && vault.audiences, ['vault']);
  assert.deepEqual(inner.calls, ['good-gu|api', 'bad-gu|api', 'good-gu|vault']);
  await cache.authenticateToken('good-gu', ['api'], {});
  await cache.authenticateToken('good-gu', ['vault'], conn);
  assert.equal(inner.calls.length, 5, 'an evicted entry is not answered from a memo');
  // Expired: asked again, on the connection as anywhere.
  await new Promise((r) => setTimeout(r, 80));
  await cache.authenticateToken('good-gu', ['api'], conn);
  assert.equal(inner.calls.length, 6, 'an expired entry is not answered from a memo');
  // A fresh entry serves the connection again.
  await cache.authenticateToken('good-gu', ['api'], conn);
  assert.equal(inner.calls.length, 6);
});

test('with both TTLs 0 there is no cache', async () => {
  const inner = counting();
  const cache = cachedTokenAuthenticator(inner, { successTtlMs: 0 });
  await cache.authenticateToken('good-fi');
  await cache.authenticateToken('good-fi');
  assert.equal(inner.calls.length, 2);
});

test("known: the connection's memo answered at once, counted as a hit; anything else is left to authenticateToken, uncounted", async () => {
  const inner = counting();
  const st = stats();
  const cache = cachedTokenAuthenticator(inner, { successTtlMs: 60, maxEntries: 1, stats: st });
  const conn = {};
  assert.equal(cache.known!('good-kn', ['api'], conn), undefined, 'nothing remembered yet');
  assert.deepEqual([st.hits, st.misses], [0, 0]);
  const first = await cache.authenticateToken('good-kn', ['api'], conn);
  assert.equal(cache.known!(['good', 'kn'].join('-'), ['api'], conn), first);
  assert.deepEqual([st.hits, st.misses, inner.calls.length], [1, 1, 1]);
  // Another connection, token or audiences: not known, and nothing counted.
  assert.equal(cache.known!('good-kn', ['api'], {}), undefined);
  assert.equal(cache.known!('good-other', ['api'], conn), undefined);
  assert.equal(cache.known!('good-kn', ['vault'], conn), undefined);
  assert.equal(cache.known!('good-kn', undefined, conn), undefined);
  assert.deepEqual([st.hits, st.misses], [1, 1]);
  // Evicted (one entry at most): the memo lapses.
  await cache.authenticateToken('good-evict', ['api'], {});
  assert.equal(cache.known!('good-kn', ['api'], conn), undefined, 'an evicted entry is not known');
  // Expired: not known either.
  await cache.authenticateToken('good-kn', ['api'], conn);
  assert.ok(cache.known!('good-kn', ['api'], conn));
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(cache.known!('good-kn', ['api'], conn), undefined, 'an expired entry is not known');
  // A rejected token is never remembered, so never known.
  await cache.authenticateToken('bad-kn', ['api'], conn);
  assert.equal(cache.known!('bad-kn', ['api'], conn), undefined);
});
