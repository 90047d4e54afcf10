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
}

/** Until the server has real authenticators (tokens, certificates, …): every request is an authenticated administrator. */
export const alwaysAdmin: Authenticator = {
  async authenticate() {
    return { kind: 'authenticated', user: { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] } };
  },
};

/** The well-known names of users and groups. */
export const ANONYMOUS_USER = 'system:anonymous';
export const ALL_UNAUTHENTICATED = 'system:unauthenticated';
export const ALL_AUTHENTICATED = 'system:authenticated';
