// The anonymous authenticator: a request no other authenticator recognised is `system:anonymous`
// in `system:unauthenticated` (`--anonymous-auth`), on every path or only on some (the
// AuthenticationConfiguration's anonymous conditions).

import { ALL_UNAUTHENTICATED, ANONYMOUS_USER, type Authenticator } from './authenticator.ts';

export const anonymous: Authenticator = {
  async authenticate() {
    return { kind: 'authenticated', user: { name: ANONYMOUS_USER, groups: [ALL_UNAUTHENTICATED] } };
  },
};

/** Anonymous only on these paths (matched exactly, as sent, without the query); elsewhere no credential. */
export function anonymousOn(paths: ReadonlySet<string>): Authenticator {
  return {
    async authenticate(req) {
      const url = req.url ?? '';
      const q = url.indexOf('?');
      return paths.has(q < 0 ? url : url.slice(0, q)) ? anonymous.authenticate(req) : { kind: 'no-credential' };
    },
  };
}
