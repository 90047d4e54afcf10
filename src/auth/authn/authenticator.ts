// Authentication: turns a request into a user. An authenticator answers authenticated, rejected,
// or no credential of its kind, so that several can be chained: the first that recognises its
// credential decides.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../request/user.ts';

/** What an {@link Authenticator} makes of a request: a user, a rejected credential, or no credential of its kind. */
export type AuthenticationResult =
  /** `audiences`: those of the asked audiences the credential is valid for, when its authenticator knows. */
  | { kind: 'authenticated'; user: UserInfo; audiences?: string[] }
  | { kind: 'no-credential' }
  /** The message is for the server's log, never for the client (who is told "Unauthorized"), and never holds a credential. */
  | { kind: 'rejected'; message: string };

/** Turns a request into a user; several are chained and the first that recognises its credential decides. */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticationResult>;
  /**
   * The answer `authenticate` would give, when it is known without waiting for anything (a
   * connection's remembered certificate, a cached token), with the same effects; undefined, and no
   * effect at all, when only `authenticate` can tell. Saves a request the promises of every
   * authenticator of a chain.
   */
  known?(req: IncomingMessage): AuthenticationResult | undefined;
}

/** Until the server has real authenticators (tokens, certificates, …): every request is an authenticated administrator. */
const ADMIN: AuthenticationResult = Object.freeze({
  kind: 'authenticated',
  user: Object.freeze({ name: 'system:admin', groups: Object.freeze(['system:masters', 'system:authenticated']) as string[] }),
});
export const alwaysAdmin: Authenticator = {
  async authenticate() {
    return ADMIN;
  },
  known: () => ADMIN,
};

/** The well-known names of users and groups. */
export const ANONYMOUS_USER = 'system:anonymous';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ALL_AUTHENTICATED = 'system:authenticated';

/**
 * The answer, frozen with its user, so that it can be handed to every caller as it is: a caller
 * that tried to change it would fail instead of changing what the next caller gets.
 */
export function frozen(r: AuthenticationResult): AuthenticationResult {
  if (r.kind !== 'authenticated') return Object.freeze(r);
  const u = r.user;
  const extra = u.extra && Object.freeze(Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, Object.freeze([...v])])));
  const user: UserInfo = Object.freeze({ ...u, groups: Object.freeze([...u.groups]) as string[], ...(extra && { extra: extra as Record<string, string[]> }) });
  return Object.freeze({ ...r, user, ...(r.audiences && { audiences: Object.freeze([...r.audiences]) as string[] }) });
}
