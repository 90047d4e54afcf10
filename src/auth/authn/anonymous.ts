// The anonymous authenticator: a request no other authenticator recognised is `system:anonymous`
// in `system:unauthenticated` (`--anonymous-auth`), on every path or only on some (the
// AuthenticationConfiguration's anonymous conditions).

import type { IncomingMessage } from 'node:http';
import { ALL_UNAUTHENTICATED, ANONYMOUS_USER, type AuthenticationResult, type Authenticator } from './authenticator.ts';

const ANONYMOUS: AuthenticationResult = Object.freeze({ kind: 'authenticated', user: Object.freeze({ name: ANONYMOUS_USER, groups: Object.freeze([ALL_UNAUTHENTICATED]) as string[] }) });
const NO_CREDENTIAL: AuthenticationResult = Object.freeze({ kind: 'no-credential' });

export const anonymous: Authenticator = {
  async authenticate() {
    return ANONYMOUS;
  },
  known: () => ANONYMOUS,
};

/** Anonymous only on these paths (matched exactly, as sent, without the query); elsewhere no credential. */
export function anonymousOn(paths: ReadonlySet<string>): Authenticator {
  const known = (req: IncomingMessage): AuthenticationResult => {
    const url = req.url ?? '';
    const q = url.indexOf('?');
    return paths.has(q < 0 ? url : url.slice(0, q)) ? ANONYMOUS : NO_CREDENTIAL;
  };
  return { authenticate: async (req) => known(req), known };
}
