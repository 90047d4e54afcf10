// The cache in front of the bearer token union, as kube-apiserver puts one there
// (k8s.io/apiserver's token cache, with kube-apiserver's defaults):
//
// - A token that authenticated is remembered for 10 s (the success TTL); a token that did not is
//   asked again every time (failure TTL 0). So a repeated token costs no signature check, no
//   account lookup and no expression; in exchange a token stays accepted up to 10 s after what
//   made it valid is gone (a deleted service account, a reloaded configuration, its expiry), as
//   in kube-apiserver.
// - Entries are keyed by a SHA-256 of the token and the audiences asked for, keyed by a secret
//   drawn at random when the cache is made (put before them, as an HMAC's key is mixed in): the
//   raw token is never a key, a key says nothing of its token outside this process, and the same
//   token asked for other audiences (a TokenReview) is a different entry. One hash call per
//   lookup: node's createHmac costs about four times as much, on every request.
// - Concurrent lookups of one key share one authentication: the first starts it, the others wait
//   for its answer.
// - A connection remembers its last token: a request on it that carries the same token (compared
//   as text, no hash) for the same audiences gets that entry's answer, as long as the entry is
//   still the cache's and has not expired. Keep-alive clients send one token on every request.
// - Answers are frozen and shared, never copied: nothing downstream can change what the cache holds.
// - Bounded: when full, the oldest entry goes. (kube-apiserver stripes its cache to spread lock
//   contention; one event loop has none.)
// - Reported as kube-apiserver's authentication_token_cache_* metrics: a request per lookup (hit
//   or miss), a fetch per authentication actually run (ok, or error when it rejected or threw).

import { hash, randomBytes } from 'node:crypto';
import { frozen, type AuthenticationResult } from './authenticator.ts';
import type { TokenAuthenticator } from './bearer-token.ts';

/** How the cache reports (kube-apiserver's authentication_token_cache_request_total and _fetch_total). */
export interface TokenCacheStats {
  request(hit: boolean): void;
  fetch(ok: boolean): void;
}

export interface TokenCacheOptions {
  /** How long an authenticated token is remembered (default 10 s); 0 remembers none. */
  successTtlMs?: number;
  /** How long a token that did not authenticate is remembered (default 0: never). */
  failureTtlMs?: number;
  /** Most entries kept (default 16384). */
  maxEntries?: number;
  stats?: TokenCacheStats;
}

export const DEFAULT_TOKEN_SUCCESS_TTL_MS = 10_000;
const DEFAULT_MAX_ENTRIES = 16_384;

interface Entry {
  result: AuthenticationResult;
  until: number;
  /** Still in the cache: false once replaced, evicted or expired (a connection's memo then lapses). */
  live: boolean;
}

/** A connection's last token and the entry it found. */
interface Memo {
  token: string;
  audiences: readonly string[] | undefined;
  entry: Entry;
}

/** `inner` behind the cache; with both TTLs 0 it is `inner` itself. */
export function cachedTokenAuthenticator(inner: TokenAuthenticator, o: TokenCacheOptions = {}): TokenAuthenticator {
  const successTtl = o.successTtlMs ?? DEFAULT_TOKEN_SUCCESS_TTL_MS;
  const failureTtl = o.failureTtlMs ?? 0;
  if (successTtl <= 0 && failureTtl <= 0) return inner;
  const maxEntries = Math.max(1, o.maxEntries ?? DEFAULT_MAX_ENTRIES);
  const secret = randomBytes(32).toString('base64');
  const entries = new Map<string, Entry>();
  const inFlight = new Map<string, Promise<AuthenticationResult>>();
  const lastOn = new WeakMap<object, Memo>();

  const drop = (key: string) => {
    const e = entries.get(key);
    if (!e) return;
    e.live = false;
    entries.delete(key);
  };

  const remember = (key: string, result: AuthenticationResult) => {
    const ttl = result.kind === 'authenticated' ? successTtl : failureTtl;
    if (ttl <= 0) return;
    drop(key);
    // A Map iterates in insertion order: the first key is the oldest entry.
    while (entries.size >= maxEntries) drop(entries.keys().next().value!);
    entries.set(key, { result, until: Date.now() + ttl, live: true });
  };

  const run = async (key: string, token: string, audiences: readonly string[] | undefined): Promise<AuthenticationResult> => {
    // Not before the caller has registered this lookup: its end must find it to remove it.
    await undefined;
    try {
      const result = frozen(await inner.authenticateToken(token, audiences));
      o.stats?.fetch(result.kind !== 'rejected');
      remember(key, result);
      return result;
    } catch (e) {
      o.stats?.fetch(false);
      throw e;
    } finally {
      inFlight.delete(key);
    }
  };

  /** The connection's last answer, when this token (for these audiences) is what it asked, and it still holds. */
  const remembered = (token: string, audiences: readonly string[] | undefined, connection: object | undefined): AuthenticationResult | undefined => {
    const memo = connection && lastOn.get(connection);
    if (memo && memo.entry.live && memo.token === token && sameAudiences(memo.audiences, audiences) && memo.entry.until > Date.now()) {
      o.stats?.request(true);
      return memo.entry.result;
    }
    return undefined;
  };

  return {
    known: remembered,
    async authenticateToken(token, audiences, connection) {
      const known = remembered(token, audiences, connection);
      if (known) return known;
      const key = cacheKey(secret, token, audiences);
      const hit = entries.get(key);
      if (hit) {
        if (hit.until > Date.now()) {
          o.stats?.request(true);
          if (connection) lastOn.set(connection, { token, audiences, entry: hit });
          return hit.result;
        }
        drop(key);
      }
      o.stats?.request(false);
      let pending = inFlight.get(key);
      if (!pending) {
        pending = run(key, token, audiences);
        inFlight.set(key, pending);
      }
      const result = await pending;
      const entry = connection && entries.get(key);
      if (entry && entry.result === result) lastOn.set(connection, { token, audiences, entry });
      return result;
    },
  };
}

/**
 * SHA-256 of the secret, the token and the audiences, each length-prefixed (`<length>:<text>`) so
 * that no two different inputs hash the same text ("ab" + "c" is not "a" + "bc"); no audiences and
 * an empty list are the same request, as in kube-apiserver.
 */
function cacheKey(secret: string, token: string, audiences: readonly string[] | undefined): string {
  let text = `${secret}|${token.length}:${token}|${audiences?.length ?? 0}`;
  for (const a of audiences ?? []) text += `|${a.length}:${a}`;
  return hash('sha256', text, 'base64');
}

const sameAudiences = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]));
