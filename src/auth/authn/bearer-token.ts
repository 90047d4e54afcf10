// Bearer tokens: `Authorization: Bearer <token>` handed to the token authenticators. A bearer
// token none of them accepts is rejected (401), never treated as no credential.

import type { AuthenticationResult, Authenticator } from './authenticator.ts';
import { firstSuccess } from './union.ts';

/** Recognises a token as its own and authenticates it, rejects it, or answers no-credential (not its kind). */
export interface TokenAuthenticator {
  authenticateToken(token: string): Promise<AuthenticationResult>;
}

/** Token authenticators combined as authenticators are (`union`): the first that authenticates decides. */
export function tokenUnion(authenticators: readonly TokenAuthenticator[]): TokenAuthenticator {
  return { authenticateToken: (token) => firstSuccess(authenticators, (a) => a.authenticateToken(token)) };
}

export function bearerToken(tokens: TokenAuthenticator): Authenticator {
  return {
    async authenticate(req) {
      const header = (req.headers.authorization ?? '').trim();
      if (header === '') return { kind: 'no-credential' };
      // As Go's strings.SplitN(header, " ", 3): the token is the second part.
      const parts = splitN(header, ' ', 3);
      if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return { kind: 'no-credential' };
      const token = parts[1]!;
      // An empty token (two spaces after "Bearer") is no credential at all.
      if (token === '') return { kind: 'no-credential' };
      const r = await tokens.authenticateToken(token);
      if (r.kind === 'authenticated') {
        // Nothing further inside the server is ever tempted to use the caller's token.
        delete req.headers.authorization;
        return r;
      }
      return r.kind === 'rejected' ? r : { kind: 'rejected', message: 'invalid bearer token' };
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
