// Authentication: turns a request into a user. Authenticators form a union (the first that
// recognises its credential wins); spec 02's authenticators plug in here.

import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../request/user.ts';

export type AuthenticationResult =
  | { kind: 'authenticated'; user: UserInfo; /** The credential header to strip before proxying. */ }
  | { kind: 'no-credential' }
  | { kind: 'rejected'; message: string };

export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticationResult>;
}

/** Until spec 02's authenticators exist: every request is an authenticated administrator. */
export const alwaysAdmin: Authenticator = {
  async authenticate() {
    return { kind: 'authenticated', user: { name: 'system:admin', groups: ['system:masters', 'system:authenticated'] } };
  },
};

/** The union: the first authenticator that authenticates or rejects decides. */
export function unionAuthenticator(list: readonly Authenticator[]): Authenticator {
  return {
    async authenticate(req) {
      for (const a of list) {
        const r = await a.authenticate(req);
        if (r.kind !== 'no-credential') return r;
      }
      return { kind: 'no-credential' };
    },
  };
}
