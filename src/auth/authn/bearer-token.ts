// Bearer tokens: `Authorization: Bearer <token>` handed to the token authenticators. A bearer
// token none of them accepts is rejected (401), never treated as no credential. Tokens are meant
// for audiences: a request is for the server's own (`--api-audiences`), a TokenReview for those it
// names; an authenticator that cannot tell a token's audience (the token file) is wrapped by
// audienceAgnostic, as kube-apiserver wraps it.

import type { IncomingMessage } from 'node:http';
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
  /**
   * What authenticateToken would answer, when it is known without waiting (a cached answer), with
   * the same effects; undefined, and no effect, otherwise.
   */
  known?(token: string, audiences?: readonly string[], connection?: object): AuthenticationResult | undefined;
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
  const space = value.indexOf(' ');
  if (space !== 6 || value.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  const end = value.indexOf(' ', 7);
  // An empty token (two spaces after "Bearer") is no credential at all.
  return (end < 0 ? value.slice(7) : value.slice(7, end)) || undefined;
}

/** The bearer token's user, for `audiences` when given. A token nobody authenticates is rejected. */
export async function authenticateBearer(tokens: TokenAuthenticator, token: string, audiences?: readonly string[], connection?: object): Promise<AuthenticationResult> {
  return bearerAnswer(await tokens.authenticateToken(token, audiences?.length ? audiences : undefined, connection));
}

const INVALID: AuthenticationResult = Object.freeze({ kind: 'rejected', message: 'invalid bearer token' });
const NO_CREDENTIAL: AuthenticationResult = Object.freeze({ kind: 'no-credential' });

/** A token nobody recognised is rejected: a bearer token is always a credential. */
const bearerAnswer = (r: AuthenticationResult): AuthenticationResult => (r.kind === 'no-credential' ? INVALID : r);

export function bearerToken(tokens: TokenAuthenticator, apiAudiences: readonly string[] = []): Authenticator {
  const asked = apiAudiences.length ? apiAudiences : undefined;
  /** The request's answer once the tokens' is in. */
  const answer = (req: IncomingMessage, r: AuthenticationResult): AuthenticationResult => {
    if (r.kind !== 'authenticated') return r;
    // A token for other audiences than the server's is not for this server.
    if (asked && r.audiences?.length && intersect(asked, r.audiences).length === 0)
      return { kind: 'rejected', message: `unable to match the audience: [${r.audiences.join(' ')}] , accepted: [${asked.join(' ')}]` };
    // Nothing further inside the server is ever tempted to use the caller's token. Emptied rather
    // than deleted: deleting a key turns Node's header object into a dictionary, a microsecond on
    // every request and slower reads of every other header after it.
    req.headers.authorization = undefined;
    return r;
  };
  const known = tokens.known;
  return {
    async authenticate(req) {
      const token = bearerTokenOf(req.headers.authorization ?? '');
      if (token === undefined) return NO_CREDENTIAL;
      return answer(req, bearerAnswer(await tokens.authenticateToken(token, asked, req.socket)));
    },
    ...(known && {
      known(req: IncomingMessage) {
        const token = bearerTokenOf(req.headers.authorization ?? '');
        if (token === undefined) return NO_CREDENTIAL;
        const r = known(token, asked, req.socket);
        return r && answer(req, bearerAnswer(r));
      },
    }),
  };
}
