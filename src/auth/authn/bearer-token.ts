// Bearer tokens: `Authorization: Bearer <token>` handed to the token authenticators. A bearer
// token none of them accepts is rejected (401), never treated as no credential. Tokens are meant
// for audiences: a request is for the server's own (`--api-audiences`), a TokenReview for those it
// names; an authenticator that cannot tell a token's audience (the token file) is wrapped by
// audienceAgnostic, as kube-apiserver wraps it.

import type { AuthenticationResult, Authenticator } from './authenticator.ts';
import { firstSuccess } from './union.ts';

/**
 * Recognises a token as its own and authenticates it, rejects it, or answers no-credential (not
 * its kind). With `audiences` the token must be meant for one of them, and an authenticated
 * answer says which (`audiences`). `connection` names the connection a request's token came on
 * (a cache may remember its last token); authenticators that keep nothing ignore it.
 */
export interface TokenAuthenticator {
  authenticateToken(token: string, audiences?: readonly string[], connection?: object): Promise<AuthenticationResult>;
}

/** Token authenticators combined as authenticators are (`union`): the first that authenticates decides. */
export function tokenUnion(authenticators: readonly TokenAuthenticator[]): TokenAuthenticator {
  return { authenticateToken: (token, audiences) => firstSuccess(authenticators, (a) => a.authenticateToken(token, audiences)) };
}

/** The audiences in both lists, in the order of the first. */
export const intersect = (a: readonly string[], b: readonly string[]): string[] => a.filter((x) => b.includes(x));

/**
 * An authenticator whose tokens carry no audience: its tokens are for the server's own audiences
 * (`implicit`), so a token asked about for other audiences is not its to authenticate.
 */
export function audienceAgnostic(implicit: readonly string[], inner: TokenAuthenticator): TokenAuthenticator {
  return {
    async authenticateToken(token, audiences) {
      if (audiences === undefined) return inner.authenticateToken(token);
      const shared = intersect(implicit, audiences);
      if (shared.length === 0) return { kind: 'no-credential' };
      const r = await inner.authenticateToken(token);
      return r.kind === 'authenticated' ? { ...r, audiences: shared } : r;
    },
  };
}

/**
 * The token of an `Authorization` header value: the word after `Bearer ` (any case), as Go's
 * strings.SplitN(header, " ", 3) finds it; undefined when there is none (no credential).
 */
export function bearerTokenOf(header: string): string | undefined {
  const value = header.trim();
  if (value === '') return undefined;
  const parts = splitN(value, ' ', 3);
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  // An empty token (two spaces after "Bearer") is no credential at all.
  return parts[1] || undefined;
}

/** The bearer token's user, for `audiences` when given. A token nobody authenticates is rejected. */
export async function authenticateBearer(tokens: TokenAuthenticator, token: string, audiences?: readonly string[], connection?: object): Promise<AuthenticationResult> {
  const r = await tokens.authenticateToken(token, audiences?.length ? audiences : undefined, connection);
  if (r.kind === 'authenticated' || r.kind === 'rejected') return r;
  return { kind: 'rejected', message: 'invalid bearer token' };
}

export function bearerToken(tokens: TokenAuthenticator, apiAudiences: readonly string[] = []): Authenticator {
  return {
    async authenticate(req) {
      const token = bearerTokenOf(req.headers.authorization ?? '');
      if (token === undefined) return { kind: 'no-credential' };
      const r = await authenticateBearer(tokens, token, apiAudiences, req.socket);
      if (r.kind !== 'authenticated') return r;
      // A token for other audiences than the server's is not for this server.
      if (apiAudiences.length && r.audiences?.length && intersect(apiAudiences, r.audiences).length === 0)
        return { kind: 'rejected', message: `unable to match the audience: [${r.audiences.join(' ')}] , accepted: [${apiAudiences.join(' ')}]` };
      // Nothing further inside the server is ever tempted to use the caller's token.
      delete req.headers.authorization;
      return r;
    },
  };
}

function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}
